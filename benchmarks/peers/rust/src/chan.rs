//! chan rows: crossbeam-channel bounded channels of u64, windowed.

use crate::harness::{bb, report_throughput, run_window, Sample, ThreadResult, Window};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `producers` threads send for one window into one bounded(cap) channel;
/// `consumers` threads receive until the channel disconnects (the last
/// producer has left). ops = messages received; items_per_second = messages
/// per second of the window; real_time = ns per message; `capacity` = cap.
pub fn throughput(cap: usize, producers: usize, consumers: usize, min_time: f64) -> Sample {
    let (tx, rx) = crossbeam_channel::bounded::<u64>(cap);
    let senders_left = AtomicUsize::new(producers);
    let tx_slot = std::sync::Mutex::new(Some(tx));
    let r = run_window(producers + consumers, min_time, |w: &Window, index| {
        if index < producers {
            let tx = tx_slot.lock().unwrap_or_else(|e| e.into_inner()).as_ref().expect("sender").clone();
            if senders_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                // Every producer has its clone: drop the original so the
                // channel disconnects once they are done.
                tx_slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            }
            w.start();
            let mut i = 0u64;
            while w.running() {
                if tx.send(i).is_err() {
                    break;
                }
                i += 1;
            }
            ThreadResult::default()
        } else {
            let rx = rx.clone();
            w.start();
            let (mut ops, mut sum) = (0u64, 0u64);
            while let Ok(v) = rx.recv() {
                ops += 1;
                sum = sum.wrapping_add(v);
            }
            bb(sum);
            ThreadResult { ops, worst_wait_ticks: 0, samples: Vec::new() }
        }
    });
    let mut s = report_throughput(&r);
    s.counters.push(("capacity", cap as f64));
    s
}

//! barrier rows: std::sync::Barrier and tokio::sync::Barrier, with the loop
//! body of the C++ harness's barrier.cpp.

use crate::harness::{report_handoff, run_window, ticks, time_window, Padded, Sample, ThreadResult, Window};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Thread counts of the rows (threads:T).
pub const THREADS: [usize; 3] = [2, 4, 8];

/// Thread 0's decisions: round k's in last[k % 2]. Thread 0 writes round
/// k + 2's only after round k + 1's phase has ended, which every thread
/// reaches only after reading round k's, so one slot per parity is enough.
#[derive(Default)]
struct Last(Padded<[AtomicBool; 2]>);

impl Last {
    // relaxed: the barrier orders the store before the loads (every arrival
    // happens before every return from the phase).
    #[inline(always)]
    fn decide(&self, k: u64, last: bool) {
        self.0 .0[(k & 1) as usize].store(last, Ordering::Relaxed);
    }
    #[inline(always)]
    fn is_last(&self, k: u64) -> bool {
        self.0 .0[(k & 1) as usize].load(Ordering::Relaxed)
    }
}

/// Thread 0's bookkeeping: rounds and the time between its returns.
struct Clock {
    prev: u64,
    samples: Vec<u64>,
}

impl Clock {
    fn new() -> Clock {
        Clock { prev: 0, samples: Vec::with_capacity(1 << 14) }
    }
    #[inline(always)]
    fn lap(&mut self, k: u64) {
        let now = ticks();
        if k > 0 {
            self.samples.push(now.saturating_sub(self.prev));
        }
        self.prev = now;
    }
    fn result(self, rounds: u64) -> ThreadResult {
        ThreadResult { ops: rounds, worst_wait_ticks: 0, samples: self.samples }
    }
}

/// std::sync::Barrier: T threads call wait() in a loop, one phase a round.
pub fn rounds_std(threads: usize, min_time: f64) -> Sample {
    let b = Box::new(Padded(std::sync::Barrier::new(threads)));
    let last = Box::new(Last::default());
    let r = run_window(threads, min_time, |w: &Window, index| {
        let (mut clock, mut rounds) = (Clock::new(), 0u64);
        w.start();
        let mut k = 0u64;
        loop {
            if index == 0 {
                last.decide(k, !w.running());
            }
            b.0.wait();
            if last.is_last(k) {
                break;
            }
            if index == 0 {
                clock.lap(k);
                rounds += 1;
            }
            k += 1;
        }
        clock.result(rounds)
    });
    report_handoff(&r)
}

/// tokio::sync::Barrier: the same loop in T tasks (`wait().await`) on a
/// multi-thread runtime with T worker threads.
pub fn rounds_tokio(threads: usize, min_time: f64) -> Sample {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(threads).build().expect("tokio runtime");
    let b = Arc::new(Padded(tokio::sync::Barrier::new(threads)));
    let last = Arc::new(Last::default());
    let w = Arc::new(Window::default());
    let handles: Vec<_> = (0..threads)
        .map(|index| {
            let (b, last, w) = (b.clone(), last.clone(), w.clone());
            rt.spawn(async move {
                let (mut clock, mut rounds) = (Clock::new(), 0u64);
                w.start_async().await;
                let mut k = 0u64;
                loop {
                    if index == 0 {
                        last.decide(k, !w.running());
                    }
                    b.0.wait().await;
                    if last.is_last(k) {
                        break;
                    }
                    if index == 0 {
                        clock.lap(k);
                        rounds += 1;
                    }
                    k += 1;
                }
                clock.result(rounds)
            })
        })
        .collect();
    let r = time_window(&w, threads, min_time, || {
        rt.block_on(async {
            let mut v = Vec::with_capacity(threads);
            for h in handles {
                v.push(h.await.expect("benchmark task"));
            }
            v
        })
    });
    report_handoff(&r)
}

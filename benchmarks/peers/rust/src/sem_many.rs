//! sem_many rows: tokio::sync::Semaphore::acquire_many (strictly FIFO), with
//! the loop body of the C++ harness's sem_many.cpp.

use crate::harness::{
    bb, lcg_rounds, quantile, report_throughput, ticks, ticks_since, ticks_to_ns, time_window, Padded, Sample,
    ThreadResult, Window,
};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// The C++ rows' constants: 4 threads (tasks) share 32 permits; a request
/// takes all 32 with probability BIG_PERCENT %, else 1; HOLD LCG rounds
/// holding them, OUTSIDE rounds between requests.
pub const THREADS: usize = 4;
const PERMITS: u32 = 32;
const BIG_PERCENT: u64 = 5;
const HOLD: u32 = 200;
const OUTSIDE: u32 = 50;

#[derive(Default)]
struct Shared {
    inside: Padded<AtomicU32>, // permits held right now
    excess: AtomicBool,
    /// Each task's waits, handed over when it stops: (n = 1, n = 32).
    waits: Mutex<(Vec<u64>, Vec<u64>)>,
}

/// 4 tasks on a 4-worker multi-thread runtime, each looping { n = 32 with
/// probability 5 %, else 1 (the C++ rows' per-thread LCG); t0 = ticks;
/// `acquire_many(n).await`; wait = ticks since t0; hold for HOLD rounds;
/// drop the permits; OUTSIDE rounds } for one window. Counters as the C++
/// rows: n1_p50_ns, n1_p99_ns, n32_p50_ns, n32_p99_ns, n32_p999_ns,
/// n32_worst_ns, n32_requests.
pub fn mix_tokio(min_time: f64) -> Sample {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(THREADS).build().expect("tokio runtime");
    let sem = Arc::new(Padded(tokio::sync::Semaphore::new(PERMITS as usize)));
    let g: Arc<Shared> = Arc::default();
    let w = Arc::new(Window::default());
    let handles: Vec<_> = (0..THREADS)
        .map(|index| {
            let (sem, g, w) = (sem.clone(), g.clone(), w.clone());
            rt.spawn(async move {
                let (mut s, mut ops) = (index as u64 + 1, 0u64);
                let mut x = s;
                let (mut small, mut big) = (Vec::with_capacity(1 << 16), Vec::with_capacity(1 << 12));
                w.start_async().await;
                while w.running() {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let n = if (s >> 33) % 100 < BIG_PERCENT { PERMITS } else { 1 };
                    let t0 = ticks();
                    let permit = sem.0.acquire_many(n).await.expect("the semaphore is never closed");
                    let waited = ticks_since(t0);
                    // relaxed: the semaphore orders the holders; `inside` only counts.
                    if g.inside.0.fetch_add(n, Ordering::Relaxed) + n > PERMITS {
                        g.excess.store(true, Ordering::Relaxed);
                    }
                    x = lcg_rounds(x, HOLD);
                    g.inside.0.fetch_sub(n, Ordering::Relaxed);
                    drop(permit);
                    if n == 1 {
                        small.push(waited);
                    } else {
                        big.push(waited);
                    }
                    x = lcg_rounds(x, OUTSIDE);
                    ops += 1;
                }
                bb(x);
                let mut all = g.waits.lock().unwrap_or_else(|e| e.into_inner());
                all.0.extend_from_slice(&small);
                all.1.extend_from_slice(&big);
                ThreadResult { ops, worst_wait_ticks: 0, samples: Vec::new() }
            })
        })
        .collect();
    let r = time_window(&w, THREADS, min_time, || {
        rt.block_on(async {
            let mut v = Vec::with_capacity(THREADS);
            for h in handles {
                v.push(h.await.expect("benchmark task"));
            }
            v
        })
    });
    drop(rt);
    assert!(!g.excess.load(Ordering::Relaxed), "more permits held than the semaphore has");
    let mut waits = g.waits.lock().unwrap_or_else(|e| e.into_inner());
    waits.0.sort_unstable();
    waits.1.sort_unstable();
    let mut sample = report_throughput(&r);
    sample.counters.push(("n1_p50_ns", ticks_to_ns(quantile(&waits.0, 0.50))));
    sample.counters.push(("n1_p99_ns", ticks_to_ns(quantile(&waits.0, 0.99))));
    sample.counters.push(("n32_p50_ns", ticks_to_ns(quantile(&waits.1, 0.50))));
    sample.counters.push(("n32_p99_ns", ticks_to_ns(quantile(&waits.1, 0.99))));
    sample.counters.push(("n32_p999_ns", ticks_to_ns(quantile(&waits.1, 0.999))));
    sample.counters.push(("n32_worst_ns", ticks_to_ns(waits.1.last().copied().unwrap_or(0))));
    sample.counters.push(("n32_requests", waits.1.len() as f64));
    sample
}

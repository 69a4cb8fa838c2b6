//! The tail family's mutex scenario (the C++ harness's benchmarks/tail.cpp,
//! which says what is measured and why) for parking_lot and std::sync:
//!
//!   tail/mutex   T threads, each looping { t0 = ticks; lock; wait = ticks
//!                since t0; a += 1, b += a (two words on their own cache
//!                line, beside the lock's); unlock; 50 LCG rounds } for one
//!                window, T in {2, 4, 8, 16}
//!
//! Each thread records every wait in its own log-linear histogram (the C++
//! harness's bench::Histogram: exact below 32 ticks, then 32 buckets per
//! power of two) and, per 1 ms interval, whether it acquired in it; both are
//! allocated before the window opens. Counters as the C++ rows: p50_ns,
//! p99_ns, p999_ns, max_ns, the cdf_p<P>_ns points, rsd, cpu_rsd and lwss.

use crate::harness::{
    bb, lcg_rounds, report_throughput, run_window, ticks, ticks_since, ticks_to_ns, Padded, Sample, ThreadResult,
};
use crate::locks::Lock;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

pub const THREADS: [usize; 4] = [2, 4, 8, 16];
/// LCG rounds outside the lock.
const OUTSIDE: u32 = 50;
/// The LWSS intervals: 1 ms.
const INTERVAL_NS: f64 = 1e6;
/// The cdf_p<P>_ns counters: (quantile, name), as in tail.cpp.
const CDF: [(f64, &str); 14] = [
    (0.001, "cdf_p0.1_ns"),
    (0.01, "cdf_p1_ns"),
    (0.05, "cdf_p5_ns"),
    (0.10, "cdf_p10_ns"),
    (0.20, "cdf_p20_ns"),
    (0.30, "cdf_p30_ns"),
    (0.40, "cdf_p40_ns"),
    (0.60, "cdf_p60_ns"),
    (0.70, "cdf_p70_ns"),
    (0.80, "cdf_p80_ns"),
    (0.90, "cdf_p90_ns"),
    (0.95, "cdf_p95_ns"),
    (0.995, "cdf_p99.5_ns"),
    (0.9999, "cdf_p99.99_ns"),
];

// ---- histogram ---------------------------------------------------------------

const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = 64 * SUB as usize;

/// Log-linear histogram of tick counts, the C++ harness's bench::Histogram:
/// fixed size, no allocation while recording.
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram { counts: vec![0; BUCKETS], n: 0 }
    }

    #[inline(always)]
    fn bucket(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let e = 63 - v.leading_zeros();
        ((e - SUB_BITS + 1) as u64 * SUB + ((v >> (e - SUB_BITS)) & (SUB - 1))) as usize
    }

    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        self.counts[Self::bucket(v)] += 1;
        self.n += 1;
    }

    pub fn merge(&mut self, o: &Histogram) {
        for (c, x) in self.counts.iter_mut().zip(o.counts.iter()) {
            *c += *x;
        }
        self.n += o.n;
    }

    /// The value (ticks) at quantile q: the midpoint of the bucket holding
    /// the ceil(q * n)-th smallest sample; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (b, c) in self.counts.iter().enumerate() {
            seen += *c;
            if seen < rank {
                continue;
            }
            let b = b as u64;
            if b < SUB {
                return b;
            }
            let e = b / SUB + SUB_BITS as u64 - 1;
            let width = 1u64 << (e - SUB_BITS as u64);
            let low = (1u64 << e) | ((b % SUB) << (e - SUB_BITS as u64));
            return low + width / 2;
        }
        0
    }
}

// ---- what each thread records ------------------------------------------------

/// One thread's waits and, per LWSS interval, whether it acquired in it.
struct Recorder {
    waits: Histogram,
    acquired: Vec<u8>,
    origin: u64,
    interval: u64,
    ops: u64,
    worst: u64,
    exit: u64,
    /// The thread's CPU time in its loop.
    cpu_ns: i64,
}

/// The calling thread's CPU time (user and system), in ns.
fn thread_cpu_ns() -> i64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: t is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as i64 * 1_000_000_000 + t.tv_nsec as i64
}

impl Recorder {
    fn new(intervals: usize, interval: u64) -> Recorder {
        Recorder {
            waits: Histogram::new(),
            acquired: vec![0; intervals],
            origin: 0,
            interval,
            ops: 0,
            worst: 0,
            exit: 0,
            cpu_ns: 0,
        }
    }

    /// After the start gate: the first thread through sets the origin.
    fn begin(&mut self, shared: &AtomicU64) {
        self.cpu_ns = -thread_cpu_ns();
        let now = ticks();
        // Relaxed: a timestamp, read by the threads only as a number.
        self.origin = match shared.compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => now,
            Err(earlier) => earlier,
        };
    }

    #[inline(always)]
    fn record(&mut self, t0: u64, wait: u64) {
        self.waits.record(wait);
        self.worst = self.worst.max(wait);
        self.ops += 1;
        let at = t0 + wait;
        if at >= self.origin {
            let i = ((at - self.origin) / self.interval) as usize;
            if i < self.acquired.len() {
                self.acquired[i] = 1;
            }
        }
    }
}

fn ticks_for_ns(ns: f64) -> u64 {
    ((ns / ticks_to_ns(1_000_000) * 1e6).round() as u64).max(1)
}

/// 1 + 2 + ... + a modulo 2^64: what b holds after a updates.
fn triangle(a: u64) -> u64 {
    if a % 2 == 0 {
        (a / 2).wrapping_mul(a + 1)
    } else {
        ((a + 1) / 2).wrapping_mul(a)
    }
}

// ---- counters -----------------------------------------------------------------

fn report_waits(s: &mut Sample, h: &Histogram, worst: u64) {
    s.counters.push(("p50_ns", ticks_to_ns(h.quantile(0.50))));
    s.counters.push(("p99_ns", ticks_to_ns(h.quantile(0.99))));
    s.counters.push(("p999_ns", ticks_to_ns(h.quantile(0.999))));
    s.counters.push(("max_ns", ticks_to_ns(worst)));
    for (q, name) in CDF.iter() {
        s.counters.push((name, ticks_to_ns(h.quantile(*q))));
    }
}

/// The relative standard deviation (population stddev / mean) of one figure
/// of every thread.
fn rsd_of(recs: &[Recorder], figure: impl Fn(&Recorder) -> f64) -> f64 {
    let n = recs.len() as f64;
    let mean = recs.iter().map(&figure).sum::<f64>() / n;
    let var = recs.iter().map(|r| (figure(r) - mean) * (figure(r) - mean)).sum::<f64>() / n;
    if mean > 0.0 {
        var.sqrt() / mean
    } else {
        0.0
    }
}

fn report_spread(s: &mut Sample, recs: &[Recorder]) {
    s.counters.push(("rsd", rsd_of(recs, |r| r.ops as f64)));
    s.counters.push(("cpu_rsd", rsd_of(recs, |r| r.cpu_ns as f64)));
    // The intervals in which every thread was still in its loop.
    let origin = recs[0].origin;
    let first_exit = recs.iter().map(|r| r.exit).min().unwrap_or(origin);
    let intervals = (first_exit.saturating_sub(origin) / recs[0].interval) as usize;
    let intervals = intervals.max(1).min(recs[0].acquired.len());
    let distinct: u64 = (0..intervals).map(|i| recs.iter().map(|r| r.acquired[i] as u64).sum::<u64>()).sum();
    s.counters.push(("lwss", distinct as f64 / intervals as f64));
}

// ---- the scenario ---------------------------------------------------------------

/// The lock on its cache line, the two words on theirs, the origin of the
/// LWSS intervals on a third.
#[derive(Default)]
struct Shared<L> {
    lock: Padded<L>,
    words: Padded<UnsafeCell<(u64, u64)>>,
    origin: Padded<AtomicU64>,
}

// The words are only touched while `lock` is held.
unsafe impl<L: Sync> Sync for Shared<L> {}

/// T threads, each looping { t0 = ticks; lock; wait = ticks since t0; a +=
/// 1, b += a; unlock; 50 LCG rounds } for one window.
pub fn mutex<L: Lock>(threads: usize, min_time: f64) -> Sample {
    let mut g: Box<Shared<L>> = Box::default();
    let intervals = (2e9 * min_time / INTERVAL_NS).ceil() as usize + 16;
    let interval = ticks_for_ns(INTERVAL_NS);
    let slots: Vec<Mutex<Option<Recorder>>> = (0..threads).map(|_| Mutex::new(None)).collect();
    let r = run_window(threads, min_time, |w, index| {
        let g = &*g;
        let mut rec = Recorder::new(intervals, interval);
        let mut x = index as u64 + 1;
        w.start();
        rec.begin(&g.origin.0);
        while w.running() {
            let t0 = ticks();
            let guard = g.lock.0.acquire();
            let wait = ticks_since(t0);
            unsafe {
                let words = &mut *g.words.0.get();
                words.0 += 1;
                words.1 = words.1.wrapping_add(words.0);
            }
            drop(guard);
            rec.record(t0, wait);
            x = lcg_rounds(x, OUTSIDE);
        }
        rec.exit = ticks();
        rec.cpu_ns += thread_cpu_ns();
        bb(x);
        let result = ThreadResult { ops: rec.ops, worst_wait_ticks: rec.worst, samples: Vec::new() };
        *slots[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(rec);
        result
    });
    let (a, b) = *g.words.0.get_mut();
    assert!(a == r.total_ops() && b == triangle(a), "lost updates: mutual exclusion broken");
    let recs: Vec<Recorder> = slots
        .into_iter()
        .map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every thread leaves its recorder"))
        .collect();
    let mut h = Histogram::new();
    for rec in &recs {
        h.merge(&rec.waits);
    }
    let worst = recs.iter().map(|rec| rec.worst).max().unwrap_or(0);
    let mut s = report_throughput(&r);
    report_waits(&mut s, &h, worst);
    report_spread(&mut s, &recs);
    s
}

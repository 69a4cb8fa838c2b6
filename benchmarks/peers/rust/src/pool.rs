//! pool rows: fib(30) and fib(35) by rayon::join (no serial cut-off: every
//! call with n >= 2 is a join) against plain recursion on one thread (the
//! floor), and the parallel_for pass of the C++ harness (10^7 items in 1024
//! chunks, each summing a cheap function of its indices into its own
//! partial) by rayon's parallel iterator against a plain loop.

use crate::harness::{bb, single, Sample, Snapshot};
use rayon::prelude::*;
use std::sync::Mutex;

const ITEMS: usize = 10_000_000;
const CHUNKS: usize = 1024;
/// As in benchmarks/pool.cpp: 1024 chunks of at most this many items.
const GRAIN: usize = (ITEMS + CHUNKS - 1) / CHUNKS;

fn fib_rayon(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

fn fib_serial(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    fib_serial(n - 1) + fib_serial(n - 2)
}

/// fib(n) computed by iteration, for checking.
fn fib_value(n: u32) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        let t = a + b;
        a = b;
        b = t;
    }
    a
}

/// The joins of fib(n): its calls with n >= 2, fib(n + 1) - 1.
fn joins_of_fib(n: u32) -> u64 {
    fib_value(n + 1) - 1
}

/// The serial time of fib(n) in ns: the fastest of at least two runs and of
/// as many as fit in min_time; measured once per n.
fn serial_fib_ns(n: u32, min_time: f64) -> f64 {
    static CACHE: Mutex<Vec<(u32, f64)>> = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, ns)) = cache.iter().find(|(m, _)| *m == n) {
        return ns;
    }
    let (mut best, mut spent, mut runs) = (f64::MAX, 0.0, 0);
    while runs < 2 || spent < min_time {
        let t = Snapshot::now();
        assert_eq!(fib_serial(bb(n)), fib_value(n));
        let r = t.stop(1);
        best = best.min(r.wall * 1e9);
        spent += r.wall;
        runs += 1;
    }
    cache.push((n, best));
    best
}

/// real_time: ns per fib(n); cpu_time: CPU of the whole process (all pool
/// workers) per fib(n). fib(35) runs once per repetition, as in the C++
/// harness (tens to hundreds of milliseconds a run).
fn fib_row(n: u32, min_time: f64, hint: &mut u64, f: fn(u32) -> u64) -> Sample {
    let expect = fib_value(n);
    let run = |k: u64| {
        let t = Snapshot::now();
        for _ in 0..k {
            assert_eq!(f(bb(n)), expect);
        }
        t.stop(k)
    };
    if n >= 35 {
        let r = run(1);
        return Sample { real_ns: r.wall * 1e9, cpu_ns: r.cpu * 1e9, items_per_second: None, counters: Vec::new() };
    }
    single(min_time, hint, 1, run)
}

/// rayon's global pool (one worker per CPU), warmed up before measuring;
/// spawn_ns = (real_time x threads - serial time) / joins.
fn fib_rayon_row(n: u32, min_time: f64, hint: &mut u64) -> Sample {
    assert_eq!(fib_rayon(bb(20)), 6765);
    let mut s = fib_row(n, min_time, hint, fib_rayon);
    let threads = rayon_threads() as f64;
    let spawn = (s.real_ns * threads - serial_fib_ns(n, min_time)) / joins_of_fib(n) as f64;
    s.counters.push(("workers", threads));
    s.counters.push(("spawn_ns", spawn));
    s
}

fn fib_serial_row(n: u32, min_time: f64, hint: &mut u64) -> Sample {
    let mut s = fib_row(n, min_time, hint, fib_serial);
    s.counters.push(("workers", 1.0));
    s
}

pub fn fib30_rayon(min_time: f64, hint: &mut u64) -> Sample {
    fib_rayon_row(30, min_time, hint)
}

pub fn fib30_serial(min_time: f64, hint: &mut u64) -> Sample {
    fib_serial_row(30, min_time, hint)
}

pub fn fib35_rayon(min_time: f64, hint: &mut u64) -> Sample {
    fib_rayon_row(35, min_time, hint)
}

pub fn fib35_serial(min_time: f64, hint: &mut u64) -> Sample {
    fib_serial_row(35, min_time, hint)
}

/// The body's cheap function of an index (benchmarks/pool.cpp's mix).
#[inline(always)]
fn mix(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 29
}

/// The sum of chunk k, its partial.
#[inline(always)]
fn chunk_sum(k: usize) -> u64 {
    let lo = k * GRAIN;
    let hi = (lo + GRAIN).min(ITEMS);
    let mut s = 0u64;
    for i in lo..hi {
        s = s.wrapping_add(mix(i));
    }
    s
}

fn expected_sum() -> u64 {
    (0..ITEMS).fold(0u64, |s, i| s.wrapping_add(mix(i)))
}

/// real_time: ns per pass over the 10^7 items (partials cleared and checked
/// each pass).
fn parallel_for_row(min_time: f64, hint: &mut u64, parallel: bool) -> Sample {
    let expect = expected_sum();
    let mut partials = vec![0u64; CHUNKS];
    let mut s = single(min_time, hint, 1, |n| {
        let t = Snapshot::now();
        for _ in 0..n {
            partials.iter_mut().for_each(|p| *p = 0);
            if parallel {
                partials.par_iter_mut().enumerate().for_each(|(k, p)| *p = chunk_sum(k));
            } else {
                partials.iter_mut().enumerate().for_each(|(k, p)| *p = chunk_sum(k));
            }
            let sum = partials.iter().fold(0u64, |a, &p| a.wrapping_add(p));
            assert_eq!(sum, expect);
        }
        t.stop(n)
    });
    s.counters.push(("workers", if parallel { rayon_threads() as f64 } else { 1.0 }));
    s
}

pub fn parallel_for_rayon(min_time: f64, hint: &mut u64) -> Sample {
    parallel_for_row(min_time, hint, true)
}

pub fn parallel_for_serial(min_time: f64, hint: &mut u64) -> Sample {
    parallel_for_row(min_time, hint, false)
}

pub fn rayon_threads() -> usize {
    rayon::current_num_threads()
}

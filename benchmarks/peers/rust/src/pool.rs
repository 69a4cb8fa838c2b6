//! pool rows: fib(30) and fib(35) by rayon::join (no serial cut-off: every
//! call with n >= 2 is a join) against plain recursion on one thread (the
//! floor); the parallel_for pass of the C++ harness (10^7 items in 1024
//! chunks, each summing a cheap function of its indices into its own
//! partial) by rayon's parallel iterator against a plain loop; and the
//! submit, wakeup and idle scenarios on a 2-thread rayon::ThreadPool,
//! submitting with ThreadPool::spawn.

use crate::harness::{
    bb, context_switches, process_cpu, report_throughput, run_window, single, Padded, Sample, Snapshot, ThreadResult,
};
use rayon::prelude::*;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

// ---- submit, wakeup, idle ---------------------------------------------------

/// Workers of the submit, wakeup and idle pools.
const SUBMIT_WORKERS: usize = 2;
/// As in benchmarks/pool.cpp: tasks in flight beyond which a producer
/// yields, and submissions a producer counts before publishing them.
const MAX_IN_FLIGHT: i64 = 1 << 16;
const SUBMIT_BATCH: u64 = 256;
/// Idle time before each wake-up.
const IDLE_BEFORE_WAKE: Duration = Duration::from_millis(10);
/// The wakeup and idle rows last 5 x min_time, at most this long.
const LONG_ROW_SECONDS: f64 = 1.0;

fn long_row_seconds(min_time: f64) -> f64 {
    (5.0 * min_time).min(LONG_ROW_SECONDS)
}

fn two_workers() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(SUBMIT_WORKERS).build().expect("rayon pool")
}

/// CLOCK_MONOTONIC in ns, as park_now().
fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Tasks run, counted by the pool's workers on per-thread shards so that
/// they share no cache line; statics, so spawned tasks need no Arc (rows run
/// one at a time and reset them first).
const SHARDS: usize = 16;
#[allow(clippy::declare_interior_mutable_const)]
const ZERO: Padded<AtomicU64> = Padded(AtomicU64::new(0));
static EXECUTED: [Padded<AtomicU64>; SHARDS] = [ZERO; SHARDS];
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static MY_SHARD: usize = NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % SHARDS;
}

fn count_task() {
    MY_SHARD.with(|&k| EXECUTED[k].0.fetch_add(1, Ordering::Relaxed));
}

fn executed() -> i64 {
    EXECUTED.iter().map(|s| s.0.load(Ordering::Relaxed)).sum::<u64>() as i64
}

/// P producers spawn tiny tasks into a 2-worker pool for one window; the
/// last to stop waits until every task has run (the drain is in the
/// window). items_per_second = tasks run per second.
pub fn submit_rayon(producers: usize, min_time: f64) -> Sample {
    let pool = two_workers();
    for s in EXECUTED.iter() {
        s.0.store(0, Ordering::Relaxed);
    }
    let submitted = AtomicI64::new(0);
    let finished = AtomicUsize::new(0);
    let r = run_window(producers, min_time, |w, _| {
        let mut n = 0u64;
        w.start();
        while w.running() {
            pool.spawn(count_task);
            n += 1;
            if n % SUBMIT_BATCH != 0 {
                continue;
            }
            submitted.fetch_add(SUBMIT_BATCH as i64, Ordering::Relaxed);
            while submitted.load(Ordering::Relaxed) - executed() > MAX_IN_FLIGHT && w.running() {
                std::thread::yield_now();
            }
        }
        submitted.fetch_add((n % SUBMIT_BATCH) as i64, Ordering::Relaxed);
        if finished.fetch_add(1, Ordering::AcqRel) + 1 == producers {
            while executed() < submitted.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
        ThreadResult { ops: n, worst_wait_ticks: 0, samples: Vec::new() }
    });
    report_throughput(&r)
}

fn quantile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
    sorted[rank.min(sorted.len()) - 1] as f64
}

static STAMP: AtomicU64 = AtomicU64::new(0);

/// The 2-worker pool idles 10 ms, then one spawned task stores now_ns();
/// p50/p99 of spawn-to-run over 5 x min_time (at most 1 s); real_time = p50.
pub fn wakeup_rayon(min_time: f64) -> Sample {
    let pool = two_workers();
    let window = long_row_seconds(min_time);
    let mut lat: Vec<u64> = Vec::new();
    let (cpu0, csw0, t0) = (process_cpu(), context_switches(), Instant::now());
    loop {
        std::thread::sleep(IDLE_BEFORE_WAKE);
        STAMP.store(0, Ordering::Relaxed);
        let sent = now_ns();
        pool.spawn(|| STAMP.store(now_ns(), Ordering::Release));
        let ran = loop {
            let v = STAMP.load(Ordering::Acquire);
            if v != 0 {
                break v;
            }
            std::thread::yield_now();
        };
        lat.push(ran.saturating_sub(sent));
        if t0.elapsed().as_secs_f64() >= window {
            break;
        }
    }
    let (cpu, csw) = (process_cpu() - cpu0, context_switches() - csw0);
    lat.sort_unstable();
    let n = lat.len() as f64;
    let p50 = quantile(&lat, 0.50);
    Sample {
        real_ns: p50,
        cpu_ns: cpu * 1e9 / n,
        items_per_second: None,
        counters: vec![
            ("p50_ns", p50),
            ("p99_ns", quantile(&lat, 0.99)),
            ("wakeups", n),
            ("cpu_ns_per_op", cpu * 1e9 / n),
            ("csw_per_op", csw as f64 / n),
        ],
    }
}

/// The 2-worker pool runs a small parallel pass (2^16 items in chunks of
/// 256), then the caller sleeps 5 x min_time (at most 1 s): CPU time of the
/// whole process per second of that sleep, as real_time and idle_cpu_ns.
pub fn idle_rayon(min_time: f64) -> Sample {
    let pool = two_workers();
    let sum = AtomicU64::new(0);
    pool.install(|| {
        (0..256usize).into_par_iter().for_each(|k| {
            let s = (k * 256..(k + 1) * 256).fold(0u64, |a, i| a.wrapping_add(mix(i)));
            sum.fetch_add(s, Ordering::Relaxed);
        })
    });
    bb(sum.load(Ordering::Relaxed));
    let (cpu0, csw0, t0) = (process_cpu(), context_switches(), Instant::now());
    std::thread::sleep(Duration::from_secs_f64(long_row_seconds(min_time)));
    let (cpu, csw, wall) = (process_cpu() - cpu0, context_switches() - csw0, t0.elapsed().as_secs_f64());
    let per_s = cpu / wall;
    Sample {
        real_ns: per_s * 1e9,
        cpu_ns: per_s * 1e9,
        items_per_second: None,
        counters: vec![("idle_cpu_ns", per_s * 1e9), ("csw_per_s", csw as f64 / wall)],
    }
}

pub fn rayon_threads() -> usize {
    rayon::current_num_threads()
}

//! The contention sweeps of the C++ harness's mutex.cpp and rwlock.cpp for
//! parking_lot and std::sync: the lock shares its cache line only with the
//! value it guards (`Mutex<u64>`, `RwLock<u64>` in a 64-byte aligned cell).
//!
//!   mutex/sweep_wW   T threads loop { lock; 4 increments of the value;
//!                    unlock; W rounds of an LCG outside }, W in {0, 50, 200}
//!   rwlock/sweep_rR  T threads loop { a read (4 loads of the value) with
//!                    probability R %, else a write (4 increments); 50
//!                    rounds of an LCG outside }, R in {100, 90, 50}; reads and
//!                    writes are picked by the C++ rows' per-thread LCG
//!
//! T in {2, 4, 8}. Counters as the contended rows (fairness and worst wait);
//! the rwlock rows add reads, writes and writer_worst_wait_ns.

use crate::harness::{bb, lcg_rounds, report_contended, run_window, ticks, ticks_since, Padded, Sample, ThreadResult};
use std::ptr::{read_volatile, write_volatile};

pub const THREADS: [usize; 3] = [2, 4, 8];
pub const MUTEX_OUTSIDE: [u32; 3] = [0, 50, 200];
pub const RWLOCK_READS: [u32; 3] = [100, 90, 50];
/// LCG rounds outside the critical section in the rwlock sweep.
const RWLOCK_OUTSIDE: u32 = 50;

/// A mutex guarding one u64, locked for the length of a closure (no
/// generic associated types in Rust 1.63, so no guard type here).
pub trait SweepMutex: Default + Send + Sync + 'static {
    fn with<R, F: FnOnce(&mut u64) -> R>(&self, f: F) -> R;
    fn value(&mut self) -> u64;
}

impl SweepMutex for parking_lot::Mutex<u64> {
    #[inline(always)]
    fn with<R, F: FnOnce(&mut u64) -> R>(&self, f: F) -> R {
        f(&mut *self.lock())
    }
    fn value(&mut self) -> u64 {
        *self.get_mut()
    }
}

impl SweepMutex for std::sync::Mutex<u64> {
    #[inline(always)]
    fn with<R, F: FnOnce(&mut u64) -> R>(&self, f: F) -> R {
        f(&mut *self.lock().unwrap_or_else(|e| e.into_inner()))
    }
    fn value(&mut self) -> u64 {
        *self.get_mut().unwrap_or_else(|e| e.into_inner())
    }
}

/// A reader-writer lock guarding one u64.
pub trait SweepRwLock: Default + Send + Sync + 'static {
    fn read_with<R, F: FnOnce(&u64) -> R>(&self, f: F) -> R;
    fn write_with<R, F: FnOnce(&mut u64) -> R>(&self, f: F) -> R;
    fn value(&mut self) -> u64;
}

impl SweepRwLock for parking_lot::RwLock<u64> {
    #[inline(always)]
    fn read_with<R, F: FnOnce(&u64) -> R>(&self, f: F) -> R {
        f(&*self.read())
    }
    #[inline(always)]
    fn write_with<R, F: FnOnce(&mut u64) -> R>(&self, f: F) -> R {
        f(&mut *self.write())
    }
    fn value(&mut self) -> u64 {
        *self.get_mut()
    }
}

impl SweepRwLock for std::sync::RwLock<u64> {
    #[inline(always)]
    fn read_with<R, F: FnOnce(&u64) -> R>(&self, f: F) -> R {
        f(&*self.read().unwrap_or_else(|e| e.into_inner()))
    }
    #[inline(always)]
    fn write_with<R, F: FnOnce(&mut u64) -> R>(&self, f: F) -> R {
        f(&mut *self.write().unwrap_or_else(|e| e.into_inner()))
    }
    fn value(&mut self) -> u64 {
        *self.get_mut().unwrap_or_else(|e| e.into_inner())
    }
}

/// The 4 increments of a critical section, each one stored (as the C++
/// rows' benchmark::DoNotOptimize(++counter)).
#[inline(always)]
fn add_four(v: &mut u64) {
    for _ in 0..4 {
        unsafe { write_volatile(v, read_volatile(v) + 1) };
    }
}

/// T threads, each looping { t0 = ticks; lock; wait = ticks since t0; 4
/// increments; unlock; `outside` LCG rounds } for one window.
pub fn mutex<L: SweepMutex>(outside: u32, threads: usize, min_time: f64) -> Sample {
    let mut g: Box<Padded<L>> = Box::default();
    assert_eq!(std::mem::size_of::<Padded<L>>(), 64, "the lock and its value fill one cache line");
    let r = run_window(threads, min_time, |w, index| {
        let g = &*g;
        let (mut x, mut ops, mut worst) = (index as u64 + 1, 0u64, 0u64);
        w.start();
        while w.running() {
            let t0 = ticks();
            g.0.with(|v| {
                worst = worst.max(ticks_since(t0));
                add_four(v);
            });
            x = lcg_rounds(x, outside);
            ops += 1;
        }
        bb(x);
        ThreadResult { ops, worst_wait_ticks: worst, samples: Vec::new() }
    });
    assert_eq!(g.0.value(), 4 * r.total_ops(), "lost updates: mutual exclusion broken");
    report_contended(&r)
}

/// The next step of the thread's LCG as a percentage (the C++ rows'
/// sweep_percent: the high bits, whose period is long).
#[inline(always)]
fn percent(s: &mut u64) -> u32 {
    *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ((*s >> 33) % 100) as u32
}

/// What one rwlock sweep thread counted, beside its ThreadResult.
#[derive(Default, Clone, Copy)]
struct Counts {
    reads: u64,
    writes: u64,
    torn: u64,
    writer_worst: u64,
}

/// T threads, each looping { pick read or write; t0 = ticks; lock; wait =
/// ticks since t0; 4 loads (read) or 4 increments (write); unlock; 50 LCG
/// rounds } for one window.
pub fn rwlock<L: SweepRwLock>(read_pct: u32, threads: usize, min_time: f64) -> Sample {
    let mut g: Box<Padded<L>> = Box::default();
    assert_eq!(std::mem::size_of::<Padded<L>>(), 64, "the lock and its value fill one cache line");
    let counts: Vec<std::sync::Mutex<Counts>> = (0..threads).map(|_| Default::default()).collect();
    let r = run_window(threads, min_time, |w, index| {
        let g = &*g;
        let mut n = Counts::default();
        let (mut x, mut ops, mut worst) = (index as u64 + 1, 0u64, 0u64);
        let mut rng = index as u64 + 1;
        w.start();
        while w.running() {
            let read = percent(&mut rng) < read_pct;
            let t0 = ticks();
            if read {
                n.torn += g.0.read_with(|v| {
                    worst = worst.max(ticks_since(t0));
                    let (a, b, c, d) =
                        unsafe { (read_volatile(v), read_volatile(v), read_volatile(v), read_volatile(v)) };
                    (a != b || b != c || c != d || a % 4 != 0) as u64
                });
                n.reads += 1;
            } else {
                g.0.write_with(|v| {
                    let waited = ticks_since(t0);
                    worst = worst.max(waited);
                    n.writer_worst = n.writer_worst.max(waited);
                    add_four(v);
                });
                n.writes += 1;
            }
            x = lcg_rounds(x, RWLOCK_OUTSIDE);
            ops += 1;
        }
        bb(x);
        *counts[index].lock().unwrap_or_else(|e| e.into_inner()) = n;
        ThreadResult { ops, worst_wait_ticks: worst, samples: Vec::new() }
    });
    let mut all = Counts::default();
    for c in &counts {
        let n = *c.lock().unwrap_or_else(|e| e.into_inner());
        all.reads += n.reads;
        all.writes += n.writes;
        all.torn += n.torn;
        all.writer_worst = all.writer_worst.max(n.writer_worst);
    }
    assert_eq!(all.torn, 0, "torn read: a reader saw a writer inside");
    assert_eq!(all.reads + all.writes, r.total_ops(), "reads + writes differ from the operations counted");
    assert_eq!(g.0.value(), 4 * all.writes, "lost updates: writers overlapped");
    let mut s = report_contended(&r);
    s.counters.push(("reads", all.reads as f64));
    s.counters.push(("writes", all.writes as f64));
    s.counters.push(("writer_worst_wait_ns", crate::harness::ticks_to_ns(all.writer_worst)));
    s
}

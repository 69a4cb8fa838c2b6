//! pool rows: fib(30) by rayon::join (no serial cut-off: every call with
//! n >= 2 is a join) and the plain recursive fib(30) on one thread (the floor).

use crate::harness::{bb, single, Sample, Snapshot};

const FIB30: u64 = 832_040;

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

/// real_time: ns per fib(30); cpu_time: CPU of the whole process (all pool
/// workers) per fib(30).
fn fib30(min_time: f64, hint: &mut u64, f: fn(u32) -> u64) -> Sample {
    single(min_time, hint, 1, |n| {
        let t = Snapshot::now();
        for _ in 0..n {
            assert_eq!(f(bb(30)), FIB30);
        }
        t.stop(n)
    })
}

/// rayon's global pool (one worker per CPU), warmed up before measuring.
pub fn fib30_rayon(min_time: f64, hint: &mut u64) -> Sample {
    assert_eq!(fib_rayon(bb(20)), 6765);
    fib30(min_time, hint, fib_rayon)
}

pub fn fib30_serial(min_time: f64, hint: &mut u64) -> Sample {
    fib30(min_time, hint, fib_serial)
}

pub fn rayon_threads() -> usize {
    rayon::current_num_threads()
}

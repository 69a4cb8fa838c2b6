//! cond rows: parking_lot's and std's Condvar on their Mutex, with the loop
//! bodies of the C++ harness's cond.cpp.
//!
//! The two peers differ only in how a guard waits (parking_lot's
//! `wait(&mut guard)`, std's `wait(guard) -> guard`), so the scenarios are
//! written once in a macro and instantiated for each peer's small adapter
//! module (generic code over the guards would need generic associated
//! types, newer than Debian 12's rustc 1.63).

use crate::harness::Padded;

/// parking_lot::{Mutex, Condvar}.
pub mod pl {
    pub type Mutex<T> = parking_lot::Mutex<T>;
    pub type Guard<'a, T> = parking_lot::MutexGuard<'a, T>;
    pub type Condvar = parking_lot::Condvar;
    #[inline(always)]
    pub fn lock<T>(m: &Mutex<T>) -> Guard<'_, T> {
        m.lock()
    }
    #[inline(always)]
    pub fn wait<'a, T>(c: &Condvar, mut g: Guard<'a, T>) -> Guard<'a, T> {
        c.wait(&mut g);
        g
    }
    #[inline(always)]
    pub fn signal(c: &Condvar) {
        c.notify_one();
    }
    #[inline(always)]
    pub fn broadcast(c: &Condvar) {
        c.notify_all();
    }
}

/// std::sync::{Mutex, Condvar}.
pub mod st {
    pub type Mutex<T> = std::sync::Mutex<T>;
    pub type Guard<'a, T> = std::sync::MutexGuard<'a, T>;
    pub type Condvar = std::sync::Condvar;
    #[inline(always)]
    pub fn lock<T>(m: &Mutex<T>) -> Guard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }
    #[inline(always)]
    pub fn wait<'a, T>(c: &Condvar, g: Guard<'a, T>) -> Guard<'a, T> {
        c.wait(g).unwrap_or_else(|e| e.into_inner())
    }
    #[inline(always)]
    pub fn signal(c: &Condvar) {
        c.notify_one();
    }
    #[inline(always)]
    pub fn broadcast(c: &Condvar) {
        c.notify_all();
    }
}

/// Waiters of the broadcast rows (threads:8), plus the broadcaster.
pub const WAITERS: usize = 8;

/// The ping-pong's state: whose turn it is (0: A, 1: B) and whether A has
/// stopped.
#[derive(Default)]
struct Turn {
    turn: u8,
    done: bool,
}

/// The broadcast's state, under the one mutex.
#[derive(Default)]
struct Round {
    generation: u64,
    acks: usize,
    done: bool,
    lost: bool, // a waiter saw the generation jump by more than one
}

macro_rules! cond_scenarios {
    ($peer:ident) => {
        use super::{Padded, Round, Turn, WAITERS};
        use crate::cond::$peer::{broadcast as notify_all, lock, signal, wait, Condvar, Mutex};
        use crate::harness::{report_handoff, run_window, ticks, ticks_since, Sample, ThreadResult, Window};

        struct PingPong {
            m: Padded<Mutex<Turn>>,
            c: Condvar,
        }

        /// A: flips the turn to B, signals, waits until it is back.
        fn pingpong_a(w: &Window, p: &PingPong) -> ThreadResult {
            let mut samples = Vec::with_capacity(1 << 16);
            w.start();
            let mut g = lock(&p.m.0);
            loop {
                let last = !w.running();
                let t0 = ticks();
                g.turn = 1;
                g.done = last;
                signal(&p.c);
                if last {
                    break;
                }
                while g.turn != 0 {
                    g = wait(&p.c, g);
                }
                samples.push(ticks_since(t0));
            }
            drop(g);
            ThreadResult { ops: samples.len() as u64, worst_wait_ticks: 0, samples }
        }

        /// B: waits for its turn and hands it back.
        fn pingpong_b(w: &Window, p: &PingPong) -> ThreadResult {
            w.start();
            let mut g = lock(&p.m.0);
            loop {
                while g.turn != 1 {
                    g = wait(&p.c, g);
                }
                if g.done {
                    break;
                }
                g.turn = 0;
                signal(&p.c);
            }
            drop(g);
            ThreadResult::default()
        }

        /// Two threads pass a turn flag back and forth under one mutex.
        pub fn pingpong(min_time: f64) -> Sample {
            let p = Box::new(PingPong { m: Padded(Mutex::new(Turn::default())), c: Condvar::new() });
            let r = run_window(
                2,
                min_time,
                |w: &Window, index| if index == 0 { pingpong_a(w, &p) } else { pingpong_b(w, &p) },
            );
            report_handoff(&r)
        }

        struct Broadcast {
            m: Padded<Mutex<Round>>,
            go: Condvar,
            acked: Condvar,
        }

        /// Bumps the generation and broadcasts, then waits for every ack.
        fn broadcaster(w: &Window, b: &Broadcast) -> ThreadResult {
            let mut samples = Vec::with_capacity(1 << 14);
            w.start();
            let mut g = lock(&b.m.0);
            loop {
                let last = !w.running();
                let t0 = ticks();
                g.generation += 1;
                g.acks = 0;
                g.done = last;
                notify_all(&b.go);
                if last {
                    break;
                }
                while g.acks != WAITERS {
                    g = wait(&b.acked, g);
                }
                samples.push(ticks_since(t0));
            }
            drop(g);
            ThreadResult { ops: samples.len() as u64, worst_wait_ticks: 0, samples }
        }

        /// Waits for each new generation and acknowledges it.
        fn waiter(w: &Window, b: &Broadcast) -> ThreadResult {
            let mut seen = 0u64;
            w.start();
            let mut g = lock(&b.m.0);
            loop {
                while g.generation == seen {
                    g = wait(&b.go, g);
                }
                if g.generation != seen + 1 {
                    g.lost = true;
                }
                seen = g.generation;
                if g.done {
                    break;
                }
                g.acks += 1;
                if g.acks == WAITERS {
                    signal(&b.acked);
                }
            }
            drop(g);
            ThreadResult::default()
        }

        /// One broadcaster and WAITERS waiters, a round per generation.
        pub fn broadcast(min_time: f64) -> Sample {
            let b = Box::new(Broadcast {
                m: Padded(Mutex::new(Round::default())),
                go: Condvar::new(),
                acked: Condvar::new(),
            });
            let r = run_window(
                1 + WAITERS,
                min_time,
                |w: &Window, index| if index == 0 { broadcaster(w, &b) } else { waiter(w, &b) },
            );
            assert!(!lock(&b.m.0).lost, "a waiter missed a generation");
            report_handoff(&r)
        }
    };
}

/// The rows of rust_parking_lot.
pub mod parking {
    cond_scenarios!(pl);
}

/// The rows of rust_std.
pub mod std_sync {
    cond_scenarios!(st);
}

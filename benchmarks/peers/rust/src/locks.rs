//! mutex, rwlock and sem rows: parking_lot, std::sync and tokio::sync, with
//! the loop bodies of the C++ harness's mutex.cpp / sem.cpp.

use crate::harness::{
    bb, local_work, report_contended, report_handoff, run_window, single, ticks, ticks_since, time_window, Padded,
    Sample, ThreadResult, Window,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A blocking mutex peer, as the loops below use it. The lifetime parameter
/// lets the guard borrow the mutex without generic associated types (newer
/// than Debian 12's rustc 1.63).
pub trait Guarded<'a> {
    type Guard: 'a;
    fn acquire(&'a self) -> Self::Guard;
}

pub trait Lock: for<'a> Guarded<'a> + Default + Send + Sync + 'static {}
impl<T: for<'a> Guarded<'a> + Default + Send + Sync + 'static> Lock for T {}

impl<'a> Guarded<'a> for parking_lot::Mutex<()> {
    type Guard = parking_lot::MutexGuard<'a, ()>;
    #[inline(always)]
    fn acquire(&'a self) -> Self::Guard {
        self.lock()
    }
}

impl<'a> Guarded<'a> for std::sync::Mutex<()> {
    type Guard = std::sync::MutexGuard<'a, ()>;
    #[inline(always)]
    fn acquire(&'a self) -> Self::Guard {
        self.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A blocking reader-writer lock peer.
pub trait RwPeer: Default + Send + Sync + 'static {
    fn read_pair(&self);
    fn write_pair(&self);
}

impl RwPeer for parking_lot::RwLock<()> {
    #[inline(always)]
    fn read_pair(&self) {
        drop(self.read());
    }
    #[inline(always)]
    fn write_pair(&self) {
        drop(self.write());
    }
}

impl RwPeer for std::sync::RwLock<()> {
    #[inline(always)]
    fn read_pair(&self) {
        drop(self.read().unwrap_or_else(|e| e.into_inner()));
    }
    #[inline(always)]
    fn write_pair(&self) {
        drop(self.write().unwrap_or_else(|e| e.into_inner()));
    }
}

/// Keeps the compiler from moving memory accesses across the loop's end,
/// like benchmark::ClobberMemory().
#[inline(always)]
fn clobber() {
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
}

// ---- uncontended ------------------------------------------------------------

/// lock + unlock by one thread (the idle thread started in main keeps the
/// process multi-threaded). real_time: ns per pair.
pub fn uncontended<L: Lock>(min_time: f64, hint: &mut u64) -> Sample {
    let m: Box<Padded<L>> = Box::default();
    single(min_time, hint, 1 << 12, |n| {
        let t = crate::harness::Snapshot::now();
        for _ in 0..n {
            drop(m.0.acquire());
            clobber();
        }
        t.stop(n)
    })
}

/// tokio::sync::Mutex: `lock().await` + drop in a loop inside one `block_on`
/// of a current-thread runtime. real_time: ns per pair.
pub fn uncontended_tokio(min_time: f64, hint: &mut u64) -> Sample {
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("tokio runtime");
    let m: Box<Padded<tokio::sync::Mutex<()>>> = Box::default();
    single(min_time, hint, 1 << 12, |n| {
        rt.block_on(async {
            let t = crate::harness::Snapshot::now();
            for _ in 0..n {
                drop(m.0.lock().await);
                clobber();
            }
            t.stop(n)
        })
    })
}

/// tokio::sync::Semaphore with one permit: `try_acquire()` + drop of the
/// permit, no runtime (an uncontended `acquire().await` takes the same path
/// plus a future). real_time: ns per acquire+release.
pub fn sem_uncontended_tokio(min_time: f64, hint: &mut u64) -> Sample {
    let sem = Box::new(Padded(tokio::sync::Semaphore::new(1)));
    single(min_time, hint, 1 << 12, |n| {
        let t = crate::harness::Snapshot::now();
        for _ in 0..n {
            drop(sem.0.try_acquire().expect("the only permit is free"));
            clobber();
        }
        t.stop(n)
    })
}

/// read() + unlock by one thread. real_time: ns per pair.
pub fn rw_uncontended_read<L: RwPeer>(min_time: f64, hint: &mut u64) -> Sample {
    let l: Box<Padded<L>> = Box::default();
    single(min_time, hint, 1 << 12, |n| {
        let t = crate::harness::Snapshot::now();
        for _ in 0..n {
            l.0.read_pair();
            clobber();
        }
        t.stop(n)
    })
}

/// write() + unlock by one thread. real_time: ns per pair.
pub fn rw_uncontended_write<L: RwPeer>(min_time: f64, hint: &mut u64) -> Sample {
    let l: Box<Padded<L>> = Box::default();
    single(min_time, hint, 1 << 12, |n| {
        let t = crate::harness::Snapshot::now();
        for _ in 0..n {
            l.0.write_pair();
            clobber();
        }
        t.stop(n)
    })
}

// ---- contended --------------------------------------------------------------

/// One cache line of data guarded by the contended mutex.
#[repr(align(64))]
#[derive(Default)]
struct Line {
    v: [u64; 8],
}

/// The mutex on its own line and the two lines it guards. The data sit in
/// UnsafeCells beside the lock (not inside it), as in the C++ harness, so
/// every contender guards the same layout.
#[derive(Default)]
struct Contended<L> {
    lock: Padded<L>,
    a: std::cell::UnsafeCell<Line>,
    b: std::cell::UnsafeCell<Line>,
}

// The lines are only touched while `lock` is held.
unsafe impl<L: Sync> Sync for Contended<L> {}

impl<L> Contended<L> {
    /// The critical section: two shared lines. Caller holds `lock`.
    #[inline(always)]
    unsafe fn critical(&self) {
        let (a, b) = (&mut *self.a.get(), &mut *self.b.get());
        a.v[0] += 1;
        b.v[0] = b.v[0].wrapping_add(a.v[0]);
    }
    fn updates(&mut self) -> u64 {
        self.a.get_mut().v[0]
    }
}

/// T threads, each looping { t0 = ticks; lock; wait = ticks since t0;
/// critical section; unlock; local work } for one window.
pub fn contended<L: Lock>(threads: usize, min_time: f64) -> Sample {
    let mut g: Box<Contended<L>> = Box::default();
    let r = run_window(threads, min_time, |w: &Window, index| {
        let g = &*g;
        let (mut x, mut ops, mut worst) = (index as u64 + 1, 0u64, 0u64);
        w.start();
        while w.running() {
            let t0 = ticks();
            let guard = g.lock.0.acquire();
            worst = worst.max(ticks_since(t0));
            unsafe { g.critical() };
            drop(guard);
            x = local_work(x);
            ops += 1;
        }
        bb(x);
        ThreadResult { ops, worst_wait_ticks: worst, samples: Vec::new() }
    });
    assert_eq!(g.updates(), r.total_ops(), "lost updates: mutual exclusion broken");
    report_contended(&r)
}

/// tokio::sync::Mutex contended: the same loop in T tasks (`lock().await`)
/// on a multi-thread runtime with T worker threads.
pub fn contended_tokio(threads: usize, min_time: f64) -> Sample {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(threads).build().expect("tokio runtime");
    let g: Arc<Contended<tokio::sync::Mutex<()>>> = Arc::default();
    let w = Arc::new(Window::default());
    let handles: Vec<_> = (0..threads)
        .map(|index| {
            let (g, w) = (g.clone(), w.clone());
            rt.spawn(async move {
                let (mut x, mut ops, mut worst) = (index as u64 + 1, 0u64, 0u64);
                w.start_async().await;
                while w.running() {
                    let t0 = ticks();
                    let guard = g.lock.0.lock().await;
                    worst = worst.max(ticks_since(t0));
                    unsafe { g.critical() };
                    drop(guard);
                    x = local_work(x);
                    ops += 1;
                }
                bb(x);
                ThreadResult { ops, worst_wait_ticks: worst, samples: Vec::new() }
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
    drop(rt);
    let updates = unsafe { (*g.a.get()).v[0] };
    assert_eq!(updates, r.total_ops(), "lost updates: mutual exclusion broken");
    report_contended(&r)
}

// ---- hand-off ---------------------------------------------------------------

// Hand-off through three mutexes M0..M2, each thread only ever unlocking
// mutexes it locked itself (std's and parking_lot's guards require that), as
// in the C++ harness. Thread A starts holding M0 and M1, thread B holding
// M2. In round k (i = k mod 3):
//   A: unlock M[i], then lock M[i+2]      (held by B)
//   B: lock M[i] (released by A), then unlock M[i+2]
// so each round wakes B and then A: one round trip, timed by A from its
// unlock to its lock returning. To stop, A sets `done` before its unlock; B
// sees it once it holds M[i], and both release what they hold.

struct Handoff<L> {
    m: [Padded<L>; 3],
    done: Padded<AtomicBool>,
}

impl<L: Default> Default for Handoff<L> {
    fn default() -> Self {
        Handoff { m: Default::default(), done: Default::default() }
    }
}

fn handoff_ping<L: Lock>(w: &Window, h: &Handoff<L>) -> ThreadResult {
    let mut samples = Vec::with_capacity(1 << 16);
    let mut g = [Some(h.m[0].0.acquire()), Some(h.m[1].0.acquire()), None];
    w.start();
    let mut i = 0;
    loop {
        let (next, prev) = ((i + 1) % 3, (i + 2) % 3);
        let last = !w.running();
        if last {
            h.done.0.store(true, Ordering::Relaxed); // ordered by the unlock of M[i]
        }
        let t0 = ticks();
        g[i] = None;
        if last {
            g[next] = None;
            break;
        }
        g[prev] = Some(h.m[prev].0.acquire());
        samples.push(ticks_since(t0));
        i = next;
    }
    ThreadResult { ops: samples.len() as u64, worst_wait_ticks: 0, samples }
}

fn handoff_echo<L: Lock>(w: &Window, h: &Handoff<L>) -> ThreadResult {
    let mut g = [None, None, Some(h.m[2].0.acquire())];
    w.start();
    let mut i = 0;
    loop {
        let prev = (i + 2) % 3;
        g[i] = Some(h.m[i].0.acquire());
        let done = h.done.0.load(Ordering::Relaxed); // ordered by the lock of M[i]
        g[prev] = None;
        if done {
            g[i] = None;
            break;
        }
        i = (i + 1) % 3;
    }
    ThreadResult::default()
}

/// Two threads, the three-mutex rotation above, for one window.
pub fn handoff<L: Lock>(min_time: f64) -> Sample {
    let h: Box<Handoff<L>> = Box::default();
    let r =
        run_window(2, min_time, |w: &Window, index| if index == 0 { handoff_ping(w, &h) } else { handoff_echo(w, &h) });
    report_handoff(&r)
}

/// The same rotation with two tokio tasks on a 2-worker multi-thread runtime.
/// tokio's mutex hands the permit straight to the queued waiter, and a task
/// woken by a worker usually runs on that worker once the current task
/// suspends, so this measures tokio's task hand-off, not a kernel wake-up.
pub fn handoff_tokio(min_time: f64) -> Sample {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().expect("tokio runtime");
    let h: Arc<Handoff<tokio::sync::Mutex<()>>> = Arc::default();
    let w = Arc::new(Window::default());
    let ping = {
        let (h, w) = (h.clone(), w.clone());
        rt.spawn(async move {
            let mut samples = Vec::with_capacity(1 << 16);
            let mut g = [Some(h.m[0].0.lock().await), Some(h.m[1].0.lock().await), None];
            w.start_async().await;
            let mut i = 0;
            loop {
                let (next, prev) = ((i + 1) % 3, (i + 2) % 3);
                let last = !w.running();
                if last {
                    h.done.0.store(true, Ordering::Relaxed);
                }
                let t0 = ticks();
                g[i] = None;
                if last {
                    g[next] = None;
                    break;
                }
                g[prev] = Some(h.m[prev].0.lock().await);
                samples.push(ticks_since(t0));
                i = next;
            }
            ThreadResult { ops: samples.len() as u64, worst_wait_ticks: 0, samples }
        })
    };
    let echo = {
        let (h, w) = (h.clone(), w.clone());
        rt.spawn(async move {
            let mut g = [None, None, Some(h.m[2].0.lock().await)];
            w.start_async().await;
            let mut i = 0;
            loop {
                let prev = (i + 2) % 3;
                g[i] = Some(h.m[i].0.lock().await);
                let done = h.done.0.load(Ordering::Relaxed);
                g[prev] = None;
                if done {
                    g[i] = None;
                    break;
                }
                i = (i + 1) % 3;
            }
            ThreadResult::default()
        })
    };
    let r = time_window(&w, 2, min_time, || {
        rt.block_on(async { vec![ping.await.expect("ping task"), echo.await.expect("echo task")] })
    });
    report_handoff(&r)
}

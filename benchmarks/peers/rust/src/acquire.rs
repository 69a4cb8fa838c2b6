//! async rows: tokio::sync Semaphore, Mutex and RwLock acquired with
//! `.await`, with the loop bodies of the C++ harness's async.cpp.

use crate::harness::{run_window, single, time_window, Padded, Sample, Snapshot, ThreadResult, Window};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Workers of the runtime of every row, as the C++ rows' park pool.
const WORKERS: usize = 2;
/// Acquisitions a producer has in flight at once (the C++ rows' kBatch).
const BATCH: usize = 64;

/// The primitive and the hold a row acquires.
#[derive(Clone, Copy)]
pub enum Kind {
    /// tokio::sync::Semaphore with one permit: `acquire().await`
    Sem,
    /// tokio::sync::Mutex: `lock().await`
    Mutex,
    /// tokio::sync::RwLock: `read().await`
    Read,
    /// tokio::sync::RwLock: `write().await`
    Write,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(WORKERS).build().expect("tokio runtime")
}

/// Keeps the compiler from moving memory accesses across the loop's end.
#[inline(always)]
fn clobber() {
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
}

/// The three primitives, each on its own cache line, and what the critical
/// section touches.
struct Shared {
    sem: Padded<tokio::sync::Semaphore>,
    mutex: Padded<tokio::sync::Mutex<()>>,
    rw: Padded<tokio::sync::RwLock<()>>,
    inside: Padded<AtomicU64>, // exclusive holders right now; never above 1
    hits: Padded<AtomicU64>,   // completed critical sections
    excess: AtomicBool,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            sem: Padded(tokio::sync::Semaphore::new(1)),
            mutex: Padded(tokio::sync::Mutex::new(())),
            rw: Padded(tokio::sync::RwLock::new(())),
            inside: Padded(AtomicU64::new(0)),
            hits: Padded(AtomicU64::new(0)),
            excess: AtomicBool::new(false),
        }
    }

    // Relaxed: the primitive orders these; `inside` only checks its count.
    #[inline(always)]
    fn exclusive(&self) {
        if self.inside.0.fetch_add(1, Ordering::Relaxed) >= 1 {
            self.excess.store(true, Ordering::Relaxed);
        }
        self.hits.0.fetch_add(1, Ordering::Relaxed);
        self.inside.0.fetch_sub(1, Ordering::Relaxed);
    }

    #[inline(always)]
    fn shared(&self) {
        self.hits.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Acquires, runs the critical section holding the primitive, releases.
    async fn section(&self, kind: Kind) {
        match kind {
            Kind::Sem => {
                let _p = self.sem.0.acquire().await.expect("the semaphore is never closed");
                self.exclusive();
            }
            Kind::Mutex => {
                let _g = self.mutex.0.lock().await;
                self.exclusive();
            }
            Kind::Read => {
                let _g = self.rw.0.read().await;
                self.shared();
            }
            Kind::Write => {
                let _g = self.rw.0.write().await;
                self.exclusive();
            }
        }
    }
}

// ---- uncontended ------------------------------------------------------------

/// One thread acquires and releases in a loop inside one `block_on` of a
/// 2-worker runtime (tokio's cooperative budget makes the loop yield to the
/// runtime every 128 acquisitions; included). real_time: ns per pair.
pub fn uncontended(kind: Kind, min_time: f64, hint: &mut u64) -> Sample {
    let rt = runtime();
    let g = Box::new(Shared::new());
    single(min_time, hint, 1 << 12, |n| {
        rt.block_on(async {
            let t = Snapshot::now();
            match kind {
                Kind::Sem => {
                    for _ in 0..n {
                        drop(g.sem.0.acquire().await.expect("the semaphore is never closed"));
                        clobber();
                    }
                }
                Kind::Mutex => {
                    for _ in 0..n {
                        drop(g.mutex.0.lock().await);
                        clobber();
                    }
                }
                Kind::Read => {
                    for _ in 0..n {
                        drop(g.rw.0.read().await);
                        clobber();
                    }
                }
                Kind::Write => {
                    for _ in 0..n {
                        drop(g.rw.0.write().await);
                        clobber();
                    }
                }
            }
            t.stop(n)
        })
    })
}

// ---- contended --------------------------------------------------------------

/// Where a producer sleeps until the tasks of its batch have run. The last
/// count_down notifies while holding the mutex, so the producer cannot
/// return from wait() while a worker still touches it.
#[derive(Default)]
struct Latch {
    left: AtomicUsize,
    done: Mutex<bool>,
    cv: Condvar,
}

impl Latch {
    fn reset(&self, n: usize) {
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        *d = false;
        // Relaxed: the batch's tasks are spawned after this store, by this
        // thread, and spawning publishes it to them.
        self.left.store(n, Ordering::Relaxed);
    }

    fn count_down(&self) {
        // AcqRel: the last count-down sees every earlier one's writes, and
        // the mutex passes them on to the waiting producer.
        if self.left.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        *d = true;
        self.cv.notify_one();
    }

    fn wait(&self) {
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*d {
            d = self.cv.wait(d).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// What a spawned task needs, as raw pointers, as the C++ rows pass them:
/// both outlive every task (each producer waits for its tasks, and the
/// runtime is dropped before them), and an Arc would add a shared reference
/// count to every task.
#[derive(Clone, Copy)]
struct Refs {
    g: *const Shared,
    latch: *const Latch,
}

// The pointees are Sync and outlive the tasks (above).
unsafe impl Send for Refs {}

/// P producer threads each spawn batches of BATCH tasks onto a 2-worker
/// runtime and wait until the batch has run; each task acquires (`.await`),
/// runs the critical section and releases. items_per_second = critical
/// sections per second, the last batches' drain included.
pub fn contended(kind: Kind, producers: usize, min_time: f64) -> Sample {
    let g = Box::new(Shared::new());
    let latches: Vec<Padded<Latch>> = (0..producers).map(|_| Padded::default()).collect();
    let rt = runtime();
    let handle = rt.handle().clone();
    let r = run_window(producers, min_time, |w: &Window, index| {
        let refs = Refs { g: &*g, latch: &latches[index].0 };
        let latch = &latches[index].0;
        let mut ops = 0u64;
        w.start();
        while w.running() {
            latch.reset(BATCH);
            for _ in 0..BATCH {
                handle.spawn(async move {
                    let r = refs;
                    let (g, latch) = unsafe { (&*r.g, &*r.latch) };
                    g.section(kind).await;
                    latch.count_down();
                });
            }
            latch.wait();
            ops += BATCH as u64;
        }
        ThreadResult { ops, worst_wait_ticks: 0, samples: Vec::new() }
    });
    drop(rt);
    assert!(!g.excess.load(Ordering::Relaxed), "more holders than permits");
    assert_eq!(g.hits.0.load(Ordering::Relaxed), r.total_ops(), "lost critical sections");
    crate::harness::report_throughput(&r)
}

// ---- loop -------------------------------------------------------------------

/// N tasks (threads:N) on a 2-worker runtime, each looping: acquire
/// (`.await`), run the critical section, release; no producer thread.
/// real_time = ns per round of all tasks together; items_per_second =
/// rounds per second.
pub fn looped(kind: Kind, tasks: usize, min_time: f64) -> Sample {
    let rt = runtime();
    let g = Arc::new(Shared::new());
    let w = Arc::new(Window::default());
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let (g, w) = (g.clone(), w.clone());
            rt.spawn(async move {
                let mut ops = 0u64;
                w.start_async().await;
                while w.running() {
                    g.section(kind).await;
                    ops += 1;
                }
                ThreadResult { ops, worst_wait_ticks: 0, samples: Vec::new() }
            })
        })
        .collect();
    let r = time_window(&w, tasks, min_time, || {
        rt.block_on(async {
            let mut v = Vec::with_capacity(tasks);
            for h in handles {
                v.push(h.await.expect("benchmark task"));
            }
            v
        })
    });
    drop(rt);
    assert!(!g.excess.load(Ordering::Relaxed), "more holders than permits");
    assert_eq!(g.hits.0.load(Ordering::Relaxed), r.total_ops(), "lost critical sections");
    crate::harness::report_throughput(&r)
}

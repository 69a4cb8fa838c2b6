//! event rows: tokio::sync::Notify as an auto-reset event (notify_one with
//! nobody waiting leaves one permit, which the next `notified().await`
//! consumes; permits do not add up), with the loop bodies of the C++
//! harness's event.cpp.

use crate::harness::{report_handoff, single, ticks, ticks_since, time_window, Padded, Sample, ThreadResult, Window};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// Keeps the compiler from moving memory accesses across the loop's end.
#[inline(always)]
fn clobber() {
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
}

/// `notify_one()` with nobody waiting, then `notified().await`, which
/// consumes the permit it left, in a loop inside one `block_on` of a
/// current-thread runtime. real_time: ns per set + wait.
pub fn uncontended_tokio(min_time: f64, hint: &mut u64) -> Sample {
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("tokio runtime");
    let e: Box<Padded<Notify>> = Box::new(Padded(Notify::new()));
    single(min_time, hint, 1 << 12, |n| {
        rt.block_on(async {
            let t = crate::harness::Snapshot::now();
            for _ in 0..n {
                e.0.notify_one();
                e.0.notified().await;
                clobber();
            }
            t.stop(n)
        })
    })
}

#[derive(Default)]
struct PingPong {
    x: Padded<Notify>,
    y: Padded<Notify>,
    done: Padded<AtomicBool>,
}

/// Two tasks on a 2-worker multi-thread runtime, two Notify: A notifies X
/// and awaits Y, B awaits X and notifies Y; A times its notify to its await
/// returning. A task woken by a worker usually runs on that worker once the
/// current task suspends: this is tokio's task hand-off, not a kernel
/// wake-up.
pub fn pingpong_tokio(min_time: f64) -> Sample {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().expect("tokio runtime");
    let p: Arc<PingPong> = Arc::default();
    let w = Arc::new(Window::default());
    let ping = {
        let (p, w) = (p.clone(), w.clone());
        rt.spawn(async move {
            let mut samples = Vec::with_capacity(1 << 16);
            w.start_async().await;
            loop {
                let last = !w.running();
                if last {
                    // release: pairs with the acquire load after B's await on x.
                    p.done.0.store(true, Ordering::Release);
                }
                let t0 = ticks();
                p.x.0.notify_one();
                if last {
                    break;
                }
                p.y.0.notified().await;
                samples.push(ticks_since(t0));
            }
            ThreadResult { ops: samples.len() as u64, worst_wait_ticks: 0, samples }
        })
    };
    let echo = {
        let (p, w) = (p.clone(), w.clone());
        rt.spawn(async move {
            w.start_async().await;
            loop {
                p.x.0.notified().await;
                // acquire: pairs with the release store before A's last notify.
                if p.done.0.load(Ordering::Acquire) {
                    break;
                }
                p.y.0.notify_one();
            }
            ThreadResult::default()
        })
    };
    let r = time_window(&w, 2, min_time, || {
        rt.block_on(async { vec![ping.await.expect("ping task"), echo.await.expect("echo task")] })
    });
    report_handoff(&r)
}

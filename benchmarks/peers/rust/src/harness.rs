//! The timing loops, the statistics and the google-benchmark-shaped JSON.
//!
//! The measuring rules follow the C++ harness (benchmarks/harness.h): rows
//! are either *single* (google-benchmark's iteration search on one thread,
//! real_time = ns per operation) or *windowed* (T threads run their loop for
//! one window of --min-time seconds per repetition; real_time = window / all
//! operations, and counters carry the rest).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Keeps the optimiser from deleting or folding a value (std::hint::black_box
/// is newer than Debian 12's rustc 1.63).
#[inline(always)]
pub fn bb<T: Copy>(x: T) -> T {
    unsafe { std::ptr::read_volatile(&x) }
}

/// Hides a value from the optimiser at no cost, like the C++ harness's
/// `asm volatile("" : "+r"(x))`.
#[inline(always)]
fn opaque(x: &mut u64) {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64"))]
    unsafe {
        std::arch::asm!("/* {0} */", inout(reg) * x, options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
    {
        *x = bb(*x);
    }
}

// ---- clock ---------------------------------------------------------------

/// A cheap timestamp for waits and latencies, in ticks: the TSC on x86-64,
/// otherwise ns of a monotonic clock (as the C++ harness's bench::ticks()).
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        unsafe {
            libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
        }
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}

/// Ticks from t0 to now; 0 if the clock read earlier (TSCs of different cores
/// may disagree by a little).
#[inline(always)]
pub fn ticks_since(t0: u64) -> u64 {
    ticks().saturating_sub(t0)
}

static NS_PER_TICK: AtomicU64 = AtomicU64::new(0x3ff0_0000_0000_0000); // 1.0

/// Measures ticks against the monotonic clock once (20 ms); call before any
/// row runs.
pub fn calibrate_ticks() {
    let (t0, c0) = (Instant::now(), ticks());
    std::thread::sleep(Duration::from_millis(20));
    let (ns, c1) = (t0.elapsed().as_nanos() as f64, ticks());
    if c1 > c0 {
        NS_PER_TICK.store((ns / (c1 - c0) as f64).to_bits(), Ordering::Relaxed);
    }
}

pub fn ticks_to_ns(t: u64) -> f64 {
    t as f64 * f64::from_bits(NS_PER_TICK.load(Ordering::Relaxed))
}

// ---- process counters ----------------------------------------------------

/// CPU time (user + system) of the whole process, all threads, in seconds.
pub fn process_cpu() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe {
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Voluntary plus involuntary context switches of the process so far
/// (getrusage(RUSAGE_SELF) counts exited threads too).
pub fn context_switches() -> u64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe {
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
    }
    (ru.ru_nvcsw + ru.ru_nivcsw) as u64
}

/// Wall clock, process CPU and context switches at one moment.
#[derive(Clone, Copy)]
pub struct Snapshot {
    wall: Instant,
    cpu: f64,
    csw: u64,
}

impl Snapshot {
    pub fn now() -> Snapshot {
        let csw = context_switches();
        let cpu = process_cpu();
        Snapshot { wall: Instant::now(), cpu, csw }
    }
}

// ---- single rows -----------------------------------------------------------

/// One run of a single row: `n` operations in `wall` seconds.
pub struct Run {
    pub n: u64,
    pub wall: f64,
    pub cpu: f64,
}

impl Snapshot {
    /// Ends an interval begun at `self` in which `n` operations were done.
    pub fn stop(&self, n: u64) -> Run {
        let after = Snapshot::now();
        Run { n, wall: after.wall.duration_since(self.wall).as_secs_f64(), cpu: after.cpu - self.cpu }
    }
}

/// google-benchmark's iteration search: run `f(n)` with growing n until one
/// run lasts at least `min_time` seconds, and keep that run.
pub fn grow<F: FnMut(u64) -> Run>(min_time: f64, start: u64, mut f: F) -> Run {
    let mut n = start.max(1);
    loop {
        let r = f(n);
        if r.wall >= min_time || n >= 1_000_000_000_000 {
            return r;
        }
        let significant = r.wall / min_time > 0.1;
        let mult = if significant { min_time * 1.4 / r.wall.max(1e-9) } else { 10.0 };
        n = ((n as f64 * mult).round() as u64).max(n + 1);
    }
}

/// A single row's repetition: real_time and cpu_time in ns per operation.
/// `hint` carries the iteration count found by the previous repetition, so
/// later repetitions skip the search, as in google-benchmark.
pub fn single<F: FnMut(u64) -> Run>(min_time: f64, hint: &mut u64, start: u64, f: F) -> Sample {
    let r = grow(min_time, (*hint).max(start), f);
    *hint = r.n;
    let n = r.n.max(1) as f64;
    Sample { real_ns: r.wall * 1e9 / n, cpu_ns: r.cpu * 1e9 / n, items_per_second: None, counters: Vec::new() }
}

// ---- windowed rows ---------------------------------------------------------

/// The start gate and stop flag of one window, as its workers see it.
#[derive(Default)]
pub struct Window {
    gate: Mutex<(usize, bool)>, // (arrived, open)
    cv: Condvar,
    arrived: AtomicUsize,
    open: AtomicBool,
    started: AtomicUsize,
    stop: Padded<AtomicBool>,
}

#[repr(align(64))]
#[derive(Default)]
pub struct Padded<T>(pub T);

impl Window {
    /// Arrive at the start gate and wait (blocked) until the window opens.
    /// Each thread worker calls it once, after its setup.
    pub fn start(&self) {
        let mut g = self.gate.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        self.arrived.store(g.0, Ordering::Release);
        self.cv.notify_all();
        while !g.1 {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        drop(g);
        self.started.fetch_add(1, Ordering::AcqRel);
    }

    /// The same for a tokio task: yields to its runtime until the window
    /// opens (a task must not block its worker thread).
    pub async fn start_async(&self) {
        self.arrived.fetch_add(1, Ordering::AcqRel);
        while !self.open.load(Ordering::Acquire) {
            tokio::task::yield_now().await;
        }
        self.started.fetch_add(1, Ordering::AcqRel);
    }

    /// False once the window has closed: a relaxed load of a flag on its own
    /// cache line, cheap enough to test every iteration.
    #[inline(always)]
    pub fn running(&self) -> bool {
        !self.stop.0.load(Ordering::Relaxed)
    }

    fn await_arrivals(&self, threads: usize) {
        while self.arrived.load(Ordering::Acquire) < threads {
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    fn open(&self) {
        let mut g = self.gate.lock().unwrap_or_else(|e| e.into_inner());
        g.1 = true;
        self.open.store(true, Ordering::Release);
        drop(g);
        self.cv.notify_all();
    }
}

/// What one worker reports.
#[derive(Default)]
pub struct ThreadResult {
    pub ops: u64,
    pub worst_wait_ticks: u64,
    /// Hand-off rows: the round-trip latencies, in ticks.
    pub samples: Vec<u64>,
}

pub struct WindowResult {
    pub seconds: f64,
    pub cpu_seconds: f64,
    pub context_switches: u64,
    pub threads: Vec<ThreadResult>,
}

impl WindowResult {
    pub fn total_ops(&self) -> u64 {
        self.threads.iter().map(|t| t.ops).sum()
    }
}

/// Times one window whose `threads` workers (threads or tasks) were started
/// with `w` and are collected by `join`. The window opens once every worker
/// has arrived at the gate and closes after `min_time`, but not before every
/// worker has left the gate (on a loaded machine a worker may otherwise not
/// run at all in a short window). After it closes each worker leaves its loop
/// at its next running() test, so the time includes draining the stragglers
/// (a preempted lock holder shows up here).
pub fn time_window<J: FnOnce() -> Vec<ThreadResult>>(
    w: &Window,
    threads: usize,
    min_time: f64,
    join: J,
) -> WindowResult {
    w.await_arrivals(threads);
    let before = Snapshot::now();
    w.open();
    std::thread::sleep(Duration::from_secs_f64(min_time));
    while w.started.load(Ordering::Acquire) < threads {
        std::thread::sleep(Duration::from_micros(100));
    }
    w.stop.0.store(true, Ordering::Relaxed);
    let results = join();
    let after = Snapshot::now();
    WindowResult {
        seconds: after.wall.duration_since(before.wall).as_secs_f64(),
        cpu_seconds: after.cpu - before.cpu,
        context_switches: after.csw - before.csw,
        threads: results,
    }
}

/// Runs body(window, index) on `threads` new threads for one window.
pub fn run_window<F>(threads: usize, min_time: f64, body: F) -> WindowResult
where
    F: Fn(&Window, usize) -> ThreadResult + Sync,
{
    let w = Window::default();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (w, body) = (&w, &body);
                s.spawn(move || body(w, i))
            })
            .collect();
        time_window(&w, threads, min_time, || {
            handles.into_iter().map(|h| h.join().expect("benchmark thread")).collect()
        })
    })
}

/// items_per_second, csw_per_op and cpu_ns_per_op over `ops` operations;
/// real_time = window ns per operation, cpu_time = process CPU ns per
/// operation.
fn rate(r: &WindowResult, ops: u64) -> Sample {
    let per_op = if ops > 0 { 1.0 / ops as f64 } else { 0.0 };
    let cpu_ns = r.cpu_seconds * 1e9 * per_op;
    Sample {
        real_ns: r.seconds * 1e9 * per_op,
        cpu_ns,
        items_per_second: Some(ops as f64 / r.seconds.max(1e-12)),
        counters: vec![("csw_per_op", r.context_switches as f64 * per_op), ("cpu_ns_per_op", cpu_ns)],
    }
}

/// A contended row: plus min_acq / max_acq (per-thread operation counts),
/// fairness (min_acq / max_acq) and worst_wait_ns (longest single acquire
/// wait of any thread).
pub fn report_contended(r: &WindowResult) -> Sample {
    let mut s = rate(r, r.total_ops());
    let lo = r.threads.iter().map(|t| t.ops).min().unwrap_or(0);
    let hi = r.threads.iter().map(|t| t.ops).max().unwrap_or(0);
    let worst = r.threads.iter().map(|t| t.worst_wait_ticks).max().unwrap_or(0);
    s.counters.push(("min_acq", lo as f64));
    s.counters.push(("max_acq", hi as f64));
    s.counters.push(("fairness", if hi > 0 { lo as f64 / hi as f64 } else { 0.0 }));
    s.counters.push(("worst_wait_ns", ticks_to_ns(worst)));
    s
}

/// The value at quantile q of sorted samples: the ceil(q * n)-th smallest.
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

/// A hand-off row: items_per_second (round trips), csw_per_op and
/// cpu_ns_per_op per round trip, and p50_ns / p99_ns / p999_ns of the round
/// trip (exact quantiles of every sample of the window).
pub fn report_handoff(r: &WindowResult) -> Sample {
    let mut s = rate(r, r.total_ops());
    let mut all: Vec<u64> = r.threads.iter().flat_map(|t| t.samples.iter().copied()).collect();
    all.sort_unstable();
    s.counters.push(("p50_ns", ticks_to_ns(quantile(&all, 0.50))));
    s.counters.push(("p99_ns", ticks_to_ns(quantile(&all, 0.99))));
    s.counters.push(("p999_ns", ticks_to_ns(quantile(&all, 0.999))));
    s
}

/// A throughput row (channels): the rate counters only.
pub fn report_throughput(r: &WindowResult) -> Sample {
    rate(r, r.total_ops())
}

// ---- work ----------------------------------------------------------------

/// Local arithmetic between operations, the C++ harness's bench::local_work:
/// a dependent chain of 64 multiply-adds, each hidden from the optimiser
/// (about 50-100 ns; the measured figure is the context's local_work_ns).
pub const WORK_STEPS: u32 = 64;

#[inline(always)]
pub fn local_work(mut x: u64) -> u64 {
    for _ in 0..WORK_STEPS {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        opaque(&mut x);
    }
    x
}

/// `rounds` rounds of the same LCG: the work outside a critical section in
/// the contention sweeps, the C++ harness's bench::lcg_rounds.
#[inline(always)]
pub fn lcg_rounds(mut x: u64, rounds: u32) -> u64 {
    for _ in 0..rounds {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        opaque(&mut x);
    }
    x
}

pub fn measure_local_work_ns() -> f64 {
    let n = 1_000_000u64;
    let mut x = bb(1u64);
    let t = Instant::now();
    for _ in 0..n {
        x = local_work(x);
    }
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    bb(x);
    ns
}

/// What one benchmark row measures, per repetition.
pub struct Sample {
    pub real_ns: f64,
    pub cpu_ns: f64,
    pub items_per_second: Option<f64>,
    pub counters: Vec<(&'static str, f64)>,
}

/// One benchmark row. `run(min_time, hint)` measures one repetition; `hint`
/// carries the iteration count found by the previous repetition (0 at first),
/// so later repetitions skip the search, as in google-benchmark.
pub struct Row {
    pub name: String,
    pub threads: u32,
    pub run: Box<dyn Fn(f64, &mut u64) -> Sample>,
}

impl Row {
    pub fn new<F: Fn(f64, &mut u64) -> Sample + 'static>(name: String, threads: u32, f: F) -> Row {
        Row { name, threads, run: Box::new(f) }
    }
}

pub struct Result {
    pub name: String,
    pub threads: u32,
    pub samples: Vec<Sample>,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.iter().sum::<f64>() / v.len() as f64
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let h = s.len() / 2;
    if s.len() % 2 == 1 {
        s[h]
    } else {
        (s[h - 1] + s[h]) / 2.0
    }
}

/// Sample standard deviation, as google-benchmark computes it (0 for one value).
fn stddev(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    let ss: f64 = v.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (v.len() - 1) as f64).sqrt()
}

pub fn median_of(r: &Result, f: impl Fn(&Sample) -> f64) -> f64 {
    let v: Vec<f64> = r.samples.iter().map(f).collect();
    median(&v)
}

pub fn median_counter(r: &Result, name: &str) -> Option<f64> {
    let v: Vec<f64> =
        r.samples.iter().filter_map(|s| s.counters.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)).collect();
    if v.is_empty() {
        None
    } else {
        Some(median(&v))
    }
}

pub fn json_string(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A JSON number (JSON has no NaN or infinity: those become 0).
pub fn json_num(v: f64) -> String {
    if v.is_finite() {
        let s = format!("{}", v);
        if s == "-0" {
            "0".to_string()
        } else {
            s
        }
    } else {
        "0".to_string()
    }
}

/// The run name without its "/threads:T" part: google-benchmark's family.
fn family_of(name: &str) -> &str {
    match name.find("/threads:") {
        Some(i) => &name[..i],
        None => name,
    }
}

/// The google-benchmark JSON document: context plus, per row, the mean,
/// median and stddev aggregates over the repetitions.
pub fn to_json(context: &[(String, String)], results: &[Result], reps: u32) -> String {
    let mut o = String::new();
    o.push_str("{\n  \"context\": {\n");
    for (i, (k, v)) in context.iter().enumerate() {
        let comma = if i + 1 < context.len() { "," } else { "" };
        let _ = writeln!(o, "    {}: {}{}", json_string(k), v, comma);
    }
    o.push_str("  },\n  \"benchmarks\": [\n");
    let mut families: Vec<&str> = Vec::new();
    let mut first = true;
    for r in results {
        let fam = family_of(&r.name);
        let family_index = match families.iter().position(|f| *f == fam) {
            Some(i) => i,
            None => {
                families.push(fam);
                families.len() - 1
            }
        };
        let instance =
            results.iter().take_while(|x| !std::ptr::eq(*x, r)).filter(|x| family_of(&x.name) == fam).count();
        let mut counter_names: Vec<&'static str> = Vec::new();
        for s in &r.samples {
            for (n, _) in &s.counters {
                if !counter_names.contains(n) {
                    counter_names.push(n);
                }
            }
        }
        let has_items = r.samples.iter().any(|s| s.items_per_second.is_some());
        let aggs: [(&str, fn(&[f64]) -> f64); 3] = [("mean", mean), ("median", median), ("stddev", stddev)];
        for (agg, f) in aggs.iter() {
            let col = |g: &dyn Fn(&Sample) -> f64| -> f64 {
                let v: Vec<f64> = r.samples.iter().map(g).collect();
                f(&v)
            };
            if !first {
                o.push_str(",\n");
            }
            first = false;
            o.push_str("    {\n");
            let mut fields: Vec<(String, String)> = vec![
                ("name".into(), json_string(&format!("{}_{}", r.name, agg))),
                ("family_index".into(), family_index.to_string()),
                ("per_family_instance_index".into(), instance.to_string()),
                ("run_name".into(), json_string(&r.name)),
                ("run_type".into(), json_string("aggregate")),
                ("repetitions".into(), reps.to_string()),
                ("threads".into(), r.threads.to_string()),
                ("aggregate_name".into(), json_string(agg)),
                ("aggregate_unit".into(), json_string("time")),
                // As in google-benchmark: an aggregate's iterations is the
                // number of repetitions it summarises.
                ("iterations".into(), r.samples.len().to_string()),
                ("real_time".into(), json_num(col(&|s: &Sample| s.real_ns))),
                ("cpu_time".into(), json_num(col(&|s: &Sample| s.cpu_ns))),
                ("time_unit".into(), json_string("ns")),
            ];
            if has_items {
                let v = col(&|s: &Sample| s.items_per_second.unwrap_or(0.0));
                fields.push(("items_per_second".into(), json_num(v)));
            }
            for cname in &counter_names {
                let v = col(&|s: &Sample| s.counters.iter().find(|(n, _)| n == cname).map(|(_, v)| *v).unwrap_or(0.0));
                fields.push((cname.to_string(), json_num(v)));
            }
            for (i, (k, v)) in fields.iter().enumerate() {
                let comma = if i + 1 < fields.len() { "," } else { "" };
                let _ = writeln!(o, "      {}: {}{}", json_string(k), v, comma);
            }
            o.push_str("    }");
        }
    }
    o.push_str("\n  ]\n}\n");
    o
}

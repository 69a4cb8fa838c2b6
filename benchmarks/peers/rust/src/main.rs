//! park-peers: the Rust peers of park's primitives, measured on the same
//! scenarios and under the same names as the C++ harness, written as
//! google-benchmark JSON (aggregates only). See README.md.

mod acquire;
mod barrier;
mod chan;
mod cond;
mod event;
mod filter;
mod harness;
mod locks;
mod pool;
mod sem_many;
mod sweep;
mod tail;

use harness::{json_num, json_string, Row, Sample};
use std::time::Instant;

type PlMutex = parking_lot::Mutex<()>;
type StdMutex = std::sync::Mutex<()>;
type PlRwLock = parking_lot::RwLock<()>;
type StdRwLock = std::sync::RwLock<()>;

const THREADS: [usize; 5] = [1, 2, 4, 8, 16];

const USAGE: &str = "usage: park-peers [--min-time SECONDS] [--reps N] [--filter REGEX] [--out FILE.json] [--list]
  --min-time  measuring time per row and repetition (default 0.5)
  --reps      repetitions per row, taken in turns over a family's rows; mean,
              median and stddev are written (default 3)
  --filter    regex (or substring) searched in the row names; a leading '-' negates
  --out       JSON output file (default: standard output)
  --list      print the row names that the filter selects and exit";

struct Args {
    min_time: f64,
    reps: u32,
    filter: Option<String>,
    out: Option<String>,
    list: bool,
}

fn parse_args() -> Args {
    let mut a = Args { min_time: 0.5, reps: 3, filter: None, out: None, list: false };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let (key, inline) = match arg.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> String {
            inline.clone().or_else(|| it.next()).unwrap_or_else(|| {
                eprintln!("park-peers: {} needs a value\n{}", name, USAGE);
                std::process::exit(2)
            })
        };
        match key.as_str() {
            "--min-time" => {
                let v = value("--min-time");
                // google-benchmark style "0.5s" is accepted too.
                a.min_time = v.trim_end_matches('s').parse().unwrap_or_else(|_| bad(&key, &v));
                if !(a.min_time > 0.0) {
                    bad::<()>(&key, &v);
                }
            }
            "--reps" => {
                let v = value("--reps");
                a.reps = v.parse().unwrap_or_else(|_| bad(&key, &v));
                if a.reps == 0 {
                    bad::<()>(&key, &v);
                }
            }
            "--filter" => a.filter = Some(value("--filter")),
            "--out" => a.out = Some(value("--out")),
            "--list" => a.list = true,
            "-h" | "--help" => {
                println!("{}", USAGE);
                std::process::exit(0)
            }
            _ => {
                eprintln!("park-peers: unknown argument {}\n{}", arg, USAGE);
                std::process::exit(2)
            }
        }
    }
    a
}

fn bad<T>(key: &str, v: &str) -> T {
    eprintln!("park-peers: bad value for {}: {}\n{}", key, v, USAGE);
    std::process::exit(2)
}

fn rows() -> Vec<Row> {
    let mut r: Vec<Row> = Vec::new();
    let one = |name: &str, f: fn(f64, &mut u64) -> Sample| Row::new(name.to_string(), 1, f);

    r.push(one("mutex/uncontended/rust_parking_lot", locks::uncontended::<PlMutex>));
    r.push(one("mutex/uncontended/rust_std", locks::uncontended::<StdMutex>));
    r.push(one("mutex/uncontended/rust_tokio", locks::uncontended_tokio));
    let contenders: [(&str, fn(usize, f64) -> Sample); 3] = [
        ("rust_parking_lot", locks::contended::<PlMutex>),
        ("rust_std", locks::contended::<StdMutex>),
        ("rust_tokio", locks::contended_tokio),
    ];
    for (name, f) in contenders.iter() {
        for &t in THREADS.iter() {
            let f = *f;
            r.push(Row::new(format!("mutex/contended/{}/threads:{}", name, t), t as u32, move |m, _| f(t, m)));
        }
    }
    let windowed = |name: &str, f: fn(f64) -> Sample| Row::new(name.to_string(), 1, move |m, _| f(m));
    r.push(windowed("mutex/handoff/rust_parking_lot", locks::handoff::<PlMutex>));
    r.push(windowed("mutex/handoff/rust_std", locks::handoff::<StdMutex>));
    r.push(windowed("mutex/handoff/rust_tokio", locks::handoff_tokio));

    let mutex_sweep: [(&str, fn(u32, usize, f64) -> Sample); 2] = [
        ("rust_parking_lot", sweep::mutex::<parking_lot::Mutex<u64>>),
        ("rust_std", sweep::mutex::<std::sync::Mutex<u64>>),
    ];
    for &w in sweep::MUTEX_OUTSIDE.iter() {
        for &t in sweep::THREADS.iter() {
            for (name, f) in mutex_sweep.iter() {
                let f = *f;
                r.push(Row::new(format!("mutex/sweep_w{}/{}/threads:{}", w, name, t), t as u32, move |m, _| {
                    f(w, t, m)
                }));
            }
        }
    }

    r.push(one("sem/uncontended/rust_tokio", locks::sem_uncontended_tokio));

    r.push(one("rwlock/uncontended_read/rust_parking_lot", locks::rw_uncontended_read::<PlRwLock>));
    r.push(one("rwlock/uncontended_read/rust_std", locks::rw_uncontended_read::<StdRwLock>));
    r.push(one("rwlock/uncontended_write/rust_parking_lot", locks::rw_uncontended_write::<PlRwLock>));
    r.push(one("rwlock/uncontended_write/rust_std", locks::rw_uncontended_write::<StdRwLock>));

    let rwlock_sweep: [(&str, fn(u32, usize, f64) -> Sample); 2] = [
        ("rust_parking_lot", sweep::rwlock::<parking_lot::RwLock<u64>>),
        ("rust_std", sweep::rwlock::<std::sync::RwLock<u64>>),
    ];
    for &p in sweep::RWLOCK_READS.iter() {
        for &t in sweep::THREADS.iter() {
            for (name, f) in rwlock_sweep.iter() {
                let f = *f;
                r.push(Row::new(format!("rwlock/sweep_r{}/{}/threads:{}", p, name, t), t as u32, move |m, _| {
                    f(p, t, m)
                }));
            }
        }
    }

    r.push(one("pool/fib30/rayon", pool::fib30_rayon));
    r.push(one("pool/fib30/rust_serial", pool::fib30_serial));
    r.push(one("pool/fib35/rayon", pool::fib35_rayon));
    r.push(one("pool/fib35/rust_serial", pool::fib35_serial));
    r.push(one("pool/parallel_for/rayon", pool::parallel_for_rayon));
    r.push(one("pool/parallel_for/rust_serial", pool::parallel_for_serial));
    for &p in [1usize, 2, 4].iter() {
        r.push(Row::new(format!("pool/submit/rayon/threads:{}", p), p as u32, move |m, _| pool::submit_rayon(p, m)));
    }
    r.push(windowed("pool/wakeup/rayon", pool::wakeup_rayon));
    r.push(windowed("pool/idle/rayon", pool::idle_rayon));

    let kinds = [
        ("sem", acquire::Kind::Sem),
        ("mutex", acquire::Kind::Mutex),
        ("rwlock_read", acquire::Kind::Read),
        ("rwlock_write", acquire::Kind::Write),
    ];
    for &(prim, kind) in kinds.iter() {
        r.push(Row::new(format!("async/{}_uncontended/rust_tokio", prim), 1, move |m, h| {
            acquire::uncontended(kind, m, h)
        }));
        for &p in [1usize, 2, 4].iter() {
            r.push(Row::new(format!("async/{}_contended/rust_tokio/threads:{}", prim, p), p as u32, move |m, _| {
                acquire::contended(kind, p, m)
            }));
        }
    }
    let looped = [("sem", acquire::Kind::Sem), ("mutex", acquire::Kind::Mutex), ("rwlock_write", acquire::Kind::Write)];
    for &(prim, kind) in looped.iter() {
        for &n in [2usize, 4, 8].iter() {
            r.push(Row::new(format!("async/{}_loop/rust_tokio/threads:{}", prim, n), n as u32, move |m, _| {
                acquire::looped(kind, n, m)
            }));
        }
    }

    for &cap in [1usize, 64, 1024].iter() {
        r.push(Row::new(format!("chan/spsc_cap{}/rust_crossbeam", cap), 1, move |m, _| chan::throughput(cap, 1, 1, m)));
    }
    for &cap in [1usize, 64, 1024].iter() {
        for &t in [4usize, 8].iter() {
            r.push(Row::new(format!("chan/mpmc_cap{}/rust_crossbeam/threads:{}", cap, t), t as u32, move |m, _| {
                chan::throughput(cap, t / 2, t / 2, m)
            }));
        }
    }

    r.push(windowed("cond/pingpong/rust_parking_lot", cond::parking::pingpong));
    r.push(windowed("cond/pingpong/rust_std", cond::std_sync::pingpong));
    let broadcast: [(&str, fn(f64) -> Sample); 2] =
        [("rust_parking_lot", cond::parking::broadcast), ("rust_std", cond::std_sync::broadcast)];
    for (name, f) in broadcast.iter() {
        let f = *f;
        r.push(Row::new(
            format!("cond/broadcast/{}/threads:{}", name, cond::WAITERS),
            cond::WAITERS as u32,
            move |m, _| f(m),
        ));
    }

    r.push(one("event/uncontended/rust_tokio", event::uncontended_tokio));
    r.push(windowed("event/pingpong/rust_tokio", event::pingpong_tokio));

    // Threads blocking in a barrier (rounds) and tasks awaiting one on a
    // runtime (tasks): the C++ harness's two scenarios.
    let barriers: [(&str, &str, fn(usize, f64) -> Sample); 2] =
        [("rounds", "rust_std", barrier::rounds_std), ("tasks", "rust_tokio", barrier::rounds_tokio)];
    for &t in barrier::THREADS.iter() {
        for (scenario, name, f) in barriers.iter() {
            let f = *f;
            r.push(Row::new(format!("barrier/{}/{}/threads:{}", scenario, name, t), t as u32, move |m, _| f(t, m)));
        }
    }

    r.push(Row::new(
        format!("sem_many/mix/rust_tokio/threads:{}", sem_many::THREADS),
        sem_many::THREADS as u32,
        |m, _| sem_many::mix_tokio(m),
    ));

    let tail_mutex: [(&str, fn(usize, f64) -> Sample); 2] =
        [("rust_parking_lot", tail::mutex::<PlMutex>), ("rust_std", tail::mutex::<StdMutex>)];
    for &t in tail::THREADS.iter() {
        for (name, f) in tail_mutex.iter() {
            let f = *f;
            r.push(Row::new(format!("tail/mutex/{}/threads:{}", name, t), t as u32, move |m, _| f(t, m)));
        }
    }
    r
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn date_now() -> String {
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        let mut buf = [0u8; 64];
        let fmt = b"%Y-%m-%dT%H:%M:%S%z\0";
        let n =
            libc::strftime(buf.as_mut_ptr() as *mut libc::c_char, buf.len(), fmt.as_ptr() as *const libc::c_char, &tm);
        let s = String::from_utf8_lossy(&buf[..n]).to_string();
        // +0000 -> +00:00, as google-benchmark writes it.
        if s.len() >= 5 {
            let (head, tz) = s.split_at(s.len() - 5);
            format!("{}{}:{}", head, &tz[..3], &tz[3..])
        } else {
            s
        }
    }
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if rc != 0 {
        return "unknown".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).to_string()
}

fn context(args: &Args, local_work_ns: f64) -> Vec<(String, String)> {
    let num_cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mhz = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("cpu MHz"))
                .and_then(|l| l.split(':').nth(1))
                .and_then(|v| v.trim().parse::<f64>().ok())
        })
        .unwrap_or(0.0);
    let scaling =
        read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").map_or(false, |g| g != "performance");
    let load: Vec<String> = read_trim("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).map(|x| json_num(x.parse().unwrap_or(0.0))).collect())
        .unwrap_or_default();
    let exe = std::env::args().next().unwrap_or_default();
    let build = if cfg!(debug_assertions) { "debug" } else { "release" };
    let s = |k: &str, v: String| (k.to_string(), v);
    vec![
        s("date", json_string(&date_now())),
        s("host_name", json_string(&host_name())),
        s("executable", json_string(&exe)),
        s("num_cpus", num_cpus.to_string()),
        s("mhz_per_cpu", format!("{}", mhz.round() as u64)),
        s("cpu_scaling_enabled", scaling.to_string()),
        s("caches", "[]".to_string()),
        s("load_avg", format!("[{}]", load.join(","))),
        s("library_build_type", json_string(build)),
        s("harness", json_string("park-peers")),
        s("compiler", json_string(env!("PARK_PEERS_RUSTC"))),
        s("peer_versions", json_string(env!("PARK_PEERS_VERSIONS"))),
        s("min_time_s", json_num(args.min_time)),
        s("repetitions", args.reps.to_string()),
        s("local_work_steps", harness::WORK_STEPS.to_string()),
        s("local_work_ns", json_num((local_work_ns * 10.0).round() / 10.0)),
        s("ns_per_tick", json_num(harness::ticks_to_ns(1_000_000) / 1e6)),
        s("rayon_threads", pool::rayon_threads().to_string()),
    ]
}

fn main() {
    let args = parse_args();
    let filter = filter::Filter::new(args.filter.as_deref());
    let selected: Vec<Row> = rows().into_iter().filter(|r| filter.matches(&r.name)).collect();
    if args.list {
        for r in &selected {
            println!("{}", r.name);
        }
        return;
    }
    if selected.is_empty() {
        eprintln!("park-peers: no row matches the filter");
        std::process::exit(1);
    }

    // A second thread that stays alive and blocked for the whole run, so no
    // row measures a single-threaded process.
    let (idle_tx, idle_rx) = std::sync::mpsc::channel::<()>();
    let idle = std::thread::spawn(move || {
        let _ = idle_rx.recv();
    });

    harness::calibrate_ticks();
    let local_work_ns = harness::measure_local_work_ns();
    let started = Instant::now();
    let mut results = Vec::new();
    // One family (the rows that share a name's first component) at a time;
    // within it, the repetitions go round the rows, so that every row's
    // median samples the whole of the family's run and not a second or two
    // of it (a shared machine's speed drifts over seconds).
    let mut first = 0;
    while first < selected.len() {
        let family = selected[first].name.split('/').next().unwrap_or("");
        let end =
            first + selected[first..].iter().take_while(|r| r.name.split('/').next().unwrap_or("") == family).count();
        let rows = &selected[first..end];
        first = end;
        let mut hints = vec![0u64; rows.len()];
        let mut samples: Vec<Vec<harness::Sample>> = rows.iter().map(|_| Vec::new()).collect();
        for _ in 0..args.reps {
            for (i, row) in rows.iter().enumerate() {
                samples[i].push((row.run)(args.min_time, &mut hints[i]));
            }
        }
        for (row, samples) in rows.iter().zip(samples) {
            let res = harness::Result { name: row.name.clone(), threads: row.threads, samples };
            let real = harness::median_of(&res, |s| s.real_ns);
            let mut line = format!("{:<48} {:>14.1} ns", row.name, real);
            if res.samples.iter().any(|s| s.items_per_second.is_some()) {
                let ips = harness::median_of(&res, |s| s.items_per_second.unwrap_or(0.0));
                line.push_str(&format!(" {:>12.3} M items/s", ips / 1e6));
            }
            for c in [
                "csw_per_op",
                "fairness",
                "worst_wait_ns",
                "p50_ns",
                "p99_ns",
                "p999_ns",
                "max_ns",
                "rsd",
                "cpu_rsd",
                "lwss",
                "spawn_ns",
                "n1_p99_ns",
                "n32_worst_ns",
            ]
            .iter()
            {
                if let Some(v) = harness::median_counter(&res, c) {
                    line.push_str(&format!(" {}={}", c, json_num((v * 1000.0).round() / 1000.0)));
                }
            }
            eprintln!("{}", line);
            results.push(res);
        }
    }
    eprintln!("park-peers: {} rows x {} reps in {:.1} s", results.len(), args.reps, started.elapsed().as_secs_f64());

    let json = harness::to_json(&context(&args, local_work_ns), &results, args.reps);
    match &args.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, json) {
                eprintln!("park-peers: cannot write {}: {}", path, e);
                std::process::exit(1);
            }
        }
        None => print!("{}", json),
    }
    drop(idle_tx);
    let _ = idle.join();
}

//! What a worker life costs with the default `--executor-lives fork` (issue 40, part 8),
//! against what a process life cannot cost less than, in the same run and on one core: the
//! bench pins itself to one CPU (`RETRYLAB_BENCH_CPU`, by default the first it may run on)
//! before it starts any process, so that the simulator, the zygote and every child it forks (which inherit the
//! affinity) share that core, and a life's cost is all of its work, nobody's idle time.
//!
//! - `lives/anchor`: one worker life and nothing else, with the crate's own fork
//!   machinery (`Shared::take_process` for the `init` line of the model's world,
//!   `ExternalDesign::init_line`: the same zygote, the same fork as a run's): the fork, one
//!   round trip on the child's channel (`start`, `ready`), its kill as a world's, and its
//!   exit (waited for here, which a world does not do);
//! - `lives/default_runs`: runs per second of examples/python/naive_retry.py (httpx +
//!   tenacity, sync) on models/ticket_lost_response.json with the default fork lives,
//!   through `run::run_seeds` as benches/external.rs runs it: one life per seed;
//! - `lives/reuse_runs`: the same with `--executor-lives reuse` (one process, reset by its
//!   `start`), for what the rest of a run costs;
//! - once, not sampled (`cargo bench` only, not `cargo test --benches`): the ratio
//!   default / anchor from rounds that alternate the two (medians; the target is 0.5 or
//!   more), and `explore` of examples/python/journaled.py within 2 faults on
//!   models/bad/crash_after_send_rare.json with fork lives and with reuse (the target:
//!   fork within 2 x reuse), in seconds.
//!
//! Run with `RETRYLAB_PYTHON=.venv/bin/python cargo bench --bench lives` (a virtual
//! environment with examples/python/requirements.txt and the client; without it, nothing is
//! measured and a note says so).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use retrylab::design::Design;
use retrylab::external::{ExternalDesign, Lives};
use retrylab::model::Model;

/// Lives, or seeds, per iteration.
const BATCH: u64 = 20;

fn root(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

fn model(path: &str) -> Model {
    Model::load(Path::new(&root(path))).unwrap_or_else(|e| panic!("{e}"))
}

fn design(python: &str, name: &str, script: &str, lives: Lives) -> &'static ExternalDesign {
    let d = ExternalDesign::new(
        name,
        vec![python.to_string(), root(script)],
        serde_json::json!({}),
        Duration::from_secs(30),
        false,
        lives,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Box::leak(Box::new(d))
}

/// Pins this thread, and so every thread and process it starts from now on, to one CPU:
/// `RETRYLAB_BENCH_CPU`, else the first this process may run on.
fn pin() -> usize {
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: a zeroed cpu_set_t is an empty set, which sched_getaffinity fills (0: this
    // thread) and CPU_ISSET reads within.
    let first = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, size, &mut set);
        (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &set))
    };
    let cpu: usize = std::env::var("RETRYLAB_BENCH_CPU")
        .ok()
        .and_then(|c| c.parse().ok())
        .or(first)
        .unwrap_or(0);
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET writes within it, and
    // sched_setaffinity reads it (0: this thread).
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size, &set)
    };
    if r != 0 {
        panic!(
            "cannot pin the bench to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        );
    }
    cpu
}

/// One worker life of `design` in `model`'s world, as the world takes it (a fork of the
/// zygote for `init`), one round trip on its channel, its kill (the world's: the process
/// dropped), and its end.
fn life(design: &ExternalDesign, init: &str) {
    const START: &str =
        r#"{"incarnation":0,"now_ms":0,"reset":false,"seed":1,"type":"start","worker":0}"#;
    let mut p = design
        .shared()
        .take_process(init)
        .unwrap_or_else(|e| panic!("{e}"));
    p.send(START).unwrap_or_else(|e| panic!("{e}"));
    let ready = p
        .recv(Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("{e:?}"));
    debug_assert!(ready.contains("ready"), "{ready}");
    let pid = p.pid() as libc::pid_t;
    drop(p);
    // SAFETY: signal 0 only checks that the process exists; its zygote ignores SIGCHLD, so
    // it is reaped as it ends, and sched_yield lets it run on this core meanwhile.
    while unsafe { libc::kill(pid, 0) } == 0 {
        unsafe { libc::sched_yield() };
    }
}

fn lives(c: &mut Criterion, python: &str, measure_once: bool) {
    let m = model("models/ticket_lost_response.json");
    let fork = design(
        python,
        "naive",
        "examples/python/naive_retry.py",
        Lives::Fork,
    );
    let reuse = design(
        python,
        "naive",
        "examples/python/naive_retry.py",
        Lives::Reuse,
    );
    // The anchor's lives are forks of the runs' own zygote: the `init` of the world's
    // executor is its key. It starts here, outside the timing.
    let anchor = fork;
    let init = fork.init_line(&m);
    black_box(retrylab::run::run_seeds(&m, fork, 0..1));
    black_box(retrylab::run::run_seeds(&m, reuse, 0..1));

    let mut group = c.benchmark_group("lives");
    group.throughput(Throughput::Elements(BATCH));
    group.bench_function("anchor", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                life(anchor, &init);
            }
        })
    });
    for (name, d) in [("default_runs", fork), ("reuse_runs", reuse)] {
        let mut start = 1;
        group.bench_function(name, |b| {
            b.iter(|| {
                start += BATCH;
                black_box(retrylab::run::run_seeds(&m, d, start..start + BATCH))
            })
        });
    }
    group.finish();

    if !measure_once {
        return;
    }
    // Rounds that alternate a batch of lives and a batch of runs, so that the machine's drift
    // moves both alike; the medians of each rate and of the ratios pair by pair.
    const ROUNDS: usize = 9;
    const N: u64 = 100;
    let (mut a, mut r, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    let mut start = 1_000_000;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..N {
            life(anchor, &init);
        }
        let lives_s = N as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        black_box(retrylab::run::run_seeds(&m, fork, start..start + N));
        start += N;
        let runs_s = N as f64 / t.elapsed().as_secs_f64();
        a.push(lives_s);
        r.push(runs_s);
        ratio.push(runs_s / lives_s);
    }
    eprintln!(
        "lives/paired, {ROUNDS} rounds of {N}: anchor {:.0} lives/s, default {:.0} runs/s, ratio {:.2} (min {:.2}, max {:.2}; target 0.5)",
        median(&mut a),
        median(&mut r),
        median(&mut ratio),
        ratio.iter().copied().fold(f64::INFINITY, f64::min),
        ratio.iter().copied().fold(0.0, f64::max),
    );
    for d in [fork, reuse] {
        d.shutdown();
    }

    let crash = model("models/bad/crash_after_send_rare.json");
    let mut secs = Vec::new();
    for lives in [Lives::Fork, Lives::Reuse] {
        let d = design(python, "journaled", "examples/python/journaled.py", lives);
        let t = Instant::now();
        let found = retrylab::explore::explore(
            &crash,
            d,
            &retrylab::check::Property::PLAIN,
            retrylab::explore::Strategy::Dfs,
            retrylab::explore::Bound {
                max_faults: 2,
                ..Default::default()
            },
        );
        let s = t.elapsed().as_secs_f64();
        d.shutdown();
        eprintln!(
            "explore/journaled.py on crash_after_send_rare within 2 faults, {} lives: {} runs in {s:.1} s, violation: {}",
            lives.name(),
            found.runs(),
            !found.violations.is_empty()
        );
        secs.push(s);
    }
    eprintln!(
        "explore fork / reuse: {:.2} (target 2 or less)",
        secs[0] / secs[1]
    );
}

/// `determinism/check_fork` and `determinism/check_reuse`: the determinism check every
/// command runs first (docs/executor-protocol.md, section 8) for examples/python/journaled.py
/// on models/bad/crash_after_send_rare.json (one worker; every seed crashes once, forced):
/// new interpreters for the reference runs, then forks or reused processes. Each iteration
/// is a new design (the check runs once per design and `init` line); its start (the first
/// process's `hello`) and its shutdown are not timed. On the pinned core, so the
/// interpreters' starts do not overlap.
fn determinism(c: &mut Criterion, python: &str) {
    let m = model("models/bad/crash_after_send_rare.json");
    let mut g = c.benchmark_group("determinism");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for (name, lives) in [("check_fork", Lives::Fork), ("check_reuse", Lives::Reuse)] {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let d = design(python, "j", "examples/python/journaled.py", lives);
                    let t = Instant::now();
                    let line = d.check_determinism(&m, true);
                    spent += t.elapsed();
                    assert!(matches!(line, Ok(Some(_))), "{line:?}");
                    d.shutdown();
                }
                spent
            })
        });
    }
    g.finish();
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let Ok(python) = std::env::var("RETRYLAB_PYTHON") else {
        eprintln!("lives: skipped (set RETRYLAB_PYTHON to a venv with the client)");
        return;
    };
    let cpu = pin();
    eprintln!("lives: pinned to CPU {cpu}, with the zygotes and their children");
    // `cargo bench` passes --bench; `cargo test --benches` does not (one quick pass each).
    let measure_once = std::env::args().any(|a| a == "--bench");
    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    lives(&mut c, &python, measure_once);
    determinism(&mut c, &python);
    c.final_summary();
}

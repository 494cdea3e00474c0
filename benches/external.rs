//! External executors (docs/executor-protocol.md): what running a user's executor process
//! costs, with the interpreter of `RETRYLAB_PYTHON` (a virtual environment with the client
//! and examples/python/requirements.txt; `python3` and the raw-protocol executors only, when
//! unset: the examples are then skipped with a note).
//!
//! - `protocol/raw_pipe`: a line to a Python process that echoes it, and back: the floor;
//! - `protocol/kv_round_trip`: one `kv` message and its answer through the client library
//!   and the simulator's executor (parse, store, answer), measured in the same run;
//! - `runs/naive_retry`: seeds per second of examples/python/naive_retry.py on the seeds'
//!   model, one process reused across seeds;
//! - `restart/fresh_process`, `restart/reused_process` and `restart/forked_process`: a
//!   worker restart on a new process (its interpreter's start and imports), on a process
//!   reset by its `start`, or on a fork of a zygote (`--executor-lives fork`: every
//!   worker life, the first of each seed too, is a fork: two forks per seed here);
//! - once, not sampled: `explore` of examples/python/journaled.py within 2 faults on
//!   models/bad/crash_after_send_rare.json, in seconds.
//!
//! Run with `RETRYLAB_PYTHON=.venv/bin/python cargo bench --bench external`.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retrylab::design::Design;
use retrylab::external::Process;
use retrylab::external::{ExternalDesign, Lives};
use retrylab::model::Model;

/// Round trips per iteration of the protocol benchmarks.
const TRIPS: u64 = 1000;

fn root(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

fn python() -> (String, bool) {
    match std::env::var("RETRYLAB_PYTHON") {
        Ok(p) => (p, true),
        Err(_) => ("python3".into(), false),
    }
}

fn design(
    name: &str,
    script: &str,
    params: serde_json::Value,
    restarts: Lives,
) -> &'static dyn Design {
    let (py, _) = python();
    let d = ExternalDesign::new(
        name,
        vec![py, root(script)],
        params,
        Duration::from_secs(30),
        false,
        restarts,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Box::leak(Box::new(d))
}

fn model(path: &str) -> Model {
    Model::load(Path::new(&root(path))).unwrap_or_else(|e| panic!("{e}"))
}

fn protocol(c: &mut Criterion) {
    let (py, with_client) = python();
    let mut group = c.benchmark_group("protocol");
    group.throughput(Throughput::Elements(TRIPS));
    let mut echo = Process::spawn(&[py, root("benches/executors/echo.py")], &[], false)
        .unwrap_or_else(|e| panic!("{e}"));
    // A message of the size of a kv_ok.
    let line =
        r#"{"type":"kv_ok","in_reply_to":12,"ok":true,"value":null,"version":0,"now_ms":1210}"#;
    group.bench_function("raw_pipe", |b| {
        b.iter(|| {
            for _ in 0..TRIPS {
                echo.send(black_box(line)).unwrap();
                black_box(echo.recv(Duration::from_secs(10)).unwrap());
            }
        })
    });
    if with_client {
        // Two calls per seed (the executor answers unknown, and the agent replans once).
        group.throughput(Throughput::Elements(2 * TRIPS));
        let m = model("models/ticket_lost_response.json");
        let d = design(
            "kv_loop",
            "benches/executors/kv_loop.py",
            serde_json::json!({ "reads": TRIPS }),
            Lives::Reuse,
        );
        let mut seed = 0;
        group.bench_function("kv_round_trip", |b| {
            b.iter(|| {
                // One intent, one call (the agent's replan is a second one: the same
                // reads again), so that an iteration is 2 x TRIPS round trips.
                seed += 1;
                black_box(retrylab::run::run_seeds(&m, d, seed..seed + 1))
            })
        });
    }
    group.finish();
}

fn runs(c: &mut Criterion) {
    let (_, with_client) = python();
    if !with_client {
        eprintln!("runs/naive_retry, restart/*, explore: skipped (set RETRYLAB_PYTHON)");
        return;
    }
    let m = model("models/ticket_lost_response.json");
    let d = design(
        "naive",
        "examples/python/naive_retry.py",
        serde_json::json!({}),
        Lives::Reuse,
    );
    let mut group = c.benchmark_group("runs");
    const SEEDS: u64 = 100;
    group.throughput(Throughput::Elements(SEEDS));
    let mut start = 0;
    group.bench_function("naive_retry", |b| {
        b.iter(|| {
            start += SEEDS;
            black_box(retrylab::run::run_seeds(&m, d, start..start + SEEDS))
        })
    });
    group.finish();

    // A crash after every first send (models/bad/crash_after_send_rare.json with the
    // probability 1/1): each seed restarts its worker once.
    let mut crashy = model("models/bad/crash_after_send_rare.json");
    crashy.workers.crash.after_send = retrylab::sim::Ratio::ONE;
    let mut group = c.benchmark_group("restart");
    group.throughput(Throughput::Elements(10));
    for (name, restarts) in [
        ("fresh_process", Lives::Fresh),
        ("reused_process", Lives::Reuse),
        ("forked_process", Lives::Fork),
    ] {
        let d = design(
            name,
            "examples/python/journaled.py",
            serde_json::json!({}),
            restarts,
        );
        let mut start = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                start += 10;
                black_box(retrylab::run::run_seeds(&crashy, d, start..start + 10))
            })
        });
    }
    group.finish();

    let crash = model("models/bad/crash_after_send_rare.json");
    let d = design(
        "journaled",
        "examples/python/journaled.py",
        serde_json::json!({}),
        Lives::Reuse,
    );
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
    eprintln!(
        "explore/journaled.py on crash_after_send_rare within 2 faults: {} runs in {:.1} s, violation: {}",
        found.runs(),
        t.elapsed().as_secs_f64(),
        !found.violations.is_empty()
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5));
    targets = protocol, runs
}
criterion_main!(benches);

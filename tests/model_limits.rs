//! Hostile input is refused or bounded: every count that sizes a run has an upper bound
//! (refused above it with the field's path, accepted at it), and a run that would go on for
//! ever stops at the events budget with its own outcome, which no verdict trusts.

use crate::common;
use crate::common::cli;

use cli::{retrylab, stderr, stdout};
use common::{base, design, model, set};
use retrylab::check::Metrics;
use retrylab::model::Model;
use retrylab::run::{run_seeds, run_traced};
use retrylab::sim::RandomChooser;
use retrylab::vocab::record::End;
use retrylab::world::{MAX_EVENTS, World};
use serde_json::{Value, json};

/// The problems of `v` as `path: message` lines (empty when it loads).
fn problems(v: &Value) -> Vec<String> {
    match Model::from_json(&v.to_string(), "limits.json") {
        Ok(_) => Vec::new(),
        Err(e) => e
            .problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect(),
    }
}

/// `path` set to `max` loads; set to `max + 1` (and to the largest value of its JSON type)
/// it is refused with exactly one problem, at `path`, naming the limit.
fn bounded(v: Value, path: &str, max: u64, type_max: u64) {
    assert_eq!(
        problems(&set(v.clone(), path, json!(max))),
        Vec::<String>::new(),
        "{path} = {max}"
    );
    for over in [max + 1, type_max] {
        assert_eq!(
            problems(&set(v.clone(), path, json!(over))),
            [format!("{path}: {over} is more than the limit of {max}")],
            "{path} = {over}"
        );
    }
}

#[test]
fn every_count_that_sizes_a_run_is_bounded() {
    let u32max = u64::from(u32::MAX);
    bounded(base(), "workload.intents", 10_000, u32max);
    bounded(base(), "workload.tenants", 10_000, u32max);
    bounded(base(), "workload.steps", 8, u32max);
    bounded(base(), "workers.count", 1_000, u32max);
    bounded(base(), "workers.max_crashes", 100, u32max);
    bounded(base(), "agent.max_calls", 1_000, u32max);
    bounded(base(), "executor.attempts", 32, u32max);
    bounded(base(), "executor.reads", 1_000, u32max);
    bounded(base(), "executor.layers.tool", 32, u32max);
    bounded(base(), "executor.layers.queue", 32, u32max);
    let explore = set(base(), "explore", json!({ "max_faults": 1 }));
    bounded(explore, "explore.max_runs", 100_000_000, u64::MAX);
}

#[test]
fn the_limits_are_the_exported_constants() {
    use retrylab::model::{
        MAX_ATTEMPTS, MAX_CALLS, MAX_CRASHES, MAX_EXPLORE_RUNS, MAX_FAULTS, MAX_INTENTS, MAX_MS,
        MAX_TENANTS, MAX_WORKERS,
    };
    assert_eq!(
        (
            MAX_INTENTS,
            MAX_TENANTS,
            MAX_WORKERS,
            MAX_CRASHES,
            MAX_CALLS,
            MAX_ATTEMPTS
        ),
        (10_000, 10_000, 1_000, 100, 1_000, 32)
    );
    assert_eq!(
        (MAX_FAULTS, MAX_EXPLORE_RUNS, MAX_MS),
        (100, 100_000_000, 1_000_000_000_000)
    );
    assert_eq!(MAX_EVENTS, 1_000_000);
}

#[test]
fn at_most_a_hundred_scripted_faults() {
    let drops = |n: u32| {
        json!(
            (1..=n)
                .map(|a| json!({ "drop_reply": { "attempt": a } }))
                .collect::<Vec<_>>()
        )
    };
    assert!(problems(&set(base(), "faults", drops(100))).is_empty());
    assert_eq!(
        problems(&set(base(), "faults", drops(101))),
        ["faults: 101 faults is more than the limit of 100"]
    );
}

#[test]
fn durations_are_bounded_by_max_ms() {
    assert_eq!(
        problems(&set(base(), "horizon_ms", json!(1_000_000_000_001u64))),
        [
            "horizon_ms: 1000000000001 ms is longer than the limit of 1000000000000 ms (about 31 years)"
        ]
    );
    assert!(problems(&set(base(), "horizon_ms", json!(1_000_000_000_000u64))).is_empty());
}

/// The model of the issue: `workers.count` 4294967295 aborted with an allocation failure.
#[test]
fn the_binary_refuses_four_billion_workers_with_exit_2() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("retrylab-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("workers.json");
    let v = set(base(), "workers.count", json!(4_294_967_295u64));
    let v = set(v, "workload.intents", json!(4_294_967_295u64));
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let out = retrylab(&["run", path.to_str().unwrap(), "--seeds", "1"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("workers.count: 4294967295 is more than the limit of 1000"),
        "{err}"
    );
    assert!(
        err.contains("workload.intents: 4294967295 is more than the limit of 10000"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A model that cannot end: the provider never answers within 30 years, and a sweeper
/// takes the stalled operation over every 2 ms, resending it each time.
fn endless() -> Value {
    let v = set(base(), "horizon_ms", json!(1_000_000_000_000u64));
    let v = set(v, "designs", json!(["journal", "same_key"]));
    let v = set(
        v,
        "executor",
        json!({ "attempts": 1, "timeout_ms": 1, "sweep_ms": 2 }),
    );
    set(v, "provider.processing_ms", json!(1_000_000_000_000u64))
}

#[test]
fn a_run_that_would_not_end_stops_at_the_events_budget() {
    let m = model(&endless());
    let d = design("journal");
    let mut world = World::new(&m, d, false);
    world.run(&mut RandomChooser::new(0));
    let (end, at) = world.end();
    assert_eq!(end, End::Budget);
    assert_eq!(world.events(), MAX_EVENTS);
    assert!(
        at < 1_000_000_000_000,
        "stopped at {at} ms, before the horizon"
    );
    let mut metrics = Metrics::default();
    let summary = metrics.add_outcome(&world.outcome());
    assert!(summary.budget);
    assert_eq!(metrics.budget_runs, 1);
    // Over seeds: each one is cut, and counted.
    assert_eq!(run_seeds(&m, d, 0..2).budget_runs, 2);
    // A design without a sweeper ends at the horizon as before.
    let same_key = run_seeds(&m, design("same_key"), 0..2);
    assert_eq!(same_key.budget_runs, 0);
    // The timeline says where and why it stopped.
    let traced = run_traced(&m, d, &mut RandomChooser::new(0));
    assert!(traced.summary.budget);
    let last = traced.timeline.lines().last().unwrap();
    assert!(
        last.ends_with(
            "the run stops here: its budget of 1000000 events is spent, with events still pending"
        ),
        "{last}"
    );
}

/// A sweeper's round costs one event per unresolved operation: a thousand workers sweeping
/// ten thousand stalled operations every 2 ms are cut after a few rounds instead of taking
/// a minute.
#[test]
fn a_crowded_periodic_timer_run_ends_at_the_events_budget() {
    let v = set(
        endless(),
        "workload",
        json!({ "intents": 10_000, "spacing_ms": 0 }),
    );
    let v = set(v, "workers.count", json!(1_000));
    let v = set(v, "agent.max_calls", json!(1));
    let m = model(&v);
    let mut world = World::new(&m, design("journal"), false);
    world.run(&mut RandomChooser::new(0));
    // The events budget cuts the run: what it costs is counted in events, not timed (the
    // run took 50 s in release when each firing scanned every operation; timing belongs in
    // benchmarks).
    assert_eq!(world.end().0, End::Budget);
    assert!(world.events() <= MAX_EVENTS);
}

fn write(name: &str, v: &Value) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("retrylab-budget-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    path
}

/// `check` meets no expectation of a design with a seed cut by the budget, whether the
/// property is expected to hold or to be violated: an unfinished run proves nothing.
#[test]
fn check_does_not_pass_on_a_run_cut_by_the_budget() {
    let v = set(
        endless(),
        "expect",
        json!({ "journal": { "hold": ["no_duplicate"], "violate": ["resolved_within(1000)"] } }),
    );
    let path = write("check", &v);
    let out = retrylab(&["check", path.to_str().unwrap(), "--seeds", "1"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains("FAIL  journal                  hold     no_duplicate               0 of 1 seeds violate it; 1 cut by the events budget"),
        "{text}"
    );
    assert!(text.contains("violate  resolved_within(1000)"), "{text}");
    assert!(
        text.contains("2 expectations in 1 model: 0 met, 2 not met"),
        "{text}"
    );
    assert!(
        text.contains("1 of 1 seeds stopped after 1000000 events, before the horizon"),
        "{text}"
    );
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

/// `run` counts the seeds cut (table note, JSON `budget_runs`), and `--fail-on` fails on them.
#[test]
fn run_reports_budget_runs_and_fail_on_fails() {
    let path = write("run", &endless());
    let p = path.to_str().unwrap();
    let out = retrylab(&["run", p, "--seeds", "2", "--design", "journal"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(
        table.contains("events budget: journal stopped 2 of 2 seeds after 1000000 events"),
        "{table}"
    );
    let out = retrylab(&["run", p, "--seeds", "2", "--format", "json"]);
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let cut: Vec<u64> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["totals"]["budget_runs"].as_u64().unwrap())
        .collect();
    assert_eq!(cut, [2, 0]);
    let out = retrylab(&["run", p, "--seeds", "1", "--fail-on", "no_duplicate"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--fail-on: journal: 1 of 1 seeds spent the events budget"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

/// An exhaustive search stops at the first run cut by the budget and certifies nothing.
#[test]
fn explore_certifies_nothing_past_a_budget_run() {
    use retrylab::check::Property;
    use retrylab::explore::{Bound, Strategy, explore};
    let m = model(&endless());
    let found = explore(
        &m,
        design("journal"),
        &[Property::NoDuplicate],
        Strategy::Dfs,
        Bound {
            max_faults: 1,
            ..Bound::default()
        },
    );
    assert_eq!(found.budget_runs, 1);
    assert_eq!(found.runs(), 1);
    assert!(!found.certified());
    // The command says why its level stopped: not the run limit, the events budget.
    let path = write("explore", &endless());
    let out = retrylab(&[
        "explore",
        path.to_str().unwrap(),
        "--design",
        "journal",
        "--max-faults",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("  0 faults: 1 run,")
            && text.contains(": stopped at a run the events budget cut\n"),
        "{text}"
    );
    assert!(!text.contains("run limit"), "{text}");
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

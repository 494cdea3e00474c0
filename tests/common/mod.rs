//! Helpers shared by the integration tests: here, a small exact model for scenario tests
//! (constant latencies, no randomness) and one-line edits of it; in the submodules, the
//! command line in process (`cli`), golden snapshots (`golden`), the property tests'
//! settings and generators (`strategies`), broken and known-bad designs (`broken`, `bad`,
//! `corpus`), bundled models (`models`), races (`race`), the Python and Node executors
//! (`python`, `executors`), and the crate's own source read as code (`source`).
#![allow(dead_code)]

pub mod bad;
pub mod broken;
pub mod cli;
pub mod corpus;
pub mod executors;
pub mod golden;
pub mod models;
pub mod python;
pub mod race;
pub mod source;
pub mod strategies;

use retrylab::check::Metrics;
use retrylab::design::{self, Design};
use retrylab::model::Model;
use retrylab::run::{Traced, run_seeds, run_traced};
use retrylab::sim::RandomChooser;
use serde_json::{Value, json};

/// One intent; 10 ms each way, 50 ms processing, 5 s client timeout, one attempt per call;
/// the agent replans after an unknown (two calls at most) and gives up after a failure.
pub fn base() -> Value {
    json!({
        "name": "scenario",
        "horizon_ms": 200_000_000u64,
        "designs": ["no_dedup", "same_key", "new_key_after_replan"],
        "workload": { "intents": 1 },
        "agent": {
            "tool_timeout_ms": 60_000,
            "max_calls": 2,
            "on_failure": { "give_up": 1 },
            "on_unknown": { "replan": 1 }
        },
        "executor": { "attempts": 1, "timeout_ms": 5_000 },
        "network": { "latency_ms": 10 },
        "provider": { "dedup": "by_key", "processing_ms": 50 }
    })
}

/// Sets `path` ("a.b.c") to `value`, creating objects on the way.
pub fn set(mut v: Value, path: &str, value: Value) -> Value {
    let mut at = &mut v;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let obj = at.as_object_mut().expect("path runs through objects");
        if i + 1 == parts.len() {
            obj.insert(part.to_string(), value);
            break;
        }
        at = obj.entry(part.to_string()).or_insert_with(|| json!({}));
    }
    v
}

pub fn faults(v: Value, faults: Value) -> Value {
    set(v, "faults", faults)
}

pub fn model(v: &Value) -> Model {
    Model::from_json(&v.to_string(), "scenario.json").unwrap_or_else(|e| panic!("{e}"))
}

pub fn design(name: &str) -> &'static dyn Design {
    design::find(name).unwrap_or_else(|| panic!("no design {name}"))
}

/// Metrics of `design` over seeds `0..seeds`.
pub fn run(v: &Value, design_name: &str, seeds: u64) -> Metrics {
    run_seeds(&model(v), design(design_name), 0..seeds)
}

/// One traced run on seed 0 (the timeline helps when an assertion fails).
pub fn trace(v: &Value, design_name: &str) -> Traced {
    run_traced(&model(v), design(design_name), &mut RandomChooser::new(0))
}

/// The sends of `design_name` on `v`, seed `seed`, from its timeline: (time in ms, key).
pub fn timed_sends(v: &Value, design_name: &str, seed: u64) -> Vec<(u64, String)> {
    let t = run_traced(
        &model(v),
        design(design_name),
        &mut RandomChooser::new(seed),
    );
    sends_in(&t.timeline)
}

/// (time in ms, key) of each send in a timeline.
pub fn sends_in(timeline: &str) -> Vec<(u64, String)> {
    timeline
        .lines()
        .filter(|l| l.contains(" sends attempt "))
        .map(|l| {
            let ms = l.split_whitespace().next().unwrap().parse().unwrap();
            (ms, l.rsplit(", ").next().unwrap().to_string())
        })
        .collect()
}

/// The counts a scenario pins, in one comparable value.
#[derive(Debug, PartialEq, Eq)]
pub struct Counts {
    pub effects: u64,
    pub completed: u64,
    pub dup: u64,
    pub false_ok: u64,
    pub false_fail: u64,
    pub unresolved: u64,
    pub calls: u64,
}

pub fn counts(m: &Metrics) -> Counts {
    Counts {
        effects: m.effects,
        completed: m.completed,
        dup: m.duplicate_effects,
        false_ok: m.false_success,
        false_fail: m.false_failure,
        unresolved: m.unresolved,
        calls: m.remote_calls,
    }
}

/// Asserts the counts of one traced run, printing its timeline if they differ.
pub fn expect(v: &Value, design_name: &str, want: Counts) -> Traced {
    let t = trace(v, design_name);
    assert_eq!(
        counts(&t.metrics),
        want,
        "{design_name}: timeline was\n{}",
        t.timeline
    );
    t
}

pub fn c(
    effects: u64,
    completed: u64,
    dup: u64,
    false_ok: u64,
    false_fail: u64,
    unresolved: u64,
    calls: u64,
) -> Counts {
    Counts {
        effects,
        completed,
        dup,
        false_ok,
        false_fail,
        unresolved,
        calls,
    }
}

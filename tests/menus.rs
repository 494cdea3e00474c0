//! Timing menus for exploration (issue 9): the thresholds of a model come from its knobs,
//! exactly, and a range's menu is its bounds plus the values just around each threshold it
//! straddles.

use crate::common::models;

use std::path::Path;

use retrylab::explore::menu::{Threshold, menu, named_thresholds, thresholds};
use retrylab::model::Model;
use serde_json::{Value, json};

fn bundled(name: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(name);
    Model::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn every_bundled_model() -> Vec<Model> {
    models::bundled()
}

fn t(ms: u64, knob: &'static str) -> Threshold {
    Threshold { ms, knob }
}

#[test]
fn ticket_lost_response_thresholds_are_its_timeouts_and_the_lease() {
    let m = bundled("ticket_lost_response.json");
    assert_eq!(
        named_thresholds(&m),
        vec![
            t(60_000, "agent.tool_timeout_ms"),
            t(5_000, "executor.timeout_ms"),
            t(30_000, "executor.lease_ms"),
        ]
    );
    assert_eq!(thresholds(&m), vec![5_000, 30_000, 60_000]);
    // None of its ranges straddles one: latency 5..=80, processing 20..=300, think
    // 200..=1500 each offer their two bounds.
    let ts = thresholds(&m);
    assert_eq!(menu(5, 76, &ts), vec![0, 75]);
    assert_eq!(menu(20, 281, &ts), vec![0, 280]);
    assert_eq!(menu(200, 1301, &ts), vec![0, 1300]);
}

#[test]
fn every_knob_that_is_a_threshold_is_listed_exactly() {
    let text = json!({
        "name": "knobs",
        "horizon_ms": 10_000_000,
        "designs": ["journal"],
        "workload": { "intents": 1 },
        "agent": { "tool_timeout_ms": 60_000, "max_calls": 2,
                   "on_failure": { "give_up": 1 }, "on_unknown": { "replan": 1 } },
        "executor": { "attempts": 3, "reads": 2, "backoff_ms": 100, "max_backoff_ms": 150,
                      "timeout_ms": 5_000, "deadline_ms": 7_000, "visibility_bound_ms": 300,
                      "lease_ms": 9_000, "sweep_ms": 11_000, "poll_ms": 400,
                      "assumed_retention_ms": 20_000 },
        "workers": { "crash": { "after_send": "1/2" }, "restart_delay_ms": 2_500 },
        "provider": { "dedup": "by_key", "accept_async": true, "retention_ms": 50_000,
                      "retention_max_ms": 80_000, "in_progress_expiry_ms": 13_000 }
    });
    let m = Model::from_json(&text.to_string(), "knobs.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        named_thresholds(&m),
        vec![
            t(60_000, "agent.tool_timeout_ms"),
            t(5_000, "executor.timeout_ms"),
            // Up to 4 retries (3 attempts + 2 reads): 100, then 200 capped at 150.
            t(100, "executor.backoff_ms"),
            t(150, "executor.backoff_ms"),
            t(7_000, "executor.deadline_ms"),
            t(300, "executor.visibility_bound_ms"),
            t(9_000, "executor.lease_ms"),
            t(11_000, "executor.sweep_ms"),
            t(400, "executor.poll_ms"),
            t(20_000, "executor.assumed_retention_ms"),
            t(15_000, "executor.assumed_retention_ms"),
            t(50_000, "provider.retention_ms"),
            t(80_000, "provider.retention_max_ms"),
            t(13_000, "provider.in_progress_expiry_ms"),
            t(2_500, "workers.restart_delay_ms"),
        ]
    );
    assert_eq!(
        thresholds(&m),
        vec![
            100, 150, 300, 400, 2_500, 5_000, 7_000, 9_000, 11_000, 13_000, 15_000, 20_000, 50_000,
            60_000, 80_000
        ]
    );
    // A latency of 50..=500 ms straddles the backoff steps, the visibility bound and the
    // poll period.
    assert_eq!(
        menu(50, 451, &thresholds(&m)),
        vec![0, 49, 51, 99, 101, 249, 251, 349, 351, 450]
    );
}

/// The value at `path` ("executor.timeout_ms") of the model as it serializes.
fn knob(model: &Value, path: &str) -> Option<u64> {
    path.split('.')
        .try_fold(model, |v, part| v.get(part))
        .and_then(Value::as_u64)
}

#[test]
fn every_threshold_of_every_bundled_model_comes_from_a_knob() {
    for m in every_bundled_model() {
        let value = serde_json::to_value(&m).unwrap();
        let e = &m.executor;
        for th in named_thresholds(&m) {
            let v = knob(&value, th.knob)
                .unwrap_or_else(|| panic!("{}: {} is no knob of the model", m.name, th.knob));
            let ok = match th.knob {
                "executor.backoff_ms" => (1..64).any(|n| e.backoff_before(n) == th.ms),
                "executor.assumed_retention_ms" => {
                    th.ms == v || th.ms == v.saturating_sub(e.timeout_ms)
                }
                _ => th.ms == v,
            };
            assert!(ok, "{}: {} ms from {} ({v})", m.name, th.ms, th.knob);
            assert!(th.ms > 0, "{}: {}", m.name, th.knob);
        }
        let mut sorted: Vec<u64> = named_thresholds(&m).iter().map(|t| t.ms).collect();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(thresholds(&m), sorted, "{}", m.name);
    }
}

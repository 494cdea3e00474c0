//! Determinism is tested, not assumed: the same model and seed give the same bytes, and a
//! trace's choice vector replays to the very same run.

use std::path::PathBuf;
use std::process::Command;

use retrylab::design;
use retrylab::model::Model;
use retrylab::run::{run_seeds, run_traced};
use retrylab::sim::{RandomChooser, ReplayChooser};

use crate::common::golden;

fn path(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn retrylab(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A model where every random fault is on, so runs really differ by seed.
fn noisy() -> Model {
    let text = r#"{
        "name": "noisy", "horizon_ms": 3600000,
        "designs": ["no_dedup", "same_key", "new_key_after_replan"],
        "workload": { "intents": 5, "spacing_ms": { "min": 0, "max": 3000 }, "genuine_repeat": "1/4", "tenants": 2 },
        "agent": { "tool_timeout_ms": 20000, "max_calls": 3, "think_ms": { "min": 0, "max": 2000 },
                   "on_failure": { "replan": 2, "give_up": 1 },
                   "on_unknown": { "retry_same": 1, "replan": 2, "change_args": 1, "ask_user": 1 } },
        "executor": { "attempts": 2, "backoff_ms": 300, "timeout_ms": 2000 },
        "workers": { "count": 2, "journal": "volatile", "max_crashes": 2,
                     "crash": { "before_dispatch": "1/20", "after_send": "1/20", "after_reply": "1/20" } },
        "network": { "latency_ms": { "min": 1, "max": 900 }, "request_loss": "1/10", "reply_loss": "1/5", "duplicate": "1/10" },
        "provider": { "dedup": "by_key", "retention_ms": 4000, "atomicity": "key_then_effect", "in_flight": "wait",
                      "processing_ms": { "min": 5, "max": 2500 }, "error_before_commit": "1/20",
                      "error_after_commit": "1/20", "crash_during_processing": "1/30" }
    }"#;
    Model::from_json(text, "noisy").unwrap()
}

#[test]
fn same_seed_same_json_bytes() {
    let args = [
        "run",
        &path("ticket_lost_response.json"),
        "--seeds",
        "300",
        "--format",
        "json",
    ];
    assert_eq!(retrylab(&args), retrylab(&args));
}

#[test]
fn same_seed_same_trace_bytes_and_replay_reproduces_the_timeline() {
    let model = path("ticket_lost_response.json");
    let args = ["trace", &model, "--design", "same_key", "--seed", "17"];
    let first = String::from_utf8(retrylab(&args)).unwrap();
    assert_eq!(first.as_bytes(), retrylab(&args));
    let replay_line = first.lines().find(|l| l.starts_with("replay: ")).unwrap();
    let choices = replay_line
        .rsplit("--choices ")
        .next()
        .unwrap()
        .trim_matches('\'');
    let replayed = String::from_utf8(retrylab(&[
        "replay",
        &model,
        "--design",
        "same_key",
        "--choices",
        choices,
    ]))
    .unwrap();
    // Everything after the first (header) line is identical: timeline, outcome, choices.
    let body = |s: &str| s.split_once('\n').unwrap().1.to_string();
    assert_eq!(body(&first), body(&replayed));
}

#[test]
fn every_traced_run_replays_exactly_and_matches_the_untraced_run() {
    let model = noisy();
    for d in design::all() {
        for seed in 0..60 {
            let traced = run_traced(&model, d, &mut RandomChooser::new(seed));
            let mut replay = ReplayChooser::new(traced.vector());
            let again = run_traced(&model, d, &mut replay);
            assert_eq!(replay.finish(), Ok(()));
            assert_eq!(traced.timeline, again.timeline, "{} seed {seed}", d.name());
            assert_eq!(traced.metrics, again.metrics);
            // Tracing is an observer: it changes no decision.
            assert_eq!(
                traced.metrics,
                run_seeds(&model, d, seed..seed + 1),
                "{} seed {seed}",
                d.name()
            );
        }
    }
}

#[test]
fn seeds_differ_and_batches_compose() {
    let model = noisy();
    let d = design::find("same_key").unwrap();
    let whole = run_seeds(&model, d, 0..200);
    let mut parts = run_seeds(&model, d, 0..70);
    parts.merge(&run_seeds(&model, d, 70..200));
    assert_eq!(whole, parts);
    let a = run_traced(&model, d, &mut RandomChooser::new(1)).timeline;
    let b = run_traced(&model, d, &mut RandomChooser::new(2)).timeline;
    assert_ne!(a, b, "different seeds should explore different schedules");
}

#[test]
fn designs_on_one_seed_meet_the_same_faults_where_their_paths_agree() {
    // Per-purpose streams: the first intent's arrival spacing and the first send's latency
    // are the same draws whatever the design.
    let model = noisy();
    let first_send = |name: &str| {
        let t = run_traced(
            &model,
            design::find(name).unwrap(),
            &mut RandomChooser::new(9),
        );
        t.choices
            .iter()
            .find(|c| c.purpose == retrylab::sim::Purpose::Latency)
            .copied()
    };
    let a = first_send("no_dedup");
    assert!(a.is_some());
    assert_eq!(a, first_send("same_key"));
    assert_eq!(a, first_send("new_key_after_replan"));
}

#[test]
fn committed_report_is_current() {
    // reports/ticket_lost_response.json is regenerated by the command in reports/README.md;
    // any change in behaviour (or in the random streams) shows up here as a diff.
    let fresh = retrylab(&[
        "run",
        &path("ticket_lost_response.json"),
        "--format",
        "json",
    ]);
    let mut golden = golden::Golden::in_project("reports");
    golden.note("(or regenerate it with the command in reports/README.md)");
    golden.check(
        "ticket_lost_response.json",
        &String::from_utf8(fresh).unwrap(),
    );
    golden.finish();
}

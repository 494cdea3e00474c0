//! Warnings for model values that make a component inert or a figure meaningless
//! (`retrylab::design::inert`): each with a small model and its exact message, the ones whose
//! claim a run can show checked by running it, the design dependence, how the binary prints
//! them (stderr only, deterministic), and which bundled models trip which (a change is a
//! visible diff here).

use crate::common;
use crate::common::cli;

use std::path::PathBuf;

use cli::*;
use common::*;
use retrylab::design::assumptions::judge;
use retrylab::design::inert;
use retrylab::model::Model;
use serde_json::{Value, json};

/// The warnings of the model `v`, as `path: message`.
fn warned(v: &Value) -> Vec<String> {
    inert(&model(v))
        .into_iter()
        .map(|i| format!("{}: {}", i.path, i.message))
        .collect()
}

fn with(v: Value, edits: &[(&str, Value)]) -> Value {
    edits
        .iter()
        .fold(v, |v, (path, value)| set(v, path, value.clone()))
}

fn designs(v: Value, names: &[&str]) -> Value {
    set(v, "designs", json!(names))
}

#[test]
fn the_base_model_warns_about_nothing() {
    assert_eq!(warned(&base()), Vec::<String>::new());
    let all = designs(base(), &retrylab::design::names());
    assert_eq!(warned(&all), Vec::<String>::new());
}

// ---- the read-back ----

/// A reconciling design reading back by key: reads 5 with a backoff of 100 ms end 8.2 s
/// after the send, inside a visibility bound of 30 s.
fn short_reads(backoff_ms: u64) -> Value {
    with(
        designs(base(), &["journal_reconcile"]),
        &[
            ("provider.lookup", json!("by_key")),
            ("executor.reconcile", json!("by_key")),
            ("executor.reads", json!(5)),
            ("executor.backoff_ms", json!(backoff_ms)),
            ("executor.visibility_bound_ms", json!(30_000)),
            ("agent.max_calls", json!(1)),
        ],
    )
}

#[test]
fn reads_that_end_inside_the_visibility_bound_are_named_with_the_values_that_reach_it() {
    assert_eq!(
        warned(&short_reads(100)),
        [
            "executor.reads: 5: the last read-back of an agent call returns at most 8200 ms after the send it follows (timeout_ms 5000 + backoffs 3100 + 5 x round trip 20 ms), inside executor.visibility_bound_ms 30000: every \"not found\" is inconclusive, and the call is reported unknown, never decided (designs journal_reconcile); use executor.backoff_ms 804 or more, or executor.reads 8 or more"
        ]
    );
    // The values it names are the first that reach the bound.
    assert_eq!(warned(&short_reads(804)), Vec::<String>::new());
    assert_eq!(warned(&short_reads(803)).len(), 1);
    let eight = set(short_reads(100), "executor.reads", json!(8));
    assert_eq!(warned(&eight), Vec::<String>::new());
    // Not a reconciling design: nothing reads back.
    let journal = designs(short_reads(100), &["journal", "same_key"]);
    assert_eq!(warned(&journal), Vec::<String>::new());
}

/// What the warning says, run: the only send is lost on its way, one agent call. With the
/// short reads every "not found" comes inside the bound, no read decides and the intent
/// ends unresolved although nothing was done; with the backoff the warning names, the last
/// read is past the bound, proves the effect absent, and the create goes out again.
#[test]
fn with_reads_inside_the_bound_a_lost_request_stays_unresolved() {
    let lost = |v: Value| faults(v, json!([{"drop_request": {"attempt": 1}}]));
    let short = run(&lost(short_reads(100)), "journal_reconcile", 1);
    let long = run(&lost(short_reads(804)), "journal_reconcile", 1);
    assert_eq!(
        (short.unresolved, short.completed, short.effects),
        (1, 0, 0)
    );
    assert_eq!((long.unresolved, long.completed, long.effects), (0, 1, 1));
}

#[test]
fn a_lookup_by_key_at_a_provider_without_keys_is_named_and_its_assumption_fails() {
    let no_keys = with(
        designs(base(), &["same_key", "journal_reconcile_lease"]),
        &[
            ("provider.dedup", json!("none")),
            ("provider.lookup", json!("by_key")),
            ("executor.reconcile", json!("by_key")),
        ],
    );
    assert_eq!(
        warned(&no_keys),
        [
            "provider.lookup: by_key, but provider.dedup is none: the provider keeps no record under the caller's key, so a lookup by key never finds anything, and every \"not found\" is taken for absence and the create sent again (designs journal_reconcile_lease); use provider.lookup search (with executor.reconcile search) where the API can search, or provider.dedup by_key"
        ]
    );
    let read_back = judge(design("journal_reconcile_lease"), &model(&no_keys))
        .into_iter()
        .find(|j| j.name == "read_back_identifies_operation")
        .unwrap();
    assert!(!read_back.holds);
    assert_eq!(
        read_back.why,
        "a lookup by key, but the provider keeps no record under the caller's key (dedup none), so a read finds nothing where the effect exists"
    );
    let payload = with(
        no_keys,
        &[
            ("provider.dedup", json!("by_key")),
            ("provider.key_source", json!("payload")),
        ],
    );
    assert_eq!(
        warned(&payload),
        [
            "provider.lookup: by_key, but provider.key_source is payload (records are kept under a hash of the request, not the caller's key): the provider keeps no record under the caller's key, so a lookup by key never finds anything, and every \"not found\" is taken for absence and the create sent again (designs journal_reconcile_lease); use provider.lookup search (with executor.reconcile search) where the API can search, or provider.key_source client"
        ]
    );
}

// ---- timings ----

#[test]
fn a_horizon_within_one_tool_timeout_is_named() {
    let short = set(base(), "horizon_ms", json!(60_000));
    assert_eq!(
        warned(&short),
        [
            "horizon_ms: 60000 is not longer than agent.tool_timeout_ms 60000: the run ends before the agent stops waiting for a call that gets no answer (a crashed worker's, or one still retrying), so such a call is left unresolved and no retry of it is seen; use horizon_ms 120000 or more (every call of the last intent, each waited for and thought over)"
        ]
    );
    assert_eq!(
        warned(&set(base(), "horizon_ms", json!(60_001))),
        Vec::<String>::new()
    );
}

#[test]
fn a_timeout_no_reply_can_beat_is_named() {
    let slow = set(base(), "provider.processing_ms", json!(5_000));
    assert_eq!(
        warned(&slow),
        [
            "executor.timeout_ms: 5000 is not longer than the quickest processed reply (latency 2 x 10 + processing 5000 = 5020 ms): every request the provider executes is answered after the client timeout and its reply discarded, so every first send is a lost reply (only answers from a key record, such as a replay, come in time); use executor.timeout_ms 5021 or more (the slowest reply)"
        ]
    );
    // What the warning says, run: the only send's reply comes too late (with a second call,
    // its replay under the key would come in time).
    let once = set(slow, "agent.max_calls", json!(1));
    let late = run(&once, "same_key", 1);
    assert_eq!((late.effects, late.completed), (1, 0));
    let fixed = set(once, "executor.timeout_ms", json!(5_021));
    assert_eq!(warned(&fixed), Vec::<String>::new());
    assert_eq!(run(&fixed, "same_key", 1).completed, 1);
}

#[test]
fn transport_retries_after_the_agent_stopped_waiting_are_named() {
    let late = with(
        base(),
        &[
            ("executor.attempts", json!(3)),
            ("executor.timeout_ms", json!(60_000)),
        ],
    );
    assert_eq!(
        warned(&late),
        [
            "executor.attempts: 3 with executor.timeout_ms 60000 not shorter than agent.tool_timeout_ms 60000: every transport retry goes out after the agent stopped waiting for the call, so no retry's result reaches it; use executor.timeout_ms 20000 or less, so that the 3 attempts and their backoffs fit in the agent's wait"
        ]
    );
    // A design that sends once per token ignores executor.attempts.
    let token = designs(late, &["single_use_token"]);
    assert_eq!(warned(&token), Vec::<String>::new());
}

#[test]
fn a_deadline_before_the_first_retry_is_named_and_no_retry_happens() {
    let tight = |deadline: u64| {
        let v = with(
            designs(base(), &["journal"]),
            &[
                ("executor.attempts", json!(2)),
                ("executor.deadline_ms", json!(deadline)),
            ],
        );
        faults(v, json!([{"drop_reply": {"attempt": 1}}]))
    };
    assert_eq!(
        warned(&tight(5_000)),
        [
            "executor.deadline_ms: 5000 is not longer than executor.timeout_ms 5000 + backoff_ms 0: an operation whose reply is lost is past its deadline before it can act again, so it is escalated without a retry or a read-back unless a worker crash has it recovered sooner (designs journal); use executor.deadline_ms 10001 or more (2 sends of timeout_ms and the backoffs between them)"
        ]
    );
    assert_eq!(warned(&tight(10_001)), Vec::<String>::new());
    // Run: the tight deadline escalates after one send; the one it names lets the retry out.
    assert_eq!(run(&tight(5_000), "journal", 1).remote_calls, 1);
    assert_eq!(run(&tight(10_001), "journal", 1).remote_calls, 2);
    // Only the journal family has a deadline.
    assert_eq!(
        warned(&designs(tight(5_000), &["same_key"])),
        Vec::<String>::new()
    );
}

#[test]
fn a_sweeper_that_acts_before_the_backoff_counts_for_the_deadline() {
    let v = with(
        designs(base(), &["journal"]),
        &[
            ("executor.backoff_ms", json!(30_000)),
            ("executor.sweep_ms", json!(12_000)),
            ("executor.deadline_ms", json!(17_000)),
        ],
    );
    assert_eq!(
        warned(&v),
        [
            "executor.deadline_ms: 17000 is not longer than executor.timeout_ms 5000 + sweep_ms 12000: an operation whose reply is lost is past its deadline before it can act again, so it is escalated without a retry or a read-back unless a worker crash has it recovered sooner (designs journal); use executor.deadline_ms 40001 or more (2 sends of timeout_ms and the backoffs between them)"
        ]
    );
}

#[test]
fn a_sweeper_past_the_horizon_is_named() {
    let v = with(
        designs(base(), &["journal", "journal_reconcile", "same_key"]),
        &[
            ("horizon_ms", json!(600_000)),
            ("executor.sweep_ms", json!(600_000)),
        ],
    );
    assert_eq!(
        warned(&v),
        [
            "executor.sweep_ms: 600000 is not shorter than horizon_ms 600000: the recovery sweeper never runs (designs journal, journal_reconcile); use executor.sweep_ms 300000 (below the horizon, above timeout_ms 5000), or leave it out for no sweeper"
        ]
    );
}

#[test]
fn an_assumed_retention_shorter_than_the_first_resend_is_named() {
    let v = with(
        designs(base(), &["durable_authorization"]),
        &[("executor.assumed_retention_ms", json!(10_000))],
    );
    assert_eq!(
        warned(&v),
        [
            "executor.assumed_retention_ms: 10000 is not longer than 2 x executor.timeout_ms 5000 + backoff_ms 0: a key whose reply is lost is already too old for its first resend, so a key is never sent again without a read-back that proves the effect absent, and the operation is escalated instead (designs durable_authorization); leave it out: the provider keeps keys forever"
        ]
    );
    let kept = set(v.clone(), "provider.retention_ms", json!(86_400_000));
    assert!(
        warned(&kept)[0]
            .ends_with("; use the provider's retention, executor.assumed_retention_ms 86400000"),
        "{:?}",
        warned(&kept)
    );
    let longer = set(v, "executor.assumed_retention_ms", json!(10_001));
    assert_eq!(warned(&longer), Vec::<String>::new());
}

#[test]
fn a_poll_interval_past_the_horizon_is_named() {
    let v = with(
        designs(base(), &["journal"]),
        &[
            ("provider.accept_async", json!(true)),
            ("horizon_ms", json!(600_000)),
            ("executor.poll_ms", json!(600_000)),
        ],
    );
    assert_eq!(
        warned(&v),
        [
            "executor.poll_ms: 600000 is not shorter than horizon_ms 600000: accepted (202) work is never polled within the run, so every accepted create is left unresolved (designs journal); use executor.poll_ms 1000 (the default)"
        ]
    );
}

// ---- workers and network ----

#[test]
fn crashes_that_cannot_happen_or_never_end_are_named() {
    let crashing = set(base(), "workers.crash.after_send", json!("1/2"));
    assert_eq!(warned(&crashing), Vec::<String>::new());
    assert_eq!(
        warned(&set(crashing.clone(), "workers.max_crashes", json!(0))),
        [
            "workers.max_crashes: 0 with a crash probability in workers.crash: no random crash ever happens; use workers.max_crashes 1 or more, or crash probabilities 0"
        ]
    );
    let never_back = with(
        crashing,
        &[
            ("horizon_ms", json!(600_000)),
            ("workers.restart_delay_ms", json!(600_000)),
        ],
    );
    assert_eq!(
        warned(&never_back),
        [
            "workers.restart_delay_ms: 600000 is not shorter than horizon_ms 600000: a crashed worker never comes back within the run, so no restart recovers anything; use workers.restart_delay_ms 1000 (the default) or another value well below the horizon"
        ]
    );
    // No crash possible: the restart delay does not matter.
    let calm = with(
        base(),
        &[
            ("horizon_ms", json!(600_000)),
            ("workers.restart_delay_ms", json!(600_000)),
        ],
    );
    assert_eq!(warned(&calm), Vec::<String>::new());
}

#[test]
fn a_network_that_loses_every_request_is_named() {
    assert_eq!(
        warned(&set(base(), "network.request_loss", json!("1/1"))),
        [
            "network.request_loss: 1/1: no request ever reaches the provider, so nothing is ever done and every figure is of a provider that does not exist; use a probability below 1"
        ]
    );
}

// ---- workload and agent ----

#[test]
fn knobs_with_nothing_to_act_on_are_named() {
    assert_eq!(
        warned(&set(base(), "workload.genuine_repeat", json!("1/2"))),
        [
            "workload.genuine_repeat: 1/2 with workload.intents 1: the only intent has none before it to repeat, so no genuine repeat happens; use workload.intents 2 or more, or genuine_repeat 0"
        ]
    );
    let across = set(base(), "workload.repeat_across_tenants", json!(true));
    assert_eq!(
        warned(&across),
        [
            "workload.repeat_across_tenants: true with workload.tenants 1: there is no other tenant to repeat across; use workload.tenants 2 or more, or leave it out"
        ]
    );
    assert_eq!(
        warned(&with(
            across,
            &[
                ("workload.tenants", json!(2)),
                ("workload.intents", json!(2))
            ]
        )),
        [
            "workload.repeat_across_tenants: true with workload.genuine_repeat 0: no intent repeats another; use a genuine_repeat above 0, or leave it out"
        ]
    );
    assert_eq!(
        warned(&with(
            base(),
            &[
                ("agent.compensate", json!(true)),
                ("agent.on_step_failure", json!("restart_workflow"))
            ]
        )),
        [
            "agent.compensate: true with workload.steps 1: there is no earlier step to undo, so no compensation happens; use workload.steps 2 or more, or leave it out",
            "agent.on_step_failure: restart_workflow with workload.steps 1: the workflow is its one step, so this is retry_step; use workload.steps 2 or more, or leave it out",
        ]
    );
    let loss = set(base(), "agent.authorization_loss", json!("1/3"));
    assert_eq!(warned(&loss), Vec::<String>::new());
    assert_eq!(
        warned(&set(loss.clone(), "agent.max_calls", json!(1))),
        [
            "agent.authorization_loss: 1/3 with agent.max_calls 1: the agent never makes a second call, and only a replan loses an authorization, so none is ever lost; use agent.max_calls 2 or more with a replan weight, or authorization_loss 0"
        ]
    );
    assert_eq!(
        warned(&set(loss, "agent.on_unknown", json!({"retry_same": 1}))),
        [
            "agent.authorization_loss: 1/3 with no replan or change_args weight in agent.on_failure or agent.on_unknown: the agent never replans, and only a replan loses an authorization, so none is ever lost; use agent.max_calls 2 or more with a replan weight, or authorization_loss 0"
        ]
    );
}

// ---- through the binary ----

/// A scratch model file, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, v: &Value) -> Scratch {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("retrylab-inert-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
        Scratch(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn the_binary_prints_them_on_stderr_once_per_command_and_the_same_every_time() {
    let v = with(
        designs(base(), &["journal", "same_key"]),
        &[("executor.deadline_ms", json!(5_000))],
    );
    let file = Scratch::new("tight_deadline.json", &v);
    let line = "warning: scenario: executor.deadline_ms: 5000 is not longer than executor.timeout_ms 5000 + backoff_ms 0: an operation whose reply is lost is past its deadline before it can act again, so it is escalated without a retry or a read-back unless a worker crash has it recovered sooner (designs journal); use executor.deadline_ms 10001 or more (2 sends of timeout_ms and the backoffs between them)\n";
    let commands: [&[&str]; 4] = [
        &["run", file.path(), "--seeds", "3"],
        &["trace", file.path(), "--design", "journal"],
        &[
            "explore",
            file.path(),
            "--design",
            "journal",
            "--max-faults",
            "1",
        ],
        &["show-model", file.path()],
    ];
    for args in commands {
        let out = retrylab(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.starts_with(line), "{args:?}: {err}");
        assert_eq!(err.matches(line).count(), 1, "{err}");
        assert!(
            !stdout(&out).contains("warning:"),
            "{args:?}: {}",
            stdout(&out)
        );
        let again = retrylab(args);
        assert_eq!(
            (stderr(&again), again.stdout),
            (err, out.stdout),
            "{args:?}"
        );
    }
    // Against a preset the model the command runs is judged: here it keeps the warning.
    let out = retrylab(&[
        "run",
        file.path(),
        "--seeds",
        "2",
        "--provider",
        "stripe_v1",
    ]);
    assert!(stderr(&out).starts_with(&line.replace("scenario:", "scenario @ stripe_v1:")));
}

// ---- the bundled models ----

/// Every bundled model file: `models/`, `models/windows/`, `models/guarantees/`, `models/bad/`.
fn bundled() -> Vec<PathBuf> {
    let root = root().join("models");
    let mut paths: Vec<PathBuf> = ["", "windows", "guarantees", "bad"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && !p.ends_with("schema.json"))
        .collect();
    paths.sort();
    paths
}

/// Which bundled model trips which warning, by field, each intended: the guarantee matrix's
/// two models whose 3 s processing is past the 1 s client timeout on purpose (that is the
/// race they break an assumption with), which also read back once inside their 4 s
/// visibility bound (longer reads would change the figures of the matrix they are in).
const BUNDLED: [(&str, &str); 4] = [
    (
        "guarantees/in_flight_refused_or_held.json",
        "executor.timeout_ms",
    ),
    (
        "guarantees/in_flight_refused_or_held.json",
        "executor.reads",
    ),
    (
        "guarantees/lease_outlasts_request.json",
        "executor.timeout_ms",
    ),
    ("guarantees/lease_outlasts_request.json", "executor.reads"),
];

/// The same against every provider preset (`--provider`, `report --each-provider`).
const BUNDLED_WITH_PRESETS: [(&str, &str, &str); 0] = [];

fn relative(path: &std::path::Path) -> String {
    path.strip_prefix(root().join("models"))
        .unwrap()
        .display()
        .to_string()
}

#[test]
fn bundled_models_trip_only_the_listed_warnings() {
    let mut found = Vec::new();
    let mut with_presets = Vec::new();
    for path in bundled() {
        let m = Model::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let name = relative(&path);
        for i in inert(&m) {
            found.push((name.clone(), i.path));
        }
        for preset in retrylab::model::provider::preset_names() {
            let Ok(m) = m.with_provider(preset) else {
                continue;
            };
            for i in inert(&m) {
                if !BUNDLED.contains(&(name.as_str(), i.path.as_str())) {
                    with_presets.push((name.clone(), preset.to_string(), i.path));
                }
            }
        }
    }
    let want: Vec<(String, String)> = BUNDLED
        .iter()
        .map(|(f, p)| (f.to_string(), p.to_string()))
        .collect();
    assert_eq!(found, want);
    let want: Vec<(String, String, String)> = BUNDLED_WITH_PRESETS
        .iter()
        .map(|(f, s, p)| (f.to_string(), s.to_string(), p.to_string()))
        .collect();
    assert_eq!(with_presets, want);
}

#[test]
fn a_stack_no_compared_design_runs_is_named() {
    let stack = json!({ "layers": [{ "name": "sdk", "attempts": 3, "retry_on": "uncertain" }] });
    let v = designs(
        set(base(), "executor.stack", stack),
        &["journal", "journal_reconcile"],
    );
    assert_eq!(
        warned(&v),
        [
            "executor.stack: no design of the model runs it (journal, journal_reconcile): only the design presets take their retry layers from it (`retrylab designs`: no_dedup, same_key, ...); the journal family and external executors run their own; compare a preset, or leave the stack out"
        ]
    );
    // A preset among them runs it: nothing to say.
    let v = designs(v, &["journal", "same_key"]);
    assert_eq!(warned(&v), Vec::<String>::new());
}

#[test]
fn a_configured_designs_own_settings_are_warned_about_under_its_entry() {
    // Retries whose client timeout is as long as the agent's wait: said of the entry that
    // sets them, not of the shared section the other design runs.
    let entry = json!({ "name": "same_key_slow", "design": "same_key",
                        "executor": { "attempts": 3, "timeout_ms": 60000 } });
    let v = set(base(), "designs", json!(["same_key", entry]));
    let warnings = warned(&v);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("designs[1].executor.attempts: 3 with executor.timeout_ms 60000 not shorter than agent.tool_timeout_ms 60000"),
        "{warnings:?}"
    );
}

//! Configured designs: an entry of `designs` with its own executor settings (`{"name",
//! "design", "executor"}`) runs its design on the model with those settings in place, is
//! judged by them, and is refused with the field and its position when they are wrong.

use crate::common;
use crate::common::cli;

use cli::*;
use common::*;
use retrylab::design::Configured;
use retrylab::design::assumptions::judge;
use retrylab::model::Model;
use retrylab::run::run_seeds;
use serde_json::json;

/// The seeds' lost reply, with `same_key` beside a configured `same_key` that retries.
fn compared() -> serde_json::Value {
    let v = faults(base(), json!([{ "drop_reply": { "attempt": 1 } }]));
    set(
        v,
        "designs",
        json!([
            "same_key",
            { "name": "same_key_retries", "design": "same_key",
              "executor": { "attempts": 3, "backoff_ms": 1000 } }
        ]),
    )
}

#[test]
fn a_configured_design_runs_its_design_with_its_own_executor_settings() {
    let v = compared();
    let m = model(&v);
    assert_eq!(m.designs, ["same_key", "same_key_retries"]);
    assert_eq!(m.for_design("same_key").executor.attempts, 1);
    assert_eq!(m.for_design("same_key_retries").executor.attempts, 3);
    assert_eq!(m.for_design("same_key_retries").executor.timeout_ms, 5_000);
    // The same as the design on a model whose section says so.
    let configured = Configured::leak("same_key_retries", design("same_key"));
    let by_hand = model(&set(
        set(v.clone(), "executor.attempts", json!(3)),
        "executor.backoff_ms",
        json!(1000),
    ));
    let seeds = 0..50;
    let metrics = run_seeds(&m, configured, seeds.clone());
    assert_eq!(
        metrics,
        run_seeds(&by_hand, design("same_key"), seeds.clone())
    );
    assert_ne!(metrics, run_seeds(&m, design("same_key"), seeds));
}

#[test]
fn a_configured_design_is_judged_by_its_own_settings() {
    let v = set(
        compared(),
        "designs",
        json!([
            "same_key",
            { "name": "same_key_stacked", "design": "same_key", "executor": { "stack": {
                "layers": [{ "name": "sdk", "attempts": 2, "retry_on": "uncertain", "key": "per_attempt" }]
            } } }
        ]),
    );
    let m = model(&v);
    let stacked = Configured::leak("same_key_stacked", design("same_key"));
    let own = |d| {
        judge(d, &m)
            .into_iter()
            .find(|j| j.name == "own_layers")
            .map(|j| j.holds)
    };
    assert_eq!(own(stacked), Some(false));
    assert_eq!(own(design("same_key")), None);
}

#[test]
fn wrong_entries_are_refused_with_the_field_and_its_position() {
    let with = |entry: serde_json::Value| {
        let v = set(base(), "designs", json!(["same_key", entry]));
        let text = serde_json::to_string_pretty(&v).unwrap();
        Model::from_json(&text, "m.json").unwrap_err().to_string()
    };
    let e = with(json!({ "name": "x", "design": "no_such", "executor": {} }));
    assert!(
        e.contains("designs[1].design: unknown design \"no_such\" to configure; known designs: no_dedup, same_key"),
        "{e}"
    );
    let e = with(json!({ "name": "x", "design": "same_key", "executor": { "attemps": 3 } }));
    assert!(
        e.contains("designs[1].executor.attemps: unknown field `attemps`"),
        "{e}"
    );
    let e = with(json!({ "name": "x", "design": "same_key", "executor": { "attempts": 0 } }));
    assert!(e.contains("designs[1].executor.attempts: "), "{e}");
    let e = with(json!({ "name": "journal", "design": "same_key" }));
    assert!(
        e.contains(
            "designs[1].name: \"journal\" is the name of a design; give the configured one another"
        ),
        "{e}"
    );
    let e = with(json!({ "name": "x", "design": "same_key", "extra": 1 }));
    assert!(
        e.contains("unknown field `extra` of a configured design"),
        "{e}"
    );
    // Each problem has its line and column.
    assert!(e.starts_with("m.json:"), "{e}");
}

#[test]
fn the_binary_compares_configured_designs_and_checks_their_expectations() {
    // `no_dedup` duplicates the lost reply's effect when the agent replans; the same design
    // under an SDK that retries a timeout under one key per call does not.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("retrylab-configured-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let v = faults(base(), json!([{ "drop_reply": { "attempt": 1 } }]));
    let sdk = json!({ "layers": [
        { "name": "sdk", "attempts": 3, "retry_on": "uncertain", "key": "per_call" }
    ] });
    let v = set(
        v,
        "designs",
        json!(["no_dedup", { "name": "no_dedup_sdk", "design": "no_dedup", "executor": { "stack": sdk } }]),
    );
    let v = set(
        v,
        "expect",
        json!({
            "no_dedup": { "violate": ["no_duplicate"] },
            "no_dedup_sdk": { "hold": ["no_duplicate", "resolved_within(60000)"] }
        }),
    );
    let file = dir.join("configured.json");
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let path = file.to_str().unwrap();
    let out = retrylab(&["run", path, "--seeds", "20"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows: Vec<String> = stdout(&out)
        .lines()
        .filter(|l| l.starts_with("no_dedup"))
        .map(|l| l.split_whitespace().take(7).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        rows,
        [
            "no_dedup 100.0% 0.0% 0.0% 0.0% 0.0% 1.00",
            "no_dedup_sdk 100.0% 0.0% 0.0% 0.0% 0.0% 0.00"
        ],
        "{}",
        stdout(&out)
    );
    let out = retrylab(&["check", path]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let out = retrylab(&["trace", path, "--design", "no_dedup_sdk"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let sends: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" sends attempt "))
        .filter_map(|l| l.rsplit(", ").next())
        .collect();
    assert_eq!(sends, ["key k1", "key k1"], "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_model_digest_covers_what_a_configured_design_runs() {
    let digest = |attempts: u32| {
        let v = set(
            compared(),
            "designs",
            json!(["same_key", { "name": "same_key_retries", "design": "same_key",
                                 "executor": { "attempts": attempts } }]),
        );
        model(&v).digest()
    };
    assert_eq!(digest(3), digest(3));
    assert_ne!(digest(3), digest(4));
    // A model without configured designs keeps the digest it had.
    let plain = set(compared(), "designs", json!(["same_key"]));
    let listed = set(compared(), "designs", json!(["same_key", "no_dedup"]));
    assert_eq!(model(&plain).digest(), model(&listed).digest());
}

#[test]
fn knobs_added_later_leave_the_digest_of_a_model_that_does_not_use_them() {
    // As printed in replay commands before `throttle`, `request_timeout`, `retry_after_ms`
    // and `connection_reset` existed.
    let text = std::fs::read_to_string(root().join("models/ticket_lost_response.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(model(&v).digest(), "64ac5788436b93f4");
    for (knob, value) in [
        ("provider.throttle", json!("1/10")),
        ("provider.request_timeout", json!("1/10")),
        ("provider.retry_after_ms", json!(1000)),
        ("network.connection_reset", json!("1/10")),
    ] {
        let used = model(&set(v.clone(), knob, value));
        assert_ne!(used.digest(), "64ac5788436b93f4", "{knob}");
    }
}

#[test]
fn a_configured_design_runs_against_the_provider_a_comparison_substitutes() {
    let m = model(&compared()).with_provider("no_dedup").unwrap();
    let own = m.for_design("same_key_retries");
    assert_eq!(own.provider, m.provider);
    assert_eq!(own.executor.attempts, 3);
    let seeds = 0..30;
    let configured = Configured::leak("same_key_retries_p", design("same_key"));
    let mut renamed = m.clone();
    let c = renamed.configured.remove("same_key_retries").unwrap();
    renamed.configured.insert("same_key_retries_p".into(), c);
    let by_hand = model(&set(
        set(compared(), "executor.attempts", json!(3)),
        "executor.backoff_ms",
        json!(1000),
    ))
    .with_provider("no_dedup")
    .unwrap();
    assert_eq!(
        run_seeds(&renamed, configured, seeds.clone()),
        run_seeds(&by_hand, design("same_key"), seeds)
    );
}

#[test]
fn a_configured_design_of_another_model_is_not_named_here() {
    let registry = retrylab::design::Registry::with(&[Configured::leak(
        "same_key_elsewhere",
        design("same_key"),
    )])
    .unwrap();
    let v = set(base(), "designs", json!(["same_key", "same_key_elsewhere"]));
    let e = Model::from_json_with(&v.to_string(), "m.json", &registry)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("designs[1]: \"same_key_elsewhere\" is a design another model configures"),
        "{e}"
    );
    // `"all"` leaves it out.
    let all = Model::from_json_with(
        &set(base(), "designs", json!("all")).to_string(),
        "m.json",
        &registry,
    )
    .unwrap();
    assert!(!all.designs.iter().any(|d| d == "same_key_elsewhere"));
}

#[test]
fn an_entrys_fields_are_checked_with_the_shared_ones_they_meet() {
    // backoff_ms above the shared max_backoff_ms (60 s): refused under the entry.
    let v = set(
        base(),
        "designs",
        json!(["same_key", { "name": "slow", "design": "same_key", "executor": { "backoff_ms": 100000 } }]),
    );
    let e = Model::from_json(&v.to_string(), "m.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("designs[1].executor.max_backoff_ms: 60000 is below backoff_ms 100000"),
        "{e}"
    );
    // A wait table's entries are bounded as every duration is.
    let v = set(
        base(),
        "executor.stack",
        json!({ "layers": [{ "name": "a", "attempts": 2, "retry_on": "any",
                              "backoff": { "table_ms": [18446744073709551615u64], "jitter": "full" } }] }),
    );
    let e = Model::from_json(&v.to_string(), "m.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "executor.stack.layers[0].backoff.table_ms: 18446744073709551615 is longer than"
        ),
        "{e}"
    );
}

//! Exact scenarios: each documented failure window, each contract knob and each crash point
//! with constant timings, so counts and times are exact. Timings of the base model: 10 ms
//! each way, 50 ms processing, 5 s client timeout; see `common::base`.

use crate::common;

use common::*;
use retrylab::check::Property;
use retrylab::design::ExecCtx;
use retrylab::design::{Design, Executor};
use retrylab::design::{Identity, Retrying};
use retrylab::model::ExecutorModel;
use retrylab::vocab::ids::{Key, OpId};
use retrylab::vocab::protocol::ToolCall;
use serde_json::json;

const ALL: [&str; 3] = ["no_dedup", "same_key", "new_key_after_replan"];

fn lost_reply() -> serde_json::Value {
    faults(base(), json!([{ "drop_reply": { "attempt": 1 } }]))
}

#[test]
fn no_fault_every_design_completes_with_one_call() {
    for d in ALL {
        let t = expect(&base(), d, c(1, 1, 0, 0, 0, 0, 1));
        assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(70), "{d}");
        assert!(t.metrics.reconciliation_ms.is_empty());
    }
}

#[test]
fn lost_reply_after_commit_reproduces_the_seed_table() {
    let v = lost_reply();
    let t = expect(&v, "no_dedup", c(2, 1, 1, 0, 0, 0, 2));
    assert_eq!(
        t.metrics.unknown_ops, 1,
        "the first call's outcome is never learned"
    );
    let t = expect(&v, "same_key", c(1, 1, 0, 0, 0, 0, 2));
    // Unknown at the 5 s timeout; the replan's replay answers 20 ms later.
    assert_eq!(t.metrics.reconciliation_ms.single(), Some(20));
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(5_020));
    assert_eq!(t.metrics.unknown_ops, 0);
    expect(&v, "new_key_after_replan", c(2, 1, 1, 0, 0, 0, 2));
}

#[test]
fn request_that_never_arrived_is_safe_to_send_again() {
    let v = faults(base(), json!([{ "drop_request": { "attempt": 1 } }]));
    for d in ALL {
        let t = expect(&v, d, c(1, 1, 0, 0, 0, 0, 2));
        assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(5_070), "{d}");
    }
    assert_eq!(
        trace(&v, "same_key").metrics.reconciliation_ms.single(),
        Some(70)
    );
}

#[test]
fn transport_retries_reuse_the_key_but_no_dedup_has_none() {
    let v = set(
        lost_reply(),
        "executor",
        json!({ "attempts": 3, "backoff_ms": 100 }),
    );
    for d in ["same_key", "new_key_after_replan"] {
        let t = expect(&v, d, c(1, 1, 0, 0, 0, 0, 2));
        assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(5_120), "{d}");
    }
    expect(&v, "no_dedup", c(2, 1, 1, 0, 0, 0, 2));
}

#[test]
fn agent_reactions_decide_what_an_unknown_becomes() {
    let retry = set(lost_reply(), "agent.on_unknown", json!({ "retry_same": 1 }));
    // Re-running the same call keeps the call's key: no duplicate even per-call keys.
    expect(&retry, "new_key_after_replan", c(1, 1, 0, 0, 0, 0, 2));
    expect(&retry, "no_dedup", c(2, 1, 1, 0, 0, 0, 2));
    let give_up = set(lost_reply(), "agent.on_unknown", json!({ "give_up": 1 }));
    let ask = set(lost_reply(), "agent.on_unknown", json!({ "ask_user": 1 }));
    let one_call = set(lost_reply(), "agent.max_calls", json!(1));
    for d in ALL {
        expect(&give_up, d, c(1, 0, 0, 0, 1, 0, 1));
        expect(&ask, d, c(1, 0, 0, 0, 0, 1, 1));
        expect(&one_call, d, c(1, 0, 0, 0, 0, 1, 1));
    }
}

#[test]
fn changed_arguments_under_the_same_key_follow_the_mismatch_rule() {
    let v = set(
        lost_reply(),
        "agent.on_unknown",
        json!({ "change_args": 1 }),
    );
    // Rejected: the changed action never happens; the original effect exists. A 422 says
    // the key's first request reached the provider, so the executor reports "unknown", not
    // "failed", and the user hears "unresolved" about a ticket that exists: true.
    expect(&v, "same_key", c(1, 0, 0, 0, 0, 1, 2));
    assert_eq!(trace(&v, "same_key").metrics.masked_mismatches, 0);
    // Answered as the original: the agent is told its changed call succeeded, but no effect
    // carries the changed arguments. Only `no_masked_mismatch` sees it.
    let original = set(v.clone(), "provider.mismatch", json!("return_original"));
    let t = expect(&original, "same_key", c(1, 1, 0, 0, 0, 0, 2));
    assert_eq!(
        (t.metrics.masked_mismatches, t.metrics.drifted_effects),
        (1, 0)
    );
    assert_eq!(t.violated(), [Property::NoMaskedMismatch]);
    let as_new = set(v.clone(), "provider.mismatch", json!("treat_as_new"));
    let t = expect(&as_new, "same_key", c(2, 1, 1, 0, 0, 0, 2));
    assert_eq!(
        (t.metrics.masked_mismatches, t.metrics.drifted_effects),
        (0, 1)
    );
    expect(&v, "no_dedup", c(2, 1, 1, 0, 0, 0, 2));
}

/// Attempt 1 processes for 8 s; the retry (at 7 s after 2 s backoff) overlaps it.
fn overlapping() -> serde_json::Value {
    let v = set(
        base(),
        "executor",
        json!({ "attempts": 3, "backoff_ms": 2_000 }),
    );
    faults(
        v,
        json!([{ "slow_processing": { "attempt": 1, "ms": 8_000 } }]),
    )
}

#[test]
fn overlapping_attempts_with_the_same_key_follow_the_in_flight_rule() {
    let t = expect(&overlapping(), "same_key", c(1, 1, 0, 0, 0, 0, 3));
    // 409 at 7010 ms; retried after 4 s of backoff; the replay answers at 11040 ms.
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(11_040));
    let wait = set(overlapping(), "provider.in_flight", json!("wait"));
    let t = expect(&wait, "same_key", c(1, 1, 0, 0, 0, 0, 2));
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(8_020));
    let both = set(overlapping(), "provider.in_flight", json!("process_both"));
    expect(&both, "same_key", c(2, 1, 1, 0, 0, 0, 2));
    // Effect-then-key keeps no in-flight marker: the overlap executes twice.
    let etk = set(
        overlapping(),
        "provider.atomicity",
        json!("effect_then_key"),
    );
    expect(&etk, "same_key", c(2, 1, 1, 0, 0, 0, 2));
}

/// Stripe-like 24 h retention; the executor is frozen for 30 h before its retry.
fn retention() -> serde_json::Value {
    let v = set(lost_reply(), "provider.retention_ms", json!(86_400_000u64));
    let v = set(v, "executor.attempts", json!(2));
    set(v, "agent.tool_timeout_ms", json!(150_000_000u64))
}

#[test]
fn a_retry_after_retention_expired_duplicates_silently() {
    let paused = faults(
        retention(),
        json!([
            { "drop_reply": { "attempt": 1 } },
            { "pause": { "component": "executor", "from_ms": 1_000, "duration_ms": 108_000_000u64 } }
        ]),
    );
    let t = expect(&paused, "same_key", c(2, 1, 1, 0, 0, 0, 2));
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(108_001_070));
    // Within retention the same key is safe.
    expect(&retention(), "same_key", c(1, 1, 0, 0, 0, 0, 2));
    // A provider that refuses expired keys (412) turns it into an unknown instead: no second
    // effect, and since an earlier send may have committed (here it did), the executor says
    // "unknown"; the agent asks once more, is refused again, and the user hears "unresolved".
    let reject = set(paused, "provider.after_expiry", json!("reject"));
    expect(&reject, "same_key", c(1, 0, 0, 0, 0, 1, 3));
}

#[test]
fn retention_is_measured_from_first_request_or_completion() {
    // Key written at 10 ms, completed at 60 ms; the retry arrives at 1025 ms.
    let v = set(lost_reply(), "provider.retention_ms", json!(1_000));
    let v = set(
        v,
        "executor",
        json!({ "attempts": 2, "backoff_ms": 15, "timeout_ms": 1_000 }),
    );
    expect(&v, "same_key", c(2, 1, 1, 0, 0, 0, 2));
    let from_completion = set(v, "provider.retention_from", json!("completion"));
    expect(&from_completion, "same_key", c(1, 1, 0, 0, 0, 0, 2));
}

#[test]
fn provider_crash_leaves_what_its_atomicity_allows() {
    let v = faults(base(), json!([{ "crash_provider": { "attempt": 1 } }]));
    expect(&v, "same_key", c(1, 1, 0, 0, 0, 0, 2));
    // A key without an effect: every retry hears 409 until the agent stops asking.
    let kte = set(v.clone(), "provider.atomicity", json!("key_then_effect"));
    expect(&kte, "same_key", c(0, 0, 0, 0, 0, 1, 2));
    // An effect without a key: the retry creates a second one.
    let etk = set(v, "provider.atomicity", json!("effect_then_key"));
    expect(&etk, "same_key", c(2, 1, 1, 0, 0, 0, 2));
}

#[test]
fn stored_outcomes_and_replay_mode_decide_what_a_retry_of_a_5xx_does() {
    let v = set(base(), "provider.error_after_commit", json!(1));
    // The 500 is stored and replayed: one effect, never confirmed.
    expect(&v, "same_key", c(1, 0, 0, 0, 0, 1, 2));
    for stored in ["success_only", "success_and_client_errors"] {
        let s = set(v.clone(), "provider.stored_outcomes", json!(stored));
        expect(&s, "same_key", c(2, 0, 1, 0, 0, 1, 2));
    }
    let current = set(v, "provider.replay", json!("current_state"));
    expect(&current, "same_key", c(1, 1, 0, 0, 0, 0, 2));
    let before = set(base(), "provider.error_before_commit", json!(1));
    expect(&before, "same_key", c(0, 0, 0, 0, 0, 1, 2));
}

#[test]
fn bare_already_exists_is_success_without_a_receipt() {
    let v = set(lost_reply(), "provider.replay", json!("already_exists"));
    let t = expect(&v, "same_key", c(1, 1, 0, 0, 0, 0, 2));
    assert!(
        t.timeline
            .contains("reports success (no receipt) for call 2"),
        "{}",
        t.timeline
    );
}

#[test]
fn crash_after_the_reply_before_recording_it_recovers_from_a_durable_journal() {
    let v = faults(
        base(),
        json!([{ "crash_worker": { "attempt": 1, "point": "after_reply", "worker": 0 } }]),
    );
    for d in ["same_key", "new_key_after_replan"] {
        let t = expect(&v, d, c(1, 1, 0, 0, 0, 0, 2));
        assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(1_090), "{d}");
    }
    expect(&v, "no_dedup", c(2, 1, 1, 0, 0, 0, 2));
    // A volatile journal forgets the operation: the agent's replan is a new one.
    let volatile = set(v, "workers.journal", json!("volatile"));
    for d in ALL {
        expect(&volatile, d, c(2, 1, 1, 0, 0, 0, 2));
    }
}

#[test]
fn crash_before_dispatch_and_after_send() {
    let before = faults(
        base(),
        json!([{ "crash_worker": { "attempt": 1, "point": "before_dispatch" } }]),
    );
    for d in ALL {
        let t = expect(&before, d, c(1, 1, 0, 0, 0, 0, 1));
        assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(1_070), "{d}");
    }
    let after = faults(
        base(),
        json!([{ "crash_worker": { "attempt": 1, "point": "after_send" } }]),
    );
    expect(&after, "no_dedup", c(2, 1, 1, 0, 0, 0, 2));
    expect(&after, "same_key", c(1, 1, 0, 0, 0, 0, 2));
}

#[test]
fn duplicated_delivery_is_absorbed_only_by_a_key() {
    let v = set(base(), "network.duplicate", json!(1));
    let v = set(v, "provider.in_flight", json!("wait"));
    expect(&v, "no_dedup", c(2, 1, 1, 0, 0, 0, 1));
    expect(&v, "same_key", c(1, 1, 0, 0, 0, 0, 1));
}

#[test]
fn a_paused_agent_reports_late() {
    let v = faults(
        base(),
        json!([{ "pause": { "component": "agent", "from_ms": 0, "duration_ms": 10_000 } }]),
    );
    // The intent arrives at 0 ms; the frozen agent takes it up at 10 s.
    let t = expect(&v, "same_key", c(1, 1, 0, 0, 0, 0, 1));
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(10_070));
}

/// A custom design: the key is the parameters themselves (argument hashing).
struct KeyFromParams;
struct ParamsIdentity;

impl Identity for ParamsIdentity {
    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId {
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal()
            .create(call, Some(Key(call.params.0)), worker, now)
    }
}

impl Design for KeyFromParams {
    fn name(&self) -> &str {
        "key_from_params"
    }
    fn summary(&self) -> &str {
        "key = the arguments"
    }
    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Retrying::new(ParamsIdentity, config))
    }
}

/// A custom design: one constant key for everything.
struct OneKey;
struct OneKeyIdentity;

impl Identity for OneKeyIdentity {
    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId {
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal().create(call, Some(Key(7)), worker, now)
    }
}

impl Design for OneKey {
    fn name(&self) -> &str {
        "one_key"
    }
    fn summary(&self) -> &str {
        "the same key for every request"
    }
    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Retrying::new(OneKeyIdentity, config))
    }
}

fn run_custom(v: &serde_json::Value, d: &dyn Design) -> retrylab::check::Metrics {
    retrylab::run::run_seeds(&model(v), d, 0..1)
}

#[test]
fn genuine_repeats_are_kept_apart_unless_the_key_hashes_the_arguments() {
    let v = set(
        base(),
        "workload",
        json!({ "intents": 2, "genuine_repeat": 1, "spacing_ms": 1_000 }),
    );
    for d in ALL {
        let m = run(&v, d, 1);
        assert_eq!((m.effects, m.completed, m.merged_repeats), (2, 2, 0), "{d}");
    }
    let m = run_custom(&v, &KeyFromParams);
    assert_eq!(
        (m.effects, m.completed, m.merged_repeats, m.false_success),
        (1, 1, 1, 1)
    );
}

#[test]
fn key_scope_decides_whether_tenants_collide() {
    let v = set(
        base(),
        "workload",
        json!({ "intents": 2, "tenants": 2, "spacing_ms": 1_000 }),
    );
    let global = set(v.clone(), "provider.key_scope", json!("global"));
    // Tenant 1's request meets tenant 0's key with other parameters: 422. Nothing was done
    // for it, but the executor cannot tell whose request holds its key: "unknown".
    let m = run_custom(&global, &OneKey);
    assert_eq!(
        (m.effects, m.completed, m.false_failure, m.unresolved),
        (1, 1, 0, 1)
    );
    for scope in ["tenant", "tenant_endpoint"] {
        let s = set(v.clone(), "provider.key_scope", json!(scope));
        let m = run_custom(&s, &OneKey);
        assert_eq!((m.effects, m.completed), (2, 2), "{scope}");
    }
}

#[test]
fn random_faults_never_duplicate_under_an_atomic_keyed_contract() {
    let v = set(
        base(),
        "network",
        json!({ "latency_ms": { "min": 1, "max": 400 }, "reply_loss": "1/3", "request_loss": "1/10" }),
    );
    let v = set(
        v,
        "executor",
        json!({ "attempts": 3, "backoff_ms": 50, "timeout_ms": 1_000 }),
    );
    let v = set(v, "agent.max_calls", json!(4));
    let v = set(
        v,
        "provider.processing_ms",
        json!({ "min": 10, "max": 900 }),
    );
    let same = run(&v, "same_key", 2_000);
    assert_eq!(same.duplicate_effects, 0);
    assert_eq!(same.false_success, 0);
    let none = run(&v, "no_dedup", 2_000);
    assert!(none.duplicate_effects > 100, "{}", none.duplicate_effects);
    let per_call = run(&v, "new_key_after_replan", 2_000);
    assert!(per_call.duplicate_effects > 0);
    assert!(per_call.duplicate_effects < none.duplicate_effects);
}

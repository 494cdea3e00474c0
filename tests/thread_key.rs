//! `thread_key`: the conversation's id used as the idempotency key. Within one intent it is
//! `same_key`; across two intents of one conversation the provider's mismatch rule decides,
//! and every rule harms the second intent or hides it. Exact figures: constant timings, no
//! random fault.

use crate::common;

use common::*;
use retrylab::run::run_seeds;
use serde_json::json;

/// Two intents of one tenant with different arguments, 1 s apart; the first one's reply is
/// lost when `lost` (one transport retry 1 s later, a replan after an unknown).
fn two_intents(mismatch: &str, lost: bool) -> serde_json::Value {
    let v = set(
        base(),
        "workload",
        json!({ "intents": 2, "spacing_ms": 1_000 }),
    );
    let v = set(
        v,
        "executor",
        json!({ "attempts": 2, "timeout_ms": 5_000, "backoff_ms": 1_000 }),
    );
    let v = set(v, "provider.mismatch", json!(mismatch));
    let v = set(v, "designs", json!(["same_key", "thread_key"]));
    if lost {
        faults(v, json!([{ "drop_reply": { "attempt": 1 } }]))
    } else {
        v
    }
}

/// Per seed: effects, completed, duplicate effects, false successes, false failures,
/// unresolved, remote calls (4 seeds, every seed the same).
fn counts(v: &serde_json::Value, design: &str) -> [u64; 7] {
    let seeds = 4;
    let m = run(v, design, seeds);
    [
        m.effects,
        m.completed,
        m.duplicate_effects,
        m.false_success,
        m.false_failure,
        m.unresolved,
        m.remote_calls,
    ]
    .map(|x| {
        assert_eq!(x % seeds, 0, "{design}: every seed gives the same counts");
        x / seeds
    })
}

/// One intent per conversation: the thread's key is the intent's key, so every seed of the
/// seeds' lost-response model runs exactly as `same_key` does.
#[test]
fn with_one_intent_it_is_same_key() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ticket_lost_response.json");
    let model = retrylab::model::Model::load(&path).unwrap();
    let thread = run_seeds(&model, design("thread_key"), 0..500);
    let same = run_seeds(&model, design("same_key"), 0..500);
    assert_eq!(thread, same);
    assert_eq!((thread.effects, thread.duplicate_effects), (500, 0));
}

/// The second intent reuses the first one's key. A provider that refuses the mismatch (422,
/// Stripe's rule) leaves it undecided: the agent replans under the same key and gets 422
/// again, so it ends unresolved with no ticket. One that answers as for the original hands
/// it the first intent's ticket: told success, no ticket of its own. One that treats it as
/// new creates it. `same_key` creates both tickets under every rule.
#[test]
fn a_second_intent_of_the_thread_meets_the_mismatch_rule() {
    // effects, completed, dup, false_ok, false_fail, unresolved, calls.
    for (rule, thread) in [
        ("reject", [1, 1, 0, 0, 0, 1, 3]),
        ("return_original", [1, 1, 0, 1, 0, 0, 2]),
        ("treat_as_new", [2, 2, 0, 0, 0, 0, 2]),
    ] {
        let v = two_intents(rule, false);
        assert_eq!(
            counts(&v, "thread_key"),
            thread,
            "thread_key, mismatch {rule}"
        );
        assert_eq!(
            counts(&v, "same_key"),
            [2, 2, 0, 0, 0, 0, 2],
            "same_key, {rule}"
        );
    }
}

/// A lost reply of the first intent is absorbed as under `same_key`: its retry carries the
/// thread's key and is answered from the first send's record, no duplicate.
#[test]
fn a_lost_reply_is_still_absorbed() {
    let v = two_intents("treat_as_new", true);
    assert_eq!(counts(&v, "thread_key"), [2, 2, 0, 0, 0, 0, 3]);
    assert_eq!(counts(&v, "same_key"), [2, 2, 0, 0, 0, 0, 3]);
}

/// The receipt of the false success is the first intent's ticket, and the trace shows the
/// second intent's create answered from the first one's key record.
#[test]
fn the_replayed_answer_names_the_other_intents_ticket() {
    let v = two_intents("return_original", false);
    let t = trace(&v, "thread_key");
    assert_eq!(
        (t.metrics.false_success, t.metrics.effects),
        (1, 1),
        "{}",
        t.timeline
    );
    assert!(
        t.violated()
            .contains(&retrylab::check::Property::NoFalseSuccess),
        "{}",
        t.timeline
    );
}

//! The executor presets of `models/executors/` (`executor.preset`), each checked against
//! what its source documents: how many attempts, which errors are retried and after which
//! waits, and which key each send carries, on its own retries and on a new call. Timings of
//! `common::base`: 10 ms each way, 50 ms processing.

mod common;

use common::*;
use retrylab::run::run_traced;
use retrylab::sim::RandomChooser;
use serde_json::json;

/// The sends of `design` under executor preset `preset` on `v`, seed `seed`: (time, key).
fn sends(v: &serde_json::Value, preset: &str, design_name: &str, seed: u64) -> Vec<(u64, String)> {
    let v = set(v.clone(), "executor.preset", json!(preset));
    let t = run_traced(
        &model(&v),
        design(design_name),
        &mut RandomChooser::new(seed),
    );
    t.timeline
        .lines()
        .filter(|l| l.contains(" sends attempt "))
        .map(|l| {
            let ms = l.split_whitespace().next().unwrap().parse().unwrap();
            (ms, l.rsplit(", ").next().unwrap().to_string())
        })
        .collect()
}

fn times(s: &[(u64, String)]) -> Vec<u64> {
    s.iter().map(|(t, _)| *t).collect()
}

fn keys(s: &[(u64, String)]) -> Vec<&str> {
    s.iter().map(|(_, k)| k.as_str()).collect()
}

/// One call, its every send answered 500 after the commit (70 ms after it left).
fn every_500() -> serde_json::Value {
    let v = set(base(), "agent.max_calls", json!(1));
    set(v, "provider.error_after_commit", json!(1))
}

/// One call, every create refused by a rate limit with `Retry-After: ms`.
fn throttled(ms: u64) -> serde_json::Value {
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "provider.throttle", json!(1));
    set(v, "provider.retry_after_ms", json!(ms))
}

#[test]
fn openai_sdk_retries_twice_at_75_to_100_percent_of_half_a_second_doubling_and_sends_no_key() {
    for seed in 0..20 {
        let s = sends(&every_500(), "openai_sdk", "no_dedup", seed);
        let t = times(&s);
        assert_eq!(t.len(), 3, "2 retries: {s:?}");
        // The 500 is stored under no key (there is none): each send is processed anew.
        let (w1, w2) = (t[1] - (t[0] + 70), t[2] - (t[1] + 70));
        assert!(
            (375..=500).contains(&w1) && (750..=1_000).contains(&w2),
            "{s:?}"
        );
        assert_eq!(keys(&s), ["no key"; 3], "the SDK sends no key of its own");
    }
    // A key the application gives is sent on every SDK retry.
    let s = sends(&every_500(), "openai_sdk", "same_key", 0);
    assert_eq!(keys(&s), ["key k1"; 3]);
}

#[test]
fn openai_sdk_waits_a_retry_after_up_to_120_s_and_gives_up_above_it() {
    let s = sends(&throttled(3_000), "openai_sdk", "no_dedup", 0);
    assert_eq!(times(&s), [0, 3_020, 6_040]);
    let s = sends(&throttled(130_000), "openai_sdk", "no_dedup", 0);
    assert_eq!(times(&s), [0]);
}

#[test]
fn openai_sdk_does_not_retry_a_400() {
    let v = faults(
        set(base(), "agent.max_calls", json!(1)),
        json!([{ "reject": { "attempt": 1 } }]),
    );
    assert_eq!(sends(&v, "openai_sdk", "no_dedup", 0).len(), 1);
}

#[test]
fn stripe_client_makes_one_attempt_with_a_key_per_call() {
    let s = sends(&every_500(), "stripe_client", "no_dedup", 0);
    assert_eq!(s, [(0, "key k1".to_string())]);
    // The agent calls again after the lost reply: a new SDK call, a new key.
    let v = faults(base(), json!([{ "drop_reply": { "attempt": 1 } }]));
    let v = set(v, "executor.timeout_ms", json!(5_000));
    let s = sends(&v, "stripe_client", "no_dedup", 0);
    assert_eq!(keys(&s), ["key k1", "key k2"], "{s:?}");
}

#[test]
fn stripe_client_retries_keep_one_key_wait_at_least_half_a_second_and_leave_429_alone() {
    for seed in 0..20 {
        let s = sends(&every_500(), "stripe_client_retries", "no_dedup", seed);
        let t = times(&s);
        assert_eq!(keys(&s), ["key k1"; 3], "{s:?}");
        // The first 500 is stored under the key: the retries are answered at once (20 ms).
        let (w1, w2) = (t[1] - (t[0] + 70), t[2] - (t[1] + 20));
        assert_eq!(w1, 500, "0.5 s at 50-100 %, floored at 0.5 s: {s:?}");
        assert!((500..=1_000).contains(&w2), "{s:?}");
    }
    assert_eq!(
        sends(&throttled(1_000), "stripe_client_retries", "no_dedup", 0).len(),
        1
    );
}

#[test]
fn a_temporal_activity_retries_any_error_and_is_rerun_after_a_crash_under_its_key() {
    // A refused create is an application error the activity retries: 1 s, then 2 s.
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "horizon_ms", json!(4_000));
    let v = faults(
        v,
        json!([{ "reject": { "attempt": 1 } }, { "reject": { "attempt": 2 } }]),
    );
    let s = sends(&v, "temporal_activity", "no_dedup", 0);
    assert_eq!(
        s,
        [
            (0, "key k1".to_string()),
            (1_020, "key k1".to_string()),
            (3_040, "key k1".to_string())
        ]
    );
    // The worker crashes after the send: the restarted worker re-runs the activity, with
    // the same key, as one of its attempts.
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "workers.journal", json!("durable"));
    let v = faults(
        v,
        json!([{ "crash_worker": { "attempt": 1, "point": "after_send" } }]),
    );
    let s = sends(&v, "temporal_activity", "no_dedup", 0);
    assert_eq!(keys(&s), ["key k1", "key k1"], "{s:?}");
    assert_eq!(times(&s), [0, 1_000]);
}

#[test]
fn tenacity_retries_any_error_at_once_and_forever() {
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "horizon_ms", json!(100));
    let v = set(v, "provider.throttle", json!(1));
    let s = sends(&v, "tenacity_default", "no_dedup", 0);
    // Every 429 is back 20 ms after its send, and sent again at once with a new key.
    assert_eq!(times(&s), [0, 20, 40, 60, 80, 100]);
    assert_eq!(
        keys(&s),
        ["key k1", "key k2", "key k3", "key k4", "key k5", "key k6"]
    );
}

#[test]
fn stamina_stops_retrying_once_its_45_s_have_passed() {
    // Every reply lost, 10 s per attempt: the fifth fails past 45 s, and no sixth is made.
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "agent.tool_timeout_ms", json!(600_000));
    let v = set(v, "network.reply_loss", json!(1));
    let v = set(v, "executor.timeout_ms", json!(10_000));
    for seed in 0..10 {
        let s = sends(&v, "stamina_default", "no_dedup", seed);
        let t = times(&s);
        assert_eq!(t.len(), 5, "{s:?}");
        // The waits: 0.1 s, 0.2 s, 0.4 s, 0.8 s doubling, each plus 0 to 1 s.
        for (n, pair) in t.windows(2).enumerate() {
            let base_wait = 100u64 << n;
            let wait = pair[1] - (pair[0] + 10_000);
            assert!((base_wait..=base_wait + 1_000).contains(&wait), "{s:?}");
        }
    }
}

#[test]
fn a_model_names_a_preset_or_a_stack_and_an_unknown_preset_is_refused() {
    let v = set(base(), "executor.preset", json!("no_such"));
    let e = retrylab::model::Model::from_json(&serde_json::to_string_pretty(&v).unwrap(), "m.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("executor.preset: unknown executor preset \"no_such\"; known presets (retrylab executors): openai_sdk, stripe_client"),
        "{e}"
    );
    let v = set(base(), "executor.preset", json!("openai_sdk"));
    let v = set(
        v,
        "executor.stack",
        json!({ "layers": [{ "name": "a", "attempts": 1, "retry_on": "nothing" }] }),
    );
    let e = retrylab::model::Model::from_json(&v.to_string(), "m.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("executor.preset: give a preset or a stack, not both"),
        "{e}"
    );
}

//! The executor presets of `models/executors/` (`executor.preset`), each checked against
//! what its source documents: how many attempts, which errors are retried and after which
//! waits, and which key each send carries, on its own retries and on a new call. Timings of
//! `common::base`: 10 ms each way, 50 ms processing.

use crate::common;

use common::*;
use serde_json::json;

/// The sends of `design` under executor preset `preset` on `v`, seed `seed`: (time, key).
fn sends(v: &serde_json::Value, preset: &str, design_name: &str, seed: u64) -> Vec<(u64, String)> {
    timed_sends(
        &set(v.clone(), "executor.preset", json!(preset)),
        design_name,
        seed,
    )
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
        e.contains("executor.preset: unknown executor preset \"no_such\"; known presets (retrylab executors): temporal_activity, langgraph_py_httpx"),
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

#[test]
fn an_override_changes_the_layer_it_names_and_nothing_else() {
    // The OpenAI SDK with max_retries=4: five attempts, the same waits.
    let v = set(
        every_500(),
        "executor.overrides",
        json!({ "openai": { "attempts": 5 } }),
    );
    let s = sends(&v, "openai_sdk", "no_dedup", 0);
    assert_eq!(s.len(), 5, "{s:?}");
    let plain = sends(&every_500(), "openai_sdk", "no_dedup", 0);
    assert_eq!(times(&s)[..3], times(&plain)[..]);
}

fn refusal(v: &serde_json::Value) -> String {
    retrylab::model::Model::from_json(&serde_json::to_string_pretty(v).unwrap(), "m.json")
        .unwrap_err()
        .to_string()
}

#[test]
fn an_override_of_a_layer_the_preset_lacks_or_without_a_preset_is_refused_naming_it() {
    let v = set(base(), "executor.preset", json!("openai_sdk"));
    let v = set(v, "executor.overrides", json!({ "sdk": { "attempts": 5 } }));
    let e = refusal(&v);
    assert!(
        e.contains("executor.overrides.sdk: the preset has no layer \"sdk\"; its layers: openai"),
        "{e}"
    );
    let v = set(
        base(),
        "executor.overrides",
        json!({ "sdk": { "attempts": 5 } }),
    );
    let e = refusal(&v);
    assert!(
        e.contains("executor.overrides.sdk: overrides change the layers of an executor preset: give executor.preset too"),
        "{e}"
    );
    // The changed layer is checked as a layer: its path is the override's.
    let v = set(base(), "executor.preset", json!("openai_sdk"));
    let v = set(
        v,
        "executor.overrides",
        json!({ "openai": { "attempts": 0 } }),
    );
    let e = refusal(&v);
    assert!(
        e.contains("executor.overrides.openai.attempts: 0; a layer makes 1 to 32 calls"),
        "{e}"
    );
}

/// One call whose every create is refused with a 400 (a `reject` fault on each of the
/// first `n` attempts).
fn every_400(n: u64) -> serde_json::Value {
    let v = set(base(), "agent.max_calls", json!(1));
    let rejects: Vec<serde_json::Value> = (1..=n)
        .map(|a| json!({ "reject": { "attempt": a } }))
        .collect();
    faults(v, json!(rejects))
}

/// One call whose every reply is lost: each send times out after 1 s.
fn every_reply_lost() -> serde_json::Value {
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "agent.tool_timeout_ms", json!(600_000));
    let v = set(v, "executor.timeout_ms", json!(1_000));
    set(v, "network.reply_loss", json!(1))
}

/// One call whose every create is answered 408.
fn every_408() -> serde_json::Value {
    let v = set(base(), "agent.max_calls", json!(1));
    set(v, "provider.request_timeout", json!(1))
}

/// Two agent calls under one key (`same_key`), the provider 10 s at work on the first
/// send, which times out after 1 s: every later send meets it in progress (409).
fn in_progress() -> serde_json::Value {
    let v = set(base(), "provider.processing_ms", json!(10_000));
    let v = set(v, "executor.timeout_ms", json!(1_000));
    set(v, "agent.on_failure", json!({ "replan": 1 }))
}

/// The number of sends of `preset` (design `no_dedup`, seed 0) on each scenario:
/// 500s, 429s, 400s, 408s, lost replies.
fn retried(preset: &str) -> [usize; 5] {
    [
        every_500(),
        throttled(1_000),
        every_400(5),
        every_408(),
        every_reply_lost(),
    ]
    .map(|v| sends(&v, preset, "no_dedup", 0).len())
}

#[test]
fn langgraph_py_retries_by_client_library_as_its_code_does_not_as_its_docs_say() {
    // httpx: 5xx and timeouts, not 429, 400 or 408.
    assert_eq!(retried("langgraph_py_httpx"), [3, 1, 1, 1, 3]);
    // requests with raise_for_status(): every status, but not a timeout.
    assert_eq!(retried("langgraph_py_requests"), [3, 3, 3, 3, 1]);
    // A 409: httpx passes it up, requests retries it (0.5 s plus up to 1 s later).
    let s = sends(&in_progress(), "langgraph_py_httpx", "same_key", 0);
    assert_eq!(keys(&s), ["key k1"; 3], "{s:?}");
    let s = sends(&in_progress(), "langgraph_py_requests", "same_key", 0);
    assert_eq!(keys(&s), ["key k1"; 4], "{s:?}");
    // The waits: 0.5 s then 1 s, each plus 0 to 1 s, after each 500 (70 ms after its send).
    for seed in 0..20 {
        let t = times(&sends(&every_500(), "langgraph_py_httpx", "no_dedup", seed));
        let (w1, w2) = (t[1] - (t[0] + 70), t[2] - (t[1] + 70));
        assert!(
            (500..=1_500).contains(&w1) && (1_000..=2_000).contains(&w2),
            "{t:?}"
        );
    }
}

#[test]
fn langgraph_js_retries_all_but_400_to_407_and_409() {
    assert_eq!(retried("langgraph_js"), [3, 3, 1, 3, 3]);
    let s = sends(&in_progress(), "langgraph_js", "same_key", 0);
    assert_eq!(keys(&s), ["key k1"; 3], "the 409 goes up: {s:?}");
}

#[test]
fn anthropic_sdk_retries_as_openai_but_waits_any_retry_after_in_2_15_0() {
    assert_eq!(retried("anthropic_sdk"), [3, 3, 1, 3, 3]);
    let s = sends(&throttled(130_000), "anthropic_sdk", "no_dedup", 0);
    assert_eq!(times(&s), [0, 130_020, 260_040]);
    assert_eq!(keys(&s), ["no key"; 3]);
    // The repository head's rule, as an override: above 60 s, its own backoff.
    let v = set(
        throttled(130_000),
        "executor.overrides",
        json!({ "anthropic": { "retry_after": { "max_ms": 60_000, "above": "backoff" } } }),
    );
    let t = times(&sends(&v, "anthropic_sdk", "no_dedup", 0));
    assert!((375..=500).contains(&(t[1] - 20)), "{t:?}");
}

#[test]
fn stripe_global_retries_as_a_client_with_two_network_retries() {
    assert_eq!(retried("stripe_global"), [3, 1, 1, 1, 3]);
    for seed in 0..5 {
        assert_eq!(
            sends(&every_500(), "stripe_global", "no_dedup", seed),
            sends(&every_500(), "stripe_client_retries", "no_dedup", seed)
        );
    }
}

#[test]
fn aws_modes_retry_5xx_429_and_timeouts_under_one_client_token_per_call() {
    assert_eq!(retried("aws_standard"), [3, 3, 1, 1, 3]);
    assert_eq!(retried("aws_legacy"), [5, 5, 1, 1, 5]);
    for seed in 0..20 {
        let s = sends(&every_reply_lost(), "aws_standard", "no_dedup", seed);
        assert_eq!(keys(&s), ["key k1"; 3], "{s:?}");
        let t = times(&s);
        // Full jitter on 50 ms, then 100 ms, after each 60 s timeout (the SDK's read timeout).
        assert!(t[1] - 60_000 <= 50 && t[2] - t[1] - 60_000 <= 100, "{t:?}");
        let t = times(&sends(&every_reply_lost(), "aws_legacy", "no_dedup", seed));
        for (n, pair) in t.windows(2).enumerate() {
            assert!(pair[1] - pair[0] - 60_000 <= 1_000 << n, "{t:?}");
        }
    }
    // A new SDK call (the agent's, after the SDK gave up) fills a new token.
    let v = set(every_reply_lost(), "agent.max_calls", json!(2));
    let v = set(v, "agent.tool_timeout_ms", json!(200_000));
    let v = set(v, "agent.on_failure", json!({ "replan": 1 }));
    let s = sends(&v, "aws_standard", "no_dedup", 0);
    assert_eq!(
        keys(&s),
        ["key k1", "key k1", "key k1", "key k2", "key k2", "key k2"]
    );
}

/// One call whose worker crashes right after its first send (the effect commits).
fn crash_after_send() -> serde_json::Value {
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "workers.journal", json!("durable"));
    faults(
        v,
        json!([{ "crash_worker": { "attempt": 1, "point": "after_send" } }]),
    )
}

#[test]
fn celery_loses_a_crashed_task_unless_acks_late_redelivers_it_under_its_task_id() {
    assert_eq!(retried("celery_default"), [1, 1, 1, 1, 1]);
    assert_eq!(retried("celery_acks_late"), [1, 1, 1, 1, 1]);
    let s = sends(&crash_after_send(), "celery_default", "no_dedup", 0);
    assert_eq!(s, [(0, "key k1".to_string())]);
    let s = sends(&crash_after_send(), "celery_acks_late", "no_dedup", 0);
    assert_eq!(keys(&s), ["key k1", "key k1"], "{s:?}");
}

#[test]
fn an_sqs_message_comes_back_after_the_visibility_timeout_under_its_id() {
    let v = set(every_400(3), "horizon_ms", json!(70_000));
    let s = sends(&v, "sqs_consumer", "no_dedup", 0);
    assert_eq!(
        s,
        [
            (0, "key k1".to_string()),
            (30_020, "key k1".to_string()),
            (60_040, "key k1".to_string())
        ]
    );
    let s = sends(&crash_after_send(), "sqs_consumer", "no_dedup", 0);
    assert_eq!(keys(&s), ["key k1", "key k1"], "{s:?}");
}

#[test]
fn an_agents_sdk_tool_runs_once_and_the_model_calls_again_under_a_new_call() {
    for preset in ["openai_agents_tool", "vercel_ai_tool"] {
        assert_eq!(retried(preset), [1, 1, 1, 1, 1], "{preset}");
        // The failure goes to the model, which calls again: a new call, the design's key.
        let v = set(every_500(), "agent.max_calls", json!(2));
        let v = set(v, "agent.on_failure", json!({ "replan": 1 }));
        let s = sends(&v, preset, "new_key_after_replan", 0);
        assert_eq!(keys(&s), ["key k1", "key k2"], "{preset}: {s:?}");
        let t = trace(&set(v, "executor.preset", json!(preset)), "no_dedup");
        assert!(
            t.timeline.contains("tells the user failure"),
            "{}",
            t.timeline
        );
    }
}

#[test]
fn a_restate_run_retries_any_error_from_50_ms_under_its_key_and_reruns_after_a_crash() {
    // Refused 4 times, each answer 20 ms after its send: waits of 50, 100 and 200 ms.
    let v = set(every_400(4), "horizon_ms", json!(500));
    let s = sends(&v, "restate_run", "no_dedup", 0);
    assert_eq!(
        s,
        [
            (0, "key k1".to_string()),
            (70, "key k1".to_string()),
            (190, "key k1".to_string()),
            (410, "key k1".to_string())
        ]
    );
    let s = sends(&crash_after_send(), "restate_run", "no_dedup", 0);
    assert_eq!(keys(&s), ["key k1", "key k1"], "{s:?}");
}

#[test]
fn a_dbos_step_runs_once_unless_retries_are_allowed_and_reruns_after_a_crash() {
    assert_eq!(retried("dbos_step"), [1, 1, 1, 1, 1]);
    let s = sends(&crash_after_send(), "dbos_step", "no_dedup", 0);
    assert_eq!(keys(&s), ["key k1", "key k1"], "{s:?}");
    // retries_allowed=True: 3 attempts, 1 s then 2 s.
    let v = set(
        every_400(3),
        "executor.overrides",
        json!({ "step": { "attempts": 3 } }),
    );
    let s = sends(&v, "dbos_step", "no_dedup", 0);
    assert_eq!(times(&s), [0, 1_020, 3_040]);
    assert_eq!(keys(&s), ["key k1"; 3]);
}

#[test]
fn an_inngest_step_makes_5_attempts_on_its_wait_table_plus_up_to_30_s() {
    for seed in 0..10 {
        let s = sends(&every_400(5), "inngest_step", "no_dedup", seed);
        assert_eq!(keys(&s), ["key k1"; 5], "{s:?}");
        let t = times(&s);
        for (n, pair) in t.windows(2).enumerate() {
            let table = [15_000, 30_000, 60_000, 120_000][n];
            let wait = pair[1] - pair[0] - 20;
            assert!((table..=table + 30_000).contains(&wait), "{t:?}");
        }
    }
}

#[test]
fn aws_standard_waits_on_a_1_s_base_after_a_429_and_50_ms_after_the_rest() {
    for seed in 0..20 {
        let t = times(&sends(&throttled(1_000), "aws_standard", "no_dedup", seed));
        // Each 429 is back 20 ms after its send: full jitter on 1 s, then 2 s.
        assert!(t[1] - 20 <= 1_000 && t[2] - t[1] - 20 <= 2_000, "{t:?}");
    }
    // Some seed draws a wait no 50 ms base allows.
    assert!((0..20).any(|seed| {
        let t = times(&sends(&throttled(1_000), "aws_standard", "no_dedup", seed));
        t[1] - 20 > 50
    }));
}

#[test]
fn a_backoff_for_a_class_that_does_not_exist_is_refused_naming_it() {
    let v = set(base(), "executor.preset", json!("aws_standard"));
    let v = set(
        v,
        "executor.overrides",
        json!({ "botocore": { "backoff_on": { "throttling": { "initial_ms": 1 } } } }),
    );
    let e = refusal(&v);
    assert!(
        e.contains("executor.overrides.botocore.backoff_on.throttling: \"throttling\" is not an error class; expected one of timeout, "),
        "{e}"
    );
}

#[test]
fn stacked_presets_run_their_layers_outermost_first() {
    // A LangGraph node around stripe-python with 2 network retries: the SDK's 3 sends
    // under its key per call, and each node retry calls the SDK anew, with a new key.
    let v = set(
        every_500(),
        "executor.preset",
        json!(["langgraph_py_sdk", "stripe_client_retries"]),
    );
    let s = timed_sends(&v, "no_dedup", 0);
    let keys: Vec<&str> = s.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "key k1", "key k1", "key k1", "key k2", "key k2", "key k2", "key k3", "key k3",
            "key k3"
        ]
    );
    // An agents-SDK tool around the OpenAI SDK: the SDK's retries only, then a failure.
    let v = set(
        every_500(),
        "executor.preset",
        json!(["openai_agents_tool", "openai_sdk"]),
    );
    let t = trace(&v, "no_dedup");
    assert_eq!(timed_sends(&v, "no_dedup", 0).len(), 3);
    assert!(
        t.timeline.contains("tells the user failure"),
        "{}",
        t.timeline
    );
}

#[test]
fn a_stacking_that_does_not_fit_is_refused_under_executor_preset() {
    // stripe-python's layer has a client timeout: it cannot sit above another layer.
    let v = set(
        base(),
        "executor.preset",
        json!(["stripe_client_retries", "openai_sdk"]),
    );
    let e = refusal(&v);
    assert!(
        e.contains(
            "executor.preset: stacked, layers[0].timeout_ms: only the innermost layer sends"
        ),
        "{e}"
    );
    let v = set(base(), "executor.preset", json!(["openai_sdk", "no_such"]));
    let e = refusal(&v);
    assert!(
        e.contains("executor.preset[1]: unknown executor preset \"no_such\""),
        "{e}"
    );
    let v = set(base(), "executor.preset", json!([]));
    assert!(refusal(&v).contains("executor.preset: an empty list"));
}

#[test]
fn an_sdk_follows_a_should_retry_header_over_its_status_rules() {
    let hint = |v: serde_json::Value, header: &str, class: &str, value: bool| {
        set(
            v,
            "provider.should_retry",
            json!({ "header": header, "on": { class: value } }),
        )
    };
    // x-should-retry: false on a 500: the OpenAI SDK makes no retry.
    let v = hint(every_500(), "x-should-retry", "server_error", false);
    assert_eq!(sends(&v, "openai_sdk", "no_dedup", 0).len(), 1);
    // true on a 400: retried, where the status alone is not.
    let v = hint(every_400(5), "x-should-retry", "refused", true);
    assert_eq!(sends(&v, "openai_sdk", "no_dedup", 0).len(), 3);
    assert_eq!(sends(&v, "anthropic_sdk", "no_dedup", 0).len(), 3);
    let v = hint(every_400(5), "Stripe-Should-Retry", "refused", true);
    assert_eq!(sends(&v, "stripe_client_retries", "no_dedup", 0).len(), 3);
    // A layer that does not read it (tenacity retries a 500 whatever the header says).
    let v = set(
        hint(every_500(), "x-should-retry", "server_error", false),
        "horizon_ms",
        json!(300),
    );
    assert!(sends(&v, "tenacity_default", "no_dedup", 0).len() > 1);
    // The trace shows the header.
    let t = trace(
        &set(
            hint(every_500(), "x-should-retry", "server_error", false),
            "executor.preset",
            json!("openai_sdk"),
        ),
        "no_dedup",
    );
    assert!(
        t.timeline
            .contains("500 server error (should-retry: false)"),
        "{}",
        t.timeline
    );
}

#[test]
fn a_should_retry_header_on_an_answer_that_has_none_is_refused_naming_it() {
    let v = set(
        base(),
        "provider.should_retry",
        json!({ "on": { "timeout": true } }),
    );
    let e = refusal(&v);
    assert!(
        e.contains("provider.should_retry.on.timeout: \"timeout\" is not the class of an answer; expected one of in_progress, server_error"),
        "{e}"
    );
}

#[test]
fn an_sdk_reads_only_its_own_should_retry_header() {
    // Stripe's header on a 500: the OpenAI SDK does not read it, and retries the 500.
    let v = set(
        every_500(),
        "provider.should_retry",
        json!({ "header": "Stripe-Should-Retry", "on": { "server_error": false } }),
    );
    assert_eq!(sends(&v, "openai_sdk", "no_dedup", 0).len(), 3);
    assert_eq!(sends(&v, "stripe_client_retries", "no_dedup", 0).len(), 1);
}

#[test]
fn stamina_bounds_each_wait_with_its_jitter_at_5_s() {
    // Every reply lost after 1 s: ten attempts within 45 s, the waits doubling from 0.1 s
    // plus up to 1 s, never above 5 s.
    let v = set(every_reply_lost(), "executor.timeout_ms", json!(1_000));
    for seed in 0..20 {
        let t = times(&sends(&v, "stamina_default", "no_dedup", seed));
        assert_eq!(t.len(), 10, "{t:?}");
        for pair in t.windows(2) {
            assert!(pair[1] - pair[0] - 1_000 <= 5_000, "{t:?}");
        }
        // The seventh wait (6.4 s before the bound) is exactly 5 s.
        assert_eq!(t[7] - t[6] - 1_000, 5_000, "{t:?}");
    }
}

#[test]
fn an_override_is_checked_for_what_it_sets_and_must_name_one_layer() {
    // The stacking's own problem is reported once, under executor.preset, and not again
    // under the override, which does not set the timeout.
    let v = set(
        base(),
        "executor.preset",
        json!(["stripe_client_retries", "openai_sdk"]),
    );
    let v = set(
        v,
        "executor.overrides",
        json!({ "stripe": { "attempts": 2 } }),
    );
    let e = refusal(&v);
    assert!(
        e.contains("executor.preset: stacked, layers[0].timeout_ms"),
        "{e}"
    );
    assert!(!e.contains("executor.overrides.stripe.timeout_ms"), "{e}");
    // An override that sets nothing.
    let v = set(base(), "executor.preset", json!("openai_sdk"));
    let v = set(v, "executor.overrides", json!({ "openai": {} }));
    assert!(
        refusal(&v).contains("executor.overrides.openai: changes nothing"),
        "{}",
        refusal(&v)
    );
    // Two stacked presets with a layer of the same name.
    let v = set(
        base(),
        "executor.preset",
        json!(["dbos_step", "inngest_step"]),
    );
    let v = set(
        v,
        "executor.overrides",
        json!({ "step": { "attempts": 2 } }),
    );
    assert!(
        refusal(&v)
            .contains("executor.overrides.step: the stacked presets have 2 layers named \"step\""),
        "{}",
        refusal(&v)
    );
}

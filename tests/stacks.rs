//! The retry stack's loop (`design::stack`) on stacks no bundled preset has: an error goes up
//! to the innermost layer that retries it, a per-call key is minted when its layer is called
//! and kept by the retries below it, and the stack gives up as it says. Exact timelines of
//! small scenarios (timings of `common::base`: 10 ms each way, 50 ms processing, 5 s client
//! timeout).

use crate::common;

use common::*;
use retrylab::design::preset::{Application, ApplicationKey, OperationPer};
use retrylab::design::{Backoff, Layer, RetryOn, Stack, Stacked};
use retrylab::design::{Design, Executor};
use retrylab::model::ExecutorModel;
use retrylab::model::{ErrorClass, GiveUp, KeyMode, Redelivery};
use retrylab::run::run_traced;
use retrylab::sim::RandomChooser;
use serde_json::json;

/// A design made of one stack, every call a new operation without an application key.
struct OneStack(Stack);

impl Design for OneStack {
    fn name(&self) -> &str {
        "one_stack"
    }
    fn summary(&self) -> &str {
        "a stack under test"
    }
    fn executor(&self, _config: &ExecutorModel) -> Box<dyn Executor> {
        let identity = Application {
            per: OperationPer::Issue,
            key: ApplicationKey::None,
        };
        Box::new(Stacked::with_stack(identity, self.0.clone()))
    }
}

fn layer(name: &str, attempts: u32, retry_on: RetryOn, key: KeyMode) -> Layer {
    let backoff = Backoff::exponential(1_000, 2, 60_000);
    Layer::new(name, attempts, backoff, retry_on, key, Redelivery::Anew)
}

/// The sends of one run (time, attempt, key) and what the user was told.
fn sends(v: &serde_json::Value, stack: Stack) -> (Vec<String>, Vec<String>) {
    let t = run_traced(&model(v), &OneStack(stack), &mut RandomChooser::new(0));
    let lines = |what: &str| -> Vec<String> {
        t.timeline
            .lines()
            .filter(|l| l.contains(what))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    (lines(" sends attempt "), lines("tells the user"))
}

/// Every reply lost: each send times out after 5 s.
fn every_reply_lost() -> serde_json::Value {
    let v = set(base(), "network.reply_loss", json!(1));
    let v = set(v, "agent.max_calls", json!(1));
    set(v, "agent.tool_timeout_ms", json!(600_000))
}

/// A wrapper that retries only timeouts, calling anew with no key of its own, over a
/// client that retries 5xx (4 attempts) under the key it mints per call.
fn wrapper_over_client(wrapper_attempts: u32) -> Stack {
    let wrapper = RetryOn::of(&[ErrorClass::Timeout]);
    let client = RetryOn::of(&[ErrorClass::ServerError]);
    Stack {
        layers: vec![
            layer("wrapper", wrapper_attempts, wrapper, KeyMode::None),
            layer("client", 4, client, KeyMode::PerCall),
        ],
        gives_up: GiveUp::Unknown,
    }
}

#[test]
fn a_timeout_the_client_does_not_retry_goes_up_to_the_wrapper_that_does() {
    // The client retries only 5xx, under the key it mints per call; the wrapper above it
    // retries timeouts, calling the client anew: a new key each time.
    let stack = wrapper_over_client(3);
    let (sends, told) = sends(&every_reply_lost(), stack);
    assert_eq!(
        sends,
        [
            "0 ms executor worker 0: op 0 sends attempt 1: create with params 1, key k1",
            "6000 ms executor worker 0: op 0 sends attempt 2: create with params 1, key k2",
            "13000 ms executor worker 0: op 0 sends attempt 3: create with params 1, key k3",
        ],
        "the wrapper's own backoff: 1 s, then 2 s"
    );
    assert_eq!(told, ["18000 ms agent intent 0: tells the user unresolved"]);
}

#[test]
fn a_key_minted_per_call_of_a_layer_is_kept_by_its_own_retries_and_those_below_it() {
    // An activity's key (minted per call of the activity, as Temporal's workflow and
    // activity ids are) over an SDK that inherits it: the SDK's retries and the activity's
    // own send it again; only a retry of the layer above (the agent framework) calls the
    // activity anew, with a new key.
    let stack = Stack {
        layers: vec![
            layer("framework", 2, RetryOn::ANY, KeyMode::None),
            layer("activity", 2, RetryOn::ANY, KeyMode::PerCall),
            layer("sdk", 2, RetryOn::UNCERTAIN, KeyMode::Inherited),
        ],
        gives_up: GiveUp::Failure,
    };
    let (sends, told) = sends(&every_reply_lost(), stack);
    let send = |ms: u32, n: u32, key: &str| {
        format!(
            "{ms} ms executor worker 0: op 0 sends attempt {n}: create with params 1, key {key}"
        )
    };
    assert_eq!(
        sends,
        [
            send(0, 1, "k1"),
            send(6_000, 2, "k1"),
            send(12_000, 3, "k1"),
            send(18_000, 4, "k1"),
            send(24_000, 5, "k2"),
            send(30_000, 6, "k2"),
            send(36_000, 7, "k2"),
            send(42_000, 8, "k2"),
        ]
    );
    // Given up as a failure: a claim that no effect exists, where two do.
    assert_eq!(told, ["47000 ms agent intent 0: tells the user failure"]);
}

#[test]
fn a_refusal_no_layer_retries_is_a_failure_at_once() {
    let v = faults(base(), json!([{ "reject": { "attempt": 1 } }]));
    let stack = Stack {
        layers: vec![layer("client", 3, RetryOn::UNCERTAIN, KeyMode::PerCall)],
        gives_up: GiveUp::Unknown,
    };
    let (sends, told) = sends(&v, stack);
    assert_eq!(sends.len(), 1, "{sends:?}");
    assert_eq!(told, ["20 ms agent intent 0: tells the user failure"]);
}

#[test]
fn a_5xx_the_client_retries_goes_again_under_the_key_it_minted_for_the_call() {
    // The same stack as above, where every send commits and answers 500: the client
    // retries it under the key it minted for the call (a key per attempt would send k1 to
    // k4), then passes the 5xx up, which the wrapper does not retry.
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "provider.error_after_commit", json!(1));
    let stack = wrapper_over_client(2);
    let (sends, told) = sends(&v, stack);
    let send = |ms: u32, n: u32| {
        format!("{ms} ms executor worker 0: op 0 sends attempt {n}: create with params 1, key k1")
    };
    // The first 500 is stored under the key, so the provider answers each retry from it
    // at once (20 ms there and back) and commits nothing more.
    assert_eq!(
        sends,
        [send(0, 1), send(1_070, 2), send(3_090, 3), send(7_110, 4)]
    );
    assert_eq!(told, ["7130 ms agent intent 0: tells the user unresolved"]);
}

#[test]
fn a_key_given_from_above_is_sent_by_a_layer_that_would_mint_one() {
    // The application binds a key to the operation (as a Temporal activity passes its
    // workflow and activity ids to the SDK); the SDK, which generates a key per call when
    // it is given none, sends the one it is given, on its own retries and on the
    // framework's.
    let stack = Stack {
        layers: vec![
            layer("framework", 2, RetryOn::ANY, KeyMode::Inherited),
            layer("sdk", 2, RetryOn::UNCERTAIN, KeyMode::PerCall),
        ],
        gives_up: GiveUp::Unknown,
    };
    let identity = Application {
        per: OperationPer::Issue,
        key: ApplicationKey::Minted,
    };
    let t = run_traced(
        &model(&every_reply_lost()),
        &Keyed(identity, stack),
        &mut RandomChooser::new(0),
    );
    let keys: Vec<&str> = t
        .timeline
        .lines()
        .filter(|l| l.contains(" sends attempt "))
        .filter_map(|l| l.rsplit(", ").next())
        .collect();
    assert_eq!(keys, ["key k1"; 4]);
}

/// A design made of one stack over an identity.
struct Keyed(Application, Stack);

impl Design for Keyed {
    fn name(&self) -> &str {
        "keyed"
    }
    fn summary(&self) -> &str {
        "a stack under test, over an identity"
    }
    fn executor(&self, _config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Stacked::with_stack(self.0, self.1.clone()))
    }
}

/// A queue (2 runs of the job, each a new key: the job's own) over an HTTP client that
/// inherits the key; the worker crashes right after the first send, whose effect commits.
fn redelivered(redelivery: Redelivery, attempts: u32) -> (Vec<String>, Vec<String>) {
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "agent.tool_timeout_ms", json!(600_000));
    let v = set(v, "workers.journal", json!("durable"));
    let v = faults(
        v,
        json!([{ "crash_worker": { "attempt": 1, "point": "after_send" } }]),
    );
    let mut queue = layer("queue", attempts, RetryOn::ANY, KeyMode::PerCall);
    queue.redelivery = redelivery;
    let mut http = layer("http", 2, RetryOn::UNCERTAIN, KeyMode::Inherited);
    http.redelivery = Redelivery::None;
    let stack = Stack {
        layers: vec![queue, http],
        gives_up: GiveUp::Unknown,
    };
    sends(&v, stack)
}

#[test]
fn a_crash_redelivers_the_outermost_redelivered_layer_as_its_mode_says() {
    let (anew, _) = redelivered(Redelivery::Anew, 2);
    let (retry, _) = redelivered(Redelivery::Retry, 2);
    let (resume, _) = redelivered(Redelivery::Resume, 2);
    let (none, told) = redelivered(Redelivery::None, 2);
    let send = |ms: u32, n: u32, key: &str| {
        format!(
            "{ms} ms executor worker 0: op 0 sends attempt {n}: create with params 1, key {key}"
        )
    };
    // The worker restarts at 1 s: a job run anew has a new key; a retry of the layer, or
    // its call resumed, keeps the key its first call minted.
    assert_eq!(anew, [send(0, 1, "k1"), send(1_000, 2, "k2")]);
    assert_eq!(retry, [send(0, 1, "k1"), send(1_000, 2, "k1")]);
    assert_eq!(resume, retry);
    // Nothing re-runs a call that lived in the crashed process: the agent waits out its
    // tool timeout.
    assert_eq!(none, [send(0, 1, "k1")]);
    assert_eq!(
        told,
        ["600000 ms agent intent 0: tells the user unresolved"]
    );
}

#[test]
fn a_redelivery_that_is_a_retry_gives_up_once_the_layer_has_no_attempt_left() {
    let (sends, told) = redelivered(Redelivery::Retry, 1);
    assert_eq!(
        sends,
        ["0 ms executor worker 0: op 0 sends attempt 1: create with params 1, key k1"]
    );
    assert_eq!(told, ["1000 ms agent intent 0: tells the user unresolved"]);
    // A redelivery that is not a retry has no limit.
    let (resumed, _) = redelivered(Redelivery::Resume, 1);
    assert_eq!(resumed.len(), 2, "{resumed:?}");
}

#[test]
fn a_retry_timer_of_an_earlier_call_does_nothing_once_the_agent_calls_again() {
    // `same_key` keeps one operation per authorization. The agent calls again at its 7 s
    // tool timeout, while the first call's retry
    // waits 10 s: the new call sends at once, and the stale timer sends nothing.
    let v = set(every_reply_lost(), "executor.attempts", json!(3));
    let v = set(v, "executor.backoff_ms", json!(10_000));
    let v = set(v, "agent.tool_timeout_ms", json!(7_000));
    let v = set(v, "agent.max_calls", json!(2));
    let t = trace(&v, "same_key");
    let sends: Vec<String> = t
        .timeline
        .lines()
        .filter(|l| l.contains(" sends attempt "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let send = |ms: u32, n: u32| {
        format!("{ms} ms executor worker 0: op 0 sends attempt {n}: create with params 1, key k1")
    };
    // Not at 15 s: the first call's retry was due then. The re-run's own retries wait
    // 10 s and 20 s after its timeouts (12 s and 27 s).
    assert_eq!(
        sends,
        [send(0, 1), send(7_000, 2), send(22_000, 3), send(47_000, 4)],
        "{}",
        t.timeline
    );
}

#[test]
fn a_presets_layers_written_out_as_executor_stack_run_exactly_as_its_own() {
    // The shorthand is a stack: every preset, under each bundled model's `executor`
    // section, runs the same with its layers written out in the model.
    let files = [
        "models/ticket_lost_response.json",
        "models/ticket_chaos.json",
        "models/windows/four_retry_layers.json",
        "models/windows/crash_after_success.json",
    ];
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let plain = retrylab::model::Model::from_json(&text, file).unwrap();
        for preset in retrylab::design::preset::all() {
            let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
            let spec = preset.spec_in(&plain.executor);
            v["executor"]["stack"] = serde_json::to_value(&spec).unwrap();
            let written = retrylab::model::Model::from_json(&v.to_string(), file)
                .unwrap_or_else(|e| panic!("{file}, {}: {e}", preset.name()));
            let seeds = 0..40;
            assert_eq!(
                retrylab::run::run_seeds(&written, preset, seeds.clone()),
                retrylab::run::run_seeds(&plain, preset, seeds),
                "{file}, {}",
                preset.name()
            );
            let traced = |m| run_traced(m, preset, &mut RandomChooser::new(7)).timeline;
            assert_eq!(
                traced(&written),
                traced(&plain),
                "{file}, {}",
                preset.name()
            );
        }
    }
}

/// Every reply lost, under a stack the model writes out.
fn with_stack(stack: serde_json::Value) -> serde_json::Value {
    set(every_reply_lost(), "executor.stack", stack)
}

#[test]
fn a_jittered_wait_is_a_timing_choice_within_its_range_and_replays() {
    // Each send times out after 5 s; the retry waits from 0 to 1 s, then 0 to 2 s.
    let v = with_stack(json!({ "layers": [{
        "name": "sdk", "attempts": 3, "retry_on": "uncertain", "key": "per_call",
        "backoff": { "initial_ms": 1000, "jitter": "full" }
    }] }));
    let mut waits = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let sends = timed_sends(&v, "no_dedup", seed);
        assert_eq!(sends.len(), 3, "{sends:?}");
        let first = sends[1].0 - (sends[0].0 + 5_000);
        let second = sends[2].0 - (sends[1].0 + 5_000);
        assert!(first <= 1_000 && second <= 2_000, "{sends:?}");
        assert!(sends.iter().all(|(_, k)| k == "key k1"), "one key per call");
        waits.insert((first, second));
    }
    assert!(waits.len() > 10, "the waits are drawn: {waits:?}");
    // The draw is a recorded choice: replaying the vector gives the same run.
    let m = model(&v);
    let d = common::design("no_dedup");
    let t = run_traced(&m, d, &mut RandomChooser::new(3));
    let backoffs: Vec<_> = t
        .choices
        .iter()
        .filter(|c| c.purpose == retrylab::sim::Purpose::Backoff)
        .collect();
    assert_eq!(backoffs.len(), 2);
    assert_eq!((backoffs[0].of, backoffs[1].of), (1_001, 2_001));
    let vector = retrylab::sim::ChoiceVector(t.choices.iter().map(|c| c.value).collect());
    let again = run_traced(&m, d, &mut retrylab::sim::ReplayChooser::new(vector));
    assert_eq!(again.timeline, t.timeline);
}

#[test]
fn a_table_schedule_an_own_client_timeout_and_unlimited_attempts() {
    // Unlimited attempts with a table of waits and a 2 s client timeout: sends go on until
    // the horizon, waiting 100, 200, then 400 ms forever.
    let v = with_stack(json!({ "layers": [{
        "name": "worker", "attempts": "unlimited", "retry_on": "uncertain",
        "backoff": { "table_ms": [100, 200, 400] }, "timeout_ms": 2000
    }] }));
    let v = set(v, "horizon_ms", json!(20_000));
    let sends: Vec<u64> = timed_sends(&v, "same_key", 0)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    assert_eq!(
        sends,
        [
            0, 2_100, 4_300, 6_700, 9_100, 11_500, 13_900, 16_300, 18_700
        ]
    );
}

#[test]
fn a_layer_makes_no_retry_past_its_deadline() {
    // The wrapper would call the client 10 times; its 12 s deadline stops it after the
    // third call (each takes 5 s: the third fails at 15 s, past the deadline).
    let v = with_stack(json!({ "layers": [
        { "name": "wrapper", "attempts": 10, "retry_on": "any", "deadline_ms": 12000,
          "backoff": { "initial_ms": 0 } },
        { "name": "client", "attempts": 1, "retry_on": "nothing", "key": "per_call" }
    ] }));
    let sends = timed_sends(&v, "no_dedup", 0);
    assert_eq!(
        sends,
        [
            (0, "key k1".to_string()),
            (5_000, "key k2".to_string()),
            (10_000, "key k3".to_string())
        ]
    );
}

#[test]
fn a_guarantee_stated_for_a_presets_own_layers_does_not_apply_under_a_models_stack() {
    let v = with_stack(json!({ "layers": [
        { "name": "http", "attempts": 2, "retry_on": "uncertain", "key": "per_attempt" }
    ] }));
    let m = model(&v);
    let judged = retrylab::design::assumptions::judge(common::design("same_key"), &m);
    let own = judged.iter().find(|j| j.name == "own_layers").unwrap();
    assert!(!own.holds, "{own:?}");
    // Without a stack, no such judgement; a design without a guarantee gets none either.
    let plain = model(&every_reply_lost());
    let judged = retrylab::design::assumptions::judge(common::design("same_key"), &plain);
    assert!(judged.iter().all(|j| j.name != "own_layers"));
    let judged = retrylab::design::assumptions::judge(common::design("no_dedup"), &m);
    assert!(judged.is_empty());
}

/// Every create refused by a rate limit whose 429 says `Retry-After: 3 s`.
fn throttled() -> serde_json::Value {
    let v = set(base(), "agent.max_calls", json!(1));
    let v = set(v, "provider.throttle", json!(1));
    set(v, "provider.retry_after_ms", json!(3000))
}

#[test]
fn a_429s_retry_after_is_waited_up_to_the_layers_maximum() {
    let with = |retry_after: serde_json::Value| {
        let stack = json!({ "layers": [{
            "name": "sdk", "attempts": 3, "retry_on": "uncertain", "key": "per_call",
            "backoff": { "initial_ms": 500 }, "retry_after": retry_after
        }] });
        let v = set(throttled(), "executor.stack", stack);
        let sends: Vec<u64> = timed_sends(&v, "no_dedup", 0)
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        let t = run_traced(
            &model(&v),
            common::design("no_dedup"),
            &mut RandomChooser::new(0),
        );
        let told: Vec<String> = t
            .timeline
            .lines()
            .filter(|l| l.contains("tells the user"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        (sends, told)
    };
    // Each 429 comes back 20 ms after its send (10 ms each way, nothing processed).
    let (sends, told) = with(json!({ "max_ms": 5000 }));
    assert_eq!(sends, [0, 3_020, 6_040]);
    assert_eq!(told, ["6060 ms agent intent 0: tells the user unresolved"]);
    // Above the maximum: no retry by the layer, or its own backoff.
    let (sends, told) = with(json!({ "max_ms": 2000, "above": "give_up" }));
    assert_eq!(sends, [0]);
    assert_eq!(told, ["20 ms agent intent 0: tells the user unresolved"]);
    let (sends, _) = with(json!({ "max_ms": 2000, "above": "backoff" }));
    assert_eq!(sends, [0, 520, 1_540]);
    // A layer that ignores the header waits its backoff.
    let (sends, _) = with(serde_json::Value::Null);
    assert_eq!(sends, [0, 520, 1_540]);
}

#[test]
fn a_408_and_a_connection_reset_are_retried_by_the_layers_that_name_them() {
    let stack = |retry_on: serde_json::Value| {
        json!({ "layers": [{
            "name": "sdk", "attempts": 2, "retry_on": retry_on, "key": "per_call",
            "backoff": { "initial_ms": 1000 }
        }] })
    };
    let timeouts = set(base(), "agent.max_calls", json!(1));
    let timeouts = set(timeouts, "provider.request_timeout", json!(1));
    let count = |v: &serde_json::Value, retry_on| {
        timed_sends(
            &set(v.clone(), "executor.stack", stack(retry_on)),
            "no_dedup",
            0,
        )
    };
    assert_eq!(count(&timeouts, json!(["timeout"])).len(), 1);
    let sends = count(&timeouts, json!(["request_timeout"]));
    assert_eq!(
        sends.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        [0, 1_020],
        "a 408 comes back at once"
    );
    // A reset comes when the reply would have: after 50 ms of processing, which committed.
    let resets = set(base(), "agent.max_calls", json!(1));
    let resets = set(resets, "network.connection_reset", json!(1));
    assert_eq!(count(&resets, json!(["timeout"])).len(), 1);
    let sends = count(&resets, json!("uncertain"));
    assert_eq!(
        sends,
        [(0, "key k1".to_string()), (1_070, "key k1".to_string())]
    );
    let v = set(resets, "executor.stack", stack(json!("uncertain")));
    let t = trace(&v, "no_dedup");
    assert!(
        t.timeline
            .contains("70 ms  executor  worker 0: connection of attempt 1 reset"),
        "{}",
        t.timeline
    );
    // The second send under the same key is answered from the key record: one effect.
    assert_eq!(t.metrics.effects, 1, "{}", t.timeline);
}

/// A durable journal, a crash right after send `crash_at`, and `stack` written in the model.
fn crashing(stack: serde_json::Value, crash_at: u32, calls: u32) -> serde_json::Value {
    let v = set(base(), "agent.max_calls", json!(calls));
    let v = set(v, "agent.tool_timeout_ms", json!(20_000));
    let v = set(v, "workers.journal", json!("durable"));
    let v = faults(
        v,
        json!([
            { "drop_reply": { "attempt": 1 } },
            { "crash_worker": { "attempt": crash_at, "point": "after_send" } }
        ]),
    );
    set(v, "executor.stack", stack)
}

#[test]
fn a_call_nothing_redelivers_is_sent_again_by_the_agents_next_call() {
    // The one send dies with the worker; the agent's second call (after its 20 s tool
    // timeout, and its thinking) runs the stack anew under the operation's key.
    let stack = json!({ "layers": [{ "name": "sdk", "attempts": 1, "retry_on": "nothing" }] });
    let v = crashing(stack, 1, 2);
    let sends = timed_sends(&v, "same_key", 0);
    assert_eq!(sends.len(), 2, "{sends:?}");
    assert!(sends[1].0 >= 20_000, "{sends:?}");
    assert_eq!(sends[1].1, "key k1");
}

#[test]
fn a_layer_redelivered_as_a_retry_makes_no_send_past_its_attempts() {
    // Two attempts: the first times out, the second dies with the worker; the restart has
    // no attempt left and gives up.
    let stack = json!({ "layers": [{
        "name": "activity", "attempts": 2, "retry_on": "uncertain", "key": "per_call",
        "redelivery": "retry", "backoff": { "initial_ms": 100 }
    }] });
    let sends = timed_sends(&crashing(stack.clone(), 2, 1), "no_dedup", 0);
    assert_eq!(sends.len(), 2, "{sends:?}");
    // Three attempts: the restart re-sends, under the same key.
    let mut three = stack;
    three["layers"][0]["attempts"] = json!(3);
    let sends = timed_sends(&crashing(three, 2, 1), "no_dedup", 0);
    assert_eq!(
        sends.iter().map(|(_, k)| k.as_str()).collect::<Vec<_>>(),
        ["key k1"; 3],
        "{sends:?}"
    );
    // An outer layer redelivered as a retry counts the redelivery, and its count starts
    // again on a new call of the stack.
    let outer = json!({ "layers": [
        { "name": "queue", "attempts": 2, "retry_on": "nothing", "key": "per_call", "redelivery": "retry" },
        { "name": "http", "attempts": 1, "retry_on": "nothing" }
    ] });
    let v = set(
        crashing(outer, 1, 1),
        "faults",
        json!([
            { "crash_worker": { "attempt": 1, "point": "after_send" } },
            { "crash_worker": { "attempt": 2, "point": "after_send" } }
        ]),
    );
    let v = set(v, "workers.max_crashes", json!(2));
    let sends = timed_sends(&v, "no_dedup", 0);
    assert_eq!(
        sends.len(),
        2,
        "the queue's two runs, then no more: {sends:?}"
    );
}

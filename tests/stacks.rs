//! The retry stack's loop (`design::stack`) on stacks no bundled preset has: an error goes up
//! to the innermost layer that retries it, a per-call key is minted when its layer is called
//! and kept by the retries below it, and the stack gives up as it says. Exact timelines of
//! small scenarios (timings of `common::base`: 10 ms each way, 50 ms processing, 5 s client
//! timeout).

mod common;

use common::*;
use retrylab::design::preset::{Application, ApplicationKey, OperationPer};
use retrylab::design::stack::{
    Backoff, ErrorClass, GiveUp, KeyMode, Layer, RetryOn, Stack, Stacked,
};
use retrylab::design::{Design, Executor};
use retrylab::model::ExecutorModel;
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
    Layer {
        name: name.into(),
        attempts,
        backoff: Backoff {
            initial_ms: 1_000,
            factor: 2,
            cap_ms: 60_000,
        },
        retry_on,
        key,
    }
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

#[test]
fn a_timeout_the_client_does_not_retry_goes_up_to_the_wrapper_that_does() {
    // The client retries only 5xx, under the key it mints per call; the wrapper above it
    // retries timeouts, calling the client anew: a new key each time.
    let stack = Stack {
        layers: vec![
            layer(
                "wrapper",
                3,
                RetryOn::of(&[ErrorClass::Timeout]),
                KeyMode::None,
            ),
            layer(
                "client",
                4,
                RetryOn::of(&[ErrorClass::ServerError]),
                KeyMode::PerCall,
            ),
        ],
        gives_up: GiveUp::Unknown,
    };
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

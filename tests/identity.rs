//! Identity loss (`agent.authorization_loss`): a replan that loses the user's authorization,
//! so that the user authorizes the same action again and the next call carries a fresh one.
//! Designs bound to the authorization (`same_key`, the journal family, `durable_authorization`)
//! then open a new operation under a new key, and a lost reply duplicates, as it does for
//! `single_use_token` at any rate. Timings of the base model are constant (see
//! `common::base`), so the counts are exact.

use crate::common;

use std::path::Path;
use std::sync::Mutex;

use common::*;
use retrylab::design::{Design, ExecCtx, Executor};
use retrylab::model::{ExecutorModel, Model};
use retrylab::run::run_seeds;
use retrylab::sim::Ratio;
use retrylab::vocab::ids::{AttemptId, AuthId, CallId, OpId};
use retrylab::vocab::protocol::{Response, ToolCall, ToolResult};
use serde_json::{Value, json};

fn window() -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/windows/identity_loss.json");
    Model::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// (effects, duplicate effects) of `design` on `model` over seeds `0..seeds`.
fn dups(model: &Model, design: &str, seeds: u64) -> (u64, u64) {
    let m = run_seeds(model, common::design(design), 0..seeds);
    (m.effects, m.duplicate_effects)
}

/// The seeds' claim, both ways. While every reissue carries the same user authorization,
/// `durable_authorization` binds the replan back to its key and the lost reply is absorbed,
/// where `single_use_token` issues a fresh token and duplicates. Once the user authorizes the
/// action again, nothing ties the new authorization to the first: both duplicate.
#[test]
fn durable_authorization_beats_single_use_token_only_while_the_authorization_survives() {
    let mut model = window();
    let seeds = 50;
    model.agent.authorization_loss = Ratio::ZERO;
    assert_eq!(dups(&model, "durable_authorization", seeds), (50, 0));
    assert_eq!(dups(&model, "single_use_token", seeds), (100, 50));
    model.agent.authorization_loss = Ratio::ONE;
    assert_eq!(dups(&model, "durable_authorization", seeds), (100, 50));
    assert_eq!(dups(&model, "single_use_token", seeds), (100, 50));
}

/// At 1/4, a quarter of the replans (as drawn) lose the authorization. Every design bound to it
/// meets the same draws on the same seeds and duplicates on exactly those; the key bound to
/// the arguments does not care which authorization a call carries; a token per issue
/// duplicates on every seed.
#[test]
fn a_fraction_of_replans_lose_the_authorization() {
    let mut model = window();
    model.agent.authorization_loss = Ratio::new(1, 4).unwrap();
    let seeds = 1000;
    let lost = 253;
    for d in [
        "same_key",
        "journal",
        "journal_reconcile",
        "journal_reconcile_lease",
        "durable_authorization",
    ] {
        assert_eq!(dups(&model, d, seeds), (seeds + lost, lost), "{d}");
    }
    assert_eq!(dups(&model, "payload_hash_key", seeds), (seeds, 0));
    assert_eq!(dups(&model, "single_use_token", seeds), (2 * seeds, seeds));
}

/// A re-run of the same tool call is the same call, authorization included: nothing is lost.
#[test]
fn a_rerun_of_the_same_call_keeps_its_authorization() {
    let v = faults(base(), json!([{ "drop_reply": { "attempt": 1 } }]));
    let v = set(v, "agent.on_unknown", json!({ "retry_same": 1 }));
    let v = set(v, "agent.authorization_loss", json!(1));
    for d in ["same_key", "journal", "durable_authorization"] {
        expect(&v, d, c(1, 1, 0, 0, 0, 0, 2));
    }
    // Under a replan the same loss duplicates.
    let v = set(v, "agent.on_unknown", json!({ "replan": 1 }));
    for d in ["same_key", "journal", "durable_authorization"] {
        expect(&v, d, c(2, 1, 1, 0, 0, 0, 2));
    }
}

/// Two steps; the reply to step 1 is lost and the agent replans the whole workflow. With the
/// authorizations kept, step 0 is answered from its confirmed record and step 1 resent under
/// its key: one effect each. In a new session every action is authorized anew: step 0 runs
/// again, and step 1 runs again under a new key.
#[test]
fn a_new_session_authorizes_every_action_of_the_intent_again() {
    let v = set(base(), "workload.steps", json!(2));
    let v = set(v, "agent.on_step_failure", json!("restart_workflow"));
    let v = set(v, "agent.max_calls", json!(3));
    let v = faults(v, json!([{ "drop_reply": { "attempt": 2 } }]));
    for d in ["same_key", "durable_authorization"] {
        let t = expect(&v, d, c(2, 1, 0, 0, 0, 0, 3));
        assert!(!t.timeline.contains("the authorization is lost"), "{d}");
    }
    let v = set(v, "agent.authorization_loss", json!(1));
    for d in ["same_key", "durable_authorization"] {
        let t = expect(&v, d, c(4, 1, 2, 0, 0, 0, 4));
        assert!(
            t.timeline.contains(
                "decides to replan at 5070 ms; the authorization is lost (a new session): \
                 the user authorizes again"
            ),
            "{d}:\n{}",
            t.timeline
        );
    }
}

/// The knob is an agent probability like any other: a bad one is refused with its path.
#[test]
fn a_bad_authorization_loss_is_refused_with_its_path() {
    let v = set(base(), "agent.authorization_loss", json!("3/2"));
    let err = Model::from_json(&v.to_string(), "scenario.json").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("agent.authorization_loss"), "{text}");
    assert!(text.contains("at most 1"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// The type boundary: what a design can see of a call.

/// Every (call, authorization) the design below received, in order.
static SEEN: Mutex<Vec<(CallId, AuthId)>> = Mutex::new(Vec::new());

/// Records each call it receives and reports success at once, without a remote call.
struct Recorder;

impl Design for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn summary(&self) -> &str {
        "records what a design sees of each call"
    }
    fn executor(&self, _: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Recorder)
    }
}

impl Executor for Recorder {
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        SEEN.lock().unwrap().push((call.call, call.auth));
        ctx.report(&call, ToolResult::Success { resource: None });
    }
    fn on_response(&mut self, _: &mut ExecCtx<'_>, _: OpId, _: AttemptId, _: Response) {}
    /// What it records goes to `SEEN`, which nothing it does later reads.
    fn fingerprint(&self, _: &mut dyn std::hash::Hasher) -> bool {
        true
    }
}

/// Authorizations are numbered in the order the user gives them, so their numbers say
/// nothing about the intent or step (they were `intent * 256 + step`, which a design could
/// decode).
#[test]
fn authorizations_do_not_encode_the_intent() {
    let v: Value = set(base(), "workload.intents", json!(2));
    let v = set(v, "workload.steps", json!(2));
    let v = set(v, "workload.spacing_ms", json!(1_000));
    let model = model(&v);
    SEEN.lock().unwrap().clear();
    run_seeds(&model, &Recorder, 0..1);
    let seen = SEEN.lock().unwrap().clone();
    let auths: Vec<u32> = seen.iter().map(|(_, a)| a.0).collect();
    let calls: Vec<u32> = seen.iter().map(|(c, _)| c.0).collect();
    assert_eq!(calls, [1, 2, 3, 4]);
    assert_eq!(auths, [0, 1, 2, 3]);
}

/// Determinism with the knob on: under every random fault at once and half the replans
/// losing the authorization, each design reruns silent, traced twice and replayed from its
/// choice vector to the same outcome and timeline.
#[test]
fn runs_with_identity_loss_stay_deterministic() {
    use retrylab::explore::determinism::{sample, self_check};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ticket_chaos.json");
    let mut model = Model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    model.agent.authorization_loss = Ratio::new(1, 2).unwrap();
    for d in retrylab::design::all() {
        assert_eq!(
            self_check(&model, d, &sample(0, 99)),
            Ok(()),
            "{}",
            d.name()
        );
    }
}

//! The provider presets of `models/providers/`: each behaviour their `notes` document, shown
//! happening in the simulator with exact counts, times and trace lines.
//!
//! Timings are those of `common::base`: 10 ms each way, 50 ms processing (no preset sets
//! `processing_ms`), a 5 s client timeout. In a plain run the first request reaches the
//! provider at 10 ms and commits at 60 ms; its reply would arrive at 70 ms.

use crate::common;

use common::*;
use retrylab::design::ExecCtx;
use retrylab::design::{Design, Executor};
use retrylab::design::{Identity, Retrying};
use retrylab::model::ExecutorModel;
use retrylab::run::{Traced, run_traced};
use retrylab::sim::{ChoiceVector, RandomChooser, ReplayChooser};
use retrylab::vocab::ids::{AttemptId, Endpoint, Key, OpId};
use retrylab::vocab::protocol::{LookupQuery, Request, Response, ToolCall, ToolResult};
use serde_json::{Value, json};

const HOUR: u64 = 3_600_000;
const DAY: u64 = 24 * HOUR;

/// The base model with `provider` (a preset name or a patched preset).
fn with(provider: Value) -> Value {
    set(base(), "provider", provider)
}

/// `provider`, and the reply to attempt 1 is lost: the agent replans at 5 s under the same
/// key (attempt 2 reaches the provider at 5010 ms).
fn lost_reply(provider: Value) -> Value {
    faults(with(provider), json!([{ "drop_reply": { "attempt": 1 } }]))
}

/// `provider`, and the agent replans the lost call with changed arguments under the same key.
fn changed_args(provider: Value) -> Value {
    set(
        lost_reply(provider),
        "agent.on_unknown",
        json!({ "change_args": 1 }),
    )
}

/// `provider`; attempt 1 processes for 8 s, so the transport retry (attempt 2, sent at 7 s
/// after the 5 s timeout and 2 s of backoff) reaches the provider at 7010 ms while attempt 1
/// is still in flight; attempt 3 follows at 11020 ms after 4 s more of backoff.
fn overlapping(provider: Value) -> Value {
    let v = set(
        with(provider),
        "executor",
        json!({ "attempts": 3, "backoff_ms": 2_000 }),
    );
    faults(
        v,
        json!([{ "slow_processing": { "attempt": 1, "ms": 8_000 } }]),
    )
}

/// `provider`, `first` happens to attempt 1, and the executor is frozen from 1 s on, so that
/// its transport retry (attempt 2, same key, no backoff) is sent at `at_ms - 10` and reaches
/// the provider at exactly `at_ms`. The first request reached it at 10 ms and (unless `first`
/// prevents it) completed at 60 ms.
fn retry_at(provider: Value, first: Value, at_ms: u64) -> Value {
    assert!(at_ms > 5_010, "the pause must cover the 5 s timeout");
    let v = set(with(provider), "executor.attempts", json!(2));
    let v = set(v, "horizon_ms", json!(at_ms + 1_000_000));
    let v = set(v, "agent.tool_timeout_ms", json!(at_ms + 100_000));
    faults(
        v,
        json!([
            first,
            { "pause": { "component": "executor", "from_ms": 1_000, "duration_ms": at_ms - 1_010 } }
        ]),
    )
}

/// The reply to attempt 1 is lost; the retry reaches the provider at `at_ms`.
fn lost_then_retry_at(provider: Value, at_ms: u64) -> Value {
    retry_at(provider, json!({ "drop_reply": { "attempt": 1 } }), at_ms)
}

/// Asserts that the timeline has a line at `at_ms` ending with `text`.
/// A retry while the first attempt is still processing gets 409 and, retried later with the
/// same key, the replay: one effect, three calls, success at 11 040 ms.
fn rejects_in_flight(provider: Value) -> Traced {
    let t = expect(&overlapping(provider), "same_key", c(1, 1, 0, 0, 0, 0, 3));
    has_line(
        &t,
        7_010,
        "attempt 2: key k1 in progress -> 409 in progress",
    );
    t
}

/// A replan with changed arguments under the same key is refused: the original effect stays,
/// nothing drifts, and since a 422 says the key's first request reached the provider, the
/// executor reports "unknown", not "failed": the user is told the truth, unresolved.
fn rejects_changed_arguments(provider: Value) {
    let t = expect(&changed_args(provider), "same_key", c(1, 0, 0, 0, 0, 1, 2));
    has_line(
        &t,
        5_010,
        "attempt 2: key k1 was first used with params 1 -> 422 key reused with other parameters",
    );
}

fn has_line(t: &Traced, at_ms: u64, text: &str) {
    let prefix = format!("{at_ms:>12} ms  ");
    assert!(
        t.timeline
            .lines()
            .any(|l| l.starts_with(&prefix) && l.ends_with(text)),
        "no line \"{text}\" at {at_ms} ms in\n{}",
        t.timeline
    );
}

/// Asserts that no line of the timeline contains `text`.
fn lacks(t: &Traced, text: &str) {
    assert!(
        !t.timeline.contains(text),
        "unexpected \"{text}\" in\n{}",
        t.timeline
    );
}

/// One run of `design_name` whose random decisions are exactly `choices` (then defaults):
/// with a provider error probability of 1/2, `[1]` fails the first try and no later one.
fn replayed(v: &Value, design_name: &str, choices: &[u64], want: Counts) -> Traced {
    let mut ch = ReplayChooser::new(ChoiceVector(choices.to_vec()));
    let t = run_traced(&model(v), design(design_name), &mut ch);
    ch.finish()
        .unwrap_or_else(|e| panic!("{e}\n{}", t.timeline));
    assert_eq!(
        counts(&t.metrics),
        want,
        "{design_name}: timeline was\n{}",
        t.timeline
    );
    t
}

/// The first processing fails (before or after commit, per `knob`), later ones succeed.
fn first_try_fails(provider: &str, knob: &str) -> Value {
    with(json!({ "preset": provider, knob: "1/2" }))
}

// ---------------------------------------------------------------------------------------------
// Custom designs for key scope: one constant key (k7) for every intent, optionally with intent
// n's call sent to endpoint n.

struct OneKey {
    endpoint_per_intent: bool,
}

struct OneKeyIdentity;

impl Identity for OneKeyIdentity {
    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId {
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal().create(call, Some(Key(7)), worker, now)
    }
}

struct OneKeyExecutor {
    inner: Retrying<OneKeyIdentity>,
    endpoint_per_intent: bool,
}

impl Executor for OneKeyExecutor {
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, mut call: ToolCall) {
        if self.endpoint_per_intent {
            // One authorization per intent: intent n calls endpoint n.
            call.endpoint = Endpoint(call.auth.0);
        }
        self.inner.on_call(ctx, call)
    }
    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        self.inner.on_response(ctx, op, attempt, response)
    }
    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        self.inner.on_timer(ctx, tag)
    }
    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        self.inner.on_restart(ctx)
    }
    fn fingerprint(&self, h: &mut dyn std::hash::Hasher) -> bool {
        self.inner.fingerprint(h)
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
        Box::new(OneKeyExecutor {
            inner: Retrying::new(OneKeyIdentity, config),
            endpoint_per_intent: self.endpoint_per_intent,
        })
    }
}

/// Two intents 1 s apart (params 1 and 2) under one key k7: for two tenants on one endpoint,
/// or for one tenant on two endpoints.
fn one_key(provider: Value, across: &str) -> Traced {
    let (tenants, endpoint_per_intent) = match across {
        "tenants" => (2, false),
        "endpoints" => (1, true),
        other => panic!("{other}"),
    };
    let v = set(
        with(provider),
        "workload",
        json!({ "intents": 2, "tenants": tenants, "spacing_ms": 1_000 }),
    );
    let design = OneKey {
        endpoint_per_intent,
    };
    run_traced(&model(&v), &design, &mut RandomChooser::new(0))
}

// ---------------------------------------------------------------------------------------------
// A custom design for read-backs: one create under key k1 at 0 ms (it reaches the provider at
// 10 ms and commits at 60 ms; its reply, whatever it is, is reported as success), then a
// lookup by k1 sent at each of `reads_ms`, reaching the provider 10 ms later. The provider's
// trace lines say what each read-back could see.

struct ReadBack {
    reads_ms: Vec<u64>,
}

struct ReadBackExecutor {
    reads_ms: Vec<u64>,
    op: Option<(OpId, Key, ToolCall)>,
    reported: bool,
}

impl Executor for ReadBackExecutor {
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        let key = ctx.new_key();
        let (worker, now) = (ctx.worker(), ctx.now());
        let op = ctx.journal().create(&call, Some(key), worker, now);
        ctx.send(op, Request::create(&call, Some(key)));
        for (i, &at) in self.reads_ms.iter().enumerate() {
            ctx.set_timer(at - now, i as u64);
        }
        self.op = Some((op, key, call));
    }
    fn on_response(&mut self, ctx: &mut ExecCtx<'_>, _: OpId, _: AttemptId, _: Response) {
        if let (Some((_, _, call)), false) = (self.op, self.reported) {
            self.reported = true;
            ctx.report(&call, ToolResult::Success { resource: None });
        }
    }
    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, _: u64) {
        if let Some((op, key, call)) = self.op {
            ctx.send(op, Request::lookup(&call, LookupQuery::Key(key)));
        }
    }
    fn fingerprint(&self, mut h: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        (&self.reads_ms, &self.op, self.reported).hash(&mut h);
        true
    }
}

impl Design for ReadBack {
    fn name(&self) -> &str {
        "read_back"
    }
    fn summary(&self) -> &str {
        "one create, then read-backs by its key at fixed times"
    }
    fn executor(&self, _: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(ReadBackExecutor {
            reads_ms: self.reads_ms.clone(),
            op: None,
            reported: false,
        })
    }
}

/// The read-backs of [`ReadBack`] under `provider`, whose random decisions are exactly
/// `choices` (then defaults).
fn read_back(provider: Value, reads_ms: &[u64], choices: &[u64]) -> Traced {
    let design = ReadBack {
        reads_ms: reads_ms.to_vec(),
    };
    let last = reads_ms.iter().max().copied().unwrap_or(0);
    let v = set(with(provider), "horizon_ms", json!(last + 1_000_000));
    let mut ch = ReplayChooser::new(ChoiceVector(choices.to_vec()));
    let t = run_traced(&model(&v), &design, &mut ch);
    ch.finish()
        .unwrap_or_else(|e| panic!("{e}\n{}", t.timeline));
    t
}

/// The provider's answer to the read-back that reaches it at `at_ms` (attempt `attempt`).
fn read_at(t: &Traced, at_ms: u64, attempt: u32, found: bool) {
    let answer = if found {
        "200 found r0"
    } else {
        "404 not found"
    };
    has_line(
        t,
        at_ms,
        &format!("attempt {attempt}: lookup by key k1 -> {answer}"),
    );
}

/// Two intents 1 s apart with the same parameters (a genuine repeat) under one key k7, intent
/// n calling endpoint n.
fn one_key_on_two_endpoints(provider: Value) -> Traced {
    let v = set(
        with(provider),
        "workload",
        json!({ "intents": 2, "genuine_repeat": 1, "spacing_ms": 1_000 }),
    );
    let design = OneKey {
        endpoint_per_intent: true,
    };
    run_traced(&model(&v), &design, &mut RandomChooser::new(0))
}

/// (effects, completed, false_failure, unresolved) of a run.
fn ecfu(t: &Traced) -> (u64, u64, u64, u64) {
    let m = &t.metrics;
    (m.effects, m.completed, m.false_failure, m.unresolved)
}

// ---------------------------------------------------------------------------------------------
// no_dedup: a plain POST.

#[test]
fn no_dedup_executes_every_request_whatever_key_it_carries() {
    let v = lost_reply(json!("no_dedup"));
    for d in ["same_key", "new_key_after_replan", "no_dedup"] {
        let t = expect(&v, d, c(2, 1, 1, 0, 0, 0, 2));
        assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(5_070), "{d}");
    }
    let t = expect(&v, "same_key", c(2, 1, 1, 0, 0, 0, 2));
    has_line(
        &t,
        5_010,
        "attempt 2: key k1 not deduplicated; processing for 50 ms",
    );
    has_line(&t, 5_060, "effect r1 committed for intent 0");
    // An overlapping transport retry under the same key is a second effect too.
    let t = expect(
        &overlapping(json!("no_dedup")),
        "same_key",
        c(2, 1, 1, 0, 0, 0, 2),
    );
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(7_070));
}

// ---------------------------------------------------------------------------------------------
// key_lifetime: what a read-back by key can see once the key record is gone.

#[test]
fn a_lookup_by_key_finds_nothing_once_the_key_record_expired() {
    // The record is written at 10 ms and kept 1 s: a read reaching the provider at 510 ms
    // finds r0, one at 1010 ms nothing, although r0 exists.
    let p = json!({ "dedup": "by_key", "lookup": "by_key", "retention_ms": 1_000 });
    let t = read_back(p.clone(), &[500, 1_000], &[]);
    read_at(&t, 510, 2, true);
    read_at(&t, 1_010, 3, false);
    // The key is an attribute of the resource: found as long as the resource exists.
    let resource = set(p, "key_lifetime", json!("resource"));
    let t = read_back(resource, &[500, 1_000, 100_000], &[]);
    read_at(&t, 510, 2, true);
    read_at(&t, 1_010, 3, true);
    read_at(&t, 100_010, 4, true);
}

#[test]
fn a_lookup_by_key_finds_nothing_when_the_record_was_not_stored() {
    // Checkout keeps only 2xx: the 500 sent after the commit deletes the record; r0 exists.
    let p = json!({ "preset": "checkout", "lookup": "by_key", "error_after_commit": 1 });
    let t = read_back(p.clone(), &[500], &[]);
    has_line(&t, 60, "attempt 1: done -> 500 server error");
    read_at(&t, 510, 2, false);
    let t = read_back(set(p, "key_lifetime", json!("resource")), &[500], &[]);
    read_at(&t, 510, 2, true);
}

#[test]
fn a_lookup_by_key_finds_nothing_once_the_record_is_pruned() {
    // Stripe's record, looked up 1 h after its 24 h floor: kept 2 h longer (choice 2 h), it
    // is found; pruned 30 min after the floor, it is not.
    let p = json!({ "preset": "stripe_v1", "lookup": "by_key" });
    let read = DAY + HOUR;
    let t = read_back(p.clone(), &[read], &[2 * HOUR]);
    has_line(
        &t,
        read + 10,
        "key k1 past its retention floor; pruned at 93600010 ms",
    );
    read_at(&t, read + 10, 2, true);
    let t = read_back(p.clone(), &[read], &[HOUR / 2]);
    read_at(&t, read + 10, 2, false);
    // A resource lifetime sees through the pruning.
    let t = read_back(
        set(p, "key_lifetime", json!("resource")),
        &[read],
        &[HOUR / 2],
    );
    read_at(&t, read + 10, 2, true);
}

#[test]
fn a_lookup_by_key_of_a_resource_still_waits_for_the_visibility_lag() {
    // aws_ec2 with a 1 s record (EC2's is kept for the run; shortened to show the lifetime)
    // and a 3 s lag (choice 3000): r0, committed at 60 ms, is visible from 3060 ms. At 2010
    // ms the record is gone and r0 not yet visible; at 4010 ms r0 is found by its token.
    let p = json!({ "preset": "aws_ec2", "retention_ms": 1_000 });
    let t = read_back(p.clone(), &[2_000, 4_000], &[3_000]);
    read_at(&t, 2_010, 2, false);
    read_at(&t, 4_010, 3, true);
    // With the key a record of its own, r0 is never found again.
    let t = read_back(
        set(p, "key_lifetime", json!("record")),
        &[2_000, 4_000],
        &[3_000],
    );
    read_at(&t, 2_010, 2, false);
    read_at(&t, 4_010, 3, false);
}

// ---------------------------------------------------------------------------------------------
// stripe_v1

#[test]
fn stripe_v1_replays_the_same_key_within_24_hours() {
    let t = expect(
        &lost_reply(json!("stripe_v1")),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        5_010,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(5_020));
    // The key was first seen at 10 ms; until its 24 h floor nothing is drawn: a replay.
    let t = expect(
        &lost_then_retry_at(json!("stripe_v1"), 10 + DAY - 1),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        86_400_009,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
    assert!(t.choices.is_empty(), "{:?}", t.choices);
}

#[test]
fn stripe_v1_prunes_a_key_at_a_drawn_moment_between_24_and_72_hours() {
    // A retry 1 h after the floor (86400010 ms). Kept 2 h past the floor (choice 2 h), the
    // record answers it: a replay.
    let at = 10 + DAY + HOUR;
    let v = lost_then_retry_at(json!("stripe_v1"), at);
    let t = replayed(&v, "same_key", &[2 * HOUR], c(1, 1, 0, 0, 0, 0, 2));
    has_line(
        &t,
        at,
        "attempt 2: key k1 past its retention floor; pruned at 93600010 ms",
    );
    has_line(
        &t,
        at,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
    // Pruned 30 min past the floor, the same retry is a new request: a second charge.
    let t = replayed(&v, "same_key", &[HOUR / 2], c(2, 1, 1, 0, 0, 0, 2));
    has_line(
        &t,
        at,
        "attempt 2: key k1 past its retention floor; pruned at 88200010 ms",
    );
    has_line(&t, at, "attempt 2: key k1 expired and was forgotten");
    has_line(&t, at, "attempt 2: new key k1; processing for 50 ms");
    // Pruned exactly at the floor (choice 0), a retry at the floor executes again.
    let v = lost_then_retry_at(json!("stripe_v1"), 10 + DAY);
    replayed(&v, "same_key", &[0], c(2, 1, 1, 0, 0, 0, 2));
    // 72 h after the first request even the latest moment (choice 48 h) has come.
    let v = lost_then_retry_at(json!("stripe_v1"), 10 + 3 * DAY);
    let t = replayed(&v, "same_key", &[2 * DAY], c(2, 1, 1, 0, 0, 0, 2));
    has_line(
        &t,
        10 + 3 * DAY,
        "attempt 2: key k1 expired and was forgotten",
    );
    // Drawn per record at random, both happen: a retry 24 h past the floor is a replay on
    // some seeds and a second charge on others.
    let v = lost_then_retry_at(json!("stripe_v1"), 10 + 2 * DAY);
    let m = run(&v, "same_key", 40);
    assert!(
        (1..40).contains(&m.duplicate_effects),
        "{} of 40 seeds duplicated",
        m.duplicate_effects
    );
}

#[test]
fn stripe_v1_stores_a_500_and_replays_it() {
    // Committed at 60 ms but answered 500; the replan's request (80 ms) gets the stored 500.
    let v = with(json!({ "preset": "stripe_v1", "error_after_commit": 1 }));
    let t = expect(&v, "same_key", c(1, 0, 0, 0, 0, 1, 2));
    has_line(&t, 60, "attempt 1: done -> 500 server error");
    has_line(
        &t,
        80,
        "attempt 2: key k1 seen: replay -> 500 server error, replayed",
    );
    // A 500 before commit is stored and replayed as well: the work is never retried.
    let t = replayed(
        &first_try_fails("stripe_v1", "error_before_commit"),
        "same_key",
        &[1],
        c(0, 0, 0, 0, 0, 1, 2),
    );
    has_line(
        &t,
        80,
        "attempt 2: key k1 seen: replay -> 500 server error, replayed",
    );
}

#[test]
fn stripe_v1_answers_409_while_the_key_is_in_flight_and_does_not_store_it() {
    let t = rejects_in_flight(json!("stripe_v1"));
    // The 409 was not stored: attempt 3 gets the original's result.
    has_line(
        &t,
        11_030,
        "attempt 3: key k1 seen: replay -> 201 created r0, replayed",
    );
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(11_040));
}

#[test]
fn stripe_v1_rejects_a_different_request_under_the_same_key() {
    // The changed call is refused; the user hears "failed" about a charge that exists.
    rejects_changed_arguments(json!("stripe_v1"));
}

#[test]
fn stripe_v1_a_key_reused_on_another_endpoint_is_a_mismatch() {
    // The same parameters, the same key, another endpoint of the same account: not a replay of
    // the first request but a different one, refused; intent 1 truly failed.
    let t = one_key_on_two_endpoints(json!("stripe_v1"));
    assert_eq!(ecfu(&t), (1, 1, 0, 1));
    has_line(
        &t,
        1_010,
        "attempt 2: key k7 was first used with params 1 on endpoint 0 -> 422 key reused with other parameters",
    );
    // v2 keys are per API: the second endpoint's request is its own.
    assert_eq!(
        ecfu(&one_key_on_two_endpoints(json!("stripe_v2"))),
        (2, 2, 0, 0)
    );
}

#[test]
fn stripe_v1_keys_are_per_account() {
    // Two accounts, one key: both execute.
    assert_eq!(ecfu(&one_key(json!("stripe_v1"), "tenants")), (2, 2, 0, 0));
    // One account, two endpoints, one key: the second request (intent 1, params 2, on
    // endpoint 1) meets the first one's record and is refused; intent 1 truly failed.
    let t = one_key(json!("stripe_v1"), "endpoints");
    assert_eq!(ecfu(&t), (1, 1, 0, 1));
    has_line(
        &t,
        1_010,
        "attempt 2: key k7 was first used with params 1 on endpoint 0 -> 422 key reused with other parameters",
    );
}

// ---------------------------------------------------------------------------------------------
// stripe_v2

#[test]
fn stripe_v2_completes_a_500_after_commit_instead_of_replaying_it() {
    let v = with(json!({ "preset": "stripe_v2", "error_after_commit": 1 }));
    let t = expect(&v, "same_key", c(1, 1, 0, 0, 0, 0, 2));
    has_line(
        &t,
        80,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(90));
}

#[test]
fn stripe_v2_executes_work_that_failed_before_commit_again() {
    let t = replayed(
        &first_try_fails("stripe_v2", "error_before_commit"),
        "same_key",
        &[1],
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(&t, 60, "attempt 1: done -> 500 server error");
    has_line(&t, 80, "attempt 2: key k1 failed before: executing again");
    has_line(&t, 130, "effect r0 committed for intent 0");
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(140));
    // If it fails every time, every retry runs it again: nothing, never confirmed.
    let always = with(json!({ "preset": "stripe_v2", "error_before_commit": 1 }));
    let t = expect(&always, "same_key", c(0, 0, 0, 0, 0, 1, 2));
    has_line(&t, 80, "attempt 2: key k1 failed before: executing again");
}

#[test]
fn stripe_v2_replays_within_30_days() {
    let t = expect(
        &lost_reply(json!("stripe_v2")),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        5_010,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
    expect(
        &lost_then_retry_at(json!("stripe_v2"), 10 + 30 * DAY - 1),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    // From the floor on, the record is pruned at a moment drawn up to 32 days: at the floor
    // (choice 0) the retry is a new request, kept a day longer it replays.
    let v = lost_then_retry_at(json!("stripe_v2"), 10 + 30 * DAY);
    let t = replayed(&v, "same_key", &[0], c(2, 1, 1, 0, 0, 0, 2));
    has_line(
        &t,
        2_592_000_010,
        "attempt 2: key k1 expired and was forgotten",
    );
    replayed(&v, "same_key", &[DAY], c(1, 1, 0, 0, 0, 0, 2));
    let v = lost_then_retry_at(json!("stripe_v2"), 10 + 32 * DAY);
    replayed(&v, "same_key", &[2 * DAY], c(2, 1, 1, 0, 0, 0, 2));
}

#[test]
fn stripe_v2_scopes_keys_per_account_and_api() {
    assert_eq!(ecfu(&one_key(json!("stripe_v2"), "tenants")), (2, 2, 0, 0));
    // The same key on another endpoint is another key: both execute.
    let t = one_key(json!("stripe_v2"), "endpoints");
    assert_eq!(ecfu(&t), (2, 2, 0, 0));
    has_line(&t, 1_010, "attempt 2: new key k7; processing for 50 ms");
}

#[test]
fn stripe_v2_answers_409_in_flight_and_rejects_a_mismatch() {
    rejects_in_flight(json!("stripe_v2"));
    rejects_changed_arguments(json!("stripe_v2"));
}

// ---------------------------------------------------------------------------------------------
// ietf_draft

#[test]
fn ietf_draft_refuses_a_create_without_a_key() {
    // 400 at 10 ms, failure at 20 ms, nothing created: a true failure.
    let t = expect(
        &with(json!("ietf_draft")),
        "no_dedup",
        c(0, 0, 0, 0, 0, 0, 1),
    );
    has_line(&t, 10, "attempt 1: no key -> 400 key required");
    has_line(&t, 20, "intent 0: tells the user failure");
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(20));
    lacks(&t, "ledger");
    expect(
        &with(json!("ietf_draft")),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 1),
    );
}

#[test]
fn ietf_draft_mismatch_422_and_in_progress_409() {
    rejects_changed_arguments(json!("ietf_draft"));
    let t = rejects_in_flight(json!("ietf_draft"));
    has_line(
        &t,
        11_030,
        "attempt 3: key k1 seen: replay -> 201 created r0, replayed",
    );
}

#[test]
fn ietf_draft_returns_the_stored_result_success_or_error_for_the_whole_run() {
    let v = with(json!({ "preset": "ietf_draft", "error_after_commit": 1 }));
    let t = expect(&v, "same_key", c(1, 0, 0, 0, 0, 1, 2));
    has_line(
        &t,
        80,
        "attempt 2: key k1 seen: replay -> 500 server error, replayed",
    );
    // No expiry: a retry a year later is still a replay.
    let t = expect(
        &lost_then_retry_at(json!("ietf_draft"), 365 * DAY),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        365 * DAY,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
}

// ---------------------------------------------------------------------------------------------
// aws_ec2

#[test]
fn aws_ec2_a_retry_returns_the_current_state() {
    // The stored answer is a 500, but the retry reports the instance that exists.
    let v = with(json!({ "preset": "aws_ec2", "error_after_commit": 1 }));
    let t = expect(&v, "same_key", c(1, 1, 0, 0, 0, 0, 2));
    has_line(&t, 60, "attempt 1: done -> 500 server error");
    has_line(
        &t,
        80,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(90));
    // The token is kept for the run.
    expect(
        &lost_then_retry_at(json!("aws_ec2"), 365 * DAY),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
}

#[test]
fn aws_ec2_a_request_that_failed_records_nothing_so_a_retry_executes() {
    // The token and the mutation are one transaction: a 500 before the commit leaves no
    // token, and the replan's request (80 ms) launches the instance.
    let t = replayed(
        &first_try_fails("aws_ec2", "error_before_commit"),
        "same_key",
        &[1],
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(&t, 60, "attempt 1: done -> 500 server error");
    has_line(&t, 80, "attempt 2: new key k1; processing for 50 ms");
    has_line(&t, 130, "effect r0 committed for intent 0");
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(140));
    // A 500 after the commit keeps the token (not "success only"): the retry is answered
    // with the instance, never launched twice.
    let t = replayed(
        &first_try_fails("aws_ec2", "error_after_commit"),
        "same_key",
        &[0, 1],
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(&t, 60, "attempt 1: done -> 500 server error");
    has_line(
        &t,
        80,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
}

#[test]
fn aws_ec2_the_same_token_in_another_region_launches_again() {
    let v = faults(
        with(json!("aws_ec2")),
        json!([
            { "drop_reply": { "attempt": 1 } },
            { "reroute": { "attempt": 2, "region": 1 } }
        ]),
    );
    let t = expect(&v, "same_key", c(2, 1, 1, 0, 0, 0, 2));
    has_line(&t, 5_010, "attempt 2: new key k1; processing for 50 ms");
    has_line(&t, 5_060, "effect r1 committed for intent 0");
    // In the same region it is a replay.
    expect(
        &lost_reply(json!("aws_ec2")),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
}

#[test]
fn aws_ec2_rejects_a_changed_parameter_and_a_concurrent_token() {
    rejects_changed_arguments(json!("aws_ec2"));
    // Not documented: the preset assumes a retryable 409 (its notes say so).
    rejects_in_flight(json!("aws_ec2"));
    let notes = retrylab::model::provider::preset("aws_ec2").unwrap().notes;
    assert!(
        notes.contains("concurrent request with the same token") && notes.contains("Assumed"),
        "{notes}"
    );
}

// ---------------------------------------------------------------------------------------------
// aws_dynamodb_txn

#[test]
fn aws_dynamodb_txn_window_runs_10_minutes_from_completion() {
    // First request at 10 ms, completed at 60 ms. At 600030 ms a window from the first
    // request would have closed (600010 ms); the one from completion (600060 ms) has not.
    let t = expect(
        &lost_then_retry_at(json!("aws_dynamodb_txn"), 600_030),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        600_030,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
    let from_first = json!({ "preset": "aws_dynamodb_txn", "retention_from": "first_request" });
    expect(
        &lost_then_retry_at(from_first, 600_030),
        "same_key",
        c(2, 1, 1, 0, 0, 0, 2),
    );
    expect(
        &lost_then_retry_at(json!("aws_dynamodb_txn"), 60 + 600_000 - 1),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    let t = expect(
        &lost_then_retry_at(json!("aws_dynamodb_txn"), 60 + 600_000),
        "same_key",
        c(2, 1, 1, 0, 0, 0, 2),
    );
    has_line(&t, 600_060, "attempt 2: key k1 expired and was forgotten");
}

#[test]
fn aws_dynamodb_txn_in_flight_is_rejected_and_retries_see_it_complete() {
    let t = rejects_in_flight(json!("aws_dynamodb_txn"));
    has_line(&t, 8_010, "effect r0 committed for intent 0");
    has_line(
        &t,
        11_030,
        "attempt 3: key k1 seen: replay -> 201 created r0, replayed",
    );
}

#[test]
fn aws_dynamodb_txn_mismatch_and_current_state() {
    expect(
        &changed_args(json!("aws_dynamodb_txn")),
        "same_key",
        c(1, 0, 0, 0, 0, 1, 2),
    );
    // Repeats return the transaction's result, not a stored error.
    let v = with(json!({ "preset": "aws_dynamodb_txn", "error_after_commit": 1 }));
    let t = expect(&v, "same_key", c(1, 1, 0, 0, 0, 0, 2));
    has_line(
        &t,
        80,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
}

// ---------------------------------------------------------------------------------------------
// paypal_orders

#[test]
fn paypal_orders_keeps_keys_6_hours() {
    expect(
        &lost_then_retry_at(json!("paypal_orders"), 10 + 6 * HOUR - 1),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    let t = expect(
        &lost_then_retry_at(json!("paypal_orders"), 10 + 6 * HOUR),
        "same_key",
        c(2, 1, 1, 0, 0, 0, 2),
    );
    has_line(
        &t,
        21_600_010,
        "attempt 2: key k1 expired and was forgotten",
    );
}

#[test]
fn paypal_orders_a_retry_returns_the_latest_status() {
    let v = with(json!({ "preset": "paypal_orders", "error_after_commit": 1 }));
    let t = expect(&v, "same_key", c(1, 1, 0, 0, 0, 0, 2));
    has_line(
        &t,
        80,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
}

#[test]
fn paypal_orders_in_progress_reuse_and_per_call_type_keys() {
    rejects_in_flight(json!("paypal_orders"));
    // PAYPAL_REQUEST_ID_PREVIOUSLY_USED.
    expect(
        &changed_args(json!("paypal_orders")),
        "same_key",
        c(1, 0, 0, 0, 0, 1, 2),
    );
    // Keys are unique per API call type: the same key on another endpoint is another key.
    assert_eq!(
        ecfu(&one_key(json!("paypal_orders"), "endpoints")),
        (2, 2, 0, 0)
    );
}

// ---------------------------------------------------------------------------------------------
// adyen

#[test]
fn adyen_keeps_keys_31_days() {
    let t = expect(
        &lost_then_retry_at(json!("adyen"), 30 * DAY),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        30 * DAY,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
    let t = expect(
        &lost_then_retry_at(json!("adyen"), 32 * DAY),
        "same_key",
        c(2, 1, 1, 0, 0, 0, 2),
    );
    has_line(&t, 32 * DAY, "attempt 2: key k1 expired and was forgotten");
    // The window closes exactly 31 days after the first submission (10 ms).
    expect(
        &lost_then_retry_at(json!("adyen"), 10 + 31 * DAY - 1),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    expect(
        &lost_then_retry_at(json!("adyen"), 10 + 31 * DAY),
        "same_key",
        c(2, 1, 1, 0, 0, 0, 2),
    );
}

#[test]
fn adyen_rejects_a_concurrent_duplicate_with_a_retryable_409() {
    let t = rejects_in_flight(json!("adyen"));
    has_line(&t, 7_020, "worker 0: op 0 dispatched -> unknown");
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(11_040));
    // A mismatch (not documented) is modelled as rejection.
    expect(
        &changed_args(json!("adyen")),
        "same_key",
        c(1, 0, 0, 0, 0, 1, 2),
    );
}

#[test]
fn adyen_keys_are_per_company_account() {
    assert_eq!(ecfu(&one_key(json!("adyen"), "tenants")), (2, 2, 0, 0));
}

#[test]
fn adyen_a_key_is_not_checked_across_regional_endpoints() {
    let v = faults(
        with(json!("adyen")),
        json!([
            { "drop_reply": { "attempt": 1 } },
            { "reroute": { "attempt": 2, "region": 1 } }
        ]),
    );
    expect(&v, "same_key", c(2, 1, 1, 0, 0, 0, 2));
}

// ---------------------------------------------------------------------------------------------
// azure_repeatable

#[test]
fn azure_repeatable_refuses_a_retry_outside_5_minutes_with_412() {
    // The window runs 5 min from the first send (0 ms), not from the provider's record
    // (10 ms): the retry sent with first-sent 0 ms is answered from the record until 300 s.
    let t = expect(
        &lost_then_retry_at(json!("azure_repeatable"), 300_000 - 1),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        299_999,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
    // Refused: a 412 says an earlier send may have committed (here it did), so the agent
    // hears "unknown", calls once more, is refused again, and the user is told "unresolved".
    let t = expect(
        &lost_then_retry_at(json!("azure_repeatable"), 300_000),
        "same_key",
        c(1, 0, 0, 0, 0, 1, 3),
    );
    has_line(
        &t,
        300_000,
        "attempt 2: key k1 first sent at 0 ms, outside the window -> 412 key expired",
    );
    has_line(
        &t,
        300_010,
        "intent 0: unknown; decides to replan at 300010 ms",
    );
}

#[test]
fn azure_repeatable_refuses_a_late_retry_even_when_the_first_request_never_arrived() {
    // The first request is lost on the way: the provider has no record of the key. The retry
    // carries Repeatability-First-Sent 0 ms; 5 min later it is refused all the same.
    let lost = json!({ "drop_request": { "attempt": 1 } });
    // Nothing was committed, but the client cannot know that: "unknown", never "failed".
    let t = expect(
        &retry_at(json!("azure_repeatable"), lost.clone(), 300_000),
        "same_key",
        c(0, 0, 0, 0, 0, 1, 3),
    );
    has_line(
        &t,
        300_000,
        "attempt 2: key k1 first sent at 0 ms, outside the window -> 412 key expired",
    );
    lacks(&t, "ledger");
    // Within the 5 min it executes.
    let t = expect(
        &retry_at(json!("azure_repeatable"), lost, 300_000 - 1),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(&t, 299_999, "attempt 2: new key k1; processing for 50 ms");
}

#[test]
fn azure_repeatable_the_first_sent_time_survives_a_worker_restart_with_the_journal() {
    // The first request is lost and its worker crashes after sending it; it restarts 6 min
    // later and resends from its durable journal, with the first-sent time of the first
    // send: outside the window.
    let v = set(
        with(json!("azure_repeatable")),
        "workers.restart_delay_ms",
        json!(360_000),
    );
    let v = set(v, "agent.tool_timeout_ms", json!(1_000_000));
    let v = faults(
        v,
        json!([
            { "drop_request": { "attempt": 1 } },
            { "crash_worker": { "attempt": 1, "point": "after_send" } }
        ]),
    );
    let t = expect(&v, "same_key", c(0, 0, 0, 0, 0, 1, 3));
    has_line(
        &t,
        360_010,
        "attempt 2: key k1 first sent at 0 ms, outside the window -> 412 key expired",
    );
}

#[test]
fn azure_repeatable_executes_an_original_5xx_again() {
    let t = replayed(
        &first_try_fails("azure_repeatable", "error_after_commit"),
        "same_key",
        &[1],
        c(2, 1, 1, 0, 0, 0, 2),
    );
    has_line(&t, 60, "attempt 1: done -> 500 server error");
    has_line(&t, 80, "attempt 2: new key k1; processing for 50 ms");
    has_line(&t, 130, "effect r1 committed for intent 0");
    // A 5xx before commit is retried just as well, with no duplicate.
    let t = replayed(
        &first_try_fails("azure_repeatable", "error_before_commit"),
        "same_key",
        &[1],
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(&t, 80, "attempt 2: new key k1; processing for 50 ms");
}

#[test]
fn azure_repeatable_replays_2xx_answers_409_in_progress_and_rejects_a_mismatch() {
    let t = expect(
        &lost_reply(json!("azure_repeatable")),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        5_010,
        "attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    );
    rejects_in_flight(json!("azure_repeatable"));
    rejects_changed_arguments(json!("azure_repeatable"));
}

// ---------------------------------------------------------------------------------------------
// checkout

#[test]
fn checkout_does_not_store_a_5xx_so_the_retry_pays_again() {
    let t = replayed(
        &first_try_fails("checkout", "error_after_commit"),
        "same_key",
        &[1],
        c(2, 1, 1, 0, 0, 0, 2),
    );
    has_line(&t, 80, "attempt 2: new key k1; processing for 50 ms");
    has_line(&t, 130, "effect r1 committed for intent 0");
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(140));
    let always = with(json!({ "preset": "checkout", "error_after_commit": 1 }));
    expect(&always, "same_key", c(2, 0, 1, 0, 0, 1, 2));
}

#[test]
fn checkout_keeps_keys_24_hours_and_answers_409_while_processing() {
    expect(
        &lost_then_retry_at(json!("checkout"), 10 + DAY - 1),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    let t = expect(
        &lost_then_retry_at(json!("checkout"), 10 + DAY),
        "same_key",
        c(2, 1, 1, 0, 0, 0, 2),
    );
    has_line(
        &t,
        86_400_010,
        "attempt 2: key k1 expired and was forgotten",
    );
    rejects_in_flight(json!("checkout"));
}

// ---------------------------------------------------------------------------------------------
// payload_hash_lambda

#[test]
fn payload_hash_lambda_merges_genuine_repeats_whatever_the_caller_sends() {
    let v = set(
        with(json!("payload_hash_lambda")),
        "workload",
        json!({ "intents": 2, "genuine_repeat": 1, "spacing_ms": 1_000 }),
    );
    for d in ["same_key", "no_dedup", "new_key_after_replan"] {
        // Intent 1 (same parameters, its own key or none) gets intent 0's result at 1010 ms.
        let t = expect(&v, d, c(1, 1, 0, 1, 0, 0, 2));
        assert_eq!(t.metrics.merged_repeats, 1, "{d}");
        has_line(&t, 1_020, "intent 1: tells the user success");
    }
    // Even without a key, a lost reply's retry is deduplicated.
    expect(
        &lost_reply(json!("payload_hash_lambda")),
        "no_dedup",
        c(1, 1, 0, 0, 0, 0, 2),
    );
}

#[test]
fn payload_hash_lambda_records_expire_1_hour_after_they_are_saved() {
    // Saved at 60 ms; intent 1 reaches the provider at spacing + 10 ms.
    let v = |spacing: u64| {
        set(
            with(json!("payload_hash_lambda")),
            "workload",
            json!({ "intents": 2, "genuine_repeat": 1, "spacing_ms": spacing }),
        )
    };
    let t = expect(&v(HOUR + 49), "same_key", c(1, 1, 0, 1, 0, 0, 2));
    assert_eq!(t.metrics.merged_repeats, 1);
    let t = expect(&v(HOUR + 50), "same_key", c(2, 2, 0, 0, 0, 0, 2));
    has_line(&t, 3_600_060, "attempt 2: key k1 expired and was forgotten");
}

#[test]
fn payload_hash_lambda_deletes_the_record_on_error() {
    let t = replayed(
        &first_try_fails("payload_hash_lambda", "error_after_commit"),
        "same_key",
        &[1],
        c(2, 1, 1, 0, 0, 0, 2),
    );
    has_line(&t, 80, "attempt 2: new key k1; processing for 50 ms");
    let t = replayed(
        &first_try_fails("payload_hash_lambda", "error_before_commit"),
        "same_key",
        &[1],
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(&t, 80, "attempt 2: new key k1; processing for 50 ms");
}

#[test]
fn payload_hash_lambda_in_progress_is_rejected_until_it_expires_after_30_s() {
    rejects_in_flight(json!("payload_hash_lambda"));
    // The provider dies after claiming the record at 10 ms: an INPROGRESS record, no effect.
    let crash = json!({ "crash_provider": { "attempt": 1 } });
    let before = set(
        retry_at(json!("payload_hash_lambda"), crash.clone(), 10 + 30_000 - 1),
        "agent.max_calls",
        json!(1),
    );
    let t = expect(&before, "same_key", c(0, 0, 0, 0, 0, 1, 2));
    has_line(
        &t,
        60,
        "attempt 1: provider crashed mid-processing, leaving a key without an effect; no reply",
    );
    has_line(
        &t,
        30_009,
        "attempt 2: key k1 in progress -> 409 in progress",
    );
    let t = expect(
        &retry_at(json!("payload_hash_lambda"), crash, 10 + 30_000),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        30_010,
        "attempt 2: in-progress record of key k1 expired; executing again",
    );
    has_line(&t, 30_060, "effect r0 committed for intent 0");
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(30_070));
}

// ---------------------------------------------------------------------------------------------
// calendar_natural_id

#[test]
fn calendar_natural_id_a_later_insert_with_the_same_id_already_exists() {
    let t = expect(
        &lost_reply(json!("calendar_natural_id")),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        5_010,
        "attempt 2: key k1 seen: replay -> 409 already exists",
    );
    has_line(&t, 5_020, "reports success (no receipt) for call 2");
    // Whatever the body: an existing id is an existing id.
    let t = expect(
        &changed_args(json!("calendar_natural_id")),
        "same_key",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(
        &t,
        5_010,
        "attempt 2: key k1 seen: replay -> 409 already exists",
    );
}

#[test]
fn calendar_natural_id_a_failed_insert_does_not_reserve_the_id() {
    // The insert fails before it commits: no event, so no id taken; the replan's insert
    // under the same id creates the event.
    let t = replayed(
        &first_try_fails("calendar_natural_id", "error_before_commit"),
        "same_key",
        &[1],
        c(1, 1, 0, 0, 0, 0, 2),
    );
    has_line(&t, 60, "attempt 1: done -> 500 server error");
    has_line(&t, 80, "attempt 2: new key k1; processing for 50 ms");
    has_line(&t, 130, "effect r0 committed for intent 0");
}

#[test]
fn calendar_natural_id_reads_lag_behind_inserts() {
    // The lag is drawn between 0 and 2 s (an assumption): here 2 s (choice 2000), so r0,
    // committed at 60 ms, is visible from 2060 ms on.
    let t = read_back(json!("calendar_natural_id"), &[100, 2_049, 2_050], &[2_000]);
    read_at(&t, 110, 2, false);
    read_at(&t, 2_059, 3, false);
    read_at(&t, 2_060, 4, true);
}

#[test]
fn calendar_natural_id_misses_a_concurrent_duplicate() {
    // Attempt 2 (7010 ms) is processed beside attempt 1: r0 at 7060 ms, r1 at 8010 ms.
    let t = expect(
        &overlapping(json!("calendar_natural_id")),
        "same_key",
        c(2, 1, 1, 0, 0, 0, 2),
    );
    has_line(
        &t,
        7_010,
        "attempt 2: key k1 not deduplicated; processing for 50 ms",
    );
    has_line(&t, 7_060, "effect r0 committed for intent 0");
    has_line(&t, 8_010, "effect r1 committed for intent 0");
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(7_070));
}

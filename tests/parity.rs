//! One contract, two bindings (STYLE.md, point 16; issue 39): the built-in `same_key` and
//! `journal` and their ports to the executor protocol, examples/python/same_key.py and
//! journal.py (written against the client of clients/python, as a team would write them),
//! run seed by seed on the lost reply (models/ticket_lost_response.json), on crashes just
//! after a send with a durable journal (models/bad/crash_after_send_rare.json: the restarted
//! worker resumes from the record and its key) and on crashes at every point with a volatile
//! journal, lost and duplicated requests and 5xx (models/guarantees/durable_journal.json).
//!
//! Per seed, 1 000 seeds per model and design: the same choices drawn from the world, the
//! same effects in the ledger (resource, send, key, time), the same message to the user per
//! intent at the same time, the same verdict per intent, and the same counters, with one
//! exception that is the protocol's, not the ports':
//!
//! A built-in design binds every call of an authorization to one operation
//! (`retrying::Identity::operation`, the journal's `find_by_auth` and `set_call`); the
//! simulator gives an external executor one operation per tool call (`External::on_call`,
//! `find_by_call`), and the protocol has no message that binds a call to an earlier call's
//! operation (a `state` names only a call this process was given). Where a call is answered
//! unknown and a later call of the same authorization resolves it, the built-in's operation
//! is resolved, and the port's first operation stays unknown for ever: `unknown_ops`,
//! `reconciliation_ms` and the longest unknown time (so `resolved_within`), which are judged
//! per operation, differ on exactly the seeds pinned below. With a durable journal the
//! built-ins keep one operation per intent, and the port's operations grouped one per
//! intent give every counter, the run's summary and every violated property of the
//! built-in; with a volatile one the built-in itself starts a new operation when the crash
//! forgot its record, so there only what is judged per intent is compared.
//!
//! The interpreter is the one of tests/python_examples.rs (`RETRYLAB_PYTHON`, else a
//! virtual environment created once under target/tmp).

use std::path::Path;
use std::time::Duration;

use retrylab::check::counters::COUNTERS;
use retrylab::check::{IntentVerdict, Metrics, Outcome, Property, RunSummary, intent_verdicts};
use retrylab::design;
use retrylab::external::{ExternalDesign, Lives};
use retrylab::model::Model;
use retrylab::sim::{Choice, Millis, Recorder};
use retrylab::vocab::ids::{IntentId, OpId};
use retrylab::vocab::record::{Claim, Effect, Heard, OpRecord};
use retrylab::world::World;

use crate::common::python::python;

const LOST: &str = "models/ticket_lost_response.json";
const CRASH: &str = "models/bad/crash_after_send_rare.json";
const VOLATILE: &str = "models/guarantees/durable_journal.json";
const SEEDS: u64 = 1_000;

fn load(path: &str) -> Model {
    Model::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap_or_else(|e| panic!("{e}"))
}

/// The Python port `script` of examples/python, as an external design.
fn port(name: &str, script: &str) -> ExternalDesign {
    let script = Path::new("examples/python").join(script);
    let command = vec![python().to_string(), script.display().to_string()];
    ExternalDesign::new(
        name,
        command,
        serde_json::json!({}),
        Duration::from_secs(10),
        false,
        Lives::Reuse,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// What one run of a design did, as the checkers see it.
#[derive(Debug)]
struct Seen {
    choices: Vec<Choice>,
    effects: Vec<Effect>,
    heard: Vec<Heard>,
    verdicts: Vec<IntentVerdict>,
    /// The run's counters and the properties it violates, with the operations the design
    /// had.
    metrics: Figures,
    summary: RunSummary,
    violated: Vec<Property>,
    /// The same with the operations grouped one per intent and step ([`per_intent`]).
    grouped: Figures,
    grouped_summary: RunSummary,
    grouped_violated: Vec<Property>,
}

/// The properties a run is judged on: the plain ones, and the bound of the models' `expect`.
fn judged(summary: &RunSummary) -> Vec<Property> {
    Property::PLAIN
        .into_iter()
        .chain([Property::ResolvedWithin(60_000)])
        .filter(|p| !p.holds(summary))
        .collect()
}

/// Runs `seed` in `world`.
fn see(world: &mut World<'_>, model: &Model, seed: u64) -> Seen {
    let mut chooser = model.chooser(seed);
    let mut recorder = Recorder::new(&mut chooser);
    world.run(&mut recorder);
    let choices = recorder.choices;
    let o = world.outcome();
    let mut metrics = Metrics::default();
    let summary = metrics.add_outcome(&o);
    let (grouped, grouped_summary) = per_intent(&o);
    Seen {
        choices,
        effects: o.effects.to_vec(),
        heard: o.heard.to_vec(),
        verdicts: intent_verdicts(&o),
        violated: judged(&summary),
        metrics: Figures::of(&metrics),
        summary,
        grouped_violated: judged(&grouped_summary),
        grouped: Figures::of(&grouped),
        grouped_summary,
    }
}

/// The counters of `o` with its operations grouped one per intent and step, as the built-in
/// designs bind every call of an authorization to one operation (the models here have one
/// authorization per intent). An operation that never sent is grouped by its claims, and
/// one with neither stays alone.
fn per_intent(o: &Outcome<'_>) -> (Metrics, RunSummary) {
    let count = o
        .ops
        .len()
        .max(
            o.claims
                .iter()
                .map(|c| c.op.0 as usize + 1)
                .max()
                .unwrap_or(0),
        )
        .max(
            o.attempt_ops
                .iter()
                .map(|op| op.0 as usize + 1)
                .max()
                .unwrap_or(0),
        );
    let mut groups: Vec<Option<(IntentId, u32)>> = Vec::new();
    let mut ops: Vec<OpRecord> = Vec::new();
    let mut group_of: Vec<OpId> = Vec::new();
    for i in 0..count {
        let record = o.ops.get(i).copied().unwrap_or_default();
        let intent = record.intent.or_else(|| {
            o.claims
                .iter()
                .find(|c| c.op.0 as usize == i)
                .map(|c| c.intent)
        });
        let g = match intent.and_then(|k| groups.iter().position(|g| *g == Some(k))) {
            Some(g) => g,
            None => {
                groups.push(intent);
                ops.push(OpRecord {
                    intent,
                    first_unknown_ms: None,
                });
                groups.len() - 1
            }
        };
        let first = &mut ops[g].first_unknown_ms;
        *first = match (*first, record.first_unknown_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        group_of.push(OpId(g as u32));
    }
    let claims: Vec<Claim> = o
        .claims
        .iter()
        .map(|c| Claim {
            op: group_of[c.op.0 as usize],
            ..*c
        })
        .collect();
    let attempt_ops: Vec<OpId> = o
        .attempt_ops
        .iter()
        .map(|op| group_of[op.0 as usize])
        .collect();
    let grouped = Outcome {
        ops: &ops,
        claims: &claims,
        attempt_ops: &attempt_ops,
        ..*o
    };
    let mut metrics = Metrics::default();
    let summary = metrics.add_outcome(&grouped);
    (metrics, summary)
}

/// A run's counters by name and its two histograms as their buckets and maximum (what the
/// JSON totals carry), short enough to read in a failed assertion.
#[derive(Debug, PartialEq)]
struct Figures {
    counters: Vec<(&'static str, u64)>,
    reconciliation_ms: (Vec<(Millis, u64)>, Millis),
    time_to_outcome_ms: (Vec<(Millis, u64)>, Millis),
}

impl Figures {
    fn of(m: &Metrics) -> Figures {
        Figures {
            counters: COUNTERS.iter().map(|c| (c.name, (c.total)(m))).collect(),
            reconciliation_ms: m.reconciliation_ms.buckets(),
            time_to_outcome_ms: m.time_to_outcome_ms.buckets(),
        }
    }

    /// Without what is judged per operation: `unknown_ops`, `false_resolutions` and
    /// `reconciliation_ms`.
    fn per_intent(mut self) -> Figures {
        self.counters
            .retain(|(name, _)| !["unknown_ops", "false_resolutions"].contains(name));
        self.reconciliation_ms = Default::default();
        self
    }
}

/// The run's summary without what is judged per operation.
fn summary_per_intent(s: &RunSummary) -> RunSummary {
    RunSummary {
        unknown_ops: 0,
        false_resolutions: 0,
        longest_unknown_ms: 0,
        ..*s
    }
}

/// The violated properties but `resolved_within`, which is judged per operation.
fn violated_per_intent(v: &[Property]) -> Vec<Property> {
    v.iter()
        .copied()
        .filter(|p| !matches!(p, Property::ResolvedWithin(_)))
        .collect()
}

/// How the built-in binds calls to operations on a model.
#[derive(Clone, Copy, PartialEq)]
enum Binding {
    /// One operation per intent (a durable journal): the port's operations, grouped one
    /// per intent, are compared with the built-in's.
    OnePerIntent,
    /// A crash of a volatile journal may make the built-in start a second operation for an
    /// intent: only what is judged per intent is compared.
    ForgetsOnCrash,
}

/// Runs `seeds` of `model` with the built-in `builtin` and the port `script`, asserts that
/// they agree seed by seed, and returns the seeds where the port's per-call operations
/// differ from the built-in's per-authorization one.
fn agree(model: &str, builtin: &str, script: &str, binding: Binding) -> Vec<u64> {
    let m = load(model);
    let b = design::find(builtin).unwrap();
    let p = port("port", script);
    let (mut wb, mut wp) = (World::new(&m, b, false), World::new(&m, &p, false));
    let mut per_call = Vec::new();
    for seed in 0..SEEDS {
        let (x, y) = (see(&mut wb, &m, seed), see(&mut wp, &m, seed));
        if let Some(failure) = p.failure() {
            panic!("{script} broke the protocol at seed {seed}: {failure}");
        }
        let at = format!("{model}, {builtin} and {script}, seed {seed}");
        assert_eq!(x.choices, y.choices, "choices drawn: {at}");
        assert_eq!(x.effects, y.effects, "effects: {at}");
        assert_eq!(x.heard, y.heard, "what the user heard: {at}");
        assert_eq!(x.verdicts, y.verdicts, "the verdict per intent: {at}");
        if binding == Binding::OnePerIntent {
            // The built-in's operations are one per intent: grouping changes nothing.
            assert_eq!(x.grouped, x.metrics, "{at}");
            assert_eq!(x.grouped_summary, x.summary, "{at}");
            assert_eq!(x.metrics, y.grouped, "counters, grouped per intent: {at}");
            assert_eq!(
                x.summary, y.grouped_summary,
                "the run's summary, grouped: {at}"
            );
            assert_eq!(
                x.violated, y.grouped_violated,
                "violated properties, grouped: {at}"
            );
        }
        // Ungrouped, only what is judged per operation may differ.
        if (&x.metrics, &x.summary) != (&y.metrics, &y.summary) {
            per_call.push(seed);
        }
        assert_eq!(
            x.metrics.per_intent(),
            y.metrics.per_intent(),
            "counters per intent: {at}"
        );
        assert_eq!(
            summary_per_intent(&x.summary),
            summary_per_intent(&y.summary),
            "the run's summary per intent: {at}"
        );
        assert_eq!(
            violated_per_intent(&x.violated),
            violated_per_intent(&y.violated),
            "violated properties per intent: {at}"
        );
    }
    drop((wb, wp));
    p.shutdown();
    per_call
}

/// Every seed loses the reply to the first create: the first call is answered unknown and
/// the agent's replan is answered from the provider's replay under the same key. The port's
/// operation of the first call stays unknown on every seed.
#[test]
fn same_key_in_python_is_the_built_in_seed_by_seed_on_the_lost_reply() {
    let per_call = agree(LOST, "same_key", "same_key.py", Binding::OnePerIntent);
    assert_eq!(per_call, (0..SEEDS).collect::<Vec<_>>());
}

/// The journal also waits its backoff after the last attempt before it answers unknown.
#[test]
fn journal_in_python_is_the_built_in_seed_by_seed_on_the_lost_reply() {
    let per_call = agree(LOST, "journal", "journal.py", Binding::OnePerIntent);
    assert_eq!(per_call, (0..SEEDS).collect::<Vec<_>>());
}

/// 14 seeds crash just after a send; the restarted worker resends under the stored key. On
/// seed 480 the resend and the retry meet 409 while the first create still processes, the
/// call is answered unknown, and the replan's resend is replayed.
#[test]
fn same_key_in_python_is_the_built_in_seed_by_seed_through_crashes_after_the_send() {
    let per_call = agree(CRASH, "same_key", "same_key.py", Binding::OnePerIntent);
    assert_eq!(per_call, [480]);
}

#[test]
fn journal_in_python_is_the_built_in_seed_by_seed_through_crashes_after_the_send() {
    let per_call = agree(CRASH, "journal", "journal.py", Binding::OnePerIntent);
    assert_eq!(per_call, [480]);
}

/// A volatile journal, crashes before the dispatch, after the send and after the reply,
/// lost and duplicated requests, 5xx: the kv store forgets what the journal forgets.
#[test]
fn both_in_python_are_the_built_ins_seed_by_seed_with_a_volatile_journal() {
    let same_key = agree(VOLATILE, "same_key", "same_key.py", Binding::ForgetsOnCrash);
    let journal = agree(VOLATILE, "journal", "journal.py", Binding::ForgetsOnCrash);
    assert_eq!(same_key.len(), 165);
    assert_eq!(journal, same_key);
}

/// What the port cannot do: at a restart the built-in journal resumes every unresolved
/// operation the worker owned, also one whose calls were all answered (the agent gave up on
/// it); an external executor acts only inside a call it was given (docs/executor-protocol.md,
/// section 10: no background work outside a call), and a restart redelivers only the calls
/// still owed an answer. On this seed of a model where the agent gives up, the first
/// intent's operation is unresolved when the worker crashes during the second intent's call:
/// the built-in sends its key twice more after the restart, the port cannot.
#[test]
fn the_journal_resumes_at_a_restart_an_operation_no_call_waits_for_and_the_port_cannot() {
    let m = load("models/guarantees/contract_as_assumed.json");
    let p = port("port", "journal.py");
    let mut wb = World::new(&m, design::find("journal").unwrap(), false);
    let mut wp = World::new(&m, &p, false);
    let seed = 188;
    let (x, y) = (see(&mut wb, &m, seed), see(&mut wp, &m, seed));
    assert!(p.failure().is_none(), "{:?}", p.failure());
    assert_eq!(x.effects, y.effects);
    assert_eq!(x.heard, y.heard);
    let calls = |f: &Figures| {
        f.counters
            .iter()
            .find(|(n, _)| *n == "remote_calls")
            .unwrap()
            .1
    };
    assert_eq!((calls(&x.metrics), calls(&y.metrics)), (8, 6));
    // The two extra creates draw their own fates: the choices part there.
    assert_ne!(x.choices, y.choices);
    drop((wb, wp));
    p.shutdown();
}

//! Fingerprints of world states (`World::fingerprint`) and the observed run loop
//! (`World::run_observed`): what an explorer's visited set rests on.
//!
//! A fingerprint must be a function of the state alone: the same at the same point of the
//! same run, whatever ran on the world before; equal for two paths that reach the same state;
//! different when anything that decides the rest of the run differs. (That every field of the
//! state is hashed is pinned field by field in `src/world/fingerprint.rs`.)

use crate::common::models;

use crate::common;
use crate::custom_design_example::example;

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use common::{base, design, model, set};
use retrylab::check::{Metrics, Property};
use retrylab::design::{Design, ExecCtx, Executor};
use retrylab::design::{Identity, Retrying};
use retrylab::model::{ExecutorModel, Model};
use retrylab::run::run_traced;
use retrylab::sim::{Alternatives, Chooser, Millis, Purpose, RandomChooser};
use retrylab::vocab::ids::{AttemptId, OpId};
use retrylab::vocab::protocol::{Response, ToolCall};
use retrylab::vocab::record::End;
use retrylab::world::World;
use serde_json::json;

/// Every bundled model.
fn bundled() -> Vec<Model> {
    models::bundled()
}

/// One run with `ch`, observed: the clock and the fingerprint at every event.
fn fingerprints(world: &mut World<'_>, ch: &mut dyn Chooser) -> Vec<(Millis, Option<u64>)> {
    let mut seen = Vec::new();
    world.run_observed(ch, &mut |w| {
        seen.push((w.now(), w.fingerprint()));
        true
    });
    assert_ne!(
        world.end().0,
        End::Pruned,
        "an observer that never stops prunes nothing"
    );
    seen
}

/// Answers every choice with its default (alternative 0: no fault, the shortest delay, the
/// first possible reaction), except the listed ones: `(purpose, n, value)` answers the `n`-th
/// choice of `purpose` (from 0) with `value`.
struct Script {
    overrides: Vec<(Purpose, usize, u64)>,
    seen: BTreeMap<Purpose, usize>,
    /// Whether events due at the same instant are ordered by a choice (`Purpose::Order`).
    ties: bool,
}

impl Script {
    fn new(overrides: &[(Purpose, usize, u64)]) -> Self {
        Self {
            overrides: overrides.to_vec(),
            seen: BTreeMap::new(),
            ties: false,
        }
    }

    fn ordering_ties(self) -> Self {
        Self { ties: true, ..self }
    }
}

impl Chooser for Script {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        let n = self.seen.entry(purpose).or_default();
        let this = *n;
        *n += 1;
        self.overrides
            .iter()
            .find(|&&(p, k, _)| p == purpose && k == this)
            .map_or(alternatives.default_value(), |&(.., v)| v)
    }

    fn orders_ties(&self) -> bool {
        self.ties
    }
}

/// The same seed gives the same fingerprint at every event: on a fresh world, on one that ran
/// other seeds first (nothing of an earlier run leaks in), and with the trace on (text is not
/// state). Every built-in design can be fingerprinted, on every bundled model.
#[test]
fn fingerprints_are_deterministic_at_every_event() {
    let mut runs = 0;
    for model in bundled() {
        for name in &model.designs {
            let d = design(name);
            let mut reused = World::new(&model, d, false);
            for seed in [3, 0, 1] {
                let mut fresh = World::new(&model, d, seed == 0);
                let a = fingerprints(&mut fresh, &mut RandomChooser::new(seed));
                let b = fingerprints(&mut reused, &mut RandomChooser::new(seed));
                assert_eq!(a, b, "{} {name} seed {seed}", model.name);
                assert!(!a.is_empty());
                assert!(
                    a.iter().all(|(_, f)| f.is_some()),
                    "{} {name}: a built-in design can be fingerprinted",
                    model.name
                );
                // A run never comes back to a state it was in: the clock does not go back,
                // and each event handled leaves the queue.
                let distinct: BTreeSet<_> = a.iter().map(|&(_, f)| f).collect();
                assert_eq!(distinct.len(), a.len(), "{} {name} seed {seed}", model.name);
                runs += 1;
            }
        }
    }
    assert!(runs > 100, "{runs}");
}

/// One intent whose first create takes 8 s to process, longer than the 5 s client timeout:
/// the attempt has timed out (and the agent has moved on) when the provider commits at
/// 8010 ms and replies. Replies are lost with probability 1/2.
fn slow_provider_json() -> serde_json::Value {
    let v = set(base(), "provider.processing_ms", json!(8_000));
    let v = set(v, "network.reply_loss", json!(0.5));
    let v = set(v, "agent.think_ms", json!(100));
    set(
        v,
        "designs",
        json!([
            "same_key",
            "journal_reconcile_lease",
            "layered_retries",
            "durable_authorization"
        ]),
    )
}

/// Two paths to one state: the reply to the first attempt is lost (path A), or it arrives at
/// 8020 ms after the attempt timed out and is discarded (path B). Once B has discarded it,
/// nothing tells the two worlds apart: the same events remain (in the same order, though B
/// pushed one more, so their sequence numbers differ), the same records, the same memory.
/// The fingerprints agree at every event from there on, and differ while the reply is on
/// its way.
///
/// A second intent arrives at 20 s, so that something is left to happen after the discard
/// for every design (the timeouts of the first intent are cancelled once moot, so without
/// it some runs end at the discard).
#[test]
fn a_lost_reply_and_a_late_discarded_one_reach_the_same_state() {
    let model = model(&set(
        slow_provider_json(),
        "workload",
        json!({"intents": 2, "spacing_ms": 20_000}),
    ));
    for name in &model.designs {
        let d = design(name);
        let mut world = World::new(&model, d, false);
        // Which reply the provider sends is attempt 1's depends on what the design sent
        // before it (a replan's create, read-backs): found from the timeline.
        let n = (0..20)
            .find(|&n| {
                let lose = [(Purpose::ReplyLoss, n, 1)];
                let run = run_traced(&model, d, &mut Script::new(&lose));
                run.timeline.contains("reply to attempt 1 lost")
            })
            .expect("attempt 1 has a reply");
        let lost = fingerprints(&mut world, &mut Script::new(&[(Purpose::ReplyLoss, n, 1)]));
        let late = fingerprints(&mut world, &mut Script::new(&[]));
        let (commit, arrival) = (8_010, 8_020);
        // B handles one more event: the late reply, discarded at 8020 ms.
        assert_eq!(late.len(), lost.len() + 1, "{name}");
        let after = |run: &[(Millis, Option<u64>)]| -> Vec<Option<u64>> {
            run.iter()
                .filter(|&&(t, _)| t > arrival)
                .map(|&(_, f)| f)
                .collect()
        };
        assert!(!after(&lost).is_empty(), "{name}: events after the discard");
        assert_eq!(after(&lost), after(&late), "{name}");
        // Before the commit the paths are one; in between, B has the reply in flight.
        let before = |run: &[(Millis, Option<u64>)]| -> Vec<Option<u64>> {
            run.iter()
                .filter(|&&(t, _)| t <= commit)
                .map(|&(_, f)| f)
                .collect()
        };
        assert_eq!(before(&lost), before(&late), "{name}");
        let lost_set: BTreeSet<_> = lost.iter().map(|&(_, f)| f).collect();
        let in_flight: Vec<_> = late
            .iter()
            .filter(|&&(t, _)| commit < t && t <= arrival)
            .collect();
        assert!(!in_flight.is_empty(), "{name}");
        assert!(
            in_flight.iter().all(|(_, f)| !lost_set.contains(f)),
            "{name}: a reply in flight is part of the state"
        );
    }
}

/// The base scenario with the reply to the first create lost: the attempt times out at
/// 5000 ms and the agent hears "unknown".
fn lost_reply() -> serde_json::Value {
    common::faults(base(), json!([{ "drop_reply": { "attempt": 1 } }]))
}

/// The agent thinks 100 ms or 101 ms before it replans. The runs agree up to the decision;
/// the first state that differs is the one at the act itself, at 5100 ms or 5101 ms, where
/// the clock is all that differs (the act is the same, and the agent does not remember
/// when it decided).
#[test]
fn the_clock_is_part_of_the_state() {
    let v = set(
        lost_reply(),
        "agent.think_ms",
        json!({ "min": 100, "max": 200 }),
    );
    let model = model(&v);
    let d = design("same_key");
    let mut world = World::new(&model, d, false);
    let fast = fingerprints(&mut world, &mut Script::new(&[]));
    let slow = fingerprints(&mut world, &mut Script::new(&[(Purpose::AgentThink, 0, 1)]));
    let differ = fast
        .iter()
        .zip(&slow)
        .position(|(a, b)| a.1 != b.1)
        .unwrap();
    assert_eq!((fast[differ].0, slow[differ].0), (5_100, 5_101));
    assert_eq!(fast[..differ], slow[..differ]);
}

/// After the unknown, the agent gives up (the user is told "failure") or asks the user
/// ("unresolved"): two models that differ only in that reaction. Once the act is done the
/// worlds hold the same events, records and memory; only what the user was told differs.
#[test]
fn what_the_user_was_told_is_part_of_the_state() {
    let run = |reaction: &str| {
        let model = model(&set(
            lost_reply(),
            "agent.on_unknown",
            json!({ reaction: 1 }),
        ));
        let mut world = World::new(&model, design("same_key"), false);
        fingerprints(&mut world, &mut RandomChooser::new(0))
    };
    let (give_up, ask) = (run("give_up"), run("ask_user"));
    assert_eq!(give_up.len(), ask.len());
    let differ = give_up
        .iter()
        .zip(&ask)
        .position(|(a, b)| a.1 != b.1)
        .unwrap();
    // The agent's decision is made at 5000 ms, and the act is queued: it differs from there.
    assert_eq!(give_up[differ].0, 5_000);
    // The last event (the agent's own timeout, ignored) comes after the user was told.
    assert_ne!(give_up.last().unwrap().1, ask.last().unwrap().1);
    assert_eq!(run("give_up"), give_up);
}

/// A built-in design's executor behind a wrapper: `Says(None)` does not say what the
/// executor keeps in memory (the trait's default), `Says(Some(m))` forwards to the built-in
/// executor and adds a memory of its own, `m`.
struct Says(Option<u64>);

struct Wrapper {
    inner: Box<dyn Executor>,
    memory: Option<u64>,
}

impl Design for Says {
    fn name(&self) -> &str {
        "says"
    }

    fn summary(&self) -> &str {
        "same_key, wrapped"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Wrapper {
            inner: design("same_key").executor(config),
            memory: self.0,
        })
    }
}

impl Executor for Wrapper {
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        self.inner.on_call(ctx, call)
    }

    fn on_response(&mut self, ctx: &mut ExecCtx<'_>, op: OpId, at: AttemptId, r: Response) {
        self.inner.on_response(ctx, op, at, r)
    }

    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        self.inner.on_timer(ctx, tag)
    }

    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        self.inner.on_restart(ctx)
    }

    fn fingerprint(&self, mut h: &mut dyn Hasher) -> bool {
        match self.memory {
            Some(m) => {
                m.hash(&mut h);
                self.inner.fingerprint(h)
            }
            None => false,
        }
    }
}

/// A design on the shared transport loop with an identity of its own, which says nothing
/// about its memory unless `says` (`Identity::fingerprint` defaults to false).
struct OwnIdentity {
    says: bool,
}

impl Identity for OwnIdentity {
    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId {
        if let Some(op) = ctx.journal_ref().find_by_auth(call.auth) {
            return op;
        }
        let key = Some(ctx.new_key());
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal().create(call, key, worker, now)
    }

    fn fingerprint(&self, _: &mut dyn Hasher) -> bool {
        self.says
    }
}

struct OwnIdentityDesign(bool);

impl Design for OwnIdentityDesign {
    fn name(&self) -> &str {
        "own_identity"
    }

    fn summary(&self) -> &str {
        "same_key's identity, written outside the crate"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Retrying::new(OwnIdentity { says: self.0 }, config))
    }
}

/// A design whose executor does not implement `fingerprint` leaves its worlds without one
/// (an explorer then cannot prune, and must not); the built-in design it wraps, or the same
/// identity saying it keeps nothing, has one at every event.
#[test]
fn a_design_that_does_not_say_what_it_remembers_has_no_fingerprint() {
    let model = model(&lost_reply());
    let all = |d: &dyn Design| -> Vec<Option<u64>> {
        let mut world = World::new(&model, d, false);
        let run = fingerprints(&mut world, &mut RandomChooser::new(0));
        assert!(run.len() > 3);
        run.into_iter().map(|(_, f)| f).collect()
    };
    assert!(all(&Says(None)).iter().all(Option::is_none));
    assert!(all(&OwnIdentityDesign(false)).iter().all(Option::is_none));
    assert!(all(&Says(Some(1))).iter().all(Option::is_some));
    // The identity that keeps nothing gives the very states of the built-in same_key.
    assert_eq!(all(&OwnIdentityDesign(true)), all(design("same_key")));
    // The custom example design says what it remembers (its requests out): it has one.
    assert!(
        all(&example::READ_BACK_AFTER_WAIT)
            .iter()
            .all(Option::is_some)
    );
}

/// Two executors that differ only in what they hold in memory: every state differs.
#[test]
fn executor_memory_is_part_of_the_state() {
    let model = model(&lost_reply());
    let all = |d: &dyn Design| -> Vec<Option<u64>> {
        let mut world = World::new(&model, d, false);
        let run = fingerprints(&mut world, &mut RandomChooser::new(0));
        run.into_iter().map(|(_, f)| f).collect()
    };
    let (one, two) = (all(&Says(Some(1))), all(&Says(Some(2))));
    assert_eq!(one, all(&Says(Some(1))));
    assert_eq!(one.len(), two.len());
    assert!(one.iter().zip(&two).all(|(a, b)| a != b));
}

/// Observing changes nothing: `run_observed` with an observer that lets every event through
/// gives the run `run` gives (same timeline, same outcome, same end), and visits as many
/// events as the run handles.
#[test]
fn observing_a_run_does_not_change_it() {
    for model in bundled() {
        for name in &model.designs {
            let d = design(name);
            let (mut plain, mut observed) =
                (World::new(&model, d, true), World::new(&model, d, true));
            for seed in 0..3 {
                plain.run(&mut RandomChooser::new(seed));
                let mut events = 0;
                observed.run_observed(&mut RandomChooser::new(seed), &mut |_| {
                    events += 1;
                    true
                });
                let what = format!("{} {name} seed {seed}", model.name);
                assert_eq!(plain.trace().render(), observed.trace().render(), "{what}");
                assert_eq!(plain.end(), observed.end(), "{what}");
                assert_eq!(
                    Metrics::default().add_outcome(&plain.outcome()),
                    Metrics::default().add_outcome(&observed.outcome()),
                    "{what}"
                );
                assert!(events > 0, "{what}");
            }
        }
    }
}

/// An observer that says stop ends the run there: `End::Pruned` at the clock of the event
/// it saw last, which is not handled. The outcome is the run so far, and the metrics and
/// every property read it without panicking, whatever the moment of the stop (before the
/// first intent is taken up, in the middle of a retry, just before the end).
#[test]
fn stopping_early_reports_pruned_and_the_run_so_far() {
    let mut stops = 0;
    for model in bundled() {
        for name in &model.designs {
            let d = design(name);
            let mut world = World::new(&model, d, false);
            let full = fingerprints(&mut world, &mut RandomChooser::new(1));
            let n = full.len();
            let mut at: Vec<usize> = vec![0, 1, 2, n / 3, n / 2, n - 1];
            at.retain(|&k| k < n);
            at.dedup();
            for k in at {
                let mut seen = Vec::new();
                world.run_observed(&mut RandomChooser::new(1), &mut |w| {
                    seen.push((w.now(), w.fingerprint()));
                    seen.len() <= k
                });
                let what = format!("{} {name}, stopped at event {k} of {n}", model.name);
                // The observer saw the same states up to the stop, and the run went no further.
                assert_eq!(seen[..], full[..=k], "{what}");
                assert_eq!(world.end(), (End::Pruned, full[k].0), "{what}");
                let o = world.outcome();
                assert_eq!(o.end, End::Pruned);
                let summary = Metrics::default().add_outcome(&world.outcome());
                for p in Property::PLAIN {
                    p.holds(&summary);
                }
                Property::ResolvedWithin(60_000).holds(&summary);
                // Stopping at the very first event: nothing has happened yet.
                if k == 0 {
                    assert!(o.effects.is_empty() && o.claims.is_empty() && o.heard.is_empty());
                    assert_eq!(world.end(), (End::Pruned, 0));
                }
                stops += 1;
            }
        }
    }
    assert!(stops > 300, "{stops}");
}

/// A stopped run leaves nothing behind: the next run on the same world is the run it would
/// have been on a fresh world.
#[test]
fn a_run_after_a_stopped_one_starts_afresh() {
    let model = model(&lost_reply());
    let d = design("journal_reconcile_lease");
    let mut fresh = World::new(&model, d, false);
    let expected = fingerprints(&mut fresh, &mut RandomChooser::new(4));
    let mut world = World::new(&model, d, false);
    let mut count = 0;
    world.run_observed(&mut RandomChooser::new(9), &mut |_| {
        count += 1;
        count < 4
    });
    assert_eq!(world.end().0, End::Pruned);
    assert_eq!(
        fingerprints(&mut world, &mut RandomChooser::new(4)),
        expected
    );
}

/// Two orders of one tie that commute: at 8020 ms a second intent arrives and the late reply
/// to attempt 1 (discarded) comes in, and a chooser that orders ties runs them one way or
/// the other. The two paths differ while the tie is being run, and are one state again once
/// both are handled (the arrival queues the agent's start at 8020 ms, which runs after
/// both).
#[test]
fn two_orders_of_a_tie_that_commute_reach_the_same_state() {
    let model = model(&set(
        slow_provider_json(),
        "workload",
        json!({"intents": 2, "spacing_ms": 8_020}),
    ));
    let mut followed = 0;
    for name in &model.designs {
        let d = design(name);
        let mut world = World::new(&model, d, false);
        let mut order = |first: u64| {
            let mut ch = Script::new(&[(Purpose::Order, 0, first)]).ordering_ties();
            let run = fingerprints(&mut world, &mut ch);
            // The arrival first leaves the reply tied with the agent's start (a second
            // order); the reply first leaves nothing tied.
            let ties = if first == 0 { 2 } else { 1 };
            assert_eq!(ch.seen.get(&Purpose::Order), Some(&ties), "{name}: ties");
            (run, world.fingerprint())
        };
        let ((fifo, fifo_end), (swapped, swapped_end)) = (order(0), order(1));
        assert_eq!(fifo.len(), swapped.len(), "{name}");
        let differ: Vec<Millis> = fifo
            .iter()
            .zip(&swapped)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.0)
            .collect();
        // The two events of the tie, each seen with the other still queued.
        assert_eq!(differ, [8_020, 8_020], "{name}");
        // The world each run leaves behind (for layered_retries the tie is the last thing
        // that happens).
        assert_eq!(fifo_end, swapped_end, "{name}");
        assert!(fifo_end.is_some());
        followed += usize::from(fifo.last().unwrap().0 > 8_020);
    }
    // Where something is left to happen after the tie, the paths go on as one.
    assert!(followed >= 3, "{followed}");
}

//! Fingerprints of world states (`World::fingerprint`) and the observed run loop
//! (`World::run_observed`): what an explorer's visited set rests on.
//!
//! A fingerprint must be a function of the state alone: the same at the same point of the
//! same run, whatever ran on the world before; equal for two paths that reach the same state;
//! different when anything that decides the rest of the run differs. (That every field of the
//! state is hashed is pinned field by field in `src/world/fingerprint.rs`.)

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{base, design, model, set};
use retrylab::check::outcome::End;
use retrylab::check::{Metrics, Outcome, Property};
use retrylab::design::{Design, ExecCtx, Executor};
use retrylab::model::{ExecutorModel, Model};
use retrylab::run::run_traced;
use retrylab::sim::{Alternatives, Chooser, Millis, Purpose, RandomChooser};
use retrylab::vocab::ids::{AttemptId, OpId};
use retrylab::vocab::protocol::{Response, ToolCall};
use retrylab::world::World;
use serde_json::json;

/// Every bundled model.
fn bundled() -> Vec<Model> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut paths: Vec<_> = ["", "windows"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| Model::load(p).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// One run with `ch`, observed: the clock and the fingerprint at every event.
fn fingerprints(world: &mut World<'_>, ch: &mut dyn Chooser) -> Vec<(Millis, Option<u64>)> {
    let mut seen = Vec::new();
    world.run_observed(ch, &mut |w| {
        seen.push((w.now(), w.fingerprint()));
        true
    });
    assert_ne!(world.end().0, End::Pruned, "an observer that never stops prunes nothing");
    seen
}

/// Answers every choice with its default (alternative 0: no fault, the shortest delay, the
/// first possible reaction), except the listed ones: `(purpose, n, value)` answers the `n`-th
/// choice of `purpose` (from 0) with `value`.
struct Script {
    overrides: Vec<(Purpose, usize, u64)>,
    seen: BTreeMap<Purpose, usize>,
}

impl Script {
    fn new(overrides: &[(Purpose, usize, u64)]) -> Self {
        Self {
            overrides: overrides.to_vec(),
            seen: BTreeMap::new(),
        }
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
fn slow_provider() -> Model {
    let v = set(base(), "provider.processing_ms", json!(8_000));
    let v = set(v, "network.reply_loss", json!(0.5));
    let v = set(v, "agent.think_ms", json!(100));
    let v = set(
        v,
        "designs",
        json!(["same_key", "journal_reconcile_lease", "layered_retries", "durable_authorization"]),
    );
    model(&v)
}

/// Two paths to one state: the reply to the first attempt is lost (path A), or it arrives at
/// 8020 ms after the attempt timed out and is discarded (path B). Once B has discarded it,
/// nothing tells the two worlds apart: the same events remain (in the same order, though B
/// pushed one more, so their sequence numbers differ), the same records, the same memory.
/// The fingerprints agree at every event from there on, and differ while the reply is on
/// its way.
#[test]
fn a_lost_reply_and_a_late_discarded_one_reach_the_same_state() {
    let model = slow_provider();
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
            run.iter().filter(|&&(t, _)| t > arrival).map(|&(_, f)| f).collect()
        };
        assert!(!after(&lost).is_empty(), "{name}: events after the discard");
        assert_eq!(after(&lost), after(&late), "{name}");
        // Before the commit the paths are one; in between, B has the reply in flight.
        let before = |run: &[(Millis, Option<u64>)]| -> Vec<Option<u64>> {
            run.iter().filter(|&&(t, _)| t <= commit).map(|&(_, f)| f).collect()
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

//! The outcome of a run, judged from ground truth: unknown moments as the transport saw them,
//! the design's claims checked against the ledger, and runs that end at quiescence.

use std::collections::BTreeMap;
use std::path::Path;

use retrylab::check::{Metrics, Outcome};
use retrylab::design;
use retrylab::model::Model;
use retrylab::sim::RandomChooser;
use retrylab::vocab::ids::OpId;
use retrylab::vocab::record::{ClaimKind, End};
use retrylab::world::World;

fn load(name: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(name);
    Model::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Operations with a claim the ledger contradicts, by the plain rule of
/// `Outcome::claim_is_true` (no index).
fn false_ops(o: &Outcome<'_>) -> u64 {
    let mut ops: Vec<OpId> = o
        .claims
        .iter()
        .filter(|c| !o.claim_is_true(c))
        .map(|c| c.op)
        .collect();
    ops.sort();
    ops.dedup();
    ops.len() as u64
}

/// The indexed judge of the metrics agrees with the plain rule, run by run, on models where
/// claims are often wrong (merged repeats, changed arguments, chaos).
#[test]
fn indexed_judgement_agrees_with_the_plain_rule() {
    let mut wrong: BTreeMap<&str, u64> = BTreeMap::new();
    for (name, seeds) in [
        ("ticket_chaos.json", 400),
        ("windows/genuine_repeat.json", 4),
        ("windows/changed_parameters.json", 4),
        ("windows/reply_lost_after_commit.json", 4),
    ] {
        let model = load(name);
        for d in &model.designs {
            let d = design::find(d).unwrap();
            let mut world = World::new(&model, d, false);
            for seed in 0..seeds {
                world.run(&mut RandomChooser::new(seed));
                let o = world.outcome();
                let run = Metrics::default().add_outcome(&o);
                assert_eq!(
                    run.false_resolutions,
                    false_ops(&o),
                    "{name} {} seed {seed}",
                    d.name()
                );
                *wrong.entry(d.name()).or_default() += run.false_resolutions;
            }
        }
    }
    // The models do produce false claims: the comparison is not vacuous. Per design (a
    // design missing here is compared above, not counted).
    for (d, n) in [("payload_hash_key", 4), ("layered_retries", 8)] {
        assert_eq!(wrong.get(d), Some(&n), "{d}: {wrong:?}");
    }
}

/// A merged genuine repeat: `payload_hash_key` confirms the second intent with the first
/// intent's resource. The claim names a resource that is not this intent's: false.
#[test]
fn a_receipt_of_another_intent_is_a_false_resolution() {
    let model = load("windows/genuine_repeat.json");
    let mut world = World::new(&model, design::find("payload_hash_key").unwrap(), false);
    world.run(&mut RandomChooser::new(0));
    let o = world.outcome();
    let claims: Vec<(u32, bool)> = o
        .claims
        .iter()
        .map(|c| (c.intent.0.0, o.claim_is_true(c)))
        .collect();
    assert_eq!(claims, [(0, true), (1, false)]);
    assert!(
        matches!(o.claims[1].kind, ClaimKind::Confirmed(Some(r)) if r == o.effects[0].resource)
    );
    let m = {
        let mut m = Metrics::default();
        m.add_outcome(&o);
        m
    };
    assert_eq!(
        (m.false_resolutions, m.merged_repeats, m.false_success),
        (1, 1, 1)
    );
}

/// The transport, not the design, says when an operation became unknown: `no_dedup` records
/// no journal transition to `unknown` that a checker could trust, yet its timed-out
/// operation is counted, and never resolved.
#[test]
fn unknown_moments_come_from_the_transport() {
    let model = load("windows/reply_lost_after_commit.json");
    let mut world = World::new(&model, design::find("no_dedup").unwrap(), false);
    world.run(&mut RandomChooser::new(0));
    let o = world.outcome();
    // The first create times out 5 s after it was sent at 0 ms.
    assert_eq!(o.ops[0].first_unknown_ms, Some(5_000));
    assert_eq!(o.ops[1].first_unknown_ms, None);
    let mut m = Metrics::default();
    let run = m.add_outcome(&o);
    assert_eq!((m.unknown_ops, m.reconciliation_ms.count()), (1, 0));
    // Nothing can change after the run: the op stays unknown forever.
    assert_eq!(o.end, End::Quiescent);
    assert_eq!(run.longest_unknown_ms, u64::MAX);
}

/// With a recovery sweeper the queue never empties; the run ends once only the sweeper's
/// timers are left and every operation is settled, long before the horizon.
#[test]
fn runs_with_a_sweeper_end_at_quiescence() {
    let model = load("windows/two_workers_recovering.json");
    assert!(model.executor.sweep_ms.is_some());
    for d in &model.designs {
        let mut world = World::new(&model, design::find(d).unwrap(), false);
        world.run(&mut RandomChooser::new(0));
        let (end, at) = world.end();
        assert_eq!(end, End::Quiescent, "{d}");
        assert!(
            at <= 60_000 && at < model.horizon_ms / 1000,
            "{d}: ended at {at} ms"
        );
    }
}

//! proptest: each safe design keeps its documented guarantee whenever the contract
//! assumptions it relies on hold (written in each design's file header), over generated
//! workloads, agent behaviour, crashes, network faults and scripted faults.
//!
//! The assumptions (see `strategies::keyed_atomic_provider`): the provider deduplicates the caller's
//! key atomically, within one scope, for the whole run; concurrent same-key requests are
//! refused or wait; a changed request under a key is refused or answered as the original;
//! every outcome is stored. The journal is durable, except for `durable_authorization`, whose
//! authorization ledger is durable by itself.

use crate::common::strategies;

use proptest::prelude::*;
use retrylab::check::{Metrics, Violations};
use retrylab::design;
use retrylab::design::assumptions::judge;
use retrylab::model::Model;
use retrylab::run::run_seeds;
use retrylab::sim::RandomChooser;
use retrylab::world::World;

/// The generated world with `provider`, and its JSON text (for a failure message: see
/// [`strategies::failing_model`]).
fn model(
    mut world: serde_json::Value,
    provider: serde_json::Value,
    volatile: bool,
) -> (Model, String) {
    world["provider"] = provider;
    world["workers"]["journal"] = serde_json::json!(if volatile { "volatile" } else { "durable" });
    let text = world.to_string();
    let m = Model::from_json(&text, "generated").unwrap_or_else(|e| panic!("{e}"));
    (m, text)
}

const SEEDS: u64 = 6;

proptest! {
    #![proptest_config(strategies::config(
        64,
        concat!(env!("CARGO_MANIFEST_DIR"), "/proptest-regressions/prop_guarantees.txt"),
    ))]

    /// No duplicate and no merged repeat: one effect per authorized action. The journal
    /// family also never applies changed arguments (it refuses them before sending);
    /// `same_key` leaves that to the provider's mismatch check, which cannot catch a change
    /// when the original request never reached it (proptest found that case).
    #[test]
    fn keyed_designs_never_duplicate_under_their_contract(
        world in strategies::world(),
        provider in strategies::keyed_atomic_provider(),
        volatile in any::<bool>(),
    ) {
        let (m, text) = model(world, provider, volatile);
        let mut designs = vec!["durable_authorization"];
        if !volatile {
            designs.extend(["same_key", "journal", "journal_reconcile", "journal_reconcile_lease"]);
        }
        for name in designs {
            let r = run_seeds(&m, design::find(name).unwrap(), 0..SEEDS);
            prop_assert_eq!(r.duplicate_effects, 0, "{} duplicated in {}", name, strategies::failing_model(&text));
            if name != "same_key" {
                prop_assert_eq!(r.drifted_effects, 0, "{} applied changed arguments in {}", name, strategies::failing_model(&text));
            }
            prop_assert_eq!(r.merged_repeats, 0, "{} merged a genuine repeat in {}", name, strategies::failing_model(&text));
        }
    }

    /// The journal family never tells the user "success" about an effect that does not exist:
    /// a 202 is polled, not believed.
    #[test]
    fn journal_designs_never_report_a_false_success(
        world in strategies::world(),
        provider in strategies::keyed_atomic_provider(),
    ) {
        let (m, text) = model(world, provider, false);
        for name in ["journal", "journal_reconcile", "journal_reconcile_lease", "durable_authorization"] {
            let r = run_seeds(&m, design::find(name).unwrap(), 0..SEEDS);
            prop_assert_eq!(r.false_success, 0, "{} reported a false success in {}", name, strategies::failing_model(&text));
        }
    }

    /// Metrics are consistent for every design and any contract.
    #[test]
    fn metrics_are_consistent_for_any_contract(
        world in strategies::world(),
        provider in strategies::any_provider(),
    ) {
        let (m, text) = model(world, provider, false);
        for d in design::all() {
            let r = run_seeds(&m, d, 0..3);
            let why = || format!("{}: {}", d.name(), strategies::failing_model(&text));
            prop_assert!(r.completed + r.false_success + r.unresolved <= r.intents, "{}", why());
            prop_assert!(r.merged_repeats <= r.false_success, "{}", why());
            prop_assert!(r.duplicate_effects <= r.effects + r.compensations, "{}", why());
            prop_assert!(r.drifted_effects <= r.effects, "{}", why());
        }
    }
}

proptest! {
    #![proptest_config(strategies::config(
        64,
        concat!(env!("CARGO_MANIFEST_DIR"), "/proptest-regressions/prop_guarantees_reconcile.txt"),
    ))]

    /// `journal_reconcile` under its own assumptions (its file header): keys that expire
    /// quickly, a read-back by key that sees every committed effect within the visibility
    /// bound, a bound above processing and lag, no late network duplicate, no processing
    /// slower than the bound: no duplicate even though retries outlive the key.
    #[test]
    fn journal_reconcile_never_duplicates_when_keys_expire(
        mut world in strategies::world(),
        (provider, bound) in strategies::expiring_key_provider(),
    ) {
        world["provider"] = provider;
        world["network"]["duplicate"] = serde_json::json!(0);
        let latency = world["network"]["latency_ms"]["max"].as_u64().unwrap();
        world["executor"]["visibility_bound_ms"] = serde_json::json!(bound + 2 * latency + 1);
        // No scripted processing longer than the bound.
        if let Some(faults) = world["faults"].as_array_mut() {
            faults.retain(|f| f.get("slow_processing").is_none());
        }
        let text = world.to_string();
        let m = Model::from_json(&text, "generated")
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let r = run_seeds(&m, design::find("journal_reconcile").unwrap(), 0..SEEDS);
        prop_assert_eq!(r.duplicate_effects, 0, "duplicated in {}", strategies::failing_model(&text));
    }
}

proptest! {
    #![proptest_config(strategies::config(
        96,
        concat!(env!("CARGO_MANIFEST_DIR"), "/proptest-regressions/prop_guarantee_data.txt"),
    ))]

    /// Every design's guarantee as it states it (`Design::guarantee`) holds on every seed of
    /// every generated world where the judgement `run` and `check` print
    /// (`design::assumptions::judge`) finds each of its assumptions holding: one judgement,
    /// not a second hand-written one. The providers are every family the generators have:
    /// any contract, the keyed atomic one, racing same-key requests, expiring and
    /// region-scoped keys.
    #[test]
    fn every_guarantee_holds_where_its_assumptions_do(
        world in strategies::world(),
        provider in every_provider(),
        volatile in any::<bool>(),
    ) {
        let (m, text) = model(world, provider, volatile);
        for d in applicable(&m) {
            let promised = d.guarantee();
            let mut violations = Violations::new(&promised);
            let mut w = World::new(&m, d, false);
            for seed in 0..SEEDS {
                w.run(&mut RandomChooser::new(seed));
                violations.add(&Metrics::default().add_outcome(&w.outcome()));
            }
            for (p, n) in &violations.counts {
                prop_assert_eq!(
                    *n,
                    0,
                    "{}: {} violated on {} of {} seeds where every assumption holds, in {}",
                    d.name(),
                    p,
                    n,
                    SEEDS,
                    strategies::failing_model(&text)
                );
            }
        }
    }
}

/// Every family of provider contracts the generators have.
fn every_provider() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        strategies::any_provider(),
        strategies::keyed_atomic_provider(),
        strategies::racing_provider().prop_map(|(p, _, _)| p),
        strategies::keyed_provider_wide().prop_map(|(p, _)| p),
    ]
}

/// The designs that promise something and whose every assumption holds on `m`.
fn applicable(m: &Model) -> Vec<&'static dyn design::Design> {
    design::all()
        .into_iter()
        .filter(|d| !d.guarantee().is_empty() && judge(*d, m).iter().all(|j| j.holds))
        .collect()
}

/// The test above is not vacuous: over the cases it draws, every design that promises
/// something has its guarantee asserted on some world (the same seed, the same cases).
#[test]
fn every_guarantee_is_asserted_on_some_generated_world() {
    use std::collections::BTreeMap;
    let asserted = std::sync::Mutex::new(BTreeMap::<&str, u32>::new());
    let mut runner = proptest::test_runner::TestRunner::new(strategies::config(
        96,
        "/nonexistent/regressions.txt",
    ));
    runner
        .run(
            &(strategies::world(), every_provider(), any::<bool>()),
            |(world, provider, volatile)| {
                let (m, _) = model(world, provider, volatile);
                for d in applicable(&m) {
                    *asserted.lock().unwrap().entry(d.name()).or_default() += 1;
                }
                Ok(())
            },
        )
        .unwrap();
    let asserted = asserted.into_inner().unwrap();
    for d in design::all().iter().filter(|d| !d.guarantee().is_empty()) {
        assert!(
            asserted.get(d.name()).is_some_and(|&n| n > 0),
            "{}: its guarantee was asserted on no generated world: {asserted:?}",
            d.name()
        );
    }
    eprintln!("worlds where each guarantee was asserted: {asserted:?}");
}

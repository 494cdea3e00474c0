//! proptest: for generated models (any workload, agent, faults, provider contract) and
//! seeds, every design gives the same run twice, and its recorded choice vector replays it,
//! as recorded and from its short text.

use crate::common::strategies;

use proptest::prelude::*;
use retrylab::design;
use retrylab::model::Model;
use retrylab::run::{run_seeds, run_traced};
use retrylab::sim::{ChoiceVector, RandomChooser, ReplayChooser};

proptest! {
    #![proptest_config(strategies::config(
        48,
        concat!(env!("CARGO_MANIFEST_DIR"), "/proptest-regressions/prop_determinism.txt"),
    ))]

    #[test]
    fn same_model_and_seed_same_run(
        mut world in strategies::world(),
        provider in strategies::any_provider(),
        which in 0..retrylab::design::all().len(),
        seed in any::<u64>(),
    ) {
        world["provider"] = provider;
        let model = Model::from_json(&world.to_string(), "generated").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let d = design::all()[which];
        let first = run_traced(&model, d, &mut RandomChooser::new(seed));
        let second = run_traced(&model, d, &mut RandomChooser::new(seed));
        prop_assert_eq!(&first.timeline, &second.timeline);
        prop_assert_eq!(&first.metrics, &second.metrics);
        let mut replay = ReplayChooser::new(first.vector());
        let replayed = run_traced(&model, d, &mut replay);
        prop_assert_eq!(replay.finish(), Ok(()));
        prop_assert_eq!(&first.timeline, &replayed.timeline);
        // The vector's short text (defaults left out) replays the same run.
        let short: ChoiceVector = first.vector().to_string().parse().map_err(TestCaseError::fail)?;
        let mut replay = ReplayChooser::new(short);
        let replayed = run_traced(&model, d, &mut replay);
        prop_assert_eq!(replay.finish(), Ok(()));
        prop_assert_eq!(&first.timeline, &replayed.timeline);
        // Tracing observes; it decides nothing.
        prop_assert_eq!(&first.metrics, &run_seeds(&model, d, seed..=seed));
    }
}

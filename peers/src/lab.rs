//! retrylab itself, as a user calls it: `run_seeds` on a model and a design.

use retrylab::check::Metrics;
use retrylab::design::Design;
use retrylab::model::Model;
use retrylab::world::World;

/// `run_seeds` over `seeds`, as the criterion bench `benches/seeds.rs` calls it.
pub fn run(model: &Model, design: &dyn Design, seeds: std::ops::Range<u64>) -> Metrics {
    retrylab::run::run_seeds(model, design, seeds)
}

/// Events retrylab's world takes from its queue over `seeds` (the budget's count; an untimed
/// pass, since `run_seeds` does not return it).
pub fn events(model: &Model, design: &dyn Design, seeds: std::ops::Range<u64>) -> u64 {
    let mut world = World::new(model, design, false);
    let mut chooser = model.chooser(0);
    let mut events = 0;
    for seed in seeds {
        chooser.reset(seed);
        world.run(&mut chooser);
        events += world.events();
    }
    events
}

/// The mean time to outcome of `m` (from its histogram: exact below 2 048 ms, to 0.1 %
/// above).
pub fn mean_outcome_ms(m: &Metrics) -> f64 {
    let mut last = 0;
    let mut sum = 0.0;
    for (value, seen) in m.time_to_outcome_ms.cdf() {
        sum += value as f64 * (seen - last) as f64;
        last = seen;
    }
    if last == 0 { 0.0 } else { sum / last as f64 }
}

/// retrylab's exhaustive search (`dfs`) on `model` for `design`, within the model's own
/// explore bound, checking `no_duplicate` only (the property whose verdict separates the
/// designs; stateright checks the same).
pub fn explore(model: &Model, design: &dyn Design) -> retrylab::explore::Exploration {
    use retrylab::check::Property;
    use retrylab::explore::{Bound, Strategy};
    let mut bound = Bound::default();
    if let Some(e) = model.explore {
        bound.max_faults = e.max_faults;
        bound.max_runs = e.max_runs;
    }
    retrylab::explore::explore(
        model,
        design,
        &[Property::NoDuplicate],
        Strategy::Dfs,
        bound,
    )
}

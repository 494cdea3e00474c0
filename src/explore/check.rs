//! Checking a model's expectations: every `hold` property on every seed, every `violate`
//! property on at least one, with a shrunk counterexample for each `hold` that fails.

use super::shrink::{Shrunk, shrink_seed};
use super::sweep::{Spec, Sweep, sweep};
use crate::check::{Metrics, Property};
use crate::design::{Design, Registry};
use crate::model::{Model, Want};
use crate::run::{Traced, run_traced};
use crate::sim::ReplayChooser;

/// One expectation of one design, judged.
#[derive(Clone, Debug)]
pub struct Judged {
    pub design: String,
    pub property: Property,
    pub want: Want,
    /// Seeds that violated the property, of `seeds`.
    pub violating: u64,
    pub seeds: u64,
    /// Seeds whose run was cut by the events budget: while there is one, the expectation is
    /// not met, whatever the other seeds show.
    pub budget: u64,
    /// The first violating seed, shrunk and traced, when a `hold` failed.
    pub counterexample: Option<Counterexample>,
}

impl Judged {
    pub fn met(&self) -> bool {
        self.budget == 0
            && match self.want {
                Want::Hold => self.violating == 0,
                Want::Violate => self.violating > 0,
            }
    }
}

/// The smallest run found that violates a property.
#[derive(Clone, Debug)]
pub struct Counterexample {
    pub seed: u64,
    pub shrunk: Shrunk,
    /// The shrunk vector's run, traced.
    pub traced: Traced,
}

/// The designs a model has expectations for, in the order the model lists them (found in
/// `designs`).
pub fn expected_designs(model: &Model, designs: &Registry) -> Vec<&'static dyn Design> {
    model
        .designs
        .iter()
        .filter(|d| model.expect.contains_key(*d))
        .filter_map(|d| designs.find(d))
        .collect()
}

/// Sweeps `design` over `seeds` evaluating its expected properties, and judges each; also
/// returns the model's scripted faults (indices in its list) that fired on no seed, and
/// the sweep's metrics (what happened to the user, whatever the expectations say).
/// `progress` is called as seeds finish.
pub fn judge_design(
    model: &Model,
    design: &dyn Design,
    seeds: (u64, u64),
    progress: &(dyn Fn(u64) + Sync),
) -> (Vec<Judged>, Vec<usize>, Metrics) {
    let expected = model.expectations(design.name());
    let properties: Vec<Property> = expected.iter().map(|(p, _)| *p).collect();
    let spec = Spec {
        model,
        design,
        seeds,
        properties: &properties,
        keep_failures: 1,
    };
    let result: Sweep = sweep(&spec, progress);
    let judged = expected
        .iter()
        .map(|&(property, want)| {
            let violating = result.violations.of(property);
            let counterexample = match want {
                Want::Hold => result
                    .first_failure(property)
                    .and_then(|seed| counterexample(model, design, property, seed)),
                Want::Violate => None,
            };
            Judged {
                design: design.name().to_string(),
                property,
                want,
                violating,
                seeds: seeds.1 - seeds.0 + 1,
                budget: result.metrics.budget_runs,
                counterexample,
            }
        })
        .collect();
    let unfired = result.unfired();
    (judged, unfired, result.metrics)
}

/// Shrinks the run of `seed` for `property` and traces the result.
pub fn counterexample(
    model: &Model,
    design: &dyn Design,
    property: Property,
    seed: u64,
) -> Option<Counterexample> {
    let shrunk = shrink_seed(model, design, property, seed)?;
    let traced = run_traced(
        model,
        design,
        &mut ReplayChooser::new(shrunk.vector.clone()),
    );
    Some(Counterexample {
        seed,
        shrunk,
        traced,
    })
}

//! The determinism self-check: a sample of seeds is run again, once silent and twice traced,
//! and once more from its recorded choice vector; the hashes of outcome and timeline must
//! agree. A difference means hidden nondeterminism (a hash-map iteration, a clock, state left
//! over from an earlier run) or a trace that changes what it observes.

use std::fmt;

use crate::check::Outcome;
use crate::design::Design;
use crate::model::Model;
use crate::sim::hash::Fnv1a;
use crate::sim::{ChoiceVector, Recorder, ReplayChooser};
use crate::world::World;

/// Seeds sampled per design: the first, the last and evenly spread ones between.
pub const SAMPLE: u64 = 16;

/// A run that did not repeat itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub design: String,
    pub seed: u64,
    /// What differed, in words.
    pub what: &'static str,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "determinism: {} seed {}: {}",
            self.design, self.seed, self.what
        )
    }
}

/// The seeds sampled from `first..=last`.
pub fn sample(first: u64, last: u64) -> Vec<u64> {
    let span = last - first;
    let n = SAMPLE.min(span.saturating_add(1));
    let mut seeds: Vec<u64> = (0..n)
        .map(|i| {
            if n == 1 {
                first
            } else {
                first + ((u128::from(span) * u128::from(i)) / u128::from(n - 1)) as u64
            }
        })
        .collect();
    seeds.dedup();
    seeds
}

/// A hash of everything the checkers read of a run.
fn outcome_hash(o: &Outcome<'_>) -> u64 {
    let text = format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}|{}|{:?}",
        o.intents,
        o.heard,
        o.effects,
        o.ops,
        o.attempt_ops,
        o.claims,
        o.remote_calls,
        o.end_ms,
        o.end
    );
    Fnv1a::of(text.as_bytes())
}

/// Runs `seed` with tracing `traced`: hashes of outcome and timeline, and the choice vector.
fn observe(world: &mut World<'_>, seed: u64) -> (u64, u64, ChoiceVector) {
    let mut random = world.model().chooser(seed);
    let mut recorder = Recorder::new(&mut random);
    world.run(&mut recorder);
    let vector = ChoiceVector::from_choices(&recorder.choices);
    (
        outcome_hash(&world.outcome()),
        Fnv1a::of(world.trace().render().as_bytes()),
        vector,
    )
}

/// Checks `design` on `seeds`: a silent run, two traced runs and a replay of the recorded
/// vector must give the same outcome (and the traced ones the same timeline).
pub fn self_check(model: &Model, design: &dyn Design, seeds: &[u64]) -> Result<(), Mismatch> {
    let mut silent = World::new(model, design, false);
    let mut traced = World::new(model, design, true);
    let fail = |seed, what| Mismatch {
        design: design.name().to_string(),
        seed,
        what,
    };
    for &seed in seeds {
        let (quiet_outcome, _, quiet_vector) = observe(&mut silent, seed);
        let (outcome, timeline, vector) = observe(&mut traced, seed);
        if outcome != quiet_outcome || vector != quiet_vector {
            return Err(fail(seed, "tracing changed the run"));
        }
        let (again, again_timeline, _) = observe(&mut traced, seed);
        if again != outcome {
            return Err(fail(
                seed,
                "a second run of the same seed had another outcome",
            ));
        }
        if again_timeline != timeline {
            return Err(fail(
                seed,
                "a second run of the same seed had another timeline",
            ));
        }
        let mut replay = ReplayChooser::new(vector);
        traced.run(&mut replay);
        let replayed = outcome_hash(&traced.outcome());
        let replayed_timeline = Fnv1a::of(traced.trace().render().as_bytes());
        if replay.finish().is_err() || replayed != outcome || replayed_timeline != timeline {
            return Err(fail(
                seed,
                "its recorded choice vector replayed to another run",
            ));
        }
    }
    Ok(())
}

/// The determinism self-check of `designs` on a sample of `first..=last`: the line printed
/// on stderr when it passes, the failure (exit 1) when it does not.
pub fn check_model(
    model: &Model,
    designs: &[&dyn Design],
    (first, last): (u64, u64),
) -> Result<String, String> {
    let seeds = sample(first, last);
    for d in designs {
        self_check(model, *d, &seeds).map_err(|m| format!("{}: {m}", model.name))?;
    }
    // An external executor's own check (run once per command: a second ask is free).
    for d in designs.iter().filter(|d| d.is_external()) {
        d.check_determinism(model, true)?;
    }
    Ok(format!(
        "determinism: {}: {} seed{} x {} design{}: silent, traced twice and replayed runs agree",
        model.name,
        seeds.len(),
        if seeds.len() == 1 { "" } else { "s" },
        designs.len(),
        if designs.len() == 1 { "" } else { "s" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_spreads_over_the_range_and_keeps_both_ends() {
        assert_eq!(sample(5, 5), vec![5]);
        assert_eq!(sample(0, 2), vec![0, 1, 2]);
        let s = sample(0, 999);
        assert_eq!(s.len(), 16);
        assert_eq!((s[0], s[15]), (0, 999));
        assert_eq!(sample(u64::MAX - 1, u64::MAX), vec![u64::MAX - 1, u64::MAX]);
    }
}

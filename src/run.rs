//! Running a model: many seeds for metrics, or one run with its timeline and choices.

use crate::check::verdict::line_intents;
use crate::check::{IntentVerdict, Metrics, Outcome, Property, RunSummary, intent_verdicts};
use crate::design::Design;
use crate::model::Model;
use crate::sim::{Choice, ChoiceVector, Chooser, RandomChooser, Recorder};
use crate::vocab::ids::IntentId;
use crate::vocab::trace::TraceLine;
use crate::world::World;

/// Runs `design` on `model` once per seed in `seeds` (a range such as `0..1000` or
/// `5..=9`) and sums the metrics.
pub fn run_seeds(
    model: &Model,
    design: &dyn Design,
    seeds: impl IntoIterator<Item = u64>,
) -> Metrics {
    let mut world = World::new(model, design, false);
    let mut chooser = RandomChooser::for_model(model, 0);
    let mut metrics = Metrics::default();
    for seed in seeds {
        chooser.reset(seed);
        world.run(&mut chooser);
        metrics.add_run(&world);
    }
    metrics
}

/// One run, observed in full.
#[derive(Clone, Debug)]
pub struct Traced {
    pub metrics: Metrics,
    /// What the properties are evaluated on.
    pub summary: RunSummary,
    /// The timeline, one line per event.
    pub timeline: String,
    /// Every decision the run made, in order.
    pub choices: Vec<Choice>,
    /// The verdict on each intent, in intent order.
    pub intents: Vec<IntentVerdict>,
    /// The timeline's lines, and the intent each is about (see
    /// [`crate::check::verdict::line_intents`]).
    pub lines: Vec<(TraceLine, Option<IntentId>)>,
}

impl Traced {
    /// The properties without a parameter (the plain ones and those the design brings) that
    /// this run violates.
    pub fn violated(&self) -> Vec<Property> {
        Property::standard(self.summary.custom)
            .into_iter()
            .filter(|p| !p.holds(&self.summary))
            .collect()
    }

    /// The properties this run violates: those of [`Traced::violated`], then those of
    /// `named` (properties with a parameter, such as `resolved_within(T)`) that fail.
    pub fn violated_with(&self, named: &[Property]) -> Vec<Property> {
        self.violated()
            .into_iter()
            .chain(named.iter().copied().filter(|p| !p.holds(&self.summary)))
            .collect()
    }

    /// The choice vector that replays this run.
    pub fn vector(&self) -> ChoiceVector {
        ChoiceVector::from_choices(&self.choices)
    }
}

/// Runs `design` on `model` once with decisions from `chooser`, recording the timeline and
/// the choice vector.
pub fn run_traced(model: &Model, design: &dyn Design, chooser: &mut dyn Chooser) -> Traced {
    let mut world = World::new(model, design, true);
    let mut recorder = Recorder::new(chooser);
    world.run(&mut recorder);
    let mut metrics = Metrics::default();
    let outcome = Outcome::of(&world);
    let summary = metrics.add_outcome(&outcome);
    Traced {
        metrics,
        summary,
        timeline: world.trace().render(),
        choices: recorder.choices,
        intents: intent_verdicts(&outcome),
        lines: world
            .trace()
            .lines()
            .iter()
            .cloned()
            .zip(line_intents(world.trace().lines(), &outcome))
            .collect(),
    }
}

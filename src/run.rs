//! Running a model: many seeds for metrics, or one run with its timeline and choices.

use crate::check::verdict::line_intents;
use crate::check::{IntentVerdict, Metrics, Property, RunSummary, intent_verdicts};
use crate::design::Design;
use crate::model::Model;
use crate::sim::{Choice, ChoiceVector, Chooser, Recorder};
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
    let mut chooser = model.chooser(0);
    let mut metrics = Metrics::default();
    for seed in seeds {
        chooser.reset(seed);
        world.run(&mut chooser);
        metrics.add_outcome(&world.outcome());
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
    /// The timeline's lines, and the intent each is about (none for a line about no one
    /// intent).
    pub lines: Vec<(TraceLine, Option<IntentId>)>,
}

impl Traced {
    /// The outcome of one run: the verdict on each intent, its counts and the properties it
    /// violates (the plain ones and `named`).
    pub fn outcome_text(&self, named: &[Property]) -> String {
        self.verdicts_text(None) + &self.counts_text(named)
    }

    /// The `outcome:` line: the verdict on each intent (`only`: on that one).
    pub fn verdicts_text(&self, only: Option<IntentId>) -> String {
        format!(
            "outcome: {}\n",
            crate::check::verdict::render(&self.intents, only)
        )
    }

    /// The properties the run violates: the plain ones and `named`.
    pub fn violated_names(&self, named: &[Property]) -> Vec<String> {
        self.violated_with(named)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The `counts:` and `violates:` lines of the whole run.
    pub fn counts_text(&self, named: &[Property]) -> String {
        let m = &self.metrics;
        let counts: Vec<String> = crate::check::counters::COUNTERS
            .iter()
            .filter_map(|c| Some(format!("{} {}", c.trace?, (c.total)(m))))
            .collect();
        let mut s = format!("counts: {}\n", counts.join(", "));
        let violated = self.violated_names(named);
        s.push_str(&format!(
            "violates: {}\n",
            if violated.is_empty() {
                "none".to_string()
            } else {
                violated.join(", ")
            }
        ));
        if self.summary.budget {
            s.push_str(&format!(
                "events budget: the run stopped after {} events, before the horizon; the outcome is the run so far, and no property is shown to hold on it\n",
                crate::world::MAX_EVENTS
            ));
        }
        s
    }

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
    let outcome = world.outcome();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::bundled_model;

    /// Each distinct text replaced by a word-free stand-in (equal texts stay equal, so
    /// folding is unchanged): what a reader finds in such lines it found in the events.
    fn without_words(lines: &[TraceLine]) -> Vec<TraceLine> {
        let mut seen: Vec<&str> = Vec::new();
        lines
            .iter()
            .map(|l| {
                let n = seen.iter().position(|t| *t == l.text).unwrap_or_else(|| {
                    seen.push(&l.text);
                    seen.len() - 1
                });
                TraceLine {
                    text: format!("#{n}"),
                    ..l.clone()
                }
            })
            .collect()
    }

    /// `trace --intent` and the outcome's intent lookup read each line's event, never its
    /// words: with every text replaced, every line is about the same intent as before.
    #[test]
    fn the_intent_of_a_line_is_read_from_its_event_not_its_words() {
        let model = bundled_model("ticket_chaos.json");
        let mut about_one = 0;
        for design in crate::design::all() {
            for seed in 0..5 {
                let mut world = World::new(&model, design, true);
                world.run(&mut model.chooser(seed));
                let outcome = world.outcome();
                let lines = world.trace().lines();
                let intents = line_intents(lines, &outcome);
                assert_eq!(
                    line_intents(&without_words(lines), &outcome),
                    intents,
                    "{} seed {seed}",
                    design.name()
                );
                about_one += intents.iter().filter(|i| i.is_some()).count();
            }
        }
        // Most lines of a chaos run are about one intent.
        assert!(about_one > 1000, "{about_one}");
    }
}

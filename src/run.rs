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

    /// The intent lookup as it was before lines were typed: each line's words scanned for
    /// `intent N`, `call N`, `attempt N`, `op N` and `rN`. An oracle for the events' ids.
    fn word_intents(lines: &[TraceLine], o: &crate::check::Outcome<'_>) -> Vec<Option<IntentId>> {
        use crate::vocab::ids::{AttemptId, OpId, ResourceId};
        let mut calls: Vec<(u32, IntentId)> = Vec::new();
        let op_intent = |op: OpId| {
            o.ops
                .get(op.0 as usize)
                .and_then(|r| r.intent)
                .map(|(i, _)| i)
                .or_else(|| o.claims.iter().find(|c| c.op == op).map(|c| c.intent.0))
        };
        let mut out = Vec::new();
        for l in lines {
            let words: Vec<&str> = l
                .text
                .split(|c: char| c.is_whitespace() || ",;:()".contains(c))
                .filter(|w| !w.is_empty())
                .collect();
            let number = |i: usize| words.get(i + 1).and_then(|w| w.parse::<u32>().ok());
            let (mut intent, mut call, mut attempt, mut op, mut resource) =
                (None, None, None, None, None);
            for (i, w) in words.iter().enumerate() {
                match *w {
                    "intent" => intent = intent.or(number(i)),
                    "call" => call = call.or(number(i)),
                    "attempt" => attempt = attempt.or(number(i)),
                    "op" => op = op.or(number(i)),
                    _ => {
                        if let Some(n) = w.strip_prefix('r').and_then(|n| n.parse::<u32>().ok()) {
                            resource = resource.or(Some(n));
                        }
                    }
                }
            }
            if let (Some(c), Some(i)) = (call, intent)
                && !calls.iter().any(|(k, _)| *k == c)
            {
                calls.push((c, IntentId(i)));
            }
            out.push(
                intent
                    .map(IntentId)
                    .or_else(|| {
                        call.and_then(|c| calls.iter().find(|(k, _)| *k == c).map(|(_, i)| *i))
                    })
                    .or_else(|| {
                        attempt
                            .and_then(|a| o.op_of(AttemptId(a)))
                            .and_then(op_intent)
                    })
                    .or_else(|| op.and_then(|n| op_intent(OpId(n))))
                    .or_else(|| {
                        resource.and_then(|r| {
                            o.effects
                                .iter()
                                .find(|e| e.resource == ResourceId(r))
                                .map(|e| e.intent)
                        })
                    }),
            );
        }
        out
    }

    /// The events name the ids the old words named: on every built-in design over chaos,
    /// lost-response and crash runs, each line is about the intent the word scan found.
    #[test]
    fn the_events_name_the_intent_the_words_named() {
        let mut lines = 0;
        for name in [
            "ticket_chaos.json",
            "ticket_lost_response.json",
            "bad/crash_after_send_rare.json",
        ] {
            let model = bundled_model(name);
            for design in crate::design::all() {
                for seed in 0..20 {
                    let mut world = World::new(&model, design, true);
                    world.run(&mut model.chooser(seed));
                    let outcome = world.outcome();
                    let l = world.trace().lines();
                    assert_eq!(
                        line_intents(l, &outcome),
                        word_intents(l, &outcome),
                        "{name} {} seed {seed}",
                        design.name()
                    );
                    lines += l.len();
                }
            }
        }
        assert!(lines > 10_000, "{lines}");
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

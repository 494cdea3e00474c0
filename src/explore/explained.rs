//! A violation a search found, as the output explains it: shrunk, with its timeline, its
//! outcome and the command that replays it. `explore` prints it; `check` prints it for a
//! search within a model's bound; a shard explains its own, in the same words, so that a
//! merge prints the same.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::ReplayCommand;
use super::search::Violation;
use super::shrink::shrink_values;
use crate::design::Design;
use crate::model::Model;
use crate::run::run_traced;
use crate::sim::{ChoiceVector, ReplayChooser};

/// The violation, shrunk, its timeline and the command that replays it.
pub fn explain(
    model: &Model,
    design: &dyn Design,
    v: &Violation,
    ties: bool,
    replay: &ReplayCommand,
) -> String {
    let e = Explained::of(model, design, v, ties);
    e.text(&runs(v.after_runs), design.name(), ties, replay)
}

/// What [`explain`] prints but its replay line, and the choice vector that line replays.
pub fn explain_run(
    model: &Model,
    design: &dyn Design,
    v: &Violation,
    ties: bool,
) -> (String, String) {
    let e = Explained::of(model, design, v, ties);
    (e.head_and_body(&runs(v.after_runs)), e.vector)
}

/// `1 run`, `12 runs`.
pub fn runs(n: u64) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

/// A violation as the output explains it: shrunk, with its timeline and outcome. A shard
/// explains its own (the merge has no model to replay), in the words the one-machine
/// search prints, so that a merge prints the same.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Explained {
    /// `no_duplicate violated by a run with 1 fault` (` before shrinking`, for a sample).
    pub head: String,
    /// `; shrunk to 3 choices (from 8, in 14 runs)`, or nothing.
    pub shrunk: String,
    /// `timeline:`, the timeline and the outcome of the (shrunk) run.
    pub body: String,
    /// The choice vector the replay line replays.
    pub vector: String,
}

impl Explained {
    pub fn of(model: &Model, design: &dyn Design, v: &Violation, ties: bool) -> Self {
        let shrunk = shrink_values(model, design, v.property, &v.values, ties);
        let vector = shrunk
            .as_ref()
            .map_or_else(|| ChoiceVector(v.values.clone()), |s| s.vector.clone());
        let head = format!(
            "{} violated by a run with {} fault{}{}",
            v.property,
            v.faults,
            if v.faults == 1 { "" } else { "s" },
            // Only dfs finds the run with the fewest faults; a sampled run has what it drew.
            if ties { "" } else { " before shrinking" },
        );
        let shrunk = match &shrunk {
            Some(s) => format!(
                "; shrunk to {} choice{} (from {}, in {})",
                s.vector.0.len(),
                if s.vector.0.len() == 1 { "" } else { "s" },
                v.values.len(),
                runs(s.runs)
            ),
            None => String::new(),
        };
        let traced = run_traced(
            model,
            design,
            &mut ReplayChooser::new(vector.clone()).ordering_ties(ties),
        );
        let mut body = String::from("timeline:\n");
        body.push_str(&traced.timeline);
        body.push_str(&traced.outcome_text(&model.named_properties(design.name())));
        Explained {
            head,
            shrunk,
            body,
            vector: vector.to_string(),
        }
    }

    /// The explanation without its replay line; `found_after`: the runs before it was found,
    /// as `12 runs`.
    pub fn head_and_body(&self, found_after: &str) -> String {
        format!(
            "\n{} (found after {found_after}){}\n{}",
            self.head, self.shrunk, self.body
        )
    }

    /// The explanation and the line that replays the run with `design`.
    pub fn text(
        &self,
        found_after: &str,
        design: &str,
        ties: bool,
        replay: &ReplayCommand,
    ) -> String {
        let mut out = self.head_and_body(found_after);
        let command = if ties {
            replay.choices_with_ties(design, &self.vector)
        } else {
            replay.choices(design, &self.vector)
        };
        let _ = writeln!(out, "replay: {command}");
        out
    }
}

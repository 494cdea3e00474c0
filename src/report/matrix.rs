//! The guarantee matrix: designs × contract assumptions, judged by exhaustive search.
//!
//! Each column is one small model; its label is what the model breaks, read from the data
//! (the assumptions of any design judged false on it, [`crate::design::assumptions::judge`]),
//! not from its file name. Each cell is a bounded exhaustive search ([`Strategy::Dfs`],
//! at most `K` faults) of one design on one model, checking the plain properties
//! ([`Property::PLAIN`], the rule `retrylab explore` applies, without a model's
//! expectations):
//! - *certified*: the search covered every schedule within `K` faults and none violates a
//!   property;
//! - *counterexample*: the run with the fewest faults that violates one, shrunk, with the
//!   command that replays it;
//! - *incomplete*: the search stopped at its run limit without a violation (no verdict);
//! - *not applicable*: the design declares no assumption, so it promises nothing and a
//!   model that breaks one says nothing about it. In a column that breaks no assumption
//!   (the contract as assumed) every design is searched all the same, so that a design
//!   without a guarantee is seen failing under the best contract too.
//!
//! Cells are computed in parallel (rayon) and each independently of the others, so the
//! matrix, its JSON and its Markdown do not depend on the thread count.

use std::fmt::Write;

use rayon::prelude::*;
use serde_json::{Value, json};

use crate::check::Property;
use crate::design::Design;
use crate::design::assumptions::judge;
use crate::explore::search::{Bound, Strategy, explore};
use crate::explore::shell_word;
use crate::explore::shrink::shrink_values;
use crate::model::Model;
use crate::sim::{ChoiceVector, ReplayChooser};

/// The command a replay line starts with, as everywhere in a report (see
/// `research::PROGRAM`): it does not depend on how the matrix was produced.
pub const REPLAY_PROGRAM: &str = super::research::PROGRAM;

/// Most runs of one cell's search; past it the cell is [`Cell::Incomplete`].
pub const MAX_RUNS: u64 = 200_000;

/// Most states one cell's search remembers (the search stays complete past it).
const MAX_STATES: usize = 2_000_000;

/// The verdict of one design on one model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Every schedule within the bound was explored (or cut at an explored state); no
    /// property is violated.
    Certified {
        runs: u64,
        distinct_states: u64,
        /// The timing values the search offered: what the certificate covers
        /// ([`crate::explore::search::TimingScope::describe`]).
        timings: String,
    },
    /// A run violates `property`.
    Counterexample {
        property: String,
        /// Non-default fault choices of the run found (the fewest there are).
        faults: u32,
        /// The shrunk choice vector, as `retrylab replay --choices` takes it.
        choices: String,
        /// The whole command that replays it, from the repository root.
        replay: String,
        /// The run as a sequence diagram (one `<svg>`; not in the JSON: `replay --format
        /// svg` draws it again).
        diagram: String,
    },
    /// The search stopped at its run limit before covering the bound, without a violation.
    Incomplete { runs: u64 },
    /// The design was not searched on this model.
    NotApplicable { why: String },
}

impl Cell {
    /// One word for the kind of cell.
    pub fn kind(&self) -> &'static str {
        match self {
            Cell::Certified { .. } => "certified",
            Cell::Counterexample { .. } => "counterexample",
            Cell::Incomplete { .. } => "incomplete",
            Cell::NotApplicable { .. } => "not_applicable",
        }
    }

    /// The short mark of the Markdown table.
    pub fn mark(&self) -> String {
        match self {
            Cell::Certified { .. } => "✓".into(),
            Cell::Counterexample {
                property, faults, ..
            } => format!("✗ {property} ({faults})"),
            Cell::Incomplete { .. } => "?".into(),
            Cell::NotApplicable { .. } => "n/a".into(),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Cell::Certified {
                runs,
                distinct_states,
                timings,
            } => {
                json!({"kind": self.kind(), "runs": runs, "distinct_states": distinct_states, "timings": timings})
            }
            Cell::Counterexample {
                property,
                faults,
                choices,
                replay,
                ..
            } => json!({
                "kind": self.kind(),
                "property": property,
                "faults": faults,
                "choices": choices,
                "replay": replay,
            }),
            Cell::Incomplete { runs } => json!({"kind": self.kind(), "runs": runs}),
            Cell::NotApplicable { why } => json!({"kind": self.kind(), "why": why}),
        }
    }
}

/// One model of the matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The model file, as given.
    pub file: String,
    /// The model's name.
    pub model: String,
    /// The assumptions judged false on the model, for any design, in the order the designs
    /// declare them; empty: the contract as assumed.
    pub broken: Vec<String>,
    pub description: String,
}

impl Column {
    /// The column's label: what it breaks.
    pub fn label(&self) -> String {
        if self.broken.is_empty() {
            "contract as assumed".into()
        } else {
            self.broken.join(" + ")
        }
    }
}

/// Designs × models, each cell a bounded exhaustive search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix {
    /// The fault bound `K` of every search.
    pub max_faults: u32,
    /// The properties searched, by name.
    pub properties: Vec<String>,
    pub designs: Vec<String>,
    pub columns: Vec<Column>,
    /// `[design][column]`.
    pub cells: Vec<Vec<Cell>>,
    /// `[design][column]`: the column's model breaks an assumption the design states.
    pub relies: Vec<Vec<bool>>,
}

/// The assumptions of any of `designs` that `model` does not meet, in order of first
/// declaration (designs in order, each design's list in its order), without repeats.
pub fn broken_assumptions(model: &Model, designs: &[&dyn Design]) -> Vec<String> {
    let mut broken: Vec<String> = Vec::new();
    for d in designs {
        for j in judge(*d, model) {
            if !j.holds && !broken.contains(&j.name) {
                broken.push(j.name);
            }
        }
    }
    broken
}

/// The guarantee matrix of `designs` on `models` (each the file as given and the model read
/// from it), searching every schedule within `max_faults` faults.
pub fn guarantee_matrix(
    models: &[(String, Model)],
    designs: &[&dyn Design],
    max_faults: u32,
) -> Matrix {
    let columns: Vec<Column> = models
        .iter()
        .map(|(file, m)| Column {
            file: file.clone(),
            model: m.name.clone(),
            broken: broken_assumptions(m, designs),
            description: m.description.clone(),
        })
        .collect();
    let jobs: Vec<(usize, usize)> = (0..designs.len())
        .flat_map(|d| (0..models.len()).map(move |c| (d, c)))
        .collect();
    // Each cell is computed on its own; `collect` keeps the jobs' order.
    let flat: Vec<Cell> = jobs
        .par_iter()
        .map(|&(d, c)| {
            let (file, model) = &models[c];
            cell(
                file,
                model,
                designs[d],
                columns[c].broken.is_empty(),
                max_faults,
            )
        })
        .collect();
    let mut flat = flat.into_iter();
    let cells = (0..designs.len())
        .map(|_| flat.by_ref().take(models.len()).collect())
        .collect();
    let relies = designs
        .iter()
        .map(|d| {
            models
                .iter()
                .map(|(_, m)| judge(*d, m).iter().any(|j| !j.holds))
                .collect()
        })
        .collect();
    Matrix {
        relies,
        max_faults,
        properties: Property::PLAIN.iter().map(|p| p.to_string()).collect(),
        designs: designs.iter().map(|d| d.name().to_string()).collect(),
        columns,
        cells,
    }
}

/// One design on one model.
fn cell(file: &str, model: &Model, design: &dyn Design, as_assumed: bool, k: u32) -> Cell {
    if design.assumptions().is_empty() && !as_assumed {
        return Cell::NotApplicable {
            why: format!(
                "{} declares no assumption: it promises nothing, so a model that breaks one says nothing about it",
                design.name()
            ),
        };
    }
    let bound = Bound {
        max_faults: k,
        max_runs: MAX_RUNS,
        max_states: MAX_STATES,
        ..Bound::default()
    };
    let found = explore(
        model,
        design,
        &Property::standard(design.properties()),
        Strategy::Dfs,
        bound,
    );
    if let Some(v) = found.violations.first() {
        // As `retrylab explore` does: shrink, keep the search's vector if shrinking fails.
        let vector = shrink_values(model, design, v.property, &v.values, true)
            .map_or_else(|| ChoiceVector(v.values.clone()), |s| s.vector);
        let choices = vector.to_string();
        let traced = crate::run::run_traced(
            model,
            design,
            &mut ReplayChooser::new(vector).ordering_ties(true),
        );
        let violated: Vec<String> = traced.violated().iter().map(ToString::to_string).collect();
        let title = format!(
            "{} on {}: {} with {} fault{}",
            design.name(),
            model.name,
            v.property,
            v.faults,
            if v.faults == 1 { "" } else { "s" }
        );
        let diagram = super::sequence::Diagram::of(&title, &traced, &violated)
            .svg()
            .unwrap_or_default();
        return Cell::Counterexample {
            diagram,
            property: v.property.to_string(),
            faults: v.faults,
            replay: replay_command(file, design.name(), &choices, &model.digest()),
            choices,
        };
    }
    if found.certified() {
        Cell::Certified {
            runs: found.runs(),
            distinct_states: found
                .levels
                .iter()
                .map(|l| l.distinct_states)
                .max()
                .unwrap_or(0),
            timings: found.scope.describe(),
        }
    } else {
        Cell::Incomplete { runs: found.runs() }
    }
}

/// The line that replays a vector found by exhaustive search (same-instant order is a
/// choice there, hence `--ties`), as `retrylab explore` prints it, with [`REPLAY_PROGRAM`].
pub fn replay_command(file: &str, design: &str, choices: &str, digest: &str) -> String {
    format!(
        "{REPLAY_PROGRAM} replay {} --design {design} --choices {}",
        shell_word(file),
        shell_word(&crate::explore::replay_key(Some(digest), true, choices))
    )
}

/// What the marks of the matrix mean.
pub fn legend(k: u32) -> String {
    format!(
        "✓ certified within {k} fault{}: the search covered every schedule and none violates a property, and the model breaks no assumption the design states. \
         ✓! certified although the model breaks an assumption the design states: that assumption is sufficient, not necessary, here. \
         ✗ P (n): a counterexample violating P with n faults (replays below). \
         ? the search stopped at its run limit (no verdict). \
         n/a: the design states no assumption, so it promises nothing where one is broken.",
        if k == 1 { "" } else { "s" },
    )
}

impl Matrix {
    /// The mark of the cell of design `d` in column `c`: [`Cell::mark`], with `!` after a
    /// certificate where the design states an assumption the model breaks.
    pub fn mark(&self, d: usize, c: usize) -> String {
        let cell = &self.cells[d][c];
        match cell {
            Cell::Certified { .. } if self.relies[d][c] => "✓!".to_string(),
            _ => cell.mark(),
        }
    }

    /// The cell of `design` on the column of `file`, if both are in the matrix.
    pub fn cell(&self, design: &str, file: &str) -> Option<&Cell> {
        let d = self.designs.iter().position(|x| x == design)?;
        let c = self.columns.iter().position(|x| x.file == file)?;
        Some(&self.cells[d][c])
    }

    /// Every figure of the matrix.
    pub fn to_json(&self) -> Value {
        json!({
            "max_faults": self.max_faults,
            "strategy": "dfs",
            "max_runs": MAX_RUNS,
            "properties": self.properties,
            "designs": self.designs,
            "columns": self.columns.iter().map(|c| json!({
                "file": c.file,
                "model": c.model,
                "label": c.label(),
                "broken": c.broken,
                "description": c.description,
            })).collect::<Vec<_>>(),
            "cells": self.cells.iter().enumerate().map(|(d, row)| json!({
                "design": self.designs[d],
                "cells": row.iter().zip(&self.columns).enumerate().map(|(c, (cell, col))| {
                    let mut v = cell.to_json();
                    v["file"] = json!(col.file);
                    v["states_a_broken_assumption"] = json!(self.relies[d][c]);
                    v
                }).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    /// A table designs × columns with short marks and a legend, the columns described, then
    /// every counterexample with the command that replays it.
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let k = self.max_faults;
        let _ = writeln!(
            s,
            "Every schedule with at most {k} fault{} (dfs, at most {MAX_RUNS} runs per cell), checking {}.\n",
            if k == 1 { "" } else { "s" },
            self.properties.join(", ")
        );
        s.push_str("| design |");
        for (i, _) in self.columns.iter().enumerate() {
            let _ = write!(s, " [{}] |", i + 1);
        }
        s.push_str("\n|---|");
        s.push_str(&"---|".repeat(self.columns.len()));
        s.push('\n');
        for (d, row) in self.cells.iter().enumerate() {
            let _ = write!(s, "| {} |", self.designs[d]);
            for c in 0..row.len() {
                let _ = write!(s, " {} |", self.mark(d, c));
            }
            s.push('\n');
        }
        let _ = writeln!(s, "\n{}\n", legend(k));
        s.push_str("Columns (the assumptions each model breaks, as judged from its knobs):\n\n");
        for (i, c) in self.columns.iter().enumerate() {
            let _ = writeln!(
                s,
                "{}. **{}** (`{}`): {}",
                i + 1,
                c.label(),
                c.file,
                c.description
            );
        }
        let mut any = false;
        for (d, row) in self.cells.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                if let Cell::Counterexample {
                    property,
                    faults,
                    replay,
                    ..
                } = cell
                {
                    if !any {
                        s.push_str("\nCounterexamples:\n\n");
                        any = true;
                    }
                    let _ = writeln!(
                        s,
                        "- {} on [{}] {}: {property} with {faults} fault{}: `{replay}`",
                        self.designs[d],
                        c + 1,
                        self.columns[c].model,
                        if *faults == 1 { "" } else { "s" }
                    );
                }
            }
        }
        s
    }
}

//! The comparison report of `retrylab report`: every model × design on paired seeds, as
//! JSON (every figure, `schema_version`), Markdown (the headline table first) and one
//! self-contained HTML page with SVG charts (`report::html` renders it).
//!
//! Per design it carries the run's figures as `run --format json` gives them (totals, the
//! outcome rates with 95 % Wilson intervals, the distributions, the assumptions judged
//! against the model, the properties and the expectations), the per-intent counts with a
//! seed-level interval, the paired differences of every per-intent quantity against a
//! baseline design on the same seeds, and for each property it violates the shrunk
//! counterexample with its replay command. Nothing in it depends on the thread count or the
//! clock: the same inputs give the same bytes.
//!
//! One concept per file: the data of the report and what every form shares (here), its
//! charts (`figures`), the headline across models (`headline`), the text tables (`tables`,
//! `providers`) and the two text forms (`json`, `markdown`); the HTML form is
//! `report::html`.

mod figures;
mod headline;
mod json;
mod markdown;
mod providers;
mod tables;

pub use figures::{Chart, ChartKind};
pub use headline::{READING, Record, headline_table, headline_text, records};
pub use json::render_json;
pub use markdown::render_markdown;
pub use providers::{PROVIDER_TABLE_NOTE, provider_footnotes, provider_tables};
pub use tables::{
    COUNTEREXAMPLES_NOTE, MODEL_TABLE_NOTE, Table, assumptions_text, distributions_table,
    expectation_text, model_table, per_intent_text, shown,
};

use std::fmt::Write;

use serde_json::Value;

use super::charts::Estimate;
use super::stats::Rate;
use crate::check::Property;
use crate::check::counters;
use crate::explore::paired::Paired;
use crate::explore::{DesignResult, Report};
use crate::model::Want;

/// The version of the JSON layout; it changes when a field changes meaning or goes.
pub const SCHEMA_VERSION: u32 = 3;

/// The program name the report's commands use: a report is a document, so its bytes do not
/// depend on how the tool was invoked (from a clone, `retrylab` is `cargo run --release --`).
pub const PROGRAM: &str = "retrylab";

/// Where the report comes from.
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    /// The commit of the tool, when given (`--commit`).
    pub commit: Option<String>,
    /// The worker threads, when asked to record them (`--record-threads`); no figure
    /// depends on them.
    pub threads: Option<usize>,
    pub first_seed: u64,
    pub seeds: u64,
    pub baseline: String,
    /// The command's inputs as given (model files and directories, `--each-provider`,
    /// `--matrix`), so that the report can be made again.
    pub models: Vec<String>,
    pub each_provider: Vec<String>,
    pub matrix: Vec<String>,
    /// The guarantee matrix's fault budget.
    pub max_faults: u32,
}

impl Provenance {
    /// The command that makes this report again into `out`.
    pub fn command(&self, out: &str) -> String {
        let mut s = format!("{PROGRAM} report");
        for m in &self.models {
            let _ = write!(s, " {}", crate::explore::shell_word(m));
        }
        for m in &self.each_provider {
            let _ = write!(s, " --each-provider {}", crate::explore::shell_word(m));
        }
        for m in &self.matrix {
            let _ = write!(s, " --matrix {}", crate::explore::shell_word(m));
        }
        if !self.matrix.is_empty() {
            let _ = write!(s, " --max-faults {}", self.max_faults);
        }
        let _ = write!(
            s,
            " --seeds {} --first-seed {} --baseline {} --out {}",
            self.seeds,
            self.first_seed,
            crate::explore::shell_word(&self.baseline),
            crate::explore::shell_word(out)
        );
        s
    }
}

/// The smallest run found that violates a property, and how to see it.
#[derive(Clone, Debug)]
pub struct Shown {
    pub property: Property,
    /// What the model expects of the property for this design, if anything.
    pub expected: Option<Want>,
    /// The first violating seed of the sweep.
    pub seed: u64,
    /// The shrunk choice vector, and the length of the seed's vector it came from.
    pub choices: String,
    pub choices_len: usize,
    pub original_len: usize,
    /// The command that replays the shrunk run, and the one that traces the seed.
    pub replay: String,
    pub trace: String,
    /// The shrunk run as a sequence diagram ([`super::sequence`]): one `<svg>`, or empty
    /// when it could not be drawn.
    pub diagram: String,
}

/// One model's part of the report.
pub struct ModelPart {
    /// The model file as given on the command line.
    pub file: String,
    /// FNV-1a of the file's bytes, in hex: which model exactly.
    pub file_hash: String,
    pub description: String,
    /// The provider preset the model was run against instead of its own (`--provider`).
    pub provider: Option<String>,
    pub report: Report,
    /// The design every other is compared with.
    pub baseline: String,
    /// Per design of `report.results` (same order): its paired sums against the baseline.
    pub paired: Vec<Paired>,
    /// Per design (same order): a counterexample per property it violates.
    pub counterexamples: Vec<Vec<Shown>>,
    /// Per design (same order): its runs make no random choice, so every seed is the same
    /// run and no interval applies.
    pub deterministic: Vec<bool>,
}

impl ModelPart {
    /// The place of the baseline design among the results (0 if it is not among them).
    fn baseline_index(&self) -> usize {
        self.report
            .results
            .iter()
            .position(|r| r.design == self.baseline)
            .unwrap_or(0)
    }
}

/// The whole report.
pub struct Research {
    pub provenance: Provenance,
    pub parts: Vec<ModelPart>,
    /// The guarantee matrix, when models for it were given.
    pub matrix: Option<MatrixView>,
}

/// The guarantee matrix as the report shows it.
pub struct MatrixView {
    pub json: Value,
    pub markdown: String,
    /// An HTML fragment (a table and the counterexamples).
    pub html: String,
}

pub(super) fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// The index of quantity `name` in [`counters::quantities`].
fn q(name: &str) -> usize {
    counters::quantities()
        .position(|c| c.quantity() == name)
        .expect("a known quantity")
}

/// The five outcomes of an intent: completed, true failure, false success, false failure,
/// unresolved (they add up to the intents).
fn outcome_counts(r: &DesignResult) -> [u64; counters::N_OUTCOMES] {
    r.metrics.outcome_counts()
}

fn level(p: &Paired, name: &str) -> Estimate {
    let l = p.mean(q(name));
    Estimate {
        value: l.mean,
        low: l.low,
        high: l.high,
    }
}

fn wilson(k: u64, n: u64) -> Estimate {
    let r = Rate::wilson(k, n);
    Estimate {
        value: r.rate,
        low: r.low,
        high: r.high,
    }
}

/// How every figure is computed, as stated in the report.
pub const METHOD: [(&str, &str); 6] = [
    (
        "rates",
        "the five outcomes of an intent (completed, true failure, false success, false failure, unresolved) as shares of all intents over all seeds, adding up to 1, each with a 95 % Wilson score interval; the interval treats intents as independent, which is exact for models with one intent per seed and narrow otherwise (intents of a seed share its faults)",
    ),
    (
        "per_intent",
        "duplicate effects, drifted effects, merged repeats, masked mismatches and remote calls per intent: the mean over seeds of each seed's count over its intents, with a 95 % interval from the spread between seeds (mean ± t · sd / sqrt(seeds), Student's t; when every seed gives the same value, the width of one seed in 3.84 / (seeds + 3.84) differing by one event); the seed is the independent unit; no interval (null) with fewer than two seeds or when every seed is the same run",
    ),
    (
        "paired_difference",
        "design minus baseline per intent, seed by seed on the same seeds (both meet the same faults as long as their paths agree: each purpose draws from its own stream); mean and 95 % interval of the per-seed differences (Student's t; when no seed differs, the width of one seed in 3.84 / (seeds + 3.84) differing by one event); seeds_that_differ counts the seeds where the two differ in that quantity",
    ),
    (
        "distributions",
        "reconciliation time (an operation's first unknown moment to its true resolution) and time to outcome (an intent's arrival to the message its user got), from mergeable HDR histograms with 3 significant digits: exact below 2048 ms, at most 0.1 % high above; count and maximum exact; percentiles nearest-rank",
    ),
    (
        "counterexamples",
        "for each property a design violates on some seed: the first violating seed, shrunk to a shortest choice vector that still violates it; the replay command reruns that vector",
    ),
    (
        "threads",
        "no figure depends on the number of threads: every sum is exact and merged in seed order",
    ),
];

/// Where a model part comes from: its file, hash, provider override and baseline, with
/// code spans in backticks.
pub fn source_text(p: &ModelPart) -> String {
    format!(
        "`{}` (FNV-1a {}){}, baseline `{}`",
        p.file,
        p.file_hash,
        p.provider
            .as_ref()
            .map(|x| format!(" against the preset `{x}` (`--provider {x}`)"))
            .unwrap_or_default(),
        p.baseline
    )
}

/// What the report says about provenance, in two sentences.
pub fn provenance_text(pv: &Provenance) -> String {
    format!(
        "retrylab {}{}, seeds {}..={} per design, baseline {}{}; made by `{}`. Commands are written as `{PROGRAM}`; from a clone that is `cargo run --release --`.",
        env!("CARGO_PKG_VERSION"),
        pv.commit.as_ref().map_or_else(
            || " (commit not recorded: --commit records it)".to_string(),
            |c| format!(" (commit {c})")
        ),
        pv.first_seed,
        pv.first_seed + pv.seeds.saturating_sub(1),
        pv.baseline,
        pv.threads
            .map(|t| format!(", {t} threads (no figure depends on them)"))
            .unwrap_or_default(),
        pv.command("DIR")
    )
}

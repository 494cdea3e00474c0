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

use std::fmt::Write;

use serde_json::{Value, json};

use super::charts::{self, Cdf, Estimate, RateRow};
use super::stats::{Rate, human_ms};
use crate::check::counters;
use crate::check::{Histogram, Metrics, Property};
use crate::explore::paired::{Difference, Paired};
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

fn estimate_json(e: Estimate) -> Value {
    json!({ "mean": round6(e.value), "low": round6(e.low), "high": round6(e.high) })
}

fn difference_json(d: &Difference) -> Value {
    json!({
        "mean": round6(d.mean),
        "low": round6(d.low),
        "high": round6(d.high),
        "seeds": d.seeds,
        "seeds_that_differ": d.disagree,
    })
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

// ---- charts ----

crate::sim::named_enum! {
    /// What a chart shows.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum ChartKind {
        Rates => "rates",
        ReconciliationCdf => "reconciliation_cdf",
        TimeToOutcomeCdf => "time_to_outcome_cdf",
        PerIntent => "per_intent",
    }
}

impl ChartKind {}

/// `text` with every character but ASCII letters, digits, `_` and `-` as `-`: an HTML id.
fn slug(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// One chart of the report: which model (index in `parts`), what it shows, its title, and
/// the one line under it that says what it shows.
#[derive(Clone, Debug)]
pub struct Chart {
    pub part: usize,
    pub kind: ChartKind,
    pub id: String,
    pub title: String,
    pub takeaway: String,
}

/// The design with the largest (`most`) or smallest value of `f`, first in order on a tie.
fn extreme(
    results: &[DesignResult],
    most: bool,
    f: impl Fn(&DesignResult) -> Option<f64>,
) -> Option<(&str, f64)> {
    let mut best: Option<(&str, f64)> = None;
    for r in results {
        let Some(v) = f(r) else { continue };
        let better = match best {
            None => true,
            Some((_, b)) => (most && v > b) || (!most && v < b),
        };
        if better {
            best = Some((&r.design, v));
        }
    }
    best
}

/// The line under a chart of model part `p`.
fn takeaway(p: &ModelPart, kind: ChartKind) -> String {
    let results = &p.report.results;
    let per = |k: fn(&Metrics) -> u64| {
        move |r: &DesignResult| Some(k(&r.metrics) as f64 / r.metrics.intents.max(1) as f64)
    };
    match kind {
        ChartKind::Rates => {
            let (best, done) = extreme(results, true, per(|m| m.completed)).unwrap_or(("", 0.0));
            let (worst, open) = extreme(results, true, per(|m| m.unresolved)).unwrap_or(("", 0.0));
            let lying: Vec<&str> = results
                .iter()
                .filter(|r| r.metrics.false_success + r.metrics.false_failure > 0)
                .map(|r| r.design.as_str())
                .collect();
            format!(
                "Most intents completed: {best} ({}). {}. {}.",
                percent(done),
                if open > 0.0 {
                    format!("Most left unresolved: {worst} ({})", percent(open))
                } else {
                    "No design left an intent unresolved".to_string()
                },
                if lying.is_empty() {
                    "No design told a false success or failure".to_string()
                } else {
                    format!("A false success or failure told by {}", lying.join(", "))
                }
            )
        }
        ChartKind::ReconciliationCdf | ChartKind::TimeToOutcomeCdf => {
            let h: fn(&DesignResult) -> &Histogram = if kind == ChartKind::ReconciliationCdf {
                |r| &r.metrics.reconciliation_ms
            } else {
                |r| &r.metrics.time_to_outcome_ms
            };
            let median = |r: &DesignResult| charts::median(&h(r).cdf()).map(|m| m as f64);
            match (
                extreme(results, false, median),
                extreme(results, true, median),
            ) {
                (Some((fast, a)), Some((slow, b))) if a < b => format!(
                    "Median: fastest {fast} ({}), slowest {slow} ({}).",
                    human_ms(a as u64),
                    human_ms(b as u64)
                ),
                (Some((_, a)), _) => {
                    format!(
                        "Every design drawn has the same median, {}.",
                        human_ms(a as u64)
                    )
                }
                _ => String::new(),
            }
        }
        ChartKind::PerIntent => {
            let (most, calls) =
                extreme(results, true, per(|m| m.remote_calls)).unwrap_or(("", 0.0));
            let (dup, dups) =
                extreme(results, true, per(|m| m.duplicate_effects)).unwrap_or(("", 0.0));
            format!(
                "Most remote calls: {most} ({calls:.2} per intent). {}.",
                if dups > 0.0 {
                    format!(
                        "Most duplicate effects: {dup} ({} per intent)",
                        per_intent_text(dups)
                    )
                } else {
                    "No design left a duplicate effect".to_string()
                }
            )
        }
    }
}

impl Research {
    /// Every chart, in page order: per model its rates, the distributions that have a value
    /// for some design, and the calls per intent.
    pub fn charts(&self) -> Vec<Chart> {
        let mut out = Vec::new();
        for (i, p) in self.parts.iter().enumerate() {
            let model = &p.report.model;
            let any = |h: fn(&DesignResult) -> &Histogram| {
                p.report.results.iter().any(|r| !h(r).is_empty())
            };
            let mut push = |kind: ChartKind, title: String| {
                out.push(Chart {
                    part: i,
                    kind,
                    id: format!("{}-{}-{}", kind.name(), i + 1, slug(model)),
                    title,
                    takeaway: takeaway(p, kind),
                })
            };
            push(
                ChartKind::Rates,
                format!("{model}: outcome of each intent (shares, 95 %)"),
            );
            if any(|r| &r.metrics.reconciliation_ms) {
                push(
                    ChartKind::ReconciliationCdf,
                    format!("{model}: reconciliation time"),
                );
            }
            if any(|r| &r.metrics.time_to_outcome_ms) {
                push(
                    ChartKind::TimeToOutcomeCdf,
                    format!("{model}: time to outcome"),
                );
            }
            push(
                ChartKind::PerIntent,
                format!("{model}: remote calls and duplicate effects per intent (95 %)"),
            );
        }
        out
    }

    /// The SVG of `chart`.
    pub fn svg(&self, chart: &Chart) -> String {
        let p = &self.parts[chart.part];
        let results = &p.report.results;
        let drawn = match chart.kind {
            ChartKind::Rates => {
                let rows: Vec<RateRow<'_>> = results
                    .iter()
                    .map(|r| {
                        let c = outcome_counts(r);
                        let n = r.metrics.intents;
                        RateRow {
                            design: &r.design,
                            estimates: [
                                wilson(c[0], n),
                                wilson(c[1], n),
                                wilson(c[2], n),
                                wilson(c[3], n),
                                wilson(c[4], n),
                            ],
                        }
                    })
                    .collect();
                charts::rates(&chart.title, &rows)
            }
            ChartKind::ReconciliationCdf | ChartKind::TimeToOutcomeCdf => {
                let (h, x): (fn(&DesignResult) -> &Histogram, &str) =
                    if chart.kind == ChartKind::ReconciliationCdf {
                        (
                            |r| &r.metrics.reconciliation_ms,
                            "from an operation's first unknown moment to its true resolution",
                        )
                    } else {
                        (
                            |r| &r.metrics.time_to_outcome_ms,
                            "from an intent's arrival to the message the user got",
                        )
                    };
                let series: Vec<Cdf<'_>> = results
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| !h(r).is_empty())
                    .map(|(i, r)| Cdf {
                        design: &r.design,
                        index: i,
                        points: h(r).cdf(),
                    })
                    .collect();
                charts::cdf(&chart.title, x, &series)
            }
            ChartKind::PerIntent => {
                let rows: Vec<(&str, Estimate, Estimate)> = results
                    .iter()
                    .zip(&p.paired)
                    .map(|(r, paired)| {
                        (
                            r.design.as_str(),
                            level(paired, "remote_calls"),
                            level(paired, "duplicate_effects"),
                        )
                    })
                    .collect();
                charts::per_intent(&chart.title, &rows)
            }
        };
        drawn.unwrap_or_else(|e| panic!("chart {} cannot be drawn: {e}", chart.id))
    }
}

// ---- the headline: designs across every model ----

/// One design's record across the models of the report.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub design: String,
    pub models: u64,
    /// Models where no seed had a duplicate effect.
    pub no_duplicate: u64,
    /// Models where no intent was told a false success or a false failure.
    pub honest: u64,
    /// Models where every intent got an outcome.
    pub resolved: u64,
    /// Models where every assumption of its guarantee holds.
    pub guaranteed: u64,
    /// The most duplicate effects per intent, and on which model.
    pub worst_duplicates: (f64, String),
    /// The most remote calls per intent, and on which model.
    pub most_calls: (f64, String),
}

/// Per design (in order of first appearance), its record across every model.
pub fn records(parts: &[ModelPart]) -> Vec<Record> {
    let mut out: Vec<Record> = Vec::new();
    for p in parts {
        for r in &p.report.results {
            let i = match out.iter().position(|x| x.design == r.design) {
                Some(i) => i,
                None => {
                    out.push(Record {
                        design: r.design.clone(),
                        ..Record::default()
                    });
                    out.len() - 1
                }
            };
            let rec = &mut out[i];
            let m = &r.metrics;
            let n = m.intents.max(1) as f64;
            rec.models += 1;
            rec.no_duplicate += u64::from(m.duplicate_effects == 0);
            rec.honest += u64::from(m.false_success == 0 && m.false_failure == 0);
            rec.resolved += u64::from(m.unresolved == 0);
            rec.guaranteed +=
                u64::from(!r.assumptions.is_empty() && r.failed_assumptions().next().is_none());
            let dup = m.duplicate_effects as f64 / n;
            if dup > rec.worst_duplicates.0 || rec.worst_duplicates.1.is_empty() {
                rec.worst_duplicates = (dup, p.report.model.clone());
            }
            let calls = m.remote_calls as f64 / n;
            if calls > rec.most_calls.0 || rec.most_calls.1.is_empty() {
                rec.most_calls = (calls, p.report.model.clone());
            }
        }
    }
    out
}

// ---- JSON ----

fn result_json(p: &ModelPart, run: &Value, i: usize) -> Value {
    let paired = &p.paired[i];
    let mut v = run.clone();
    v["deterministic"] = json!(p.deterministic[i]);
    // The per-intent counts, reported with a seed-level interval (they may exceed one per
    // intent, so a proportion's interval does not apply).
    let per_intent: serde_json::Map<String, Value> = counters::per_intent()
        .map(|c| (c.name.to_string(), estimate_json(level(paired, c.name))))
        .collect();
    v["per_intent"] = Value::Object(per_intent);
    let diffs: serde_json::Map<String, Value> = counters::quantities()
        .enumerate()
        .map(|(k, c)| {
            (
                c.quantity().to_string(),
                difference_json(&paired.difference(k)),
            )
        })
        .collect();
    v["paired_difference"] = json!({
        "baseline": p.baseline,
        "per_intent": diffs,
    });
    v["counterexamples"] = Value::Array(
        p.counterexamples[i]
            .iter()
            .map(|c| {
                json!({
                    "property": c.property.to_string(),
                    "expected": c.expected.map(Want::name),
                    "seed": c.seed,
                    "choices": c.choices,
                    "choices_before_shrinking": c.original_len,
                    "replay": c.replay,
                    "trace_seed": c.trace,
                })
            })
            .collect(),
    );
    v
}

/// The whole report as pretty JSON with a trailing newline.
pub fn render_json(research: &Research) -> String {
    let charts = research.charts();
    let models: Vec<Value> = research
        .parts
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let run: Value = serde_json::from_str(&super::json::render(&p.report))
                .expect("the run JSON is valid");
            let results: Vec<Value> = run["results"]
                .as_array()
                .expect("results")
                .iter()
                .enumerate()
                .map(|(i, v)| result_json(p, v, i))
                .collect();
            json!({
                "file": p.file,
                "file_fnv1a": p.file_hash,
                "provider_preset": p.provider,
                "model": p.report.model,
                "description": p.description,
                "seeds": run["seeds"],
                "charts": charts.iter().filter(|c| c.part == pi).map(|c| c.id.clone()).collect::<Vec<_>>(),
                "results": results,
            })
        })
        .collect();
    let pv = &research.provenance;
    let doc = json!({
        "schema_version": SCHEMA_VERSION,
        "schema": "docs/report-schema.md",
        "provenance": {
            "tool": "retrylab",
            "version": env!("CARGO_PKG_VERSION"),
            "commit": pv.commit,
            "threads": pv.threads,
            "seeds": { "first": pv.first_seed, "count": pv.seeds },
            "baseline": pv.baseline,
            "arguments": {
                "models": pv.models,
                "each_provider": pv.each_provider,
                "matrix": pv.matrix,
                "max_faults": pv.max_faults,
            },
            "command": pv.command("DIR"),
            "models": research.parts.iter().map(|p| json!({"file": p.file, "file_fnv1a": p.file_hash, "provider_preset": p.provider})).collect::<Vec<_>>(),
        },
        "method": method_json(),
        "recommendation": super::recommend::json(&research.parts),
        "headline": records(&research.parts).iter().map(|r| json!({
            "design": r.design,
            "models": r.models,
            "no_duplicate": r.no_duplicate,
            "no_false_outcome": r.honest,
            "none_unresolved": r.resolved,
            "guarantee_applies": r.guaranteed,
            "worst_duplicates_per_intent": { "value": round6(r.worst_duplicates.0), "model": r.worst_duplicates.1 },
            "most_calls_per_intent": { "value": round6(r.most_calls.0), "model": r.most_calls.1 },
        })).collect::<Vec<_>>(),
        "guarantee_matrix": research.matrix.as_ref().map(|m| m.json.clone()),
        "charts": charts.iter().map(|c| json!({
            "id": c.id,
            "model": research.parts[c.part].report.model,
            "kind": c.kind.name(),
            "title": c.title,
            "takeaway": c.takeaway,
        })).collect::<Vec<_>>(),
        "models": models,
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("serializable");
    text.push('\n');
    text
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

fn method_json() -> Value {
    Value::Object(
        METHOD
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect(),
    )
}

// ---- tables, for Markdown and HTML alike ----

/// A table of text cells: a header row and body rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    fn new(head: &[&str]) -> Table {
        Table {
            head: head.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// As a Markdown table (a `|` in a cell is escaped).
    pub fn to_markdown(&self) -> String {
        let line = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut s = line(&self.head);
        s.push_str(&format!("|{}\n", "---|".repeat(self.head.len())));
        for r in &self.rows {
            s.push_str(&line(r));
        }
        s
    }
}

// ---- Markdown ----

fn percent(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// A signed per-intent value: `0` when it is zero, four decimals below 0.001, else three;
/// `n/a` when unbounded (fewer than two seeds).
fn signed(x: f64) -> String {
    if !x.is_finite() {
        "n/a".to_string()
    } else if x.abs() < 5e-9 {
        "0".to_string()
    } else if x.abs() < 0.001 {
        format!("{x:+.4}")
    } else {
        format!("{x:+.3}")
    }
}

/// A per-intent value: `0` when it is exactly zero, `<0.001` when it rounds to zero, else
/// three decimals; `n/a` when unbounded.
pub fn per_intent_text(x: f64) -> String {
    if !x.is_finite() {
        "n/a".to_string()
    } else if x == 0.0 {
        "0".to_string()
    } else if x < 0.0005 {
        "<0.001".to_string()
    } else {
        format!("{x:.3}")
    }
}

/// `count` events over `intents` as [`per_intent_text`].
fn per_intent(count: u64, intents: u64) -> String {
    per_intent_text(count as f64 / intents.max(1) as f64)
}

/// `k/n`.
fn of(k: u64, n: u64) -> String {
    format!("{k}/{n}")
}

/// The headline table: per design, across every model of the report.
pub fn headline_table(parts: &[ModelPart]) -> Table {
    let mut t = Table::new(&[
        "design",
        "no duplicate",
        "no false outcome",
        "none unresolved",
        "guarantee applies",
        "worst duplicates / intent",
        "most calls / intent",
    ]);
    for r in records(parts) {
        t.rows.push(vec![
            r.design.clone(),
            of(r.no_duplicate, r.models),
            of(r.honest, r.models),
            of(r.resolved, r.models),
            of(r.guaranteed, r.models),
            format!("{:.3} ({})", r.worst_duplicates.0, r.worst_duplicates.1),
            format!("{:.2} ({})", r.most_calls.0, r.most_calls.1),
        ]);
    }
    t
}

/// The provider comparison of each model run with `--each-provider`: per design (rows) and
/// preset (columns), duplicate effects per intent and the share of intents left unresolved,
/// marked `†` when some intent was told a false outcome and `*` when an assumption of the
/// design's guarantee does not hold against the preset. One table per model file.
pub fn provider_tables(parts: &[ModelPart]) -> Vec<(String, Table)> {
    let mut files: Vec<&str> = Vec::new();
    for p in parts.iter().filter(|p| p.provider.is_some()) {
        if !files.contains(&p.file.as_str()) {
            files.push(&p.file);
        }
    }
    files
        .into_iter()
        .map(|file| {
            let group: Vec<&ModelPart> = parts
                .iter()
                .filter(|p| p.provider.is_some() && p.file == file)
                .collect();
            let mut head = vec!["design".to_string()];
            head.extend(group.iter().map(|p| p.provider.clone().unwrap_or_default()));
            let mut t = Table {
                head,
                rows: Vec::new(),
            };
            let designs: Vec<&str> = group[0]
                .report
                .results
                .iter()
                .map(|r| r.design.as_str())
                .collect();
            for d in designs {
                let mut row = vec![d.to_string()];
                for p in &group {
                    let cell = p.report.results.iter().find(|r| r.design == d).map(|r| {
                        let m = &r.metrics;
                        let n = m.intents.max(1) as f64;
                        format!(
                            "{} / {} / {}{}{}",
                            per_intent(m.duplicate_effects, m.intents),
                            percent(m.completed as f64 / n),
                            percent(m.unresolved as f64 / n),
                            if m.false_success + m.false_failure > 0 {
                                " †"
                            } else {
                                ""
                            },
                            if r.failed_assumptions().next().is_some() {
                                " *"
                            } else {
                                ""
                            }
                        )
                    });
                    row.push(cell.unwrap_or_else(|| "n/a".to_string()));
                }
                t.rows.push(row);
            }
            (file.to_string(), t)
        })
        .collect()
}

/// What a provider table's cells mean.
pub const PROVIDER_TABLE_NOTE: &str = "Columns are provider presets (the `no_dedup` column is the provider that ignores keys), rows are designs. Each cell: duplicate effects per intent / share of intents completed / share left unresolved (for a person to settle); † some intent was told a false success or failure; * an assumption of the design's guarantee does not hold against this preset (listed below). A design that states no assumption promises nothing. The scenario is the same in every column: only the provider's contract changes (its failure environment, processing time and 5xx after commit, is the model's).";

/// For each `*` of a provider table: the design, the preset and the assumptions that do not
/// hold.
pub fn provider_footnotes(parts: &[ModelPart], file: &str) -> Vec<String> {
    let mut out = Vec::new();
    for p in parts
        .iter()
        .filter(|p| p.provider.is_some() && p.file == file)
    {
        for r in &p.report.results {
            let broken: Vec<&str> = r.failed_assumptions().map(|a| a.name.as_str()).collect();
            if !broken.is_empty() {
                out.push(format!(
                    "`{}` against `{}`: {}",
                    r.design,
                    p.provider.as_deref().unwrap_or_default(),
                    broken.join(", ")
                ));
            }
        }
    }
    out
}

/// One model's table: per design the five outcome rates (shares rounded so that they add up
/// to 100 %, each with its Wilson interval), duplicates per intent with its interval, its
/// paired difference against the baseline, the calls, the assumptions and the verdict. A
/// design whose every seed is the same run gets no interval (`=` after its name).
pub fn model_table(p: &ModelPart) -> Table {
    let mut t = Table::new(&[
        "design",
        "completed",
        "true failure",
        "false success",
        "false failure",
        "unresolved",
        "duplicates / intent (95 %)",
        "Δ duplicates / intent vs baseline (95 % paired; seeds that differ in it)",
        "calls / intent",
        "assumptions",
        "expectations",
    ]);
    for (i, r) in p.report.results.iter().enumerate() {
        let m = &r.metrics;
        let n = m.intents;
        let fixed = p.deterministic[i];
        let counts = outcome_counts(r);
        let shares = super::stats::shares_in_tenths(&counts);
        let rate = |k: usize| {
            let point = format!("{}.{} %", shares[k] / 10, shares[k] % 10);
            if fixed {
                return point;
            }
            let e = wilson(counts[k], n);
            format!("{point} [{}, {}]", percent(e.low), percent(e.high))
        };
        let dup = level(&p.paired[i], "duplicate_effects");
        let d = p.paired[i].difference(q("duplicate_effects"));
        let vs = if r.design == p.baseline {
            "baseline".to_string()
        } else if fixed && p.deterministic[p.baseline_index()] {
            format!("{} (every seed)", signed(d.mean))
        } else {
            format!(
                "{} [{}, {}]; {}",
                signed(d.mean),
                signed(d.low),
                signed(d.high),
                d.disagree
            )
        };
        t.rows.push(vec![
            format!("{}{}", r.design, if fixed { " =" } else { "" }),
            rate(0),
            rate(1),
            rate(2),
            rate(3),
            rate(4),
            if fixed {
                per_intent(m.duplicate_effects, n)
            } else {
                format!(
                    "{} [{}, {}]",
                    per_intent(m.duplicate_effects, n),
                    per_intent_text(dup.low),
                    per_intent_text(dup.high)
                )
            },
            vs,
            format!("{:.2}", m.remote_calls as f64 / n.max(1) as f64),
            assumptions_text(r),
            super::table::verdict(r),
        ]);
    }
    t
}

/// The sentence under a model's table.
pub const MODEL_TABLE_NOTE: &str = "Shares of all intents, rounded so that the five outcomes add up to 100 %, with 95 % Wilson intervals. `=` after a design: its runs make no random choice, so every seed is the same run and no interval applies. The Δ column is the paired difference in duplicate effects per intent against the baseline, seed by seed.";

/// `all hold`, `none stated`, or the names of those that do not hold.
pub fn assumptions_text(r: &DesignResult) -> String {
    if r.assumptions.is_empty() {
        return "none stated".to_string();
    }
    let failed: Vec<&str> = r.failed_assumptions().map(|a| a.name.as_str()).collect();
    if failed.is_empty() {
        "all hold".to_string()
    } else {
        format!("broken: {}", failed.join(", "))
    }
}

/// The distributions of one model: count and p50 / p90 / p99 / max per design.
pub fn distributions_table(p: &ModelPart) -> Table {
    let mut t = Table::new(&[
        "design",
        "reconciliation: n; p50 / p90 / p99 / max",
        "time to outcome: n; p50 / p90 / p99 / max",
    ]);
    let cell = |h: &Histogram| {
        let p = h.percentiles();
        match (p.p50, p.p90, p.p99, p.max) {
            (Some(a), Some(b), Some(c), Some(d)) => format!(
                "{}; {} / {} / {} / {}",
                p.count,
                human_ms(a),
                human_ms(b),
                human_ms(c),
                human_ms(d)
            ),
            _ => "none".to_string(),
        }
    };
    for r in &p.report.results {
        t.rows.push(vec![
            r.design.clone(),
            cell(&r.metrics.reconciliation_ms),
            cell(&r.metrics.time_to_outcome_ms),
        ]);
    }
    t
}

/// Every counterexample of a model, with its design.
pub fn shown(p: &ModelPart) -> Vec<(&str, &Shown)> {
    p.report
        .results
        .iter()
        .zip(&p.counterexamples)
        .flat_map(|(r, cs)| cs.iter().map(move |c| (r.design.as_str(), c)))
        .collect()
}

/// What the counterexample list says.
pub const COUNTEREXAMPLES_NOTE: &str = "Counterexamples: for each property a design violates, its first violating seed, shrunk to a shortest choice vector that still violates it (\"N choices from M\": the seed's run made M decisions, the shrunk one N; every decision left out takes its default). The command replays that run step by step.";

/// How a counterexample relates to the model's expectation.
pub fn expectation_text(c: &Shown) -> &'static str {
    match c.expected {
        Some(Want::Hold) => "expected to hold: FAIL",
        Some(Want::Violate) => "expected",
        None => "no expectation",
    }
}

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

/// How to use the report to choose a design, in order.
pub const READING: [&str; 4] = [
    "Find your provider's contract: a column of the provider comparison (the same scenario against each preset), or the model closest to yours. A design at 0.000 duplicates without a mark there left no duplicate effect on any seed of that scenario, and every assumption of its guarantee holds against that contract.",
    "Check what the guarantee rests on in the guarantee matrix: a counterexample in a column means the design duplicates (or lies) when the provider breaks that assumption, with the command that replays it; certified means no schedule within the fault budget does.",
    "Read the confidence in the model's table: each rate with its 95 % interval, and the paired difference against the baseline with the number of seeds where the two differ (a difference on few seeds is a rare window, not a trend).",
    "Read the cost: calls per intent (retry amplification) and the reconciliation and time-to-outcome distributions; a design that escalates more leaves more intents unresolved for a person to settle.",
];

/// The sentence under the headline table.
pub fn headline_text(research: &Research) -> String {
    format!(
        "Across the {} model{} of this report: in how many the design left no duplicate effect on any seed, told no false success or false failure, left no intent unresolved, and had every assumption of its guarantee hold (a design that states none has no guarantee). The models differ in kind (the failure windows are built to break designs; the provider comparison is one scenario against each preset), so these counts are not a ranking: the provider comparison, the guarantee matrix and each model's table with its intervals are.",
        research.parts.len(),
        if research.parts.len() == 1 { "" } else { "s" },
    )
}

/// The whole report as Markdown: the headline table first, then the guarantee matrix, the
/// method, and each model's tables and counterexamples.
pub fn render_markdown(research: &Research) -> String {
    let mut s = String::new();
    s.push_str("# retrylab comparison report\n\n");
    s.push_str(&super::recommend::markdown(&research.parts));
    s.push_str("\n## Headline\n\n");
    s.push_str(&headline_table(&research.parts).to_markdown());
    let _ = writeln!(s, "\n{}", headline_text(research));
    let _ = writeln!(s, "\n{}", provenance_text(&research.provenance));
    s.push_str("\nChoosing a design with this report:\n\n");
    for (i, step) in READING.iter().enumerate() {
        let _ = writeln!(s, "{}. {step}", i + 1);
    }
    for (file, t) in provider_tables(&research.parts) {
        let _ = writeln!(s, "\n## Provider comparison: `{file}`\n");
        s.push_str(&t.to_markdown());
        let _ = writeln!(s, "\n{PROVIDER_TABLE_NOTE}\n");
        for note in provider_footnotes(&research.parts, &file) {
            let _ = writeln!(s, "- \\* {note}");
        }
    }
    if let Some(m) = &research.matrix {
        s.push_str("\n## Guarantee matrix\n\n");
        s.push_str(&m.markdown);
    }
    s.push_str("\n## Method\n\n");
    for (k, v) in METHOD {
        let _ = writeln!(s, "- **{k}**: {v}.");
    }
    for p in &research.parts {
        let _ = writeln!(
            s,
            "\n## {}\n\n{}\n\n{}.\n",
            p.report.model,
            p.description,
            source_text(p)
        );
        s.push_str(&model_table(p).to_markdown());
        let _ = writeln!(s, "\n{MODEL_TABLE_NOTE}\n");
        s.push_str(&distributions_table(p).to_markdown());
        let shown = shown(p);
        if !shown.is_empty() {
            let _ = writeln!(s, "\n{COUNTEREXAMPLES_NOTE}\n");
            for (design, c) in shown {
                let _ = writeln!(
                    s,
                    "- `{design}` violates `{}` ({}; seed {}, {} choices from {}): `{}`",
                    c.property,
                    expectation_text(c),
                    c.seed,
                    c.choices_len,
                    c.original_len,
                    c.replay
                );
            }
        }
    }
    s
}

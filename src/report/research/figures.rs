//! The report's charts: which ones each model gets, the line under each, and their SVG.

use super::tables::{per_intent_text, percent};
use super::{ModelPart, Research, level, outcome_counts, wilson};
use crate::check::{Histogram, Metrics};
use crate::explore::DesignResult;
use crate::report::charts::{self, Cdf, Estimate, RateRow};
use crate::report::stats::human_ms;

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

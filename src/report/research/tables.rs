//! Tables of text cells, for Markdown and HTML alike: the number formats they share, and
//! each model's tables (outcomes, distributions) and counterexamples.

use super::{ModelPart, Shown, level, outcome_counts, q, wilson};
use crate::check::Histogram;
use crate::explore::DesignResult;
use crate::model::Want;
use crate::report::stats::human_ms;

/// A table of text cells: a header row and body rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub(super) fn new(head: &[&str]) -> Table {
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

pub(super) fn percent(x: f64) -> String {
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
pub(super) fn per_intent(count: u64, intents: u64) -> String {
    per_intent_text(count as f64 / intents.max(1) as f64)
}

/// `k/n`.
pub(super) fn of(k: u64, n: u64) -> String {
    format!("{k}/{n}")
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
        let shares = crate::report::stats::shares_in_tenths(&counts);
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
            crate::report::table::verdict(r),
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

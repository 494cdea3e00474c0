//! The table form of a report: one row per design, columns explained by `COLUMNS`.

use std::fmt::Write;

use super::Report;
use crate::check::{Metrics, Percentiles};

/// Column headers and what each means (printed by `--help` and the README).
pub const COLUMNS: [(&str, &str); 15] = [
    ("design", "executor design under test"),
    ("intents", "intents the user expressed (all seeds)"),
    ("effects", "effects the provider committed (ground truth)"),
    ("completed", "told success, and the effect exists"),
    ("dup", "duplicate effects: effects beyond one per intent"),
    ("drifted", "effects with arguments the user did not ask for"),
    ("comp", "compensating effects (undoing an earlier step)"),
    ("false_ok", "told success, but no effect exists"),
    ("false_fail", "told failure, but the effect exists"),
    (
        "merged",
        "genuine repeats suppressed (told success, no own effect)",
    ),
    (
        "unresolved",
        "user told nothing or 'unresolved' at the horizon",
    ),
    ("unknown_ops", "operations still unknown at the horizon"),
    (
        "calls/intent",
        "remote calls per intent (retry amplification)",
    ),
    ("recon_p50/p99", "time unknown before resolution, ms"),
    (
        "outcome_p50",
        "time from intent to success/failure message, ms",
    ),
];

fn cells(design: &str, m: &Metrics) -> [String; 15] {
    let recon = Percentiles::of(&m.reconciliation_ms);
    let outcome = Percentiles::of(&m.time_to_outcome_ms);
    let ms = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    [
        design.to_string(),
        m.intents.to_string(),
        m.effects.to_string(),
        m.completed.to_string(),
        m.duplicate_effects.to_string(),
        m.drifted_effects.to_string(),
        m.compensations.to_string(),
        m.false_success.to_string(),
        m.false_failure.to_string(),
        m.merged_repeats.to_string(),
        m.unresolved.to_string(),
        m.unknown_ops.to_string(),
        format!("{:.2}", m.calls_per_intent()),
        format!("{}/{}", ms(recon.p50), ms(recon.p99)),
        ms(outcome.p50),
    ]
}

/// The report as an aligned text table.
pub fn render(report: &Report) -> String {
    let rows: Vec<[String; 15]> = report
        .results
        .iter()
        .map(|r| cells(&r.design, &r.metrics))
        .collect();
    let mut widths: Vec<usize> = COLUMNS.iter().map(|(h, _)| h.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let mut out = String::new();
    let last = report.first_seed + report.seed_count.saturating_sub(1);
    let _ = writeln!(
        out,
        "model {}: {} seed{} per design (seeds {}..={})",
        report.model,
        report.seed_count,
        if report.seed_count == 1 { "" } else { "s" },
        report.first_seed,
        last
    );
    let line = |out: &mut String, row: &[String]| {
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            if i == 0 {
                let _ = write!(out, "{cell:<w$}");
            } else {
                let _ = write!(out, "  {cell:>w$}");
            }
        }
        out.push('\n');
    };
    let headers: Vec<String> = COLUMNS.iter().map(|(h, _)| h.to_string()).collect();
    line(&mut out, &headers);
    for row in &rows {
        line(&mut out, row);
    }
    out
}

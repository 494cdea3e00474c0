//! The JSON form of a report: stable field order, so equal runs give equal bytes.

use serde::Serialize;

use super::Report;
use crate::check::{Metrics, Percentiles};

#[derive(Serialize)]
struct Json<'a> {
    model: &'a str,
    seeds: Seeds,
    results: Vec<Entry<'a>>,
}

#[derive(Serialize)]
struct Seeds {
    first: u64,
    count: u64,
}

#[derive(Serialize)]
struct Entry<'a> {
    design: &'a str,
    seeds: u64,
    totals: Totals,
}

#[derive(Serialize)]
struct Totals {
    intents: u64,
    effects: u64,
    completed: u64,
    duplicate_effects: u64,
    drifted_effects: u64,
    compensations: u64,
    false_success: u64,
    false_failure: u64,
    merged_repeats: u64,
    unresolved: u64,
    unknown_ops: u64,
    remote_calls: u64,
    remote_calls_per_intent: f64,
    reconciliation_ms: Percentiles,
    time_to_outcome_ms: Percentiles,
}

impl Totals {
    fn of(m: &Metrics) -> Totals {
        Totals {
            intents: m.intents,
            effects: m.effects,
            completed: m.completed,
            duplicate_effects: m.duplicate_effects,
            drifted_effects: m.drifted_effects,
            compensations: m.compensations,
            false_success: m.false_success,
            false_failure: m.false_failure,
            merged_repeats: m.merged_repeats,
            unresolved: m.unresolved,
            unknown_ops: m.unknown_ops,
            remote_calls: m.remote_calls,
            remote_calls_per_intent: (m.calls_per_intent() * 1000.0).round() / 1000.0,
            reconciliation_ms: Percentiles::of(&m.reconciliation_ms),
            time_to_outcome_ms: Percentiles::of(&m.time_to_outcome_ms),
        }
    }
}

/// The report as pretty-printed JSON with a trailing newline.
pub fn render(report: &Report) -> String {
    let json = Json {
        model: &report.model,
        seeds: Seeds {
            first: report.first_seed,
            count: report.seed_count,
        },
        results: report
            .results
            .iter()
            .map(|r| Entry {
                design: &r.design,
                seeds: r.metrics.seeds,
                totals: Totals::of(&r.metrics),
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&json).expect("report serializes");
    text.push('\n');
    text
}

//! The JSON form of a report: stable field order, so equal runs give equal bytes. Totals are
//! exact integers; rates and intervals are rounded to six decimals.

use serde::Serialize;

use super::stats::Rate;
use super::{DesignResult, Report};
use crate::check::{Metrics, Percentiles};
use crate::model::Want;

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
    /// Per intent, with 95 % Wilson intervals; the five outcome rates add up to 1.
    rates: Rates,
    /// The design's contract assumptions, each judged against the model.
    assumptions: Vec<AssumptionEntry<'a>>,
    properties: Vec<PropertyEntry>,
    failures: Vec<Failure>,
}

#[derive(Serialize)]
struct Totals {
    intents: u64,
    effects: u64,
    completed: u64,
    true_failures: u64,
    duplicate_effects: u64,
    drifted_effects: u64,
    compensations: u64,
    false_success: u64,
    false_failure: u64,
    merged_repeats: u64,
    masked_mismatches: u64,
    unresolved: u64,
    unknown_ops: u64,
    false_resolutions: u64,
    remote_calls: u64,
    remote_calls_per_intent: f64,
    /// Seeds whose run was cut by the events budget before its horizon.
    budget_runs: u64,
    reconciliation_ms: Percentiles,
    time_to_outcome_ms: Percentiles,
}

#[derive(Serialize)]
struct Rates {
    completed: RateEntry,
    true_failure: RateEntry,
    false_success: RateEntry,
    false_failure: RateEntry,
    unresolved: RateEntry,
    duplicate_effects_per_intent: f64,
}

#[derive(Serialize)]
struct RateEntry {
    rate: f64,
    low: f64,
    high: f64,
}

#[derive(Serialize)]
struct AssumptionEntry<'a> {
    name: &'a str,
    holds: bool,
    why: &'a str,
}

#[derive(Serialize)]
struct PropertyEntry {
    property: String,
    violating_seeds: u64,
    /// `hold` or `violate` when the model expects it of this design.
    expect: Option<&'static str>,
    /// Whether that expectation was met (absent without one).
    met: Option<bool>,
}

#[derive(Serialize)]
struct Failure {
    property: String,
    seed: u64,
    replay: String,
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

fn rate(k: u64, n: u64) -> RateEntry {
    let r = Rate::wilson(k, n);
    RateEntry {
        rate: round6(r.rate),
        low: round6(r.low),
        high: round6(r.high),
    }
}

impl Totals {
    fn of(m: &Metrics) -> Totals {
        Totals {
            intents: m.intents,
            effects: m.effects,
            completed: m.completed,
            true_failures: m.true_failures,
            duplicate_effects: m.duplicate_effects,
            drifted_effects: m.drifted_effects,
            compensations: m.compensations,
            false_success: m.false_success,
            false_failure: m.false_failure,
            merged_repeats: m.merged_repeats,
            masked_mismatches: m.masked_mismatches,
            unresolved: m.unresolved,
            unknown_ops: m.unknown_ops,
            false_resolutions: m.false_resolutions,
            remote_calls: m.remote_calls,
            remote_calls_per_intent: (m.calls_per_intent() * 1000.0).round() / 1000.0,
            budget_runs: m.budget_runs,
            reconciliation_ms: m.reconciliation_ms.percentiles(),
            time_to_outcome_ms: m.time_to_outcome_ms.percentiles(),
        }
    }
}

impl Rates {
    fn of(m: &Metrics) -> Rates {
        let n = m.intents;
        let dup = if n == 0 {
            0.0
        } else {
            m.duplicate_effects as f64 / n as f64
        };
        Rates {
            completed: rate(m.completed, n),
            true_failure: rate(m.true_failures, n),
            false_success: rate(m.false_success, n),
            false_failure: rate(m.false_failure, n),
            unresolved: rate(m.unresolved, n),
            duplicate_effects_per_intent: round6(dup),
        }
    }
}

fn entry<'a>(report: &Report, r: &'a DesignResult) -> Entry<'a> {
    let expected = |p| r.expect.iter().find(|(q, _)| *q == p).map(|(_, w)| *w);
    let properties = r
        .violations
        .counts
        .iter()
        .map(|&(p, n)| {
            let want = expected(p);
            PropertyEntry {
                property: p.to_string(),
                violating_seeds: n,
                expect: want.map(Want::name),
                met: want.map(|w| r.met(p, w)),
            }
        })
        .collect();
    let failures = r
        .violations
        .counts
        .iter()
        .zip(&r.failures)
        .flat_map(|((p, _), seeds)| {
            seeds.iter().map(move |&seed| Failure {
                property: p.to_string(),
                seed,
                replay: report.replay.seed(&r.design, seed),
            })
        })
        .collect();
    Entry {
        design: &r.design,
        seeds: r.metrics.seeds,
        totals: Totals::of(&r.metrics),
        rates: Rates::of(&r.metrics),
        assumptions: r
            .assumptions
            .iter()
            .map(|a| AssumptionEntry {
                name: &a.name,
                holds: a.holds,
                why: &a.why,
            })
            .collect(),
        properties,
        failures,
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
        results: report.results.iter().map(|r| entry(report, r)).collect(),
    };
    let mut text = serde_json::to_string_pretty(&json).expect("report serializes");
    text.push('\n');
    text
}

//! The JSON form of a report: stable field order, so equal runs give equal bytes. Totals are
//! exact integers; rates and intervals are rounded to six decimals.

use serde::Serialize;

use super::stats::Rate;
use crate::check::Metrics;
use crate::check::counters::{COUNTERS, Wide, outcomes};
use crate::explore::{DesignResult, Report};
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
    totals: Totals<'a>,
    /// Per intent, with 95 % Wilson intervals; the five outcome rates add up to 1.
    rates: Rates<'a>,
    /// The design's contract assumptions, each judged against the model.
    assumptions: Vec<AssumptionEntry<'a>>,
    properties: Vec<PropertyEntry>,
    failures: Vec<Failure>,
}

/// Every counter of [`crate::check::counters::COUNTERS`] by name, in their order (with
/// `NAME_per_intent` after a counter the wide table shows per intent), then the
/// distributions.
struct Totals<'a>(&'a Metrics);

impl Serialize for Totals<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let m = self.0;
        let mut map = s.serialize_map(None)?;
        for c in COUNTERS {
            let total = (c.total)(m);
            map.serialize_entry(c.name, &total)?;
            if let Wide::PerIntent(_) = c.wide {
                let per_intent = if m.intents == 0 {
                    0.0
                } else {
                    total as f64 / m.intents as f64
                };
                map.serialize_entry(
                    &format!("{}_per_intent", c.name),
                    &((per_intent * 1000.0).round() / 1000.0),
                )?;
            }
        }
        map.serialize_entry("reconciliation_ms", &m.reconciliation_ms.percentiles())?;
        map.serialize_entry("time_to_outcome_ms", &m.time_to_outcome_ms.percentiles())?;
        map.end()
    }
}

/// The outcome shares by their rate names, then duplicate effects per intent.
struct Rates<'a>(&'a Metrics);

impl Serialize for Rates<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let m = self.0;
        let n = m.intents;
        let mut map = s.serialize_map(None)?;
        for c in outcomes() {
            map.serialize_entry(c.quantity(), &rate((c.total)(m), n))?;
        }
        let dup = if n == 0 {
            0.0
        } else {
            m.duplicate_effects as f64 / n as f64
        };
        map.serialize_entry("duplicate_effects_per_intent", &round6(dup))?;
        map.end()
    }
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
        totals: Totals(&r.metrics),
        rates: Rates(&r.metrics),
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

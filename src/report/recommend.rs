//! What to pick: per scenario (a model, or a model against one provider preset), the designs
//! that met the safety properties on every seed with their guarantee applying, ranked by a
//! stated rule, and for every other design the one reason it is not recommended, with its
//! counterexample.
//!
//! A design is recommended only when the ledger shows no unsafe outcome on any seed of the
//! sweep, *and* it has a guarantee that covers `no_duplicate` and applies here (every
//! assumption of it holds against the scenario). Figures alone never suffice: a design that
//! states no guarantee (or whose guarantee does not apply here) may have been lucky on these
//! seeds, and the guarantee matrix is where it would be broken. Each pick says which of the
//! safety properties its guarantee covers and which only held on every seed.

use super::research::{ModelPart, Shown};
use crate::check::{Metrics, Property};
use crate::explore::DesignResult;

/// The properties a recommended design must not violate on any seed.
pub const SAFETY: [Property; 4] = [
    Property::NoDuplicate,
    Property::NoFalseSuccess,
    Property::NoFalseFailure,
    Property::NoWrongReceipt,
];

/// The rule, as the report states it.
pub const RULE: &str = "A design is recommended for a scenario only when, on every seed, it left no duplicate effect, told no false success or false failure and reported no wrong receipt (no_duplicate, no_false_success, no_false_failure, no_wrong_receipt, judged against the ledger), and it has a guarantee that covers no_duplicate and applies there: every assumption it states holds in the scenario (the provider's contract, and the executor's own, such as a durable journal). A design that states no guarantee is never recommended on figures alone; each pick says which safety properties its guarantee covers and which only held on every seed. The recommended designs are ranked by the share of intents left unresolved (for a person to settle), then remote calls per intent, then the 95th percentile of reconciliation time, lowest first; every other design is listed with the first reason it is not recommended (in this order: a safety property violated, with its counterexample; runs cut by the events budget or a property not evaluated; no guarantee; a guarantee that does not apply; a guarantee that does not cover no_duplicate).";

/// A recommended design and the figures that rank it.
#[derive(Clone, Debug, PartialEq)]
pub struct Pick {
    pub design: String,
    /// The safety properties its guarantee covers, and those that only held on every seed.
    pub guaranteed: Vec<Property>,
    pub held: Vec<Property>,
    /// Share of intents left unresolved.
    pub unresolved: f64,
    pub calls_per_intent: f64,
    /// 95th percentile of reconciliation time; `None` when nothing needed reconciling.
    pub reconciliation_p95_ms: Option<u64>,
}

crate::sim::named_enum! {
    /// The kind of reason a design is not recommended, in the order they are checked.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Why {
        /// It violated a safety property on some seed.
        Unsafe => "unsafe",
        /// Some seeds' runs were cut by the events budget (unfinished runs prove nothing), or a
        /// safety property was not evaluated.
        Unjudged => "unjudged",
        /// It states no guarantee.
        NoGuarantee => "no_guarantee",
        /// An assumption of its guarantee does not hold here.
        NotApplicable => "guarantee_not_applicable",
        /// Its guarantee does not cover `no_duplicate`.
        NotCovering => "guarantee_not_covering_no_duplicate",
    }
}

impl Why {}

/// A design not recommended, why, and the counterexample that shows it (when the reason is
/// a violated property).
#[derive(Clone, Debug)]
pub struct Excluded<'a> {
    pub design: String,
    pub why: Why,
    pub reason: String,
    pub counterexample: Option<&'a Shown>,
}

/// The recommendation for one scenario.
#[derive(Clone, Debug)]
pub struct Recommendation<'a> {
    /// Index of the model part in the report.
    pub part: usize,
    pub scenario: String,
    pub provider: Option<String>,
    pub picks: Vec<Pick>,
    pub excluded: Vec<Excluded<'a>>,
}

impl Recommendation<'_> {
    /// One line: what to pick and why, or that nothing qualifies and why.
    pub fn summary(&self) -> String {
        match self.picks.first() {
            Some(best) => {
                let others: Vec<&str> = self.picks[1..].iter().map(|p| p.design.as_str()).collect();
                format!(
                    "pick {} ({}): {}{}",
                    best.design,
                    best.grounds(),
                    best.figures(),
                    if others.is_empty() {
                        String::new()
                    } else {
                        format!("; then {}", others.join(", "))
                    }
                )
            }
            None => {
                let count = |k: Why| self.excluded.iter().filter(|e| e.why == k).count();
                let mut why = Vec::new();
                for (k, text) in [
                    (Why::Unsafe, "violate a safety property"),
                    (Why::Unjudged, "were not fully judged"),
                    (Why::NoGuarantee, "state no guarantee"),
                    (
                        Why::NotApplicable,
                        "have a guarantee that does not apply here",
                    ),
                    (
                        Why::NotCovering,
                        "have a guarantee that does not cover no_duplicate",
                    ),
                ] {
                    let n = count(k);
                    if n > 0 {
                        why.push(format!("{n} {text}"));
                    }
                }
                format!("no design qualifies: {}", why.join(", "))
            }
        }
    }
}

fn names(ps: &[Property]) -> String {
    let v: Vec<String> = ps.iter().map(ToString::to_string).collect();
    v.join(", ")
}

impl Pick {
    /// What the pick rests on: `guaranteed: no_duplicate, no_wrong_receipt; held on every
    /// seed: no_false_success, no_false_failure`.
    pub fn grounds(&self) -> String {
        let mut s = format!("guaranteed: {}", names(&self.guaranteed));
        if !self.held.is_empty() {
            s.push_str(&format!("; held on every seed: {}", names(&self.held)));
        }
        s
    }

    /// `0.0 % unresolved, 2.00 calls/intent, reconciliation p95 5.9 s`.
    pub fn figures(&self) -> String {
        format!(
            "{:.1} % unresolved, {:.2} calls / intent{}",
            self.unresolved * 100.0,
            self.calls_per_intent,
            match self.reconciliation_p95_ms {
                Some(ms) => format!(", reconciliation p95 {}", super::stats::human_ms(ms)),
                None => String::new(),
            }
        )
    }
}

fn share(k: u64, n: u64) -> f64 {
    k as f64 / n.max(1) as f64
}

/// Why `r` is not recommended, and the counterexample behind it; `None` when it qualifies.
fn reason<'a>(r: &DesignResult, shown: &'a [Shown]) -> Option<(Why, String, Option<&'a Shown>)> {
    let m: &Metrics = &r.metrics;
    let violated: Vec<Property> = SAFETY
        .into_iter()
        .filter(|&p| r.violations.of(p) > 0)
        .collect();
    if let Some(&first) = violated.first() {
        let also = if violated.len() > 1 {
            format!(" (also {})", names(&violated[1..]))
        } else {
            String::new()
        };
        return Some((
            Why::Unsafe,
            format!(
                "violates {first} on {} of {} seeds{also}",
                r.violations.of(first),
                m.seeds
            ),
            shown.iter().find(|c| c.property == first),
        ));
    }
    if m.budget_runs > 0 {
        return Some((
            Why::Unjudged,
            format!(
                "{} of {} seeds were cut by the events budget: not judged",
                m.budget_runs, m.seeds
            ),
            None,
        ));
    }
    let unevaluated: Vec<Property> = SAFETY
        .into_iter()
        .filter(|&p| !r.violations.counts.iter().any(|(q, _)| *q == p))
        .collect();
    if !unevaluated.is_empty() {
        return Some((
            Why::Unjudged,
            format!("{} not evaluated: not judged", names(&unevaluated)),
            None,
        ));
    }
    if r.guarantee.is_empty() {
        return Some((
            Why::NoGuarantee,
            "safe on these seeds, but it states no guarantee: not recommended on figures alone"
                .to_string(),
            None,
        ));
    }
    let broken: Vec<&str> = r.failed_assumptions().map(|a| a.name.as_str()).collect();
    if !broken.is_empty() {
        return Some((
            Why::NotApplicable,
            format!(
                "safe on these seeds, but its guarantee does not apply here: {} does not hold",
                broken.join(", ")
            ),
            None,
        ));
    }
    if !r.guarantee.contains(&Property::NoDuplicate) {
        return Some((
            Why::NotCovering,
            "safe on these seeds, but its guarantee does not cover no_duplicate".to_string(),
            None,
        ));
    }
    None
}

/// The recommendation for model part `index`.
pub fn recommend(index: usize, p: &ModelPart) -> Recommendation<'_> {
    let mut picks = Vec::new();
    let mut excluded = Vec::new();
    for (i, r) in p.report.results.iter().enumerate() {
        // Every design has its list of counterexamples (empty when it violated nothing).
        let shown = p.counterexamples.get(i).map_or(&[][..], Vec::as_slice);
        match reason(r, shown) {
            Some((why, reason, counterexample)) => excluded.push(Excluded {
                design: r.design.clone(),
                why,
                reason,
                counterexample,
            }),
            None => {
                let m = &r.metrics;
                let (guaranteed, held) = SAFETY.into_iter().partition(|p| r.guarantee.contains(p));
                picks.push(Pick {
                    design: r.design.clone(),
                    guaranteed,
                    held,
                    unresolved: share(m.unresolved, m.intents),
                    calls_per_intent: share(m.remote_calls, m.intents),
                    reconciliation_p95_ms: m.reconciliation_ms.percentile(95),
                });
            }
        }
    }
    picks.sort_by(|a, b| {
        a.unresolved
            .total_cmp(&b.unresolved)
            .then(a.calls_per_intent.total_cmp(&b.calls_per_intent))
            .then(
                a.reconciliation_p95_ms
                    .unwrap_or(0)
                    .cmp(&b.reconciliation_p95_ms.unwrap_or(0)),
            )
            .then(a.design.cmp(&b.design))
    });
    Recommendation {
        part: index,
        scenario: p.report.model.clone(),
        provider: p.provider.clone(),
        picks,
        excluded,
    }
}

/// Every scenario's recommendation, in the report's order.
pub fn recommendations(parts: &[ModelPart]) -> Vec<Recommendation<'_>> {
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| recommend(i, p))
        .collect()
}

/// `unresolved` as JSON would round it.
fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// The recommendations as the report's JSON (`recommendation`).
pub fn json(parts: &[ModelPart]) -> serde_json::Value {
    let scenarios: Vec<serde_json::Value> = recommendations(parts)
        .iter()
        .map(|r| {
            serde_json::json!({
                "model": r.scenario,
                "file": parts[r.part].file,
                "provider_preset": r.provider,
                "summary": r.summary(),
                "picks": r.picks.iter().map(|p| serde_json::json!({
                    "design": p.design,
                    "guaranteed": p.guaranteed.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "held_on_every_seed": p.held.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "unresolved_share": round6(p.unresolved),
                    "calls_per_intent": round6(p.calls_per_intent),
                    "reconciliation_p95_ms": p.reconciliation_p95_ms,
                })).collect::<Vec<_>>(),
                "excluded": r.excluded.iter().map(|e| serde_json::json!({
                    "design": e.design,
                    "why": e.why.name(),
                    "reason": e.reason,
                    "counterexample": e.counterexample.map(|c| serde_json::json!({
                        "property": c.property.to_string(),
                        "replay": c.replay,
                    })),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "rule": RULE, "scenarios": scenarios })
}

/// The recommendations as Markdown: the rule, a table of what to pick per scenario, then
/// per scenario the designs not recommended, each with its reason and replay command.
pub fn markdown(parts: &[ModelPart]) -> String {
    use std::fmt::Write;
    let all = recommendations(parts);
    let mut s = String::from("## What to pick\n\n");
    let _ = writeln!(s, "{RULE}\n");
    s.push_str("| scenario | recommendation |\n|---|---|\n");
    for r in &all {
        let _ = writeln!(s, "| {} | {} |", r.scenario, r.summary());
    }
    s.push_str("\nNot recommended, and why:\n");
    for r in &all {
        let _ = writeln!(s, "\n- **{}**:", r.scenario);
        for e in &r.excluded {
            let _ = write!(s, "  - `{}`: {}", e.design, e.reason);
            if let Some(c) = e.counterexample {
                let _ = write!(s, ": `{}`", c.replay);
            }
            s.push('\n');
        }
    }
    s
}

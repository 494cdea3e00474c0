//! The headline: each design across every model of the report, and how to read it.

use super::tables::{Table, of};
use super::{ModelPart, Research};

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

//! The comparison report of `retrylab report`: every model × design on paired seeds, as
//! JSON (every figure, `schema_version`) and Markdown (the headline table first).
//!
//! Per design it carries the run's figures as `run --format json` gives them (totals, the
//! outcome rates with 95 % Wilson intervals, the distributions, the assumptions judged
//! against the model, the properties and the expectations), and the paired differences of
//! every per-intent rate against a baseline design on the same seeds. Nothing in it depends
//! on the thread count or the clock: the same inputs give the same bytes.

use std::fmt::Write;

use serde_json::{Value, json};

use super::Report;
use super::stats::tenths_text;
use crate::explore::paired::{Difference, Paired, QUANTITIES};

/// The version of the JSON layout below; it changes when a field changes meaning or goes.
pub const SCHEMA_VERSION: u32 = 1;

/// One model's part of the report.
pub struct ModelPart {
    /// The model file as given on the command line.
    pub file: String,
    /// FNV-1a of the file's bytes, in hex: which model exactly.
    pub file_hash: String,
    pub report: Report,
    pub baseline: String,
    /// Per design of `report.results` (same order): its paired sums against the baseline.
    pub paired: Vec<Paired>,
}

/// FNV-1a of `bytes`, as 16 hex digits.
pub fn file_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
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

/// The whole report as pretty JSON with a trailing newline.
pub fn render_json(parts: &[ModelPart]) -> String {
    let models: Vec<Value> = parts
        .iter()
        .map(|p| {
            let run: Value = serde_json::from_str(&super::json::render(&p.report))
                .expect("the run JSON is valid");
            let results: Vec<Value> = run["results"]
                .as_array()
                .expect("results")
                .iter()
                .zip(&p.paired)
                .map(|(r, paired)| {
                    let mut r = r.clone();
                    let diffs: serde_json::Map<String, Value> = QUANTITIES
                        .iter()
                        .enumerate()
                        .map(|(i, q)| (q.to_string(), difference_json(&paired.difference(i))))
                        .collect();
                    r["paired_difference"] = json!({
                        "baseline": p.baseline,
                        "per_intent": diffs,
                    });
                    r
                })
                .collect();
            json!({
                "file": p.file,
                "file_fnv1a": p.file_hash,
                "model": p.report.model,
                "seeds": run["seeds"],
                "results": results,
            })
        })
        .collect();
    let doc = json!({
        "schema_version": SCHEMA_VERSION,
        "tool": { "name": "retrylab", "version": env!("CARGO_PKG_VERSION") },
        "method": {
            "rates": "per intent, with 95 % Wilson score intervals",
            "paired_difference": "design minus baseline per intent, seed by seed on the same seeds; mean and 95 % normal interval of the per-seed differences (mean ± 1.96 sd / sqrt(seeds)); seeds_that_differ counts seeds where the two differ at all",
            "distributions": "HDR histograms, 3 significant digits",
            "threads": "figures do not depend on the number of threads",
        },
        "models": models,
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("serializable");
    text.push('\n');
    text
}

fn percent(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

fn signed(x: f64) -> String {
    if x.abs() < 5e-7 {
        "0".to_string()
    } else {
        format!("{x:+.3}")
    }
}

/// The whole report as Markdown: the headline table first (every model and design: the
/// share of intents completed and unresolved, duplicate effects per intent and its paired
/// difference against the baseline, the verdict), then each model's details.
pub fn render_markdown(parts: &[ModelPart]) -> String {
    let mut s = String::new();
    s.push_str("# retrylab comparison report\n\n");
    s.push_str(
        "| model | design | completed | unresolved | false success | false failure | duplicates / intent | vs baseline (95 % paired) | calls / intent | verdict |\n",
    );
    s.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for p in parts {
        for (r, paired) in p.report.results.iter().zip(&p.paired) {
            let m = &r.metrics;
            let n = m.intents.max(1) as f64;
            let dup = paired.difference(
                QUANTITIES
                    .iter()
                    .position(|q| *q == "duplicate_effects")
                    .unwrap_or(5),
            );
            let vs = if r.design == p.baseline {
                "baseline".to_string()
            } else {
                format!(
                    "{} [{}, {}]",
                    signed(dup.mean),
                    signed(dup.low),
                    signed(dup.high)
                )
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {:.3} | {} | {:.2} | {} |",
                p.report.model,
                r.design,
                percent(m.completed as f64 / n),
                percent(m.unresolved as f64 / n),
                percent(m.false_success as f64 / n),
                percent(m.false_failure as f64 / n),
                m.duplicate_effects as f64 / n,
                vs,
                m.remote_calls as f64 / n,
                super::table::verdict(r)
            );
        }
    }
    s.push_str(
        "\nRates are per intent over all seeds. The paired column is the difference in duplicate effects per intent against the model's baseline design on the same seeds, with a 95 % interval from the per-seed differences: negative is fewer duplicates.\n",
    );
    for p in parts {
        let _ = writeln!(
            s,
            "\n## {}\n\n`{}` (FNV-1a {}), seeds {}..={}, baseline `{}`.\n",
            p.report.model,
            p.file,
            p.file_hash,
            p.report.first_seed,
            p.report.first_seed + p.report.seed_count - 1,
            p.baseline
        );
        s.push_str("| design | assumptions that do not hold | outcome shares (completed / true failure / false success / false failure / unresolved) |\n|---|---|---|\n");
        for r in &p.report.results {
            let m = &r.metrics;
            let shares = super::stats::shares_in_tenths(&[
                m.completed,
                m.true_failures,
                m.false_success,
                m.false_failure,
                m.unresolved,
            ]);
            let failed: Vec<&str> = r.failed_assumptions().map(|a| a.name.as_str()).collect();
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                r.design,
                if r.assumptions.is_empty() {
                    "(no guarantee stated)".to_string()
                } else if failed.is_empty() {
                    "none".to_string()
                } else {
                    failed.join(", ")
                },
                shares
                    .iter()
                    .map(|t| format!("{} %", tenths_text(*t)))
                    .collect::<Vec<_>>()
                    .join(" / ")
            );
        }
    }
    s
}

//! The report as JSON: every figure, with the layout's `schema_version`. (The run's own
//! JSON, which each model's results start from, is `report::json`.)

use serde_json::{Value, json};

use super::headline::records;
use super::{METHOD, ModelPart, Research, SCHEMA_VERSION, level, round6};
use crate::check::counters;
use crate::explore::paired::Difference;
use crate::model::Want;
use crate::report::charts::Estimate;

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
            let run: Value = serde_json::from_str(&crate::report::json::render(&p.report))
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
        "recommendation": crate::report::recommend::json(&research.parts),
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

fn method_json() -> Value {
    Value::Object(
        METHOD
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect(),
    )
}

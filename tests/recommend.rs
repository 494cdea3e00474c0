//! The report's recommendation (`recommendation` in report.json, "What to pick" first in
//! report.md and report.html): exactly what the committed report says of the seeds'
//! lost-response scenario and of two provider presets, and, for every scenario of both
//! committed reports, the rule checked against the same report's per-design results (the
//! ledger's counts and the judged assumptions), never against what a design claims.

use crate::common::cli;

use serde_json::Value;

const SAFETY: [&str; 4] = [
    "no_duplicate",
    "no_false_success",
    "no_false_failure",
    "no_wrong_receipt",
];

fn committed(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(cli::root().join(path)).unwrap()).unwrap()
}

fn scenario<'a>(report: &'a Value, model: &str) -> &'a Value {
    report["recommendation"]["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["model"] == model)
        .unwrap_or_else(|| panic!("no scenario {model}"))
}

fn designs(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|d| d["design"].as_str().unwrap())
        .collect()
}

#[test]
fn the_lost_response_scenario_picks_same_key_and_says_why_not_the_others() {
    let r = committed("reports/report.json");
    let s = scenario(&r, "ticket_lost_response");
    assert_eq!(designs(&s["picks"]), ["same_key"]);
    assert_eq!(
        s["summary"],
        "pick same_key (guaranteed: no_duplicate, no_wrong_receipt; held on every seed: no_false_success, no_false_failure): 0.0 % unresolved, 2.00 calls / intent, reconciliation p95 1.5 s"
    );
    assert_eq!(
        s["picks"][0]["guaranteed"],
        serde_json::json!(["no_duplicate", "no_wrong_receipt"])
    );
    let excluded = s["excluded"].as_array().unwrap();
    assert_eq!(excluded.len(), 2);
    for (e, design) in excluded.iter().zip(["no_dedup", "new_key_after_replan"]) {
        assert_eq!(e["design"], design);
        assert_eq!(e["why"], "unsafe");
        assert_eq!(e["reason"], "violates no_duplicate on 1000 of 1000 seeds");
        assert_eq!(e["counterexample"]["property"], "no_duplicate");
        let replay = e["counterexample"]["replay"].as_str().unwrap();
        assert!(
            replay.starts_with(&format!(
                "retrylab replay models/ticket_lost_response.json --design {design} --choices "
            )),
            "{replay}"
        );
    }
    // Against a provider that ignores keys, nothing qualifies.
    let s = scenario(&r, "provider_comparison @ no_dedup");
    assert!(s["picks"].as_array().unwrap().is_empty());
    assert!(
        s["summary"]
            .as_str()
            .unwrap()
            .starts_with("no design qualifies: "),
        "{}",
        s["summary"]
    );
    // Markdown and HTML say the same first.
    let md = std::fs::read_to_string(cli::root().join("reports/report.md")).unwrap();
    assert!(md.starts_with("# retrylab comparison report\n\n## What to pick\n\n"));
    assert!(md.contains(
        "| ticket_lost_response | pick same_key (guaranteed: no_duplicate, no_wrong_receipt; held on every seed: no_false_success, no_false_failure): 0.0 % unresolved, 2.00 calls / intent, reconciliation p95 1.5 s |"
    ));
    let html = std::fs::read_to_string(cli::root().join("reports/report.html")).unwrap();
    let summary = html.find("<div id=\"summary\">").expect("the summary");
    assert!(
        summary < html.find("<nav>").unwrap(),
        "the summary comes first"
    );
    assert!(html[summary..].starts_with("<div id=\"summary\">\n<section id=\"pick\">"));
}

/// The rule, checked for every scenario of both committed reports against the report's own
/// results: a pick violated no safety property on any seed, ran no seed into the events
/// budget, states assumptions and every one holds; picks are in the stated order; every
/// other design is excluded with the first reason that applies to it.
#[test]
fn every_recommendation_follows_its_rule_against_the_results() {
    let mut scenarios = 0;
    for path in ["reports/report.json", "reports/frameworks/report.json"] {
        let r = committed(path);
        let models = r["models"].as_array().unwrap();
        let recs = r["recommendation"]["scenarios"].as_array().unwrap();
        assert_eq!(recs.len(), models.len(), "{path}");
        for (rec, model) in recs.iter().zip(models) {
            scenarios += 1;
            assert_eq!(rec["model"], model["model"]);
            let results = model["results"].as_array().unwrap();
            let violating = |res: &Value, p: &str| {
                res["properties"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["property"] == p)
                    .map_or(0, |x| x["violating_seeds"].as_u64().unwrap())
            };
            let mut expected_picks = Vec::new();
            for res in results {
                let design = res["design"].as_str().unwrap();
                let budget = res["totals"]["budget_runs"].as_u64().unwrap();
                let unsafe_p = SAFETY.iter().find(|p| violating(res, p) > 0);
                let assumptions = res["assumptions"].as_array().unwrap();
                // The built-in designs state assumptions exactly when they have a guarantee.
                let why = if unsafe_p.is_some() {
                    Some("unsafe")
                } else if budget > 0 {
                    Some("unjudged")
                } else if assumptions.is_empty() {
                    Some("no_guarantee")
                } else if assumptions.iter().any(|a| a["holds"] == false) {
                    Some("guarantee_not_applicable")
                } else {
                    None
                };
                let excluded = rec["excluded"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| e["design"] == design);
                // The last check, a guarantee covering no_duplicate, needs the guarantee,
                // which the results do not carry: such an exclusion stands for a pick.
                let why = why.or_else(|| {
                    excluded
                        .filter(|e| e["why"] == "guarantee_not_covering_no_duplicate")
                        .map(|_| "guarantee_not_covering_no_duplicate")
                });
                match why {
                    None => {
                        assert!(excluded.is_none(), "{path} {}: {design}", rec["model"]);
                        let t = &res["totals"];
                        let intents = t["intents"].as_u64().unwrap().max(1) as f64;
                        expected_picks.push((
                            t["unresolved"].as_u64().unwrap() as f64 / intents,
                            t["remote_calls"].as_u64().unwrap() as f64 / intents,
                            design,
                        ));
                    }
                    Some(w) => {
                        let e = excluded.unwrap_or_else(|| {
                            panic!(
                                "{path} {}: {design} is neither picked nor excluded",
                                rec["model"]
                            )
                        });
                        assert_eq!(e["why"], w, "{path} {}: {design}", rec["model"]);
                        if let Some(p) = unsafe_p.filter(|_| w == "unsafe") {
                            assert_eq!(e["counterexample"]["property"], *p, "{design}");
                        }
                    }
                }
            }
            // Ranked by unresolved share, then calls per intent (then reconciliation, which
            // the totals give only in coarse percentiles: the order of equal pairs is the
            // report's own).
            let picks: Vec<&Value> = rec["picks"].as_array().unwrap().iter().collect();
            // A pick's guarantee covers no_duplicate; it and what held cover the four.
            for p in &picks {
                let mut all: Vec<&str> = p["guaranteed"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .chain(p["held_on_every_seed"].as_array().unwrap())
                    .map(|v| v.as_str().unwrap())
                    .collect();
                assert!(
                    all.contains(&"no_duplicate")
                        && p["guaranteed"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|v| v == "no_duplicate")
                );
                all.sort_unstable();
                let mut want = SAFETY.to_vec();
                want.sort_unstable();
                assert_eq!(all, want);
            }
            assert_eq!(picks.len(), expected_picks.len(), "{path} {}", rec["model"]);
            for w in picks.windows(2) {
                let key = |p: &Value| {
                    (
                        p["unresolved_share"].as_f64().unwrap(),
                        p["calls_per_intent"].as_f64().unwrap(),
                    )
                };
                assert!(
                    key(w[0]) <= key(w[1]),
                    "{path} {}: {:?}",
                    rec["model"],
                    (w[0], w[1])
                );
            }
        }
    }
    assert_eq!(scenarios, 32 + 17);
}

//! `retrylab report`: the comparison report as JSON and Markdown, deterministic (same
//! inputs, same bytes, any thread count), with paired differences against a baseline.

use crate::common::cli;

use std::path::PathBuf;
use std::process::Command;

use cli::*;

/// The bundled lost-response model, whose digest the report's replay commands carry.
fn lost_response() -> retrylab::model::Model {
    retrylab::model::Model::load(&root().join("models/ticket_lost_response.json")).unwrap()
}

fn out_dir(test: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("retrylab-report-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn report(out: &PathBuf, threads: &str) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let status = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args([
            "report",
            "models/ticket_lost_response.json",
            "models/ticket_chaos.json",
            "--seeds",
            "300",
            "--out",
        ])
        .arg(out)
        .env("RAYON_NUM_THREADS", threads)
        .current_dir(root())
        .output()
        .expect("start the binary");
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    let html = std::fs::read(out.join("report.html")).unwrap();
    assert!(html.starts_with(b"<!DOCTYPE html>"));
    (
        std::fs::read(out.join("report.json")).unwrap(),
        std::fs::read(out.join("report.md")).unwrap(),
        html,
    )
}

#[test]
fn the_report_is_the_same_bytes_on_any_thread_count() {
    let (a, b) = (out_dir("one"), out_dir("two"));
    let one = report(&a, "1");
    let two = report(&b, "2");
    assert_eq!(one, two);
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn the_report_carries_paired_differences_against_the_baseline() {
    let dir = out_dir("paired");
    let (json, md, _) = report(&dir, "2");
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["schema_version"], 3);
    let lost = &v["models"][0];
    assert_eq!(lost["model"], "ticket_lost_response");
    assert_eq!(lost["file"], "models/ticket_lost_response.json");
    let same_key = &lost["results"][1];
    assert_eq!(same_key["design"], "same_key");
    // Every seed loses the first reply: no_dedup duplicates, same_key never does.
    assert_eq!(
        same_key["paired_difference"],
        serde_json::json!({
            "baseline": "no_dedup",
            "per_intent": same_key["paired_difference"]["per_intent"].clone(),
        })
    );
    assert_eq!(
        same_key["paired_difference"]["per_intent"]["duplicate_effects"],
        // Every seed differs by exactly one: the interval is that of one seed in 3.84 / 303.84
        // differing by one event.
        serde_json::json!({ "mean": -1.0, "low": -1.012643, "high": -0.987357, "seeds": 300, "seeds_that_differ": 300 })
    );
    // The baseline against itself: no difference anywhere.
    assert_eq!(
        lost["results"][0]["paired_difference"]["per_intent"]["completed"]["seeds_that_differ"],
        0
    );
    // Every design's five outcome rates add up to one (each rounded to six decimals), and
    // each lies within its interval.
    for m in v["models"].as_array().unwrap() {
        for r in m["results"].as_array().unwrap() {
            let rates = &r["rates"];
            let sum: f64 = [
                "completed",
                "true_failure",
                "false_success",
                "false_failure",
                "unresolved",
            ]
            .iter()
            .map(|k| {
                let x = &rates[*k];
                let (rate, low, high) = (
                    x["rate"].as_f64().unwrap(),
                    x["low"].as_f64().unwrap(),
                    x["high"].as_f64().unwrap(),
                );
                assert!(low <= rate && rate <= high, "{}: {x}", r["design"]);
                rate
            })
            .sum();
            assert!(
                (sum - 1.0).abs() < 3e-6,
                "{} {}: {sum}",
                m["model"],
                r["design"]
            );
        }
    }
    // A design's own duplicates per intent, with its seed-level interval.
    assert_eq!(
        lost["results"][0]["per_intent"]["duplicate_effects"],
        serde_json::json!({ "mean": 1.0, "low": 0.987357, "high": 1.012643 })
    );
    let md = String::from_utf8(md).unwrap();
    assert!(
        md.starts_with("# retrylab comparison report\n\n## What to pick\n\n")
            && md.contains("\n## Headline\n\n| design | no duplicate | no false outcome |"),
        "{md}"
    );
    // Across both models: no_dedup duplicates in both, same_key in ticket_chaos only.
    assert!(md.contains("\n| no_dedup | 0/2 | 2/2 |"), "{md}");
    assert!(md.contains("\n| same_key | 1/2 | 2/2 |"), "{md}");
    assert!(
        md.contains("| same_key | 100.0 % [98.7 %, 100.0 %] | 0.0 % [0.0 %, 1.3 %] | 0.0 % [0.0 %, 1.3 %] | 0.0 % [0.0 %, 1.3 %] | 0.0 % [0.0 %, 1.3 %] | 0 [0, 0.013] | -1.000 [-1.013, -0.987]; 300 | 2.00 | all hold | ok (8 met) |"),
        "{md}"
    );
    // The shrunk counterexample of no_dedup's duplicate is the run with every choice at
    // its default: the model itself loses the reply.
    assert!(
        md.contains(&format!("- `no_dedup` violates `no_duplicate` (expected; seed 0, 0 choices from 6): `retrylab replay models/ticket_lost_response.json --design no_dedup --choices {}:`", lost_response().digest())),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_baseline_is_bad_input() {
    let dir = out_dir("bad");
    let out = retrylab(&[
        "report",
        "models/ticket_lost_response.json",
        "--out",
        dir.to_str().unwrap(),
        "--baseline",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--baseline nope: unknown design; known designs: no_dedup,"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.exists());
}

#[test]
fn the_provider_flag_runs_the_same_scenario_against_a_preset() {
    // ticket_lost_response against aws_ec2: the key is honoured as with stripe_v1, the
    // expectations (written for the model's own provider) go, and the name says so.
    let out = retrylab(&[
        "run",
        "models/ticket_lost_response.json",
        "--provider",
        "aws_ec2",
        "--seeds",
        "50",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["model"], "ticket_lost_response @ aws_ec2");
    let same_key = &v["results"][1];
    assert_eq!(same_key["design"], "same_key");
    assert_eq!(same_key["totals"]["duplicate_effects"], 0);
    assert!(
        same_key["properties"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["expect"].is_null())
    );
    // Against no_dedup the key is ignored: every seed duplicates.
    let out = retrylab(&[
        "run",
        "models/ticket_lost_response.json",
        "--provider",
        "no_dedup",
        "--seeds",
        "50",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"][1]["totals"]["duplicate_effects"], 50);
    // The trace's replay line carries the flag, and replays the same run.
    let trace = retrylab(&[
        "trace",
        "models/ticket_lost_response.json",
        "--provider",
        "no_dedup",
        "--design",
        "same_key",
        "--seed",
        "3",
    ]);
    let text = stdout(&trace);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .unwrap();
    assert!(
        line.contains(" --provider no_dedup --design same_key"),
        "{line}"
    );
    let replayed = shell(line);
    assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
    let timeline = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(timeline(&stdout(&replayed)), timeline(&text));
    // An unknown preset is bad input, with the known ones listed.
    let bad = retrylab(&[
        "run",
        "models/ticket_lost_response.json",
        "--provider",
        "stripe_v9",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("--provider stripe_v9: unknown provider preset \"stripe_v9\"; known presets: no_dedup, stripe_v1,"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn each_provider_adds_one_part_per_preset_and_a_comparison_table() {
    let dir = out_dir("providers");
    let out = retrylab(&[
        "report",
        "--each-provider",
        "models/ticket_lost_response.json",
        "--seeds",
        "20",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let presets: Vec<&str> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["provider_preset"].as_str().unwrap())
        .collect();
    assert_eq!(presets, retrylab::model::provider::preset_names());
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains("## Provider comparison: `models/ticket_lost_response.json`\n\n| design | no_dedup | stripe_v1 |"),
        "{md}"
    );
    // One lost reply, one intent: same_key duplicates only where the provider ignores keys.
    assert!(
        md.contains(
            "\n| same_key | 1.000 / 100.0 % / 0.0 % * | 0 / 100.0 % / 0.0 % | 0 / 100.0 % / 0.0 % |"
        ),
        "{md}"
    );
    assert!(md.contains(&format!(
        "`retrylab replay models/ticket_lost_response.json --provider no_dedup --design same_key --choices {}:`",
        lost_response().with_provider("no_dedup").unwrap().digest()
    )));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_out_path_that_is_a_file_is_bad_input_found_before_any_run() {
    let out = retrylab(&[
        "report",
        "models/ticket_lost_response.json",
        "--out",
        "README.md",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--out README.md: not a directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_guarantee_matrix_alone_is_a_report() {
    let dir = out_dir("matrix");
    let out = retrylab(&[
        "report",
        "--matrix",
        "models/guarantees/atomic_dedup.json",
        "--matrix",
        "models/guarantees/contract_as_assumed.json",
        "--max-faults",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // The contract as assumed first, whatever the order given; same_key certified there, caught where the key store
    // is not atomic, with one fault.
    assert!(
        md.contains("\n| same_key | ✓ | ✗ no_duplicate (1) |\n"),
        "{md}"
    );
    assert!(
        md.contains("1. **contract as assumed** (`models/guarantees/contract_as_assumed.json`)"),
        "{md}"
    );
    let too_many = retrylab(&[
        "report",
        "--matrix",
        "models/guarantees",
        "--max-faults",
        "99",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(too_many.status.code(), Some(2));
    assert!(stderr(&too_many).contains("--max-faults 99: more than the limit of 6"));
    let _ = std::fs::remove_dir_all(&dir);
}

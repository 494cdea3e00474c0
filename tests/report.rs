//! `retrylab report`: the comparison report as JSON and Markdown, deterministic (same
//! inputs, same bytes, any thread count), with paired differences against a baseline.

#[path = "common/cli.rs"]
mod cli;

use std::path::PathBuf;
use std::process::Command;

use cli::*;

fn out_dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("retrylab-report-{}-{test}", std::process::id()));
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
    assert_eq!(v["schema_version"], 2);
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
        serde_json::json!({ "mean": -1.0, "low": -1.0, "high": -1.0, "seeds": 300, "seeds_that_differ": 300 })
    );
    // The baseline against itself: no difference anywhere.
    assert_eq!(
        lost["results"][0]["paired_difference"]["per_intent"]["completed"]["seeds_that_differ"],
        0
    );
    // A design's own duplicates per intent, with its seed-level interval.
    assert_eq!(
        lost["results"][0]["per_intent"]["duplicate_effects"],
        serde_json::json!({ "mean": 1.0, "low": 1.0, "high": 1.0 })
    );
    let md = String::from_utf8(md).unwrap();
    assert!(
        md.starts_with(
            "# retrylab comparison report\n\n| design | no duplicate | no false outcome |"
        ),
        "{md}"
    );
    // Across both models: no_dedup duplicates in both, same_key in ticket_chaos only.
    assert!(md.contains("\n| no_dedup | 0/2 | 2/2 |"), "{md}");
    assert!(md.contains("\n| same_key | 1/2 | 2/2 |"), "{md}");
    assert!(
        md.contains("| same_key | 100.0 % [98.7 %, 100.0 %] | 0.0 % [0.0 %, 1.3 %] | 0.0 % [0.0 %, 1.3 %] | 0.0 % [0.0 %, 1.3 %] | 0.000 [0.000, 0.000] | -1.000 [-1.000, -1.000]; 300 | 2.00 | all hold | ok (8 met) |"),
        "{md}"
    );
    // The shrunk counterexample of no_dedup's duplicate is the run with every choice at
    // its default: the model itself loses the reply.
    assert!(
        md.contains("- `no_dedup` violates `no_duplicate` (expected; seed 0, 0 choices from 6): `retrylab replay models/ticket_lost_response.json --design no_dedup --choices ''`"),
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

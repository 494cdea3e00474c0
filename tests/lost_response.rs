//! The seeds' table, reproduced exactly on the bundled model: one ticket intent, the provider
//! commits and the first reply is lost, the caller retries. no_dedup 2 tickets, same_key 1,
//! new_key_after_replan 2, on every seed.

use std::path::PathBuf;
use std::process::Command;

use retrylab::design;
use retrylab::model::Model;
use retrylab::run::run_seeds;

fn model_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/ticket_lost_response.json")
}

const TABLE: [(&str, u64); 3] = [
    ("no_dedup", 2),
    ("same_key", 1),
    ("new_key_after_replan", 2),
];

#[test]
fn through_the_library() {
    let model = Model::load(&model_path()).unwrap();
    assert_eq!(
        model.designs,
        ["no_dedup", "same_key", "new_key_after_replan"]
    );
    let seeds = 500;
    for (name, tickets) in TABLE {
        let m = run_seeds(&model, design::find(name).unwrap(), 0..seeds);
        assert_eq!(m.seeds, seeds);
        assert_eq!(m.intents, seeds, "{name}");
        assert_eq!(m.effects, tickets * seeds, "{name}");
        assert_eq!(m.duplicate_effects, (tickets - 1) * seeds, "{name}");
        assert_eq!(
            m.completed, seeds,
            "{name}: the user is told success every time"
        );
        assert_eq!(
            (
                m.false_success,
                m.false_failure,
                m.merged_repeats,
                m.unresolved
            ),
            (0, 0, 0, 0),
            "{name}"
        );
        assert_eq!(
            m.remote_calls,
            2 * seeds,
            "{name}: one send per call, two calls"
        );
        // Only same_key resolves the first call's unknown outcome (by its replay).
        let (unknown, resolved) = if name == "same_key" {
            (0, seeds)
        } else {
            (seeds, 0)
        };
        assert_eq!(m.unknown_ops, unknown, "{name}");
        assert_eq!(m.reconciliation_ms.count(), resolved, "{name}");
    }
}

#[test]
fn through_the_binary() {
    let out = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args([
            "run",
            model_path().to_str().unwrap(),
            "--seeds",
            "200",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["model"], "ticket_lost_response");
    assert_eq!(json["seeds"]["count"], 200);
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    for (entry, (name, tickets)) in results.iter().zip(TABLE) {
        assert_eq!(entry["design"], name);
        assert_eq!(entry["seeds"], 200);
        let t = &entry["totals"];
        assert_eq!(t["intents"], 200);
        assert_eq!(t["effects"], 200 * tickets, "{name}");
        assert_eq!(t["duplicate_effects"], 200 * (tickets - 1), "{name}");
        assert_eq!(t["completed"], 200);
        for zero in [
            "false_success",
            "false_failure",
            "merged_repeats",
            "unresolved",
        ] {
            assert_eq!(t[zero], 0, "{name}: {zero}");
        }
        assert_eq!(t["remote_calls"], 400);
        // Only same_key resolves an unknown operation: its percentiles are numbers, the
        // others' are null.
        for p in ["p50", "p90", "p99", "max"] {
            let v = &t["reconciliation_ms"][p];
            assert_eq!(v.is_u64(), name == "same_key", "{name}: {p} is {v}");
            assert_eq!(v.is_null(), name != "same_key", "{name}: {p} is {v}");
        }
    }
    // same_key's reconciliation: from the 5 s timeout to the replay's answer, which takes
    // the agent's think time (200..=1500 ms) plus two network legs (5..=80 ms each).
    let recon = &results[1]["totals"]["reconciliation_ms"];
    assert_eq!(recon["count"], 200);
    let (p50, max) = (
        recon["p50"].as_u64().unwrap(),
        recon["max"].as_u64().unwrap(),
    );
    assert!(
        (210..=1660).contains(&p50) && (p50..=1660).contains(&max),
        "{recon}"
    );
    assert_eq!(
        results[0]["totals"]["reconciliation_ms"]["p50"],
        serde_json::Value::Null
    );
}

#[test]
fn one_design_one_seed_from_the_binary() {
    let out = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args([
            "run",
            model_path().to_str().unwrap(),
            "--design",
            "same_key",
            "--seed",
            "42",
            "--wide",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("model ticket_lost_response: 1 seed per design (seeds 42..=42)\n"),
        "{text}"
    );
    let rows: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(rows.len(), 1, "{text}");
    let cells: Vec<&str> = rows[0].split_whitespace().collect();
    // design, intents, effects, completed, true_fail, dup, drifted, comp, false_ok,
    // false_fail, merged, wrong_rcpt, wrong_comp, masked, unresolved, unknown_ops,
    // false_res, calls/intent
    assert_eq!(
        &cells[..18],
        [
            "same_key", "1", "1", "1", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0",
            "0", "2.00"
        ]
    );
}

//! Regressions found in review: the cancelled timers, the ChaCha8 generator kept on
//! request, and the merge's checks of partial files.

use crate::common;
use crate::common::cli;

use common::{faults, model};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use retrylab::run::run_traced;
use retrylab::sim::{Alternatives, Chooser, Purpose};
use serde_json::json;

/// A call re-run (`retry_same`) while its first issue is still out: issue 1's late result
/// must not cancel issue 2's tool timeout.
#[test]
fn a_late_result_of_an_earlier_issue_keeps_the_later_issues_timeout() {
    let v = json!({
        "name": "stale",
        "horizon_ms": 200_000_000u64,
        "designs": ["single_use_token"],
        "workload": { "intents": 1 },
        "agent": {
            "tool_timeout_ms": 60, "max_calls": 3,
            "on_failure": { "give_up": 1 }, "on_unknown": { "retry_same": 1 }
        },
        "executor": { "attempts": 1, "timeout_ms": 5_000 },
        "network": { "latency_ms": 10 },
        "provider": { "dedup": "by_key", "processing_ms": 10 }
    });
    let v = faults(
        v,
        json!([{"slow_processing": {"attempt": 1, "ms": 80}}, {"drop_reply": {"attempt": 2}}]),
    );
    let m = model(&v);
    let d = retrylab::design::find("single_use_token").unwrap();
    let t = run_traced(&m, d, &mut m.chooser(0));
    // Issue 1's result at 100 ms is ignored; issue 2 (sent at 60 ms) times out at 120 ms,
    // issue 3 succeeds at 150 ms (on 378db63 as well), not at 5090 ms after the executor's
    // own timeout.
    assert!(
        t.timeline
            .contains("100 ms  agent     call 1 (issue 1): late result"),
        "{}",
        t.timeline
    );
    assert!(
        t.timeline
            .contains("120 ms  agent     call 1: no result within the tool timeout"),
        "{}",
        t.timeline
    );
    assert!(
        t.timeline
            .contains("150 ms  agent     intent 0: tells the user success"),
        "{}",
        t.timeline
    );
}

/// rand_chacha as earlier versions used it: `seed_from_u64(seed)`, the purpose as the
/// stream number, `random_range` for every draw.
struct Reference {
    seed: u64,
    streams: Vec<Option<ChaCha8Rng>>,
}

impl Chooser for Reference {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        let seed = self.seed;
        let rng = self.streams[purpose.index()].get_or_insert_with(|| {
            let mut r = ChaCha8Rng::seed_from_u64(seed);
            r.set_stream(purpose.index() as u64);
            r
        });
        match alternatives {
            Alternatives::Uniform(n) | Alternatives::Span { len: n, .. } => rng.random_range(0..n),
            Alternatives::Weighted(w) => {
                let total: u64 = w.iter().map(|&x| u64::from(x)).sum();
                let mut draw = rng.random_range(0..total);
                for (i, &x) in w.iter().enumerate() {
                    if draw < u64::from(x) {
                        return i as u64;
                    }
                    draw -= u64::from(x);
                }
                unreachable!()
            }
        }
    }
}

#[test]
fn a_chacha8_model_draws_what_rand_chacha_draws_per_purpose() {
    let path = cli::root().join("models/ticket_chaos.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["generator"] = json!("chacha8");
    let m = model(&v);
    for name in ["no_dedup", "journal_reconcile", "layered_retries"] {
        let d = retrylab::design::find(name).unwrap();
        for seed in (0..40).chain([u64::MAX - 1, u64::MAX]) {
            let ours = run_traced(&m, d, &mut m.chooser(seed));
            let reference = run_traced(
                &m,
                d,
                &mut Reference {
                    seed,
                    streams: vec![None; Purpose::COUNT],
                },
            );
            assert_eq!(ours.timeline, reference.timeline, "{name}, seed {seed}");
            assert_eq!(ours.choices, reference.choices, "{name}, seed {seed}");
        }
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "retrylab-regressions-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Shards 1 and 2 of 2 of `command` on `model` over 100 seeds, as JSON values, and their
/// files.
fn two_shards_of(
    dir: &std::path::Path,
    command: &str,
    model: &std::path::Path,
) -> Vec<(std::path::PathBuf, serde_json::Value)> {
    (1..=2)
        .map(|i| {
            let file = dir.join(format!("part{i}.json"));
            let out = cli::retrylab(&[
                command,
                model.to_str().unwrap(),
                "--seeds",
                "100",
                "--shard",
                &format!("{i}/2"),
                "--out",
                file.to_str().unwrap(),
            ]);
            assert_eq!(out.status.code(), Some(0), "{}", cli::stderr(&out));
            let v = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            (file, v)
        })
        .collect()
}

/// Writes `edited` (shard 2, changed) as `NAME.json` in `dir`, merges it with `first` and
/// returns the merge's stderr, which must refuse it with exit 2.
fn merge_refused(
    dir: &std::path::Path,
    name: &str,
    first: &std::path::Path,
    edited: &serde_json::Value,
) -> String {
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, edited.to_string()).unwrap();
    let out = cli::retrylab(&["merge", first.to_str().unwrap(), file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{name}: {}", cli::stdout(&out));
    cli::stderr(&out)
}

/// Shards 1 and 2 of 2 of a `run` of 100 seeds.
fn two_shards(dir: &std::path::Path) -> Vec<(std::path::PathBuf, serde_json::Value)> {
    two_shards_of(
        dir,
        "run",
        &cli::root().join("models/ticket_lost_response.json"),
    )
}

#[test]
fn a_shard_count_from_a_file_is_not_walked() {
    let dir = scratch("huge");
    let parts = two_shards(&dir);
    let mut v = parts[0].1.clone();
    v["shard"]["count"] = json!(1u64 << 62);
    let edited = dir.join("edited.json");
    std::fs::write(&edited, v.to_string()).unwrap();
    // Without the fix this walks 1..=2^62 and collects a string per missing shard: it never
    // returns. The refusal names the first missing shard only.
    let out = cli::retrylab(&["merge", edited.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", cli::stderr(&out));
    let err = cli::stderr(&out);
    assert!(
        err.contains("missing shards 2/4611686018427387904"),
        "{err}"
    );
    assert!(err.len() < 1_000, "one short line, not a list: {err}");
}

#[test]
fn a_partial_must_tally_its_block_of_seeds() {
    let dir = scratch("tally");
    let parts = two_shards(&dir);
    for edit in ["null", "seeds"] {
        let mut v = parts[1].1.clone();
        match edit {
            "null" => v["data"]["results"] = json!(null),
            _ => v["data"]["results"][0]["metrics"]["seeds"] = json!(7),
        }
        let err = merge_refused(&dir, edit, &parts[0].0, &v);
        assert!(err.contains("a damaged partial file"), "{edit}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An operation left unknown when nothing live is pending any more is never resolved: the run
/// ends quiescent, and `resolved_within(T)` is violated whatever T. Before moot timeouts were
/// cancelled, the agent's tool timeout (due at 60 s, past the 1 s horizon, moot since the
/// executor's answer at 100 ms) kept the run going to the horizon, and the wait was counted
/// as 901 ms: "resolved within 5 s" held for an operation that nothing could ever resolve.
#[test]
fn an_unknown_left_when_nothing_live_is_pending_is_never_resolved() {
    let dir = scratch("quiescent");
    let file = dir.join("moot_past_horizon.json");
    let v = json!({
        "name": "moot_past_horizon",
        "horizon_ms": 1_000,
        "designs": ["same_key"],
        "workload": { "intents": 1 },
        "agent": {
            "tool_timeout_ms": 60_000, "max_calls": 1,
            "on_failure": { "give_up": 1 }, "on_unknown": { "ask_user": 1 }
        },
        "executor": { "attempts": 1, "timeout_ms": 100 },
        "network": { "latency_ms": 10 },
        "provider": { "dedup": "by_key", "processing_ms": 10 },
        "faults": [ {"drop_reply": {"attempt": 1}} ]
    });
    std::fs::write(&file, v.to_string()).unwrap();
    let out = cli::retrylab(&[
        "run",
        file.to_str().unwrap(),
        "--seeds",
        "1",
        "--fail-on",
        "resolved_within(5000)",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", cli::stderr(&out));
    // The short horizon is the point here: the warning about it is intended.
    assert_eq!(
        cli::stderr(&out),
        "warning: moot_past_horizon: horizon_ms: 1000 is not longer than agent.tool_timeout_ms 60000: the run ends before the agent stops waiting for a call that gets no answer (a crashed worker's, or one still retrying), so such a call is left unresolved and no retry of it is seen; use horizon_ms 60001 or more (every call of the last intent, each waited for and thought over)\n\
         --fail-on: same_key: resolved_within(5000) violated on 1 of 1 seeds\n"
    );
}

/// A `check` partial must tally its block too: no more violating seeds than it has, and a
/// counterexample from one of its seeds.
#[test]
fn a_check_partial_must_tally_its_block_of_seeds() {
    let dir = scratch("check-tally");
    // lost_reply_rare, expecting new_key_after_replan to hold no_duplicate: a counterexample
    // of its first violating seed, 39.
    let text =
        std::fs::read_to_string(cli::root().join("models/bad/lost_reply_rare.json")).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["expect"] = json!({"new_key_after_replan": {"hold": ["no_duplicate"]}});
    m.as_object_mut().unwrap().remove("$schema");
    let model = dir.join("lost_reply_hold.json");
    std::fs::write(&model, m.to_string()).unwrap();
    let parts = two_shards_of(&dir, "check", &model);
    // Where shard 1 keeps a counterexample (the first violating seed, 39, is in its block).
    let designs = parts[0].1["data"]["models"][0]["designs"]
        .as_array()
        .unwrap();
    let (d, j) = designs
        .iter()
        .enumerate()
        .find_map(|(d, design)| {
            let judged = design["judged"].as_array().unwrap();
            let j = judged.iter().position(|j| !j["counterexample"].is_null())?;
            Some((d, j))
        })
        .expect("a counterexample in shard 1");
    let counterexample = designs[d]["judged"][j]["counterexample"].clone();
    assert_eq!(counterexample["seed"], 39);
    for (edit, message) in [
        (
            "violating",
            "violating and 0 cut seeds tallied for a block of 50",
        ),
        (
            "seed",
            "a counterexample of seed 39 outside the block's seeds",
        ),
    ] {
        // Shard 2 (seeds 50 to 99), edited.
        let mut v = parts[1].1.clone();
        let judged = &mut v["data"]["models"][0]["designs"][d]["judged"][j];
        match edit {
            "violating" => judged["violating"] = json!(1_000_000),
            _ => judged["counterexample"] = counterexample.clone(),
        }
        let err = merge_refused(&dir, edit, &parts[0].0, &v);
        assert!(err.contains(message), "{edit}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! `explore`: bounded exhaustive search on the simulator's own model. The shortest
//! counterexample and its replay, certificates for the safe designs within the assumptions
//! they declare, fewest faults first, pruning that changes no verdict, the sampling
//! strategies, the limits and the exit codes.

use crate::common::broken;
use crate::common::cli;
use crate::common::race;

use std::path::Path;

use cli::*;
use retrylab::check::Property;
use retrylab::design::{self, assumptions};
use retrylab::explore::{Bound, Strategy, explore};
use retrylab::model::Model;

fn load(name: &str) -> Model {
    Model::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models")
            .join(name),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn bound(max_faults: u32) -> Bound {
    Bound {
        max_faults,
        ..Bound::default()
    }
}

#[test]
fn the_shortest_counterexample_replays_as_printed() {
    let out = retrylab(&[
        "explore",
        "models/ticket_lost_response.json",
        "--design",
        "new_key_after_replan",
        "--max-faults",
        "2",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    // The lost reply is scripted: the duplicate needs no fault choice, and the first run
    // (every menu at its first entry) already shows it; shrunk, it needs no choice at all.
    assert!(
        text.contains("  0 faults: 1 run, 13 distinct states, 0 pruned, depth 6, up to 0 deviations: a violation\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "no_duplicate violated by a run with 0 faults (found after 1 run); shrunk to 0 choices (from 6, in 1 run)\n"
        ),
        "{text}"
    );
    let replay = text
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a replay line");
    let digest = retrylab::model::Model::load(&root().join("models/ticket_lost_response.json"))
        .unwrap()
        .digest();
    assert!(
        replay.ends_with(&format!(
            "replay models/ticket_lost_response.json --design new_key_after_replan --choices {digest}+ties:"
        )),
        "{replay}"
    );
    let again = shell(replay);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stdout(&again).contains("violates: no_duplicate, resolved_within(60000)\n"));
}

#[test]
fn the_lease_design_is_certified_for_three_faults() {
    let out = retrylab(&[
        "explore",
        "models/ticket_lost_response.json",
        "--design",
        "journal_reconcile_lease",
        "--max-faults",
        "3",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("complete"), "{text}");
    assert!(
        text.contains(
            "certified for 3 faults: no property is violated by any schedule within the bound"
        ),
        "{text}"
    );
}

/// The good designs, on the seeds' model and every window: where every assumption they
/// declare holds, no schedule with at most three faults duplicates (a complete search);
/// where one does not, the search finds the duplicate the window is about.
#[test]
fn certificates_for_the_safe_designs_within_their_assumptions() {
    let mut models = vec!["ticket_lost_response.json".to_string()];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/windows");
    let mut windows: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| format!("windows/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    windows.sort();
    models.extend(windows);
    let mut outside = Vec::new();
    for name in &models {
        let model = load(name);
        for d in ["journal_reconcile_lease", "durable_authorization"] {
            let design = design::find(d).unwrap();
            let applies = assumptions::judge(design, &model).iter().all(|a| a.holds);
            let found = explore(
                &model,
                design,
                &[Property::NoDuplicate],
                Strategy::Dfs,
                bound(3),
            );
            if applies {
                assert!(found.certified(), "{name} {d}: {found:?}");
            } else {
                outside.push(format!("{name} {d}"));
            }
        }
    }
    // Where a stated assumption does not hold (every other pair is certified above). The
    // lease design's own resend (a replan 5 s after its timeout) may overlap the 20 s
    // request of two_workers_recovering at a provider that executes both: its guarantee is
    // not claimed there, though the scripted crash keeps this window's runs apart.
    assert_eq!(
        outside,
        [
            "windows/delayed_visibility.json durable_authorization",
            "windows/identity_loss.json journal_reconcile_lease",
            "windows/identity_loss.json durable_authorization",
            "windows/key_then_effect_crash.json journal_reconcile_lease",
            "windows/key_then_effect_crash.json durable_authorization",
            "windows/lease_own_retry_overlaps.json journal_reconcile_lease",
            "windows/lease_own_retry_overlaps.json durable_authorization",
            "windows/lease_shorter_than_processing.json journal_reconcile_lease",
            "windows/lease_shorter_than_processing.json durable_authorization",
            "windows/retention_expired.json durable_authorization",
            "windows/retention_floor.json journal_reconcile_lease",
            "windows/retention_floor.json durable_authorization",
            "windows/two_workers_recovering.json journal_reconcile_lease",
            "windows/two_workers_recovering.json durable_authorization",
        ]
    );
}

/// Iterative deepening: with the reply lost only by chance (1 in 100), no run without a
/// fault duplicates, and the first violation found has exactly one fault.
#[test]
fn the_first_violation_has_the_fewest_faults() {
    let model = load("bad/lost_reply_rare.json");
    let found = explore(
        &model,
        design::find("new_key_after_replan").unwrap(),
        &[Property::NoDuplicate],
        Strategy::Dfs,
        bound(2),
    );
    assert_eq!(found.levels.len(), 2);
    assert!(found.levels[0].complete);
    let v = &found.violations[0];
    assert_eq!((v.property, v.faults), (Property::NoDuplicate, 1));
    // The same design cannot duplicate without the fault: certified for none.
    let none = explore(
        &model,
        design::find("new_key_after_replan").unwrap(),
        &[Property::NoDuplicate],
        Strategy::Dfs,
        bound(0),
    );
    assert!(none.certified(), "{none:?}");
}

/// Pruning cuts runs at states already explored; it must never change a verdict. Compared
/// with the same designs wrapped so that they cannot be fingerprinted (no pruning).
#[test]
fn pruning_changes_no_verdict() {
    for (name, d) in [
        (
            "windows/two_workers_recovering.json",
            "journal_reconcile_lease",
        ),
        ("windows/two_workers_recovering.json", "journal_reconcile"),
        ("ticket_lost_response.json", "same_key"),
        ("bad/lost_reply_rare.json", "new_key_after_replan"),
    ] {
        let model = load(name);
        let real = design::find(d).unwrap();
        let pruned = explore(&model, real, &Property::PLAIN, Strategy::Dfs, bound(2));
        let plain = explore(
            &model,
            &broken::Opaque(real),
            &Property::PLAIN,
            Strategy::Dfs,
            bound(2),
        );
        assert!(pruned.pruning && !plain.pruning);
        assert_eq!(pruned.certified(), plain.certified(), "{name} {d}");
        let what = |e: &retrylab::explore::Exploration| {
            e.violations
                .iter()
                .map(|v| (v.property, v.faults))
                .collect::<Vec<_>>()
        };
        assert_eq!(what(&pruned), what(&plain), "{name} {d}");
        assert!(pruned.runs() <= plain.runs(), "{name} {d}");
    }
}

#[test]
fn sampling_strategies_find_what_random_seeds_find_and_replay() {
    let model = load("bad/lost_reply_rare.json");
    let d = design::find("new_key_after_replan").unwrap();
    let random = explore(
        &model,
        d,
        &[Property::NoDuplicate],
        Strategy::Random,
        Bound {
            max_runs: 1000,
            ..Bound::default()
        },
    );
    // Plain random search is the sweep: seed 39 is the first to lose the reply.
    assert_eq!(random.violations[0].after_runs, 40);
    let swarm = explore(
        &model,
        d,
        &[Property::NoDuplicate],
        Strategy::Swarm,
        Bound {
            max_runs: 1000,
            ..Bound::default()
        },
    );
    let v = &swarm.violations[0];
    assert!(v.after_runs < 40, "{v:?}");
    // A swarm run replays like any other: its choice vector.
    let choices = v
        .values
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let out = retrylab(&[
        "replay",
        "models/bad/lost_reply_rare.json",
        "--design",
        "new_key_after_replan",
        "--choices",
        &choices,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("violates: no_duplicate\n"));
}

#[test]
fn a_search_stopped_at_its_run_limit_exits_3() {
    let out = retrylab(&[
        "explore",
        "models/ticket_chaos.json",
        "--design",
        "journal",
        "--max-runs",
        "50",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(3), "{text}{}", stderr(&out));
    assert!(text.contains("stopped at the run limit"), "{text}");
    assert!(
        text.contains("incomplete: no violation in 50 runs"),
        "{text}"
    );
}

#[test]
fn bad_input_exits_2() {
    for (args, words) in [
        (
            vec!["--design", "nope"],
            "--design nope: unknown design; known designs:",
        ),
        (
            vec!["--design", "same_key", "--max-faults", "9"],
            "--max-faults 9: more than the limit of 6",
        ),
        (
            vec!["--design", "same_key", "--max-runs", "0"],
            "--max-runs 0: must be at least 1",
        ),
    ] {
        let mut all = vec!["explore", "models/ticket_lost_response.json"];
        all.extend(args);
        let out = retrylab(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        assert!(stderr(&out).contains(words), "{}", stderr(&out));
        assert!(stdout(&out).is_empty());
    }
}

/// A sample that finds nothing is not a certificate: exit 3, as for an incomplete search.
#[test]
fn a_sample_without_a_violation_exits_3() {
    for strategy in ["swarm", "random"] {
        let out = retrylab(&[
            "explore",
            "models/bad/lagging_search_rare.json",
            "--design",
            "journal_reconcile",
            "--strategy",
            strategy,
            "--max-runs",
            "20",
        ]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(3), "{strategy}: {text}");
        assert!(
            text.contains("no violation in 20 runs (a sample, not a certificate)"),
            "{text}"
        );
    }
}

#[test]
fn every_reduction_keeps_the_verdict_of_a_two_intent_race_and_spares_runs() {
    use retrylab::explore::Reductions;
    // Two intents 0 or 500 ms apart, two workers, a random reply loss of 1 in 10.
    let model = race::race(2, 2);
    let lease = design::find("journal_reconcile_lease").unwrap();
    let search = |reductions| {
        explore(
            &model,
            lease,
            &Property::PLAIN,
            Strategy::Dfs,
            Bound {
                max_faults: 1,
                reductions,
                ..Bound::default()
            },
        )
    };
    // Exact: the model fixes the tree, and each reduction what it spares.
    let mut runs = vec![("all", search(Reductions::ALL))];
    runs.push(("none", search(Reductions::NONE)));
    for (name, r) in Reductions::each_alone() {
        runs.push((name, search(r)));
    }
    let counts: Vec<(&str, bool, u64)> = runs
        .iter()
        .map(|(n, e)| (*n, e.certified(), e.runs()))
        .collect();
    assert_eq!(
        counts,
        [
            ("all", true, 2_249),
            ("none", true, 131_206),
            ("memo", true, 126_777),
            ("por", true, 73_735),
            ("symmetry", true, 30_948),
            ("snapshots", true, 131_206),
            ("timing", true, 20_068),
        ]
    );
    // Restoring saved worlds is re-running their prefixes, faster: the very same search.
    let (snapshots, none) = (&runs[5].1, &runs[1].1);
    assert_eq!(
        retrylab::explore::Exploration {
            bound: none.bound,
            ..snapshots.clone()
        },
        *none
    );
    // A design that duplicates is caught with the same fault count under every one.
    let naive = design::find("no_dedup").unwrap();
    let mut all = vec![Reductions::ALL, Reductions::NONE];
    all.extend(Reductions::each_alone().into_iter().map(|(_, r)| r));
    for reductions in all {
        let found = explore(
            &model,
            naive,
            &[Property::NoDuplicate],
            Strategy::Dfs,
            Bound {
                max_faults: 1,
                reductions,
                ..Bound::default()
            },
        );
        assert_eq!(found.violations.len(), 1, "{reductions:?}");
        assert_eq!(found.violations[0].faults, 1, "{reductions:?}");
    }
}

/// The realistic sweeper model of issue 22, as it describes it: the seeds' lost reply, one
/// intent, a search read-back with a 0–5 s lag, a sweeper every 10 s, two workers, a crash
/// after send of 1 in 10; with `horizon_ms`.
fn sweeper(horizon_ms: u64) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ticket_lost_response.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let o = m.as_object_mut().unwrap();
    o.remove("expect");
    o.remove("$schema");
    m["horizon_ms"] = serde_json::json!(horizon_ms);
    m["designs"] = serde_json::json!(["journal_reconcile"]);
    m["executor"] = serde_json::json!({ "attempts": 1, "timeout_ms": 5000, "reconcile": "search",
                                        "sweep_ms": 10000, "visibility_bound_ms": 5000 });
    m["workers"] =
        serde_json::json!({ "count": 2, "journal": "durable", "crash": { "after_send": 0.1 } });
    m["provider"]["lookup"] = serde_json::json!("search");
    m["provider"]["visibility_lag_ms"] = serde_json::json!({ "min": 0, "max": 5000 });
    Model::from_json(&m.to_string(), "sweeper.json").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_sweeper_does_not_multiply_the_search_by_its_ticks() {
    // A sweep that finds nothing to do offers no choice, and a world with nothing left but
    // the sweeper's timer ends: the horizon (30, 60 or 120 sweeps) changes nothing. Exact:
    // the same runs at every horizon, every fault level complete.
    let design = design::find("journal_reconcile").unwrap();
    for horizon_ms in [300_000, 600_000, 1_200_000] {
        let e = explore(
            &sweeper(horizon_ms),
            design,
            &Property::PLAIN,
            Strategy::Dfs,
            Bound {
                max_faults: 2,
                ..Bound::default()
            },
        );
        assert!(e.certified(), "{horizon_ms}: {:?}", e.levels);
        assert_eq!(e.runs(), 48_296, "{horizon_ms}");
    }
}

//! Sharded exhaustive search: `explore --shard I/N --out FILE`, merged by `retrylab merge`,
//! prints the unsharded command's verdict, counterexample, replay command and certificate
//! scope, with its exit code; only the lines that state run and state counts differ (the
//! merge sums them over the shards and says so). Underneath, the shards' searches
//! ([`explore_shard`]) give, for every model and design of the repository, the violation the
//! one-machine search finds and its certificate.

use crate::common::cli;

use std::path::{Path, PathBuf};
use std::process::Output;

use cli::*;
use retrylab::check::Property;
use retrylab::design;
use retrylab::explore::{Bound, Strategy, explore};
use retrylab::explore::{Exploration, Shard, explore_shard};
use retrylab::model::Model;

/// A scratch directory under `target/tmp` for one test, emptied first and removed when
/// dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = root()
            .join("target/tmp")
            .join(format!("shard-explore-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    retrylab(&args)
}

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Runs `explore args` as shards 1..=n into `dir`; each exits 0 having written its
/// partial and said so, and nothing else. Returns the files, last shard first.
fn shards(args: &[String], n: u64, dir: &Scratch, tag: &str) -> Vec<String> {
    let mut files = Vec::new();
    for i in 1..=n {
        let file = dir.path(&format!("{tag}-{i}.json"));
        let mut a = owned(&["explore"]);
        a.extend(args.iter().cloned());
        a.extend(owned(&["--shard", &format!("{i}/{n}"), "--out", &file]));
        let out = run(&a);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}{}",
            stdout(&out),
            stderr(&out)
        );
        assert_eq!(
            stdout(&out),
            format!("wrote {file}: explore shard {i}/{n}, its share of the search tree\n")
        );
        assert_eq!(stderr(&out), "", "a shard prints no result and no warning");
        files.push(file);
    }
    files.reverse();
    files
}

fn merge(parts: &[String]) -> Output {
    let mut a = owned(&["merge"]);
    a.extend(parts.iter().cloned());
    run(&a)
}

/// The lines of an `explore` output that do not state run or state counts, with the
/// counts taken out of those that mix them in: the level lines, the visited set's and the
/// merge's own line are left out, `(found after N runs...)` and the certificate's
/// `(N runs, complete)` are blanked.
fn verdict_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            let counts = is_level_line(l)
                || l.starts_with("  visited set: ")
                || l.starts_with("  (merged from ");
            !counts
        })
        .map(|l| {
            let mut l = l.to_string();
            if let Some(a) = l.find(" (found after ") {
                let b = a + l[a..].find(')').unwrap();
                l.replace_range(a..=b, "");
            }
            if let Some(b) = l.find(" runs, complete)") {
                let a = l[..b].rfind(" (").unwrap();
                l.replace_range(a..b + " runs, complete)".len(), "");
            }
            l
        })
        .collect()
}

/// `  1 fault: 15 runs, 54 distinct states, ...`.
fn is_level_line(l: &str) -> bool {
    l.starts_with("  ") && l.contains(" fault") && l.contains(" run")
}

/// The level lines' statuses (what follows the counts): `complete`, `a violation`...
fn statuses(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| is_level_line(l))
        .map(|l| {
            let (faults, rest) = l.trim().split_once(':').unwrap();
            let status = rest.split_once(" deviation").unwrap().1;
            let status = status.split_once(": ").unwrap().1;
            format!("{faults}: {status}")
        })
        .collect()
}

/// `explore args` unsharded, and merged from 1, 3 and 4 shards: the same verdict lines
/// (counterexample, replay command, certificate and its scope), the same level statuses,
/// the same stderr and the same exit code. Returns the unsharded output.
fn same_as_unsharded(args: &[&str], code: i32, tag: &str) -> String {
    let args = owned(args);
    let mut a = owned(&["explore"]);
    a.extend(args.iter().cloned());
    let one = run(&a);
    let text = stdout(&one);
    assert_eq!(one.status.code(), Some(code), "{text}{}", stderr(&one));
    let dir = Scratch::new(tag);
    for n in [1, 3, 4] {
        let parts = shards(&args, n, &dir, &format!("{tag}-{n}"));
        let merged = merge(&parts);
        let mtext = stdout(&merged);
        assert_eq!(
            merged.status.code(),
            Some(code),
            "{n} shards:\n{mtext}{}",
            stderr(&merged)
        );
        assert_eq!(
            verdict_lines(&mtext),
            verdict_lines(&text),
            "{n} shards:\n{mtext}\none machine:\n{text}"
        );
        assert_eq!(statuses(&mtext), statuses(&text), "{n} shards:\n{mtext}");
        assert_eq!(stderr(&merged), stderr(&one), "{n} shards");
        assert!(
            mtext.contains(&format!("  (merged from {n} shard{}: runs, distinct states and pruned runs are summed over the shards", if n == 1 { "" } else { "s" })),
            "{mtext}"
        );
        // The counts are sums: every level has runs, and the certificate's count is theirs.
        let level_runs: u64 = mtext
            .lines()
            .filter(|l| is_level_line(l))
            .map(|l| {
                let runs = l.split_once(": ").unwrap().1.split_once(" run").unwrap().0;
                let runs: u64 = runs.parse().unwrap();
                assert!(runs > 0, "{l}");
                runs
            })
            .sum();
        if code == 0 {
            assert!(
                mtext.contains(&format!("({level_runs} runs, complete)")),
                "{mtext}"
            );
        }
    }
    text
}

#[test]
fn a_certificate_merges_into_the_unsharded_one() {
    let text = same_as_unsharded(
        &["models/ticket_lost_response.json", "--design", "same_key"],
        0,
        "same-key",
    );
    assert!(text.contains("\ncertified for 2 faults: "), "{text}");
    assert!(
        text.contains(
            "\ncertificate scope: every schedule with at most 2 faults at these timing values: "
        ),
        "{text}"
    );
}

/// Two workers, a crash and a sweeper: a scope with a learned threshold (the design's
/// timer), and warnings of assumptions on stderr.
#[test]
fn a_two_worker_certificate_merges_into_the_unsharded_one() {
    let text = same_as_unsharded(
        &[
            "models/windows/two_workers_recovering.json",
            "--design",
            "journal_reconcile_lease",
        ],
        0,
        "two-workers",
    );
    assert!(
        text.contains("; and of the design's timer delays and declared ages: 25000"),
        "{text}"
    );
}

#[test]
fn a_violation_merges_into_the_unsharded_counterexample() {
    let text = same_as_unsharded(
        &["models/ticket_lost_response.json", "--design", "no_dedup"],
        1,
        "no-dedup",
    );
    assert!(text.contains("\nreplay: "), "{text}");
}

/// A violation with one fault and one deviation: found in the second pass of the second
/// fault budget, so that which shard's violation the one-machine search finds first is
/// decided by the fault budget, then the deviation budget, then the depth-first order.
#[test]
fn a_violation_past_the_first_pass_merges_into_the_unsharded_counterexample() {
    let text = same_as_unsharded(
        &["models/bad/retention_next_day.json", "--design", "same_key"],
        1,
        "retention",
    );
    assert!(text.contains("  1 fault: "), "{text}");
    assert!(text.contains("up to 1 deviation: a violation"), "{text}");
    let text = same_as_unsharded(
        &[
            "models/bad/sweeper_takes_live_op.json",
            "--design",
            "journal_reconcile",
        ],
        1,
        "sweeper",
    );
    assert!(
        text.contains("no_duplicate violated by a run with 0 faults"),
        "{text}"
    );
}

/// More shards than subtrees: most shards own nothing, and the merge still gives the
/// verdict.
#[test]
fn more_shards_than_subtrees_still_merge() {
    let dir = Scratch::new("many");
    for (design, code) in [("same_key", 0), ("no_dedup", 1)] {
        let args = owned(&["models/ticket_lost_response.json", "--design", design]);
        let one = run(&[owned(&["explore"]), args.clone()].concat());
        let parts = shards(&args, 64, &dir, design);
        let merged = merge(&parts);
        assert_eq!(merged.status.code(), Some(code), "{}", stdout(&merged));
        assert_eq!(
            verdict_lines(&stdout(&merged)),
            verdict_lines(&stdout(&one))
        );
        assert_eq!(statuses(&stdout(&merged)), statuses(&stdout(&one)));
    }
}

#[test]
fn a_limit_in_one_shard_is_no_certificate() {
    let dir = Scratch::new("limit");
    let args = owned(&[
        "models/windows/two_workers_recovering.json",
        "--design",
        "journal_reconcile_lease",
        "--max-runs",
        "3",
    ]);
    let parts = shards(&args, 2, &dir, "limit");
    let merged = merge(&parts);
    let text = stdout(&merged);
    assert_eq!(merged.status.code(), Some(3), "{text}");
    assert!(text.contains(": stopped at the run limit\n"), "{text}");
    assert!(text.contains("\nincomplete: no violation in "), "{text}");
    assert!(!text.contains("certified"), "{text}");
}

/// A missing shard, a shard given twice, a partial of another model or bound, and a shard
/// of a sampling strategy are refused with exit 2 and a message that names the problem.
#[test]
fn a_wrong_family_is_refused() {
    let dir = Scratch::new("family");
    let args = owned(&["models/ticket_lost_response.json", "--design", "same_key"]);
    let parts = shards(&args, 3, &dir, "a");
    let refused = |parts: &[String], message: &str| {
        let out = merge(parts);
        assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
        assert_eq!(stdout(&out), "");
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
    };
    refused(
        &parts[..2],
        "merge: missing shard 1/3 (every shard 1..3 must be given once)",
    );
    refused(
        &[parts[0].clone(), parts[1].clone(), parts[1].clone()],
        "given twice",
    );
    let other = shards(
        &owned(&["models/bad/lost_reply_rare.json", "--design", "same_key"]),
        3,
        &dir,
        "b",
    );
    refused(
        &[parts[0].clone(), parts[1].clone(), other[2].clone()],
        "not of the same sharded command",
    );
    let bound = shards(
        &owned(&[
            "models/ticket_lost_response.json",
            "--design",
            "same_key",
            "--max-faults",
            "1",
        ]),
        3,
        &dir,
        "c",
    );
    refused(
        &[parts[0].clone(), parts[1].clone(), bound[2].clone()],
        "different --max-faults: 1 here, 2 there",
    );
    let design = shards(
        &owned(&["models/ticket_lost_response.json", "--design", "no_dedup"]),
        3,
        &dir,
        "d",
    );
    refused(
        &[parts[0].clone(), parts[1].clone(), design[2].clone()],
        "different --design: \"no_dedup\" here, \"same_key\" there",
    );
    // A model file whose contents changed between the shards.
    let model = dir.path("model.json");
    let text = std::fs::read_to_string(root().join("models/ticket_lost_response.json")).unwrap();
    std::fs::write(&model, &text).unwrap();
    let before = shards(&owned(&[&model, "--design", "same_key"]), 2, &dir, "e");
    std::fs::write(
        &model,
        text.replacen("\"horizon_ms\"", " \"horizon_ms\"", 1),
    )
    .unwrap();
    let after = shards(&owned(&[&model, "--design", "same_key"]), 2, &dir, "f");
    refused(
        &[before[0].clone(), after[1].clone()],
        "the file changed between the shards",
    );
    let out = run(&owned(&[
        "explore",
        "models/ticket_lost_response.json",
        "--design",
        "same_key",
        "--strategy",
        "swarm",
        "--shard",
        "1/2",
        "--out",
        &dir.path("swarm.json"),
    ]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--shard: splits an exhaustive search"),
        "{}",
        stderr(&out)
    );
}

fn load(path: &Path) -> Model {
    Model::load(path).unwrap_or_else(|e| panic!("{e}"))
}

/// The violation a merge shows: the one of the shard whose violating run has the fewest
/// faults, then the smallest deviation budget, then comes first in depth-first order.
fn winner(shards: &[Exploration]) -> Option<&Exploration> {
    shards
        .iter()
        .filter(|e| !e.violations.is_empty())
        .min_by_key(|e| {
            let l = e.levels.last().unwrap();
            (
                l.max_faults,
                l.deviation_budget,
                e.violations[0].values.clone(),
            )
        })
}

/// For every model of the repository and every built-in design, split in 2, 3 and 5: the
/// shards find exactly the violating run (choice values, properties) the one-machine search
/// finds, or certify exactly when it does, with as many levels.
#[test]
fn shards_find_what_one_machine_finds_on_every_model() {
    let mut files = vec![root().join("models/ticket_lost_response.json")];
    for dir in ["models/windows", "models/bad"] {
        let mut more: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        more.sort();
        files.extend(more);
    }
    let mut compared = (0, 0);
    for file in &files {
        let model = load(file);
        for d in design::all() {
            let properties = Property::standard(d.properties());
            let bound = Bound {
                max_faults: model.explore.map_or(2, |e| e.max_faults),
                max_runs: 20_000,
                ..Bound::default()
            };
            let one = explore(&model, d, &properties, Strategy::Dfs, bound);
            let what = format!("{} {}", file.display(), d.name());
            if one.violations.is_empty() && !one.certified() {
                continue;
            }
            for count in [2, 3, 5] {
                let parts: Vec<Exploration> = (0..count)
                    .map(|index| {
                        explore_shard(
                            &model,
                            d,
                            &properties,
                            bound,
                            Shard { index, count },
                            &|_| {},
                        )
                    })
                    .collect();
                if one.violations.is_empty() {
                    assert!(
                        parts.iter().all(Exploration::certified),
                        "{what} {count}: {parts:?}"
                    );
                    let levels = parts.iter().map(|p| p.levels.len()).max();
                    assert_eq!(levels, Some(one.levels.len()), "{what} {count}");
                    let mut learned: Vec<u64> =
                        parts.iter().flat_map(|p| p.scope.learned.clone()).collect();
                    learned.sort_unstable();
                    learned.dedup();
                    assert_eq!(learned, one.scope.learned, "{what} {count}");
                    compared.0 += 1;
                } else {
                    let w =
                        winner(&parts).unwrap_or_else(|| panic!("{what} {count}: no violation"));
                    let strip = |e: &Exploration| {
                        e.violations
                            .iter()
                            .map(|v| (v.property, v.faults, v.values.clone()))
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(strip(w), strip(&one), "{what} {count}");
                    assert_eq!(w.levels.len(), one.levels.len(), "{what} {count}");
                    compared.1 += 1;
                }
            }
        }
    }
    // Certificates and violations both compared, over many pairs (609 and 507 when written).
    assert!(compared.0 >= 500 && compared.1 >= 400, "{compared:?}");
}

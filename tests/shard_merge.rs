//! Sharded sweeps: `run`, `check` and `report` with `--shard I/N --out FILE`, merged by
//! `retrylab merge` in any order, print (and write) exactly the bytes of the unsharded
//! command, with its exit code; every family error is refused with exit 2, naming it.

use crate::common::cli;
use crate::common::golden;

use std::path::{Path, PathBuf};
use std::process::Output;

use cli::*;

/// A scratch directory for one test, emptied first and removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("retrylab-shard-{}-{name}", std::process::id()));
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

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn run(args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    retrylab(&args)
}

/// Runs `args` as shards 1..=n into `dir`; each exits 0 having written its partial.
/// Returns the partial files in the order 3, 1, 4, 2, ... (not the shards').
fn shards(args: &[String], n: u64, dir: &Scratch, tag: &str) -> Vec<String> {
    let mut files = Vec::new();
    for i in 1..=n {
        let file = dir.path(&format!("{tag}-{i}.json"));
        let mut a = args.to_vec();
        a.extend(owned(&["--shard", &format!("{i}/{n}"), "--out", &file]));
        let out = run(&a);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(
            stdout(&out).starts_with(&format!("wrote {file}: {} shard {i}/{n}, ", args[0])),
            "{}",
            stdout(&out)
        );
        assert_eq!(stderr(&out), "", "a shard prints no result");
        files.push(file);
    }
    // A fixed shuffle: odd shards from the third on, then the rest, reversed halves.
    let mut shuffled: Vec<String> = files.iter().skip(2).step_by(2).cloned().collect();
    shuffled.extend(files.iter().step_by(2).take(1).cloned());
    shuffled.extend(files.iter().skip(1).step_by(2).rev().cloned());
    assert_eq!(shuffled.len(), files.len());
    shuffled
}

fn merge(parts: &[String], extra: &[&str]) -> Output {
    let mut a = owned(&["merge"]);
    a.extend(parts.iter().cloned());
    a.extend(owned(extra));
    run(&a)
}

/// The merge of `n` shards of `args` prints what `args` prints, with its exit code.
fn assert_merge_equals(args: &[&str], n: u64, name: &str, code: i32) -> (String, String) {
    let dir = Scratch::new(name);
    let args = owned(args);
    let whole = run(&args);
    assert_eq!(
        whole.status.code(),
        Some(code),
        "{}{}",
        stdout(&whole),
        stderr(&whole)
    );
    let parts = shards(&args, n, &dir, "part");
    let merged = merge(&parts, &[]);
    assert_eq!(
        stdout(&merged),
        stdout(&whole),
        "stdout of {args:?} in {n} shards"
    );
    assert_eq!(
        stderr(&merged),
        stderr(&whole),
        "stderr of {args:?} in {n} shards"
    );
    assert_eq!(merged.status.code(), whole.status.code());
    (stdout(&whole), stderr(&whole))
}

#[test]
fn run_table_in_four_shards_is_the_unsharded_run() {
    let (out, err) = assert_merge_equals(
        &[
            "run",
            "models/bad/lost_reply_rare.json",
            "--seeds",
            "300",
            "--show-failures",
            "3",
            "--fail-on",
            "no_duplicate",
        ],
        4,
        "run-table",
        1,
    );
    // The first violating seeds, from shards 1, 3 and 4 of seeds 0..300 (shard 2 has none),
    // and the verdict.
    assert!(
        out.contains(
            "new_key_after_replan violates no_duplicate on 3 of 300 seeds; the first 3:\n"
        ),
        "{out}"
    );
    for seed in [39, 222, 287] {
        assert!(
            out.contains(&format!("--design new_key_after_replan --seed {seed}\n")),
            "{out}"
        );
    }
    assert!(
        err.contains("--fail-on: new_key_after_replan: no_duplicate violated on 3 of 300 seeds"),
        "{err}"
    );
    // The same with more seeds kept than violate: every one of the four shards keeps some.
    assert_merge_equals(
        &[
            "run",
            "models/ticket_chaos.json",
            "--seeds",
            "100",
            "--wide",
            "--show-failures",
            "40",
            "--fail-on",
            "no_duplicate",
        ],
        4,
        "run-wide",
        1,
    );
}

#[test]
fn run_json_in_four_shards_with_the_determinism_sample_of_shard_one() {
    let (_, err) = assert_merge_equals(
        &[
            "run",
            "models/ticket_chaos.json",
            "--seeds",
            "120",
            "--first-seed",
            "7",
            "--format",
            "json",
            "--show-failures",
            "3",
            "--fail-on",
            "no_duplicate,no_false_success",
            "--check-determinism",
        ],
        4,
        "run-json",
        1,
    );
    assert!(
        err.contains("determinism: ticket_chaos: 16 seeds x 3 designs: silent, traced twice and replayed runs agree"),
        "{err}"
    );
}

#[test]
fn merge_takes_another_format_for_run() {
    let dir = Scratch::new("run-format");
    let args = owned(&["run", "models/ticket_lost_response.json", "--seeds", "50"]);
    let parts = shards(&args, 4, &dir, "part");
    let mut json = args.clone();
    json.extend(owned(&["--format", "json"]));
    let whole = run(&json);
    let merged = merge(&parts, &["--format", "json"]);
    assert_eq!(merged.status.code(), Some(0));
    assert_eq!(stdout(&merged), stdout(&whole));
    assert!(stdout(&merged).starts_with('{'));
}

/// `models/bad/lost_reply_rare.json` expecting `new_key_after_replan` to hold
/// `no_duplicate`, which it does not: seeds 55, 97 and 99 of 0..120 violate it (the first
/// in shard 2 of 4, the others in shard 4), and its `explore` bound finds a run with one
/// lost reply.
fn lost_reply_hold(dir: &Scratch) -> String {
    let text = std::fs::read_to_string(root().join("models/bad/lost_reply_rare.json")).unwrap();
    let wrong = text.replace(
        "\"hold\": [\"no_false_success\", \"no_false_failure\", \"no_false_resolution\"],\n      \"violate\": [\"no_duplicate\"]",
        "\"hold\": [\"no_duplicate\", \"no_false_success\", \"no_false_failure\", \"no_false_resolution\"]",
    );
    assert_ne!(wrong, text);
    let path = dir.path("lost_reply_hold.json");
    std::fs::write(&path, wrong).unwrap();
    path
}

#[test]
fn check_in_four_shards_is_the_unsharded_check() {
    let dir = Scratch::new("check-models");
    let model = lost_reply_hold(&dir);
    let (out, err) = assert_merge_equals(
        &[
            "check",
            "models/ticket_lost_response.json",
            &model,
            "models/schema.json",
            "--seeds",
            "120",
            "--check-determinism",
        ],
        4,
        "check",
        1,
    );
    // Met expectations and certifications (shard 1's), the unmet one with the counterexample
    // of the lowest violating seed (shard 2's), and the search's counterexample.
    assert!(
        out.contains("  ok    same_key                 explore  certified within 2 faults"),
        "{out}"
    );
    assert!(
        out.contains("  FAIL  new_key_after_replan     hold     no_duplicate               1 of 120 seeds violate it"),
        "{out}"
    );
    assert!(out.contains("first violating seed: 39\n"), "{out}");
    assert!(
        out.contains("FAIL lost_reply_rare new_key_after_replan (explore, within the model's bound): no_duplicate violated by a run with 1 fault"),
        "{out}"
    );
    assert!(out.ends_with("2 not met\n"), "{out}");
    assert!(
        err.starts_with(
            "models/schema.json: the JSON Schema of model files, not a model: skipped\n"
        ),
        "{err}"
    );
    assert!(err.ends_with("check: 2 expectation(s) not met\n"), "{err}");
}

#[test]
fn check_met_in_four_shards_exits_zero() {
    assert_merge_equals(
        &["check", "models/ticket_lost_response.json", "--seeds", "40"],
        4,
        "check-met",
        0,
    );
}

#[test]
fn more_shards_than_seeds_and_one_shard() {
    for n in [1, 5] {
        assert_merge_equals(
            &[
                "run",
                "models/ticket_chaos.json",
                "--seeds",
                "3",
                "--show-failures",
                "2",
                "--check-determinism",
            ],
            n,
            &format!("run-small-{n}"),
            0,
        );
        assert_merge_equals(
            &[
                "check",
                "models/ticket_chaos.json",
                "--seeds",
                "2",
                "--first-seed",
                "41",
            ],
            n,
            &format!("check-small-{n}"),
            0,
        );
    }
}

/// Every file of the directory `a` is in `b` with the same bytes, and no other.
fn assert_same_dir(a: &Path, b: &Path) {
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(a), names(b));
    for name in names(a) {
        let (x, y) = (
            std::fs::read(a.join(&name)).unwrap(),
            std::fs::read(b.join(&name)).unwrap(),
        );
        if x != y {
            golden::assert_same_text(
                &String::from_utf8_lossy(&x),
                &String::from_utf8_lossy(&y),
                &format!("{name} differs (bytes: {} and {})", x.len(), y.len()),
            );
            panic!("{name} differs in bytes that are not UTF-8");
        }
    }
}

#[test]
fn report_in_three_shards_is_the_unsharded_report() {
    let dir = Scratch::new("report");
    for (tag, n, seeds) in [("three", 3, "60"), ("empty", 4, "2")] {
        let args = owned(&[
            "report",
            "models/ticket_chaos.json",
            "--each-provider",
            "models/ticket_lost_response.json",
            "--matrix",
            "models/guarantees/contract_as_assumed.json",
            "--matrix",
            "models/guarantees/atomic_dedup.json",
            "--max-faults",
            "1",
            "--seeds",
            seeds,
            "--baseline",
            "same_key",
        ]);
        let whole_dir = dir.path(&format!("{tag}-whole"));
        let mut whole = args.clone();
        whole.extend(owned(&["--out", &whole_dir]));
        let out = run(&whole);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let parts = shards(&args, n, &dir, tag);
        let merged_dir = dir.path(&format!("{tag}-merged"));
        let out = merge(&parts, &["--out", &merged_dir]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(
            stdout(&out),
            format!(
                "wrote {merged_dir}/report.json, {merged_dir}/report.md and {merged_dir}/report.html\n"
            )
        );
        assert_same_dir(Path::new(&whole_dir), Path::new(&merged_dir));
    }
}

/// A model whose values make a component inert is warned about as it is loaded: a shard
/// keeps the warnings in its partial and prints nothing, the merge prints them where the
/// unsharded command does.
#[test]
fn the_models_warnings_are_printed_by_the_merge_not_the_shards() {
    let model = "models/guarantees/in_flight_refused_or_held.json";
    let timeout = "warning: in_flight_refused_or_held: executor.timeout_ms: 1000 is not longer";
    let reads = "warning: in_flight_refused_or_held: executor.reads: 1:";
    let (_, err) = assert_merge_equals(&["run", model, "--seeds", "20"], 2, "warned-run", 0);
    assert!(err.starts_with(timeout), "{err}");
    assert!(
        err.lines().nth(1).is_some_and(|l| l.starts_with(reads)),
        "{err}"
    );

    // explore's merge sums its statistics over the shards: its stderr is the unsharded one's.
    let dir = Scratch::new("warned-explore");
    let args = owned(&[
        "explore",
        model,
        "--design",
        "same_key",
        "--max-faults",
        "1",
    ]);
    let whole = run(&args);
    assert_eq!(whole.status.code(), Some(1), "{}", stderr(&whole));
    assert!(stderr(&whole).starts_with(timeout), "{}", stderr(&whole));
    let merged = merge(&shards(&args, 3, &dir, "part"), &[]);
    assert_eq!(merged.status.code(), Some(1), "{}", stderr(&merged));
    assert_eq!(stderr(&merged), stderr(&whole));

    let dir = Scratch::new("warned-report");
    let args = owned(&["report", model, "--seeds", "20"]);
    let whole_dir = dir.path("whole");
    let mut whole = args.clone();
    whole.extend(owned(&["--out", &whole_dir]));
    let whole = run(&whole);
    assert_eq!(whole.status.code(), Some(0), "{}", stderr(&whole));
    assert!(stderr(&whole).starts_with(timeout), "{}", stderr(&whole));
    let parts = shards(&args, 2, &dir, "part");
    let merged = merge(&parts, &["--out", &dir.path("merged")]);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    assert_eq!(stderr(&merged), stderr(&whole));
}

/// The merge refuses `parts` with exit 2 and an error containing `message`.
fn assert_refused(parts: &[String], extra: &[&str], message: &str) {
    let out = merge(parts, extra);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains(message), "{}", stderr(&out));
}

#[test]
fn merge_refuses_what_is_not_one_family() {
    let dir = Scratch::new("refused");
    let run_args = owned(&["run", "models/ticket_lost_response.json", "--seeds", "20"]);
    let mut p = shards(&run_args, 4, &dir, "run");
    p.sort();
    // A missing shard, two, a shard given twice.
    assert_refused(
        &[p[0].clone(), p[1].clone(), p[3].clone()],
        &[],
        "merge: missing shard 3/4 (every shard 1..4 must be given once)",
    );
    assert_refused(&p[..2], &[], "merge: missing shards 3/4, 4/4");
    let mut twice = p.clone();
    twice.push(p[1].clone());
    assert_refused(
        &twice,
        &[],
        &format!("{}: shard 2/4 given twice (also {})", p[1], p[1]),
    );
    // Another command, other options, another shard count.
    let c = shards(
        &owned(&["check", "models/ticket_lost_response.json", "--seeds", "20"]),
        4,
        &dir,
        "check",
    );
    let mixed = [p[0].clone(), p[1].clone(), c[1].clone(), p[3].clone()];
    assert_refused(&mixed, &[], "not of the same sharded command as");
    assert_refused(&mixed, &[], "a partial of check here, of run there");
    let other = shards(
        &owned(&["run", "models/ticket_lost_response.json", "--seeds", "21"]),
        4,
        &dir,
        "seeds",
    );
    assert_refused(
        &[p[0].clone(), p[1].clone(), other[0].clone(), p[3].clone()],
        &[],
        "different --seeds: 21 here, 20 there",
    );
    let three = shards(&run_args, 3, &dir, "three");
    assert_refused(
        &[p[0].clone(), three[0].clone()],
        &[],
        "3 shards here, 4 there",
    );
    // A partial of the same command on a model file changed in between.
    let text = std::fs::read_to_string(root().join("models/ticket_lost_response.json")).unwrap();
    let model = dir.path("model.json");
    std::fs::write(&model, &text).unwrap();
    let args = owned(&["run", &model, "--seeds", "20"]);
    let mut before = shards(&args, 2, &dir, "before");
    before.sort();
    std::fs::write(&model, text.replace("\"horizon_ms\"", " \"horizon_ms\"")).unwrap();
    let mut after = shards(&args, 2, &dir, "after");
    after.sort();
    assert_refused(
        &[before[0].clone(), after[1].clone()],
        &[],
        &format!("a different model file {model}: hash "),
    );
    // Not a partial: a damaged file, a model file, a later version.
    let corrupt = dir.path("corrupt.json");
    let whole = std::fs::read_to_string(&p[0]).unwrap();
    std::fs::write(&corrupt, &whole[..whole.len() / 2]).unwrap();
    assert_refused(
        &[corrupt.clone(), p[1].clone()],
        &[],
        &format!("{corrupt}: not a partial file (not JSON: "),
    );
    assert_refused(
        &owned(&["models/ticket_lost_response.json"]),
        &[],
        "models/ticket_lost_response.json: not a partial file (no \"format\": \"retrylab-partial\")",
    );
    let later = dir.path("later.json");
    std::fs::write(&later, whole.replacen("\"version\":1", "\"version\":2", 1)).unwrap();
    assert_refused(
        std::slice::from_ref(&later),
        &[],
        &format!("{later}: partial format version 2, but this program reads version 1"),
    );
    let other_tool = dir.path("other_tool.json");
    std::fs::write(
        &other_tool,
        whole.replacen("\"tool\":\"retrylab ", "\"tool\":\"retrylab 0.0.0-", 1),
    )
    .unwrap();
    assert_refused(
        std::slice::from_ref(&other_tool),
        &[],
        &format!(
            "{other_tool}: written by retrylab 0.0.0-{v}, but this is retrylab {v}: run the shards and the merge with one build",
            v = env!("CARGO_PKG_VERSION")
        ),
    );
    // Damaged files: the merge does not add up what it cannot read.
    let damaged = dir.path("damaged.json");
    std::fs::write(
        &damaged,
        whole.replacen("\"seeds\":5", "\"seeds\":\"5\"", 1),
    )
    .unwrap();
    assert_refused(
        std::slice::from_ref(&damaged),
        &[],
        &format!("{damaged}: a damaged partial file: "),
    );
    let with = |text: String| {
        std::fs::write(&damaged, text).unwrap();
        vec![damaged.clone(), p[1].clone(), p[2].clone(), p[3].clone()]
    };
    let moved = whole.replacen(
        "\"first_seed\":0,\"seeds\":5",
        "\"first_seed\":1,\"seeds\":5",
        1,
    );
    assert_ne!(moved, whole);
    assert_refused(
        &with(moved),
        &[],
        &format!(
            "{damaged}: a damaged partial file: shard 1/4 does not hold its block of the seeds"
        ),
    );
    let data = whole.find("\"data\":").unwrap();
    let unknown = format!(
        "{}{}",
        &whole[..data],
        whole[data..].replacen("\"no_duplicate\"", "\"no_such_property\"", 1)
    );
    assert_ne!(unknown, whole);
    assert_refused(
        &with(unknown),
        &[],
        &format!("{damaged}: a damaged partial file: unknown property"),
    );
    // --out is for a report's partials, --format for run's.
    assert_refused(
        &p,
        &["--out", &dir.path("x")],
        "--out: only for partials of report",
    );
    assert_refused(
        &c,
        &["--format", "json"],
        "--format: only for partials of run",
    );
}

#[test]
fn shard_arguments_are_checked() {
    let model = "models/ticket_lost_response.json";
    for (shard, message) in [
        (
            "0/4",
            "invalid value '0/4' for '--shard <I/N>': I in I/N runs from 1 to N (4); got 0",
        ),
        (
            "5/4",
            "invalid value '5/4' for '--shard <I/N>': I in I/N runs from 1 to N (4); got 5",
        ),
        (
            "a/b",
            "invalid value 'a/b' for '--shard <I/N>': I in I/N must be a whole number; got a",
        ),
        (
            "1/0",
            "invalid value '1/0' for '--shard <I/N>': N in I/N must be at least 1",
        ),
    ] {
        let out = retrylab(&["run", model, "--shard", shard, "--out", "x.json"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
    }
    for command in ["run", "check"] {
        let out = retrylab(&[command, model, "--shard", "1/4"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out)
                .contains("the following required arguments were not provided:\n  --out <FILE>"),
            "{}",
            stderr(&out)
        );
    }
    let out = retrylab(&[
        "run", model, "--seed", "3", "--shard", "1/4", "--out", "x.json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the argument '--seed <S>' cannot be used with '--shard <I/N>'"),
        "{}",
        stderr(&out)
    );
    assert!(!root().join("x.json").exists());
}

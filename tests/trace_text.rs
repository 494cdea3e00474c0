//! Traces a person can follow: the `outcome:` line names each intent's verdict and the
//! effects behind it, `--intent` and `--component` filter the timeline, and values print in
//! the model's spelling.

use std::path::PathBuf;

use retrylab::check::VerdictKind as Kind;
use retrylab::cli::{Outcome, run_with};
use retrylab::design::Registry;
use retrylab::model::Model;
use retrylab::run::run_traced;
use retrylab::sim::RandomChooser;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn model_path(file: &str) -> String {
    root().join("models").join(file).display().to_string()
}

fn retrylab(args: &[&str]) -> Outcome {
    let mut all = vec!["retrylab"];
    all.extend_from_slice(args);
    run_with(all, &[])
}

/// The line of `text` that starts with `prefix`, without it.
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{text}"))
}

/// The timeline of a `trace` or `replay` output: between the header and the outcome.
fn timeline(text: &str) -> Vec<&str> {
    let body = text.split_once("\n\n").unwrap().1;
    body.split("\n\noutcome: ")
        .next()
        .unwrap()
        .lines()
        .collect()
}

/// Every bundled model file.
fn bundled() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["models", "models/windows", "models/guarantees"] {
        let mut here: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter(|p| !retrylab::model::reference::is_schema_file(p))
            .collect();
        here.sort();
        files.extend(here);
    }
    files
}

#[test]
fn the_outcome_line_names_the_duplicate_effect() {
    let out = retrylab(&[
        "trace",
        &model_path("windows/reply_lost_after_commit.json"),
        "--design",
        "no_dedup",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        line(&out.stdout, "outcome: "),
        "intent 0: completed (duplicate effect r1 of r0)"
    );
    assert_eq!(
        line(&out.stdout, "counts: "),
        "intents 1, effects 2, completed 1, duplicate effects 1, drifted effects 0, compensations 0, false success 0, false failure 0, merged repeats 0, wrong receipts 0, wrong compensations 0, masked mismatches 0, unresolved 0, unknown ops 1, false resolutions 0, remote calls 2"
    );
}

#[test]
fn the_outcome_line_names_the_effect_a_false_failure_left_behind() {
    let out = retrylab(&[
        "trace",
        &model_path("windows/reply_lost_after_commit.json"),
        "--design",
        "layered_retries",
    ]);
    assert_eq!(
        line(&out.stdout, "outcome: "),
        "intent 0: false failure (effect r0 exists)"
    );
}

#[test]
fn the_outcome_line_names_the_intent_a_repeat_was_merged_into() {
    let out = retrylab(&[
        "trace",
        &model_path("windows/genuine_repeat.json"),
        "--design",
        "payload_hash_key",
    ]);
    assert_eq!(
        line(&out.stdout, "outcome: "),
        "intent 0: completed; intent 1: false success (no effect, merged into r0 of intent 0)"
    );
}

#[test]
fn the_verdicts_agree_with_the_metrics_on_every_bundled_model() {
    let designs = Registry::builtin();
    let mut judged = 0;
    for path in bundled() {
        let model = Model::load(&path).unwrap();
        for name in &model.designs {
            let d = designs.find(name).unwrap();
            for seed in 0..4 {
                let t = run_traced(&model, d, &mut RandomChooser::new(seed));
                let m = &t.metrics;
                let count = |k: Kind| t.intents.iter().filter(|v| v.kind == k).count() as u64;
                let at = format!("{} {name} seed {seed}", path.display());
                assert_eq!(t.intents.len() as u64, m.intents, "{at}");
                assert_eq!(count(Kind::Completed), m.completed, "{at}");
                assert_eq!(count(Kind::Failed), m.true_failures, "{at}");
                assert_eq!(count(Kind::FalseSuccess), m.false_success, "{at}");
                assert_eq!(count(Kind::FalseFailure), m.false_failure, "{at}");
                assert_eq!(count(Kind::Unresolved), m.unresolved, "{at}");
                let dups: usize = t.intents.iter().map(|v| v.duplicates.len()).sum();
                assert_eq!(dups as u64, m.duplicate_effects, "{at}");
                let drifted: usize = t.intents.iter().map(|v| v.drifted.len()).sum();
                assert_eq!(drifted as u64, m.drifted_effects, "{at}");
                let merged = t.intents.iter().filter(|v| v.merged_into.is_some()).count();
                assert_eq!(merged as u64, m.merged_repeats, "{at}");
                judged += 1;
            }
        }
    }
    assert!(judged > 300, "{judged} runs judged");
}

#[test]
fn timelines_spell_values_as_model_files_do() {
    // A word with a capital letter in a timeline line is a Debug-formatted value
    // (`Durable`, `AfterSend`): every value prints as the model spells it.
    let designs = Registry::builtin();
    let mut lines = 0;
    for path in bundled() {
        let model = Model::load(&path).unwrap();
        for name in &model.designs {
            for seed in 0..3 {
                let t = run_traced(
                    &model,
                    designs.find(name).unwrap(),
                    &mut RandomChooser::new(seed),
                );
                for (l, _) in &t.lines {
                    lines += 1;
                    let capital = l
                        .text
                        .split(|c: char| !c.is_alphanumeric() && c != '_')
                        .find(|w| w.chars().next().is_some_and(char::is_uppercase));
                    assert_eq!(
                        capital,
                        None,
                        "{} {name} seed {seed}: {}",
                        path.display(),
                        l.text
                    );
                }
            }
        }
    }
    assert!(lines > 10_000, "{lines} lines read");
}

#[test]
fn a_restart_names_the_journal_as_the_model_does() {
    let out = retrylab(&[
        "trace",
        &model_path("windows/crash_after_success.json"),
        "--design",
        "journal",
    ]);
    assert!(
        out.stdout
            .contains("executor  worker 0 restarts (durable journal) and recovers\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn intent_filters_the_timeline_and_the_outcome() {
    let chaos = model_path("ticket_chaos.json");
    let all = retrylab(&["trace", &chaos, "--design", "same_key", "--seed", "62"]);
    let only = retrylab(&[
        "trace", &chaos, "--design", "same_key", "--seed", "62", "--intent", "2",
    ]);
    assert_eq!(only.code, 0, "{}", only.stderr);
    assert!(
        only.stdout.starts_with(
            "trace of same_key on model ticket_chaos, seed 62; timeline: only lines about intent 2 (and about no intent)\n"
        ),
        "{}",
        only.stdout
    );
    let (all_lines, kept) = (timeline(&all.stdout), timeline(&only.stdout));
    assert!(kept.len() < all_lines.len() / 2, "{}", only.stdout);
    // Kept lines are the run's own, in order.
    let mut rest = all_lines.iter();
    for l in &kept {
        assert!(rest.any(|a| a == l), "{l} is not in the whole timeline");
    }
    // Intent 2's story: its calls (3, then 6 after a replan), its effects r3 and r5.
    for want in [
        "agent     call 3 for intent 2 (its call #1), params 3",
        "ledger    effect r3 committed for intent 2",
        "ledger    effect r5 committed for intent 2",
        "agent     intent 2: tells the user success",
    ] {
        assert!(
            kept.iter().any(|l| l.ends_with(want)),
            "{want}:\n{}",
            only.stdout
        );
    }
    for l in &kept {
        for other in ["intent 0", "intent 1", "intent 3", "intent 4"] {
            assert!(!l.contains(other), "{l}");
        }
    }
    assert_eq!(
        line(&only.stdout, "outcome: "),
        "intent 2: completed (duplicate effect r5 of r3, effect r5 with other arguments than asked)"
    );
    // The counts stay those of the whole run.
    assert_eq!(
        line(&only.stdout, "counts: "),
        line(&all.stdout, "counts: ")
    );
    let none = retrylab(&["trace", &chaos, "--design", "same_key", "--intent", "5"]);
    assert_eq!(none.code, 2);
    assert_eq!(
        none.stderr,
        "error: --intent 5: the run has 5 intents (numbered from 0)\n"
    );
}

#[test]
fn component_filters_the_timeline_of_trace_and_replay() {
    let file = model_path("windows/reply_lost_after_commit.json");
    let out = retrylab(&[
        "trace",
        &file,
        "--design",
        "no_dedup",
        "--component",
        "ledger,network",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        timeline(&out.stdout),
        [
            "          60 ms  ledger    effect r0 committed for intent 0",
            "          60 ms  network   reply to attempt 1 lost (scripted fault)",
            "        5060 ms  ledger    effect r1 committed for intent 0",
        ],
        "{}",
        out.stdout
    );
    let choices = line(&out.stdout, "replay: ")
        .split("--choices ")
        .nth(1)
        .unwrap()
        .trim_matches('\'')
        .to_string();
    let again = retrylab(&[
        "replay",
        &file,
        "--design",
        "no_dedup",
        "--choices",
        &choices,
        "--component",
        "ledger,network",
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(timeline(&again.stdout), timeline(&out.stdout));
    let again = retrylab(&[
        "replay",
        &file,
        "--design",
        "no_dedup",
        "--choices",
        &choices,
        "--intent",
        "0",
        "--component",
        "ledger",
    ]);
    assert_eq!(timeline(&again.stdout).len(), 2, "{}", again.stdout);
    let bad = retrylab(&[
        "trace",
        &file,
        "--design",
        "no_dedup",
        "--component",
        "disk",
    ]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("invalid value 'disk'"),
        "{}",
        bad.stderr
    );
}

#[test]
fn every_component_named_keeps_the_whole_timeline() {
    let file = model_path("windows/reply_lost_after_commit.json");
    let a = retrylab(&["trace", &file, "--design", "same_key"]);
    let b = retrylab(&[
        "trace",
        &file,
        "--design",
        "same_key",
        "--component",
        "workload,agent,executor,network,provider,ledger",
    ]);
    assert_eq!(timeline(&a.stdout), timeline(&b.stdout));
}

/// A sweeper that takes over an operation nobody can settle (every reply lost, the agent out
/// of calls) until the horizon: the bundled `sweeper_takes_live_op` with the replies of its
/// first four sends lost and the journal design.
fn repeating_sweeper() -> (PathBuf, Model) {
    let text =
        std::fs::read_to_string(root().join("models/bad/sweeper_takes_live_op.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("expect");
    o.remove("$schema");
    o.insert("name".into(), "repeating_sweeper".into());
    o.insert("designs".into(), serde_json::json!(["journal"]));
    o.insert(
        "faults".into(),
        serde_json::json!(
            (1..=4)
                .map(|a| serde_json::json!({"drop_reply": {"attempt": a}}))
                .collect::<Vec<_>>()
        ),
    );
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("retrylab-trace-text-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("repeating_sweeper.json");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let model = Model::load(&path).unwrap();
    (path, model)
}

#[test]
fn lines_that_repeat_unchanged_fold_into_one_with_their_count_and_last_time() {
    let (path, model) = repeating_sweeper();
    let file = path.display().to_string();
    let out = retrylab(&["trace", &file, "--design", "journal"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines = timeline(&out.stdout);
    let folded = "      108000 ms  executor  worker 0: recovers op 0  (41 times until 600000 ms)";
    assert_eq!(lines.last(), Some(&folded), "{}", out.stdout);
    assert_eq!(
        lines.iter().filter(|l| l.contains("times until")).count(),
        1
    );
    // The run itself is unchanged: its lines are all there, and its choices are the ones
    // the replay takes.
    let d = Registry::builtin().find("journal").unwrap();
    let t = run_traced(&model, d, &mut model.chooser(0));
    let sweeps = t
        .lines
        .iter()
        .filter(|(l, _)| l.at_ms >= 108_000 && l.text == "worker 0: recovers op 0")
        .count();
    assert_eq!(sweeps, 41);
    assert_eq!(t.lines.len(), lines.len() + 40);
    let choices = line(&out.stdout, "replay: ")
        .split("--choices ")
        .nth(1)
        .unwrap()
        .trim_matches('\'')
        .to_string();
    assert_eq!(choices, format!("{}:{}", model.digest(), t.vector()));
    let again = retrylab(&[
        "replay",
        &file,
        "--design",
        "journal",
        "--choices",
        &choices,
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(timeline(&again.stdout), lines);
    // Folding reads the printed lines: the executor's alone still end in the fold, and the
    // agent's (which never repeat) are as they were.
    let executor = retrylab(&[
        "trace",
        &file,
        "--design",
        "journal",
        "--component",
        "executor",
    ]);
    assert_eq!(timeline(&executor.stdout).last(), Some(&folded));
    let agent = retrylab(&[
        "trace",
        &file,
        "--design",
        "journal",
        "--component",
        "agent",
    ]);
    assert!(!agent.stdout.contains("times until"), "{}", agent.stdout);
    let _ = std::fs::remove_file(&path);
}

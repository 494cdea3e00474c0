//! `check`'s verdicts a CI can trust (issue 20, items 6 and 8), through the binary: exit 0
//! pass, 1 fail, 3 not certified (a search stopped at its run limit, a model without
//! expectations), 2 bad input; `--max-runs` and `expect.DESIGN.explore_max_runs`; the
//! not-certified status through `--shard` and `merge`; directories; a replay refused
//! against a model edited since its vector was recorded; the JSON and JUnit forms; and the
//! harm stated before the expectations in `run` and `check`.

use crate::common::cli;

use std::path::PathBuf;

use cli::*;
use serde_json::Value;

const NOT_CERTIFIED: &str = "tests/fixtures/check/not_certified.json";
const NO_EXPECTATIONS: &str = "tests/fixtures/check/no_expectations.json";

/// A scratch directory of this test process, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "retrylab-check-verdicts-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn code(out: &std::process::Output) -> i32 {
    out.status.code().expect("exited")
}

fn fixture(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

/// `models/ticket_chaos.json` expecting `same_key` to hold `no_duplicate`, which it does not.
fn wrong_chaos() -> String {
    let text = fixture("models/ticket_chaos.json");
    let (head, tail) = text.split_once("\"same_key\": {").unwrap();
    let tail = tail
        .replacen(
            "\"hold\": [\"no_false_success\",",
            "\"hold\": [\"no_duplicate\", \"no_false_success\",",
            1,
        )
        .replacen(
            "\"violate\": [\"no_duplicate\", \"no_drift\"",
            "\"violate\": [\"no_drift\"",
            1,
        );
    format!("{head}\"same_key\": {{{tail}")
}

#[test]
fn a_search_stopped_at_its_run_limit_is_not_certified_exit_3() {
    let out = retrylab(&["check", NOT_CERTIFIED, "--seeds", "20"]);
    let text = stdout(&out);
    assert_eq!(code(&out), 3, "{text}{}", stderr(&out));
    assert!(text.contains(
        "  ?     journal_reconcile_lease  explore  not certified: no violation, but stopped at its run limit (5 runs) within 0 faults\n"
    ), "{text}");
    assert!(
        text.contains("\nNOT CERTIFIED two_workers_not_certified journal_reconcile_lease: no violation in 5 runs, but the search stopped at its run limit (5)"),
        "{text}"
    );
    assert!(
        !text.contains("FAIL"),
        "not certified is not a failure: {text}"
    );
    assert!(
        text.ends_with("2 expectations in 1 model: 1 met, 0 not met, 1 not certified\n"),
        "{text}"
    );
    assert!(
        stderr(&out).contains("check: not certified: 1 exhaustive search stopped at its run limit without a violation (raise --max-runs"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn max_runs_on_the_command_line_lets_the_search_finish() {
    // The 0-fault level of this model is 8 runs: a limit of 8 certifies, 7 does not.
    let out = retrylab(&["check", NOT_CERTIFIED, "--seeds", "20", "--max-runs", "8"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains(
            "  ok    journal_reconcile_lease  explore  certified within 0 faults: 8 runs\n"
        )
    );
    let out = retrylab(&["check", NOT_CERTIFIED, "--seeds", "20", "--max-runs", "7"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let out = retrylab(&["check", NOT_CERTIFIED, "--max-runs", "0"]);
    assert_eq!(code(&out), 2);
    assert_eq!(stderr(&out), "error: --max-runs 0: must be at least 1\n");
}

#[test]
fn a_designs_own_run_limit_overrides_the_models_and_the_command_line_overrides_both() {
    let scratch = Scratch::new("override");
    let text = fixture(NOT_CERTIFIED).replace(
        "\"hold\": [\n        \"no_duplicate\"\n      ]",
        "\"hold\": [\n        \"no_duplicate\"\n      ],\n      \"explore_max_runs\": 100",
    );
    assert!(text.contains("\"explore_max_runs\": 100"), "{text}");
    let model = scratch.file("override.json", &text);
    let out = retrylab(&["check", &model, "--seeds", "20"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("certified within 0 faults: 8 runs"));
    let out = retrylab(&["check", &model, "--seeds", "20", "--max-runs", "3"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    assert!(stdout(&out).contains("stopped at its run limit (3 runs)"));
    // explore takes the design's limit as its default too.
    let out = retrylab(&[
        "explore",
        &model,
        "--design",
        "journal_reconcile_lease",
        "--property",
        "no_duplicate",
    ]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));

    // Without an explore bound the field is refused, at its place.
    let no_bound = text.replace(
        "  \"explore\": {\n    \"max_faults\": 0,\n    \"max_runs\": 5\n  },\n",
        "",
    );
    assert!(!no_bound.contains("\"explore\":"), "{no_bound}");
    let bad = scratch.file("no_bound.json", &no_bound);
    let out = retrylab(&["check", &bad]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains(
            ": expect.journal_reconcile_lease.explore_max_runs: the model has no `explore` bound"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn not_certified_survives_sharding_and_merge() {
    let scratch = Scratch::new("shards");
    let whole = retrylab(&["check", NOT_CERTIFIED, "--seeds", "20"]);
    let mut parts = Vec::new();
    for i in 1..=3 {
        let part = scratch.path(&format!("part{i}.json"));
        let out = retrylab(&[
            "check",
            NOT_CERTIFIED,
            "--seeds",
            "20",
            "--shard",
            &format!("{i}/3"),
            "--out",
            &part,
        ]);
        assert_eq!(code(&out), 0, "a shard that wrote its partial exits 0");
        parts.push(part);
    }
    let mut args = vec!["merge"];
    args.extend(parts.iter().map(String::as_str));
    let merged = retrylab(&args);
    assert_eq!(code(&merged), 3, "{}", stdout(&merged));
    assert_eq!(stdout(&merged), stdout(&whole));
}

#[test]
fn a_model_without_expectations_is_not_a_silent_pass() {
    let out = retrylab(&["check", NO_EXPECTATIONS, "--seeds", "10"]);
    assert_eq!(code(&out), 3);
    assert_eq!(
        stdout(&out),
        format!(
            "{NO_EXPECTATIONS} (no_expectations): 10 seeds per design (seeds 0..=9)\n  no expectations: nothing checked (add an \"expect\" section to check this model)\n\n0 expectations in 1 model: 0 met, 0 not met; 1 model without expectations\n"
        )
    );
    assert_eq!(
        stderr(&out),
        "check: not certified: 1 model without expectations checked nothing (add an \"expect\" section, or pass --allow-no-expectations)\n"
    );
    let out = retrylab(&[
        "check",
        NO_EXPECTATIONS,
        "--seeds",
        "10",
        "--allow-no-expectations",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).ends_with(
        "0 expectations in 1 model: 0 met, 0 not met; 1 model without expectations (allowed by --allow-no-expectations)\n"
    ));
}

#[test]
fn a_directory_stands_for_its_models_in_name_order() {
    let out = retrylab(&["check", "tests/fixtures/check", "--seeds", "10"]);
    assert_eq!(code(&out), 3);
    let text = stdout(&out);
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" seeds per design"))
        .collect();
    assert_eq!(
        heads,
        [
            "tests/fixtures/check/no_expectations.json (no_expectations): 10 seeds per design (seeds 0..=9)",
            "tests/fixtures/check/not_certified.json (two_workers_not_certified): 10 seeds per design (seeds 0..=9)",
        ]
    );
    let scratch = Scratch::new("empty-dir");
    let out = retrylab(&["check", scratch.0.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("a directory without model files (*.json)"));
}

#[test]
fn a_failed_expectation_exits_1_and_its_replay_carries_the_model_digest() {
    let scratch = Scratch::new("digest");
    let model = scratch.file("wrong_chaos.json", &wrong_chaos());
    let out = retrylab(&["check", &model, "--seeds", "50"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("\nFAIL ticket_chaos same_key: no_duplicate must hold on every seed; "));
    let replay = text
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a replay line");
    // One word carries the digest and the vector: `--choices DIGEST:ITEMS`.
    let key = replay
        .split_once(" --choices ")
        .map(|(_, rest)| rest.to_string())
        .expect("the replay command gives --choices");
    let (digest, items) = key.split_once(':').expect("the key carries the digest");
    let digest = digest.to_string();
    assert!(
        replay.contains(&format!("--design same_key --choices {digest}:")),
        "{replay}"
    );
    assert_eq!(digest.len(), 16, "{replay}");
    // The short form: the one decision that is not at its default, by position.
    assert_eq!(items, "23=1", "{replay}");
    // As printed, it replays.
    let out = shell(replay);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("violates: no_duplicate"));

    // Cosmetic edits (description, expectations, layout) leave the digest alone...
    let mut value: Value = serde_json::from_str(&wrong_chaos()).unwrap();
    value["description"] = Value::String("reworded".into());
    value["expect"] = serde_json::json!({});
    std::fs::write(&model, serde_json::to_string(&value).unwrap()).unwrap();
    let out = shell(replay);
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    // ... an edit a run reads refuses the vector (exit 2), saying why.
    let edited = wrong_chaos().replacen(
        "\"tool_timeout_ms\": 20000",
        "\"tool_timeout_ms\": 20001",
        1,
    );
    assert_ne!(edited, wrong_chaos());
    std::fs::write(&model, edited).unwrap();
    let out = shell(replay);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "error: --choices: the model changed since the vector was recorded (its digest was {digest}, is now "
        )),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
    // The long form with the digest as a flag (as commands were first printed) is refused
    // alike.
    let long = format!(
        "{} --model-digest {digest} --choices '0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1'",
        replay.split_once(" --choices ").unwrap().0
    );
    let out = shell(&long);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stderr(&out).starts_with(&format!("error: --model-digest: the model changed since the vector was recorded (its digest was {digest}, is now ")),
        "{}",
        stderr(&out)
    );
    // A digest in the key and another in the flag: which one is meant is not guessed.
    let both = format!("{replay} --model-digest 0000000000000000");
    let out = shell(&both);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains(&format!(
            "--model-digest 0000000000000000 differs from the digest {digest} in --choices"
        )),
        "{}",
        stderr(&out)
    );

    // A vector without a digest (printed before digests were) replays unchecked.
    let old = replay.replace(&format!(" --choices {digest}:"), " --choices ");
    let out = shell(&old);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn trace_prints_the_digest_with_its_choice_vector() {
    let out = retrylab(&[
        "trace",
        "models/ticket_lost_response.json",
        "--design",
        "same_key",
        "--seed",
        "3",
    ]);
    assert_eq!(code(&out), 0);
    let digest = retrylab::model::Model::load(&root().join("models/ticket_lost_response.json"))
        .unwrap()
        .digest();
    assert!(
        stdout(&out).lines().any(|l| l.starts_with("replay: ")
            && l.contains(&format!(
                " replay models/ticket_lost_response.json --design same_key --choices {digest}:"
            ))),
        "{}",
        stdout(&out)
    );
}

#[test]
fn json_form_has_a_stable_shape_and_exact_counts() {
    let out = retrylab(&[
        "check",
        "models/ticket_lost_response.json",
        "--seeds",
        "100",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["format"], "retrylab-check");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["verdict"], "pass");
    assert_eq!(doc["exit_code"], 0);
    assert_eq!(doc["seeds"], serde_json::json!({"first": 0, "count": 100}));
    assert_eq!(doc["summary"]["not_met"], 0);
    assert_eq!(doc["summary"]["not_certified"], 0);
    let model = &doc["models"][0];
    assert_eq!(model["name"], "ticket_lost_response");
    assert_eq!(model["has_expectations"], true);
    let designs = model["designs"].as_array().unwrap();
    let names: Vec<&str> = designs
        .iter()
        .map(|d| d["design"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["no_dedup", "same_key", "new_key_after_replan"]);
    let no_dedup = &designs[0];
    assert_eq!(no_dedup["harm"]["intents"], 100);
    assert_eq!(no_dedup["harm"]["duplicate_effects"], 100);
    assert_eq!(
        no_dedup["harm"]["text"],
        "harm: 100 duplicate effects in 100 intents"
    );
    assert_eq!(designs[1]["harm"]["duplicate_effects"], 0);
    assert_eq!(designs[1]["harm"]["text"], "no harm in 100 intents");
    assert_eq!(designs[1]["explore"]["status"], "certified");
    let e = &no_dedup["expectations"][0];
    for key in [
        "property",
        "want",
        "met",
        "violating_seeds",
        "budget_seeds",
        "counterexample",
    ] {
        assert!(e.get(key).is_some(), "{key} in {e}");
    }
    let met = doc["summary"]["met"].as_u64().unwrap();
    let counted: usize = designs
        .iter()
        .map(|d| d["expectations"].as_array().unwrap().len() + usize::from(!d["explore"].is_null()))
        .sum();
    assert_eq!(met as usize, counted);

    // A not-certified check says so in the document and in the exit code.
    let out = retrylab(&["check", NOT_CERTIFIED, "--seeds", "10", "--format", "json"]);
    assert_eq!(code(&out), 3);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["verdict"], "not_certified");
    assert_eq!(doc["exit_code"], 3);
    let explore = &doc["models"][0]["designs"][0]["explore"];
    assert_eq!(explore["status"], "not_certified");
    assert_eq!(explore["max_runs"], 5);
    assert_eq!(explore["runs"], 5);
}

/// Checks that `xml` is well formed as far as the JUnit form goes: balanced tags, quoted
/// attributes, every `&` an entity, no raw `<` in text.
fn assert_well_formed(xml: &str) {
    let body = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .expect("the XML declaration");
    let mut stack: Vec<String> = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find('<') {
        let text = &rest[..at];
        for (i, _) in text.match_indices('&') {
            let entity = &text[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                    .iter()
                    .any(|e| entity.starts_with(e)),
                "a bare & in {text:?}"
            );
        }
        let end = rest[at..].find('>').expect("a closed tag") + at;
        let tag = &rest[at + 1..end];
        assert!(!tag.contains('<'), "a < inside a tag: {tag}");
        assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes: {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "closing {name}");
        } else if !tag.ends_with('/') {
            stack.push(tag.split(' ').next().unwrap().to_string());
        }
        rest = &rest[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
}

#[test]
fn junit_has_one_test_case_per_expectation_a_failure_with_its_replay_and_skips_what_is_not_certified()
 {
    let scratch = Scratch::new("junit");
    // A space in the name: the printed commands quote the path, which the XML escapes.
    let model = scratch.file("wrong chaos.json", &wrong_chaos());
    let junit = scratch.path("junit.xml");
    let out = retrylab(&[
        "check",
        &model,
        NOT_CERTIFIED,
        NO_EXPECTATIONS,
        "--seeds",
        "20",
        "--junit",
        &junit,
    ]);
    // A failure dominates a search that is not certified.
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_well_formed(&xml);
    // ticket_chaos: 3 designs with 8 expectations each (same_key's no_duplicate moved from
    // violate to hold); not_certified: one expectation and one search; no_expectations: one.
    assert_eq!(xml.matches("<testcase ").count(), 24 + 2 + 1);
    assert!(xml.contains(
        "<testsuites name=\"retrylab check\" tests=\"27\" failures=\"1\" errors=\"0\" skipped=\"2\">"
    ), "{xml}");
    assert!(
        xml.contains("<testcase classname=\"ticket_chaos\" name=\"same_key hold no_duplicate\"")
    );
    let failure = xml
        .split(
            "<failure message=\"FAIL ticket_chaos same_key: no_duplicate must hold on every seed; ",
        )
        .nth(1)
        .expect("the failure");
    let failure = &failure[..failure.find("</failure>").unwrap()];
    assert!(failure.contains("shrunk to "), "{failure}");
    assert!(failure.contains("replay: "), "{failure}");
    assert!(
        failure.contains("chaos.json&apos; --design same_key --choices "),
        "quotes escaped: {failure}"
    );
    assert!(xml.contains(
        "<testcase classname=\"two_workers_not_certified\" name=\"journal_reconcile_lease explore\""
    ));
    assert!(xml.contains("<skipped message=\"not certified: no violation in 5 runs"));
    assert!(xml.contains("<testcase classname=\"no_expectations\" name=\"(no expectations)\""));
    assert!(xml.contains("<system-out>same_key: harm: "));
    // --format junit prints the same document.
    let out = retrylab(&[
        "check",
        &model,
        NOT_CERTIFIED,
        NO_EXPECTATIONS,
        "--seeds",
        "20",
        "--format",
        "junit",
    ]);
    assert_eq!(code(&out), 1);
    assert_eq!(stdout(&out), xml);
}

#[test]
fn run_and_check_state_the_harm_before_the_expectations() {
    let out = retrylab(&["run", "models/ticket_lost_response.json", "--seeds", "100"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(
        text.contains("\n  harm: 100 duplicate effects in 100 intents; expectations ok (8 met)\n"),
        "{text}"
    );
    assert!(
        text.contains("\n  no harm in 100 intents; expectations ok (8 met)\n"),
        "{text}"
    );
    assert!(!text.contains("\n  ok (8 met)"), "{text}");
    let out = retrylab(&[
        "check",
        "models/ticket_lost_response.json",
        "--seeds",
        "100",
    ]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    let no_dedup: Vec<&str> = text.lines().filter(|l| l.contains(" no_dedup ")).collect();
    assert_eq!(
        no_dedup[0],
        "  !     no_dedup                 harm: 100 duplicate effects in 100 intents"
    );
    assert!(text.contains("\n  -     same_key                 no harm in 100 intents\n"));
}

//! The runnable example `examples/custom_design.rs` is also a test: its design runs through
//! `retrylab::cli::run_with`, the entry point its binary uses, in every command, and its
//! figures are pinned here.

#[path = "../examples/custom_design.rs"]
#[allow(dead_code)]
pub mod example;

use std::path::PathBuf;

use retrylab::cli::{Outcome, run_with};
use retrylab::design::{Design, Executor};
use retrylab::model::ExecutorModel;

const NAME: &str = "read_back_after_wait";

/// One ticket; replies may be lost and the worker may crash after a send; a provider that
/// keeps keys and answers lookups by key; `journal` durable or volatile.
fn model(name: &str, journal: &str) -> String {
    format!(
        r#"{{
  "name": "{name}",
  "horizon_ms": 600000,
  "designs": ["read_back_after_wait", "same_key"],
  "workload": {{ "intents": 1 }},
  "agent": {{
    "tool_timeout_ms": 60000,
    "max_calls": 2,
    "on_failure": {{ "give_up": 1 }},
    "on_unknown": {{ "replan": 1 }}
  }},
  "executor": {{ "attempts": 2, "timeout_ms": 2000, "poll_ms": 500 }},
  "workers": {{
    "count": 1,
    "journal": "{journal}",
    "restart_delay_ms": 1000,
    "max_crashes": 1,
    "crash": {{ "after_send": "1/4" }}
  }},
  "network": {{ "latency_ms": 10, "reply_loss": "1/4" }},
  "provider": {{ "dedup": "by_key", "lookup": "by_key" }},
  "explore": {{ "max_faults": 2 }},
  "expect": {{
    "read_back_after_wait": {{
      "hold": ["no_duplicate", "no_false_success", "no_false_failure", "resolved_within(60000)",
               "receipt_names_own_effect"]
    }},
    "same_key": {{ "hold": ["no_duplicate"] }}
  }}
}}"#
    )
}

/// A model file in the temporary directory, removed when dropped.
struct TempModel(PathBuf);

impl TempModel {
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempModel {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `model(name, journal)` written to a file of its own.
fn model_file(name: &str, journal: &str) -> TempModel {
    let path: PathBuf = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "retrylab-custom-design-{}-{name}.json",
        std::process::id()
    ));
    std::fs::write(&path, model(name, journal)).unwrap();
    TempModel(path)
}

/// The example's binary, as `run_with` runs it.
fn example(args: &[&str]) -> Outcome {
    let mut all = vec!["custom_design"];
    all.extend_from_slice(args);
    run_with(all, &[&example::READ_BACK_AFTER_WAIT])
}

/// The line of `text` that starts with `prefix`, without it.
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{text}"))
}

#[test]
fn designs_lists_the_example_after_the_built_in_ones() {
    let out = example(&["designs"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The example's entry comes last: its name, then its summary wrapped to 100 columns.
    let entry = &out.stdout[out
        .stdout
        .find(&format!("\n{NAME} "))
        .expect("the example is listed")
        + 1..];
    assert!(
        entry.starts_with(NAME) && entry.lines().all(|l| l.len() <= 100),
        "{entry}"
    );
    assert_eq!(
        entry.split_whitespace().skip(1).collect::<Vec<_>>(),
        example::READ_BACK_AFTER_WAIT
            .summary()
            .split_whitespace()
            .collect::<Vec<_>>()
    );
    // One entry per design (a wrapped summary continues on indented lines).
    assert_eq!(
        out.stdout.lines().filter(|l| !l.starts_with(' ')).count(),
        retrylab::design::all().len() + 1
    );
}

#[test]
fn designs_all_takes_in_the_example_after_the_built_in_ones() {
    let path: PathBuf = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "retrylab-custom-design-{}-all.json",
        std::process::id()
    ));
    let listed = r#""designs": ["read_back_after_wait", "same_key"]"#;
    let text = model("all", "durable");
    assert!(text.contains(listed));
    std::fs::write(&path, text.replace(listed, r#""designs": "all""#)).unwrap();
    let file = TempModel(path);
    // Every registered design, in the registry's order: the built-in ones, then the example.
    let out = example(&["run", file.path(), "--seeds", "3", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let compared: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["design"].as_str().unwrap())
        .collect();
    let mut registered = retrylab::design::names();
    registered.push(NAME);
    assert_eq!(compared, registered);
    let out = example(&["show-model", file.path()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let shown = line(&out.stdout, "designs = ");
    assert!(
        shown.contains(&format!("\"{NAME}\"]"))
            && shown.ends_with("# set \"all\": every registered design"),
        "{shown}"
    );
    // The plain binary reads "all" as the built-in designs: the expectation of the example's
    // design then names an unknown design.
    let plain = run_with(["retrylab", "run", file.path(), "--seeds", "3"], &[]);
    assert_eq!(plain.code, 2, "{}", plain.stderr);
    assert!(
        plain.stderr.contains(
            "expect.read_back_after_wait: design \"read_back_after_wait\" unknown design"
        ),
        "{}",
        plain.stderr
    );
}

#[test]
fn run_over_seeds_pins_the_figures() {
    let file = model_file("run", "durable");
    let out = example(&["run", file.path(), "--seeds", "200", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let totals = |design: &str| {
        let r = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["design"] == design)
            .unwrap_or_else(|| panic!("no row for {design}"));
        let t = &r["totals"];
        [
            &t["intents"],
            &t["effects"],
            &t["completed"],
            &t["duplicate_effects"],
            &t["false_failure"],
            &t["unresolved"],
            &t["remote_calls"],
            &t["time_to_outcome_ms"]["max"],
        ]
        .map(|x| x.as_u64().unwrap())
    };
    // Every ticket exists once and is reported: lost replies and crashes are read back by
    // key, after a wait of 500 ms doubling (the slowest: 9.5 s).
    assert_eq!(totals(NAME), [200, 200, 200, 0, 0, 0, 326, 9520]);
    // A key per intent with prompt retries does as well here, and sooner.
    assert_eq!(totals("same_key"), [200, 200, 200, 0, 0, 0, 326, 6020]);
}

#[test]
fn a_model_naming_the_example_is_refused_without_it() {
    let file = model_file("unknown", "durable");
    let out = run_with(["retrylab", "check", file.path()], &[]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("designs[0]: unknown design \"read_back_after_wait\""),
        "{}",
        out.stderr
    );
    let out = run_with(["retrylab", "trace", file.path(), "--design", NAME], &[]);
    assert_eq!(out.code, 2);
}

/// A seed whose run crashes the worker after its send: the restarted worker reads the
/// ticket back from the journal's key.
const CRASH_SEED: &str = "3";

#[test]
fn trace_shows_the_recovery_and_replay_gives_the_same_run() {
    let file = model_file("trace", "durable");
    let out = example(&["trace", file.path(), "--design", NAME, "--seed", CRASH_SEED]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let t = &out.stdout;
    assert!(t.contains("crashes after_send of attempt 1"), "{t}");
    assert!(
        t.contains("op 0: unfinished before the restart, reading it back"),
        "{t}"
    );
    assert!(t.contains("lookup by key k1"), "{t}");
    assert_eq!(line(t, "violates: "), "none");
    let replay = line(t, "replay: ");
    let choices = replay
        .split("--choices ")
        .nth(1)
        .unwrap()
        .trim_matches('\'');
    assert!(replay.starts_with("custom_design replay "), "{replay}");
    let again = example(&[
        "replay",
        file.path(),
        "--design",
        NAME,
        "--choices",
        choices,
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let timeline = |s: &str| s.split_once("\n\n").unwrap().1.to_string();
    assert_eq!(timeline(&again.stdout), timeline(t));
}

#[test]
fn trace_shows_the_timer_before_the_read_back() {
    let file = model_file("timer", "durable");
    // Seeds until one loses the reply: the design waits poll_ms, then reads back.
    let t = (0..50)
        .map(|s| {
            example(&[
                "trace",
                file.path(),
                "--design",
                NAME,
                "--seed",
                &s.to_string(),
            ])
        })
        .map(|o| o.stdout)
        .find(|t| t.contains("outcome unknown, reading it back by key in 500 ms"))
        .expect("a seed with a lost reply within 50");
    assert_eq!(line(&t, "violates: "), "none");
}

#[test]
fn explore_certifies_a_durable_journal_and_finds_the_duplicate_of_a_volatile_one() {
    let file = model_file("explore", "durable");
    let out = example(&["explore", file.path(), "--design", NAME]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "certified for 2 faults: no property is violated by any schedule within the bound"
        ),
        "{}",
        out.stdout
    );
    let file = model_file("volatile", "volatile");
    let out = example(&["explore", file.path(), "--design", NAME]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("no_duplicate"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("read_back_after_wait: assumption durable_journal does not hold"),
        "{}",
        out.stderr
    );
}

#[test]
fn check_meets_the_expectations_written_for_it() {
    let file = model_file("check", "durable");
    let out = example(&["check", file.path(), "--seeds", "200"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let s = &out.stdout;
    assert!(
        s.contains("ok    read_back_after_wait     explore  certified within 2 faults"),
        "{s}"
    );
    assert!(
        s.contains("read_back_after_wait     assumptions: all 1 hold"),
        "{s}"
    );
    assert!(
        s.ends_with("8 expectations in 1 model: 8 met, 0 not met\n"),
        "{s}"
    );
    // On a volatile journal the same expectations fail, with the replay command.
    let file = model_file("check_volatile", "volatile");
    let out = example(&["check", file.path(), "--seeds", "200"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("FAIL  read_back_after_wait     hold     no_duplicate"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("custom_design replay "),
        "{}",
        out.stdout
    );
}

#[test]
fn report_compares_the_example_with_the_built_in_designs() {
    let file = model_file("report", "durable");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "retrylab-custom-design-{}-report",
        std::process::id()
    ));
    let out = example(&[
        "report",
        file.path(),
        "--out",
        dir.to_str().unwrap(),
        "--seeds",
        "50",
        "--baseline",
        "same_key",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains(NAME), "{md}");
    // A user's design may be the baseline too.
    let out = example(&[
        "report",
        file.path(),
        "--out",
        dir.to_str().unwrap(),
        "--seeds",
        "10",
        "--baseline",
        NAME,
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A design whose name is a built-in one's.
struct Impostor;

impl Design for Impostor {
    fn name(&self) -> &str {
        "same_key"
    }
    fn summary(&self) -> &str {
        "not the real one"
    }
    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        example::READ_BACK_AFTER_WAIT.executor(config)
    }
}

static IMPOSTOR: Impostor = Impostor;

#[test]
fn a_name_clash_with_a_built_in_design_is_refused_at_start() {
    let out = run_with(["custom", "designs"], &[&IMPOSTOR]);
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "error: design \"same_key\": a built-in design has this name; give yours another\n"
    );
}

#[test]
fn bad_arguments_exit_2_and_help_exits_0() {
    let out = example(&["trace"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("Usage:"), "{}", out.stderr);
    let out = example(&["--help"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("Usage:"), "{}", out.stdout);
}

#[test]
fn usage_and_help_name_the_program_as_invoked() {
    let out = retrylab::cli::run_with(["target/debug/examples/my_tool", "run", "--help"], &[]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("Usage: my_tool run [OPTIONS] <MODEL>"),
        "{}",
        out.stdout
    );
    let bad = retrylab::cli::run_with(["my_tool", "run"], &[]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("Usage: my_tool run"), "{}", bad.stderr);
}

/// The property the example brings is judged like a built-in one: `check` meets it, `run
/// --fail-on` takes it, `explore` searches it, and a model may not expect it of a design that
/// does not bring it.
#[test]
fn the_property_the_design_brings_is_checked_like_a_built_in_one() {
    let file = model_file("own_property", "durable");
    let out = example(&["check", file.path(), "--seeds", "200"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("ok    read_back_after_wait     hold     receipt_names_own_effect"),
        "{}",
        out.stdout
    );
    let out = example(&[
        "run",
        file.path(),
        "--seeds",
        "50",
        "--fail-on",
        "no_duplicate,receipt_names_own_effect",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = example(&[
        "explore",
        file.path(),
        "--design",
        NAME,
        "--property",
        "receipt_names_own_effect",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    // Without the example's design the name is unknown; of another design, refused.
    let out = run_with(
        [
            "retrylab",
            "run",
            file.path(),
            "--fail-on",
            "receipt_names_own_effect",
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("--fail-on: unknown property \"receipt_names_own_effect\""),
        "{}",
        out.stderr
    );
    let text = model("own_property", "durable").replace(
        r#""same_key": { "hold": ["no_duplicate"] }"#,
        r#""same_key": { "hold": ["receipt_names_own_effect"] }"#,
    );
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "retrylab-custom-design-{}-foreign.json",
        std::process::id()
    ));
    std::fs::write(&path, text).unwrap();
    let file = TempModel(path);
    let out = example(&["check", file.path()]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "expect.same_key.hold[0]: property \"receipt_names_own_effect\" is brought by design \"read_back_after_wait\", not by \"same_key\""
        ),
        "{}",
        out.stderr
    );
}

/// The judgement itself, on a run made by hand: a success whose receipt names another
/// intent's ticket violates it; one naming its own ticket does not; so does a success
/// without a receipt.
#[test]
fn the_property_is_judged_against_the_ledger() {
    use retrylab::check::Outcome;
    use retrylab::vocab::ids::{AttemptId, Endpoint, IntentId, Params, ResourceId, Tenant};
    use retrylab::vocab::record::Effect;
    use retrylab::vocab::record::Intent;
    use retrylab::vocab::record::{End, Told};
    use retrylab::vocab::record::{Heard, StepSuccess};

    let intent = |i: u32| Intent {
        id: IntentId(i),
        arrival_ms: 0,
        tenant: Tenant(0),
        endpoint: Endpoint(0),
        params: Params(u64::from(i)),
        repeat_of: None,
        steps: 1,
    };
    let effect = |i: u32| Effect {
        resource: ResourceId(i),
        attempt: AttemptId(i + 1),
        intent: IntentId(i),
        step: 0,
        tenant: Tenant(0),
        endpoint: Endpoint(0),
        params: retrylab::vocab::record::step_params(Params(u64::from(i)), 0),
        key: None,
        at_ms: 10,
    };
    let told = |receipt: Option<u32>| {
        let mut h = Heard {
            told: Some((Told::Success, 20)),
            ..Heard::default()
        };
        h.steps[0] = Some(StepSuccess {
            params: retrylab::vocab::record::step_params(Params(0), 0),
            receipt: receipt.map(ResourceId),
        });
        h
    };
    let intents = [intent(0), intent(1)];
    let effects = [effect(0), effect(1)];
    let judge = |heard: [Heard; 2]| {
        example::wrong_receipt(&Outcome {
            intents: &intents,
            heard: &heard,
            effects: &effects,
            ops: &[],
            attempt_ops: &[],
            claims: &[],
            properties: &example::PROPERTIES,
            remote_calls: 2,
            end_ms: 100,
            end: End::Quiescent,
        })
    };
    assert!(!judge([told(Some(0)), Heard::default()]));
    assert!(judge([told(Some(1)), Heard::default()]));
    assert!(judge([told(None), Heard::default()]));
}

//! Bad model input: every class of mistake is refused with the exact JSON path, line and
//! column of the problem and a message that names it, both through the library and through
//! the `retrylab` binary (exit code 2, `file:line:column: path: message`, never a panic).
//!
//! Each bad text is [`VALID`] with one or a few exact edits, so positions are predictable.
//! Two kinds of positions appear:
//! - problems found while parsing (syntax, types, unknown fields, negative numbers,
//!   probabilities, ranges) are where serde_json stopped: the last character of the
//!   offending token (the closing quote of a string or key, the last digit of a number, the
//!   closing brace of an object);
//! - problems found by the checks after parsing (zero counts, unknown designs, impossible
//!   faults) point at the first character of the offending value;
//! - when parsing fails, the schema of the format finds every missing required field (at the
//!   closing brace of the object that lacks it) and every value of the wrong JSON type (at
//!   its first character, or where serde stopped when serde found it too).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use retrylab::model::{Model, Problem};

/// A valid model; every test below edits it. Line numbers are 1-based, as in the errors.
const VALID: &str = r#"{
  "name": "bad_input",
  "horizon_ms": 600000,
  "designs": ["no_dedup", "same_key"],
  "workload": { "intents": 1 },
  "agent": {
    "tool_timeout_ms": 60000,
    "max_calls": 2,
    "think_ms": { "min": 200, "max": 1500 },
    "on_failure": { "replan": 1 },
    "on_unknown": { "replan": 1 }
  },
  "executor": { "attempts": 1, "timeout_ms": 5000 },
  "workers": { "count": 1 },
  "network": { "latency_ms": { "min": 5, "max": 80 }, "reply_loss": 0 },
  "provider": {
    "dedup": "by_key",
    "retention_ms": 86400000,
    "atomicity": "atomic",
    "processing_ms": { "min": 20, "max": 300 }
  },
  "faults": [{ "drop_reply": { "attempt": 1 } }]
}
"#;

const KNOWN_DESIGNS: &str = "known designs: no_dedup, same_key, new_key_after_replan";

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// `text` with `from` replaced by `to`; `from` must occur exactly once.
fn edited(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "the edit {from:?} must match exactly once"
    );
    text.replacen(from, to, 1)
}

/// [`VALID`] with one edit.
fn edit(from: &str, to: &str) -> String {
    edited(VALID, from, to)
}

/// The problems of a text that must be refused.
fn problems(text: &str) -> Vec<Problem> {
    match Model::from_json(text, "m.json") {
        Ok(_) => panic!("the model was accepted:\n{text}"),
        Err(e) => {
            assert_eq!(e.origin, "m.json");
            assert!(!e.problems.is_empty(), "an error without problems");
            e.problems
        }
    }
}

/// The rest of the line of `text` from the 1-based `line` and `column`.
fn text_at(text: &str, line: usize, column: usize) -> &str {
    let l = text
        .split('\n')
        .nth(line - 1)
        .unwrap_or_else(|| panic!("no line {line}"));
    &l[column - 1..]
}

/// Asserts one problem exactly: path, line and column, what the text holds at that
/// position, and words the message must contain.
#[track_caller]
fn assert_problem(
    text: &str,
    p: &Problem,
    path: &str,
    (line, column): (usize, usize),
    at: &str,
    words: &[&str],
) {
    assert_eq!(
        (p.path.as_str(), p.line, p.column),
        (path, line, column),
        "{p:?}"
    );
    let here = text_at(text, line, column);
    assert!(
        here.starts_with(at),
        "{path} at {line}:{column} should point at {at:?}, the text there is {here:?}"
    );
    for w in words {
        assert!(p.message.contains(w), "message {:?} lacks {w:?}", p.message);
    }
}

/// Asserts the first problem of a refused text (see [`assert_problem`]).
#[track_caller]
fn assert_first(text: &str, path: &str, at_pos: (usize, usize), at: &str, words: &[&str]) {
    let ps = problems(text);
    assert_problem(text, &ps[0], path, at_pos, at, words);
}

/// A fresh directory under the system temp dir, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "retrylab-model-errors-{}-{test}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the scratch directory");
        Scratch(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("write a model file");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn retrylab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .output()
        .expect("start the retrylab binary")
}

fn arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temp path")
}

/// Asserts a bad-input failure (exit 2, nothing on stdout, no panic); returns stderr.
#[track_caller]
fn assert_input_error(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "panic:\n{stderr}");
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    assert!(
        out.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// The problem lines of stderr: every line, without the `error: ` the command line puts
/// before its first line, must start with `file:`.
#[track_caller]
fn problem_lines(stderr: &str, file: &Path) -> Vec<String> {
    let prefix = format!("{}:", file.display());
    stderr
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let l = if i == 0 {
                l.strip_prefix("error: ").unwrap_or(l)
            } else {
                l
            };
            assert!(
                l.starts_with(&prefix),
                "line {l:?} does not start with {prefix:?}"
            );
            l.to_string()
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The base model
// ---------------------------------------------------------------------------------------

#[test]
fn base_model_is_valid() {
    let m = Model::from_json(VALID, "m.json").expect("VALID must be a valid model");
    assert_eq!(m.name, "bad_input");
    assert_eq!(m.workers.count, 1);
    assert_eq!(m.provider.retention_ms, Some(86_400_000));
}

// ---------------------------------------------------------------------------------------
// (1) Malformed JSON
// ---------------------------------------------------------------------------------------

#[test]
fn malformed_json_missing_comma_between_members() {
    let text = edit("\"horizon_ms\": 600000,", "\"horizon_ms\": 600000");
    // Found at the next key, which should have been preceded by a comma. The path is the
    // object that lacks the comma, never serde_path_to_error's unknown-key marker `?`.
    assert_first(
        &text,
        "(root)",
        (4, 3),
        "\"designs\"",
        &["expected `,` or `}`"],
    );
}

#[test]
fn malformed_json_missing_comma_in_nested_object() {
    let text = edit("\"dedup\": \"by_key\",", "\"dedup\": \"by_key\"");
    assert_first(
        &text,
        "provider",
        (18, 5),
        "\"retention_ms\"",
        &["expected `,` or `}`"],
    );
}

#[test]
fn malformed_json_trailing_garbage_after_the_object() {
    // VALID ends with "}\n": the garbage is on line 24.
    let text = format!("{VALID}x");
    assert_first(&text, "(root)", (24, 1), "x", &["trailing characters"]);
    let text = format!("{VALID}{{}}");
    assert_first(&text, "(root)", (24, 1), "{}", &["trailing characters"]);
}

#[test]
fn malformed_json_truncated_file() {
    // Cut just before "workload": the text ends with ",\n  " on line 5.
    let text = &VALID[..VALID.find("\"workload\"").unwrap()];
    assert_first(text, "(root)", (5, 2), " ", &["EOF while parsing"]);
}

#[test]
fn malformed_or_truncated_text_never_panics_and_is_located() {
    // Every prefix of VALID, and VALID without each one character: the reader must return
    // (never panic), and every problem must have a real path and a position inside the text.
    let mut texts: Vec<String> = (0..VALID.len()).map(|n| VALID[..n].to_string()).collect();
    texts.extend((0..VALID.len()).map(|i| format!("{}{}", &VALID[..i], &VALID[i + 1..])));
    let mut refused = 0;
    for text in &texts {
        let Err(e) = Model::from_json(text, "m.json") else {
            continue;
        };
        refused += 1;
        assert!(!e.problems.is_empty());
        let lines: Vec<&str> = text.split('\n').collect();
        for p in &e.problems {
            assert!(
                !p.path.is_empty() && !p.path.contains('?'),
                "{p:?} in\n{text}"
            );
            assert!(p.line >= 1 && p.line <= lines.len(), "{p:?} in\n{text}");
            assert!(p.column <= lines[p.line - 1].len() + 1, "{p:?} in\n{text}");
            assert!(!p.message.is_empty());
        }
    }
    // Every strict prefix is refused; most deletions are too.
    assert!(refused > VALID.len(), "only {refused} refused");
}

// ---------------------------------------------------------------------------------------
// (2) Wrong types
// ---------------------------------------------------------------------------------------

#[test]
fn wrong_type_string_for_a_duration() {
    let text = edit("600000", "\"soon\"");
    // Points at the closing quote of "soon".
    assert_first(
        &text,
        "horizon_ms",
        (3, 22),
        "\",",
        &[
            "invalid type",
            "\"soon\"",
            "expected a non-negative integer",
        ],
    );
    // serde's Rust type names do not leak into messages.
    assert!(!problems(&text)[0].message.contains("u64"));
}

#[test]
fn wrong_type_nested_boolean_and_list() {
    let text = edit(
        "\"dedup\": \"by_key\",",
        "\"dedup\": \"by_key\", \"require_key\": \"yes\",",
    );
    assert_first(
        &text,
        "provider.require_key",
        (17, 43),
        "\",",
        &["invalid type", "\"yes\"", "expected true or false"],
    );
    let text = edit("[\"no_dedup\", \"same_key\"]", "3");
    assert_first(
        &text,
        "designs",
        (4, 14),
        "3,",
        &[
            "invalid type: integer `3`",
            "expected \"all\" or an array of design names such as [\"no_dedup\", \"same_key\", \"journal\"]",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// (3) Unknown fields
// ---------------------------------------------------------------------------------------

#[test]
fn unknown_field_at_top_level() {
    let text = edit("\"horizon_ms\"", "\"horizon\": 5,\n  \"horizon_ms\"");
    // Points at the closing quote of the unknown key.
    assert_first(
        &text,
        "horizon",
        (3, 11),
        "\": 5",
        &["unknown field `horizon`", "expected one of", "`horizon_ms`"],
    );
}

#[test]
fn unknown_field_nested() {
    let text = edit("\"retention_ms\"", "\"retention_msec\"");
    assert_first(
        &text,
        "provider.retention_msec",
        (18, 20),
        "\": 86400000",
        &["unknown field `retention_msec`", "`retention_ms`"],
    );
}

#[test]
fn unknown_field_in_a_range() {
    let text = edit("\"max\": 80", "\"maks\": 80");
    assert_first(
        &text,
        "network.latency_ms.maks",
        (15, 47),
        "\": 80",
        &["unknown field `maks`", "expected `min` or `max`"],
    );
    // A bound given twice is refused too.
    let text = edit("\"max\": 80", "\"min\": 80");
    assert_first(
        &text,
        "network.latency_ms",
        (15, 46),
        "\": 80",
        &["duplicate field `min`"],
    );
}

// ---------------------------------------------------------------------------------------
// (4) Unknown design
// ---------------------------------------------------------------------------------------

#[test]
fn unknown_design_in_designs() {
    let text = edit("\"same_key\"", "\"same_keys\"");
    let ps = problems(&text);
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert_problem(
        &text,
        &ps[0],
        "designs[1]",
        (4, 27),
        "\"same_keys\"",
        &["unknown design \"same_keys\"", KNOWN_DESIGNS],
    );
}

#[test]
fn designs_all_or_left_out_is_every_registered_design() {
    let every: Vec<String> = retrylab::design::names()
        .into_iter()
        .map(String::from)
        .collect();
    let all = edit("[\"no_dedup\", \"same_key\"]", "\"all\"");
    let left_out = edit("  \"designs\": [\"no_dedup\", \"same_key\"],\n", "");
    for text in [all, left_out] {
        let m = Model::from_json(&text, "m.json").unwrap_or_else(|e| panic!("{e}"));
        assert!(m.design_list.is_all());
        assert_eq!(m.designs, every);
    }
    let listed = Model::from_json(VALID, "m.json").unwrap();
    assert!(!listed.design_list.is_all());
    assert_eq!(listed.designs, ["no_dedup", "same_key"]);
}

#[test]
fn designs_all_may_expect_of_any_registered_design_and_no_other() {
    // `journal` is not in VALID's list, so expecting of it is refused there (see
    // `expectation_for_a_design_the_model_does_not_list`); under "all" it is compared.
    let expecting = |design: &str| {
        let text = with_expect(&format!(
            "{{ \"{design}\": {{ \"hold\": [\"no_duplicate\"] }} }}"
        ));
        edited(&text, "[\"no_dedup\", \"same_key\"]", "\"all\"")
    };
    Model::from_json(&expecting("journal"), "m.json").unwrap_or_else(|e| panic!("{e}"));
    let text = expecting("nope");
    assert_first(
        &text,
        "expect.nope",
        (23, 23),
        "{ \"hold\"",
        &["design \"nope\" unknown design", KNOWN_DESIGNS],
    );
}

#[test]
fn designs_a_string_other_than_all_is_refused() {
    for (value, at) in [("\"some\"", (4, 19)), ("\"same_key\"", (4, 23))] {
        let text = edit("[\"no_dedup\", \"same_key\"]", value);
        let ps = problems(&text);
        assert_eq!(ps.len(), 1, "{ps:?}");
        assert_problem(
            &text,
            &ps[0],
            "designs",
            at,
            "\",",
            &[
                &format!("invalid value: string {value}"),
                "expected \"all\" (every registered design) or an array of design names such as [\"no_dedup\", \"same_key\"]",
            ],
        );
    }
}

#[test]
fn cli_designs_some_exits_2_with_the_place_and_never_panics() {
    let dir = Scratch::new("designs_some");
    let text = edit("[\"no_dedup\", \"same_key\"]", "\"some\"");
    let file = dir.write("some.json", &text);
    for args in [
        vec!["run", arg(&file), "--seeds", "1"],
        vec!["check", arg(&file), "--seeds", "1"],
        vec!["show-model", arg(&file)],
    ] {
        let stderr = assert_input_error(&retrylab(&args));
        let lines = problem_lines(&stderr, &file);
        assert_eq!(lines.len(), 1, "{args:?}: {stderr}");
        assert_eq!(
            lines[0],
            format!(
                "{}:4:19: designs: invalid value: string \"some\", expected \"all\" (every registered design) or an array of design names such as [\"no_dedup\", \"same_key\"]",
                file.display()
            ),
            "{args:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// (5) Negative values
// ---------------------------------------------------------------------------------------

#[test]
fn negative_retention_ms() {
    let text = edit("86400000", "-1");
    // Points at the last digit of -1.
    assert_first(
        &text,
        "provider.retention_ms",
        (18, 22),
        "1,",
        &["`-1`", "expected a non-negative integer"],
    );
}

#[test]
fn negative_latency_ms() {
    // As a constant: the range reader names the problem itself.
    let text = edit("{ \"min\": 5, \"max\": 80 }", "-5");
    assert_first(
        &text,
        "network.latency_ms",
        (15, 31),
        "5,",
        &["duration -5 is negative"],
    );
    // As a bound of a range.
    let text = edit("\"min\": 5,", "\"min\": -5,");
    assert_first(
        &text,
        "network.latency_ms.min",
        (15, 40),
        "5,",
        &["`-5`", "expected a non-negative integer"],
    );
}

#[test]
fn negative_counts() {
    let text = edit("\"count\": 1", "\"count\": -1");
    assert_first(
        &text,
        "workers.count",
        (14, 26),
        "1 }",
        &["`-1`", "expected a non-negative integer", "4294967295"],
    );
    let text = edit("\"attempt\": 1 ", "\"attempt\": -1 ");
    assert_first(
        &text,
        "faults[0].drop_reply.attempt",
        (22, 44),
        "1 }",
        &["`-1`", "expected a non-negative integer"],
    );
}

// ---------------------------------------------------------------------------------------
// (6) Impossible or inconsistent values
// ---------------------------------------------------------------------------------------

#[test]
fn probability_above_one() {
    let text = edit("\"reply_loss\": 0", "\"reply_loss\": \"3/2\"");
    assert_first(
        &text,
        "network.reply_loss",
        (15, 73),
        "\" }",
        &["probability \"3/2\"", "at most 1"],
    );
    let text = edit("\"reply_loss\": 0", "\"reply_loss\": 2");
    assert_first(
        &text,
        "network.reply_loss",
        (15, 69),
        "2 }",
        &["probability 2 is above 1"],
    );
    let text = edit("\"reply_loss\": 0", "\"reply_loss\": 1.5");
    assert_first(
        &text,
        "network.reply_loss",
        (15, 71),
        "5 }",
        &["probability 1.5 is not between 0 and 1"],
    );
    let text = edit("\"reply_loss\": 0", "\"reply_loss\": \"1/0\"");
    assert_first(
        &text,
        "network.reply_loss",
        (15, 73),
        "\" }",
        &["probability \"1/0\"", "denominator above 0"],
    );
}

#[test]
fn reversed_range() {
    let text = edit(
        "{ \"min\": 200, \"max\": 1500 }",
        "{ \"min\": 9, \"max\": 3 }",
    );
    // Points at the closing brace of the range.
    assert_first(
        &text,
        "agent.think_ms",
        (9, 38),
        "},",
        &["min 9 is greater than max 3"],
    );
}

#[test]
fn zero_workers() {
    let text = edit("\"count\": 1", "\"count\": 0");
    let ps = problems(&text);
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert_problem(
        &text,
        &ps[0],
        "workers.count",
        (14, 25),
        "0 }",
        &["must be at least 1"],
    );
}

#[test]
fn all_reaction_weights_zero() {
    let text = edit(
        "\"on_unknown\": { \"replan\": 1 }",
        "\"on_unknown\": { \"replan\": 0 }",
    );
    assert_first(
        &text,
        "agent.on_unknown",
        (11, 19),
        "{ \"replan\": 0 }",
        &["every reaction weight is 0", "retry_same", "ask_user"],
    );
    // No weight at all is the same mistake.
    let text = edit("\"on_failure\": { \"replan\": 1 }", "\"on_failure\": {}");
    assert_first(
        &text,
        "agent.on_failure",
        (10, 19),
        "{}",
        &["every reaction weight is 0"],
    );
}

#[test]
fn crash_worker_names_a_worker_past_the_count() {
    let crash = |worker: u32| {
        edit(
            "{ \"drop_reply\": { \"attempt\": 1 } }",
            &format!(
                "{{ \"crash_worker\": {{ \"attempt\": 1, \"point\": \"after_send\", \"worker\": {worker} }} }}"
            ),
        )
    };
    // Workers are numbered from 0: with one worker, worker 0 exists and worker 1 does not.
    Model::from_json(&crash(0), "m.json").expect("worker 0 exists");
    let text = crash(1);
    assert_first(
        &text,
        "faults[0].crash_worker.worker",
        (22, 81),
        "1 } }]",
        &[
            "worker 1 does not exist",
            "workers.count is 1",
            "numbered from 0",
        ],
    );
    let text = edited(&crash(2), "\"count\": 1", "\"count\": 2");
    assert_first(
        &text,
        "faults[0].crash_worker.worker",
        (22, 81),
        "2 } }]",
        &["worker 2 does not exist", "workers.count is 2"],
    );
}

#[test]
fn fault_attempt_zero() {
    let text = edit("\"attempt\": 1 ", "\"attempt\": 0 ");
    assert_first(
        &text,
        "faults[0].drop_reply.attempt",
        (22, 43),
        "0 }",
        &["attempts are numbered from 1"],
    );
}

#[test]
fn retention_ms_zero() {
    let text = edit("86400000", "0");
    assert_first(
        &text,
        "provider.retention_ms",
        (18, 21),
        "0,",
        &["must be at least 1", "leave the field out", "forever"],
    );
}

#[test]
fn retention_max_ms_below_the_floor() {
    let text = edit("86400000,", "86400000, \"retention_max_ms\": 3600000,");
    assert_first(
        &text,
        "provider.retention_max_ms",
        (18, 51),
        "3600000,",
        &["3600000 is below retention_ms 86400000", "before the floor"],
    );
}

#[test]
fn retention_max_ms_without_a_floor() {
    let text = edit("\"retention_ms\"", "\"retention_max_ms\"");
    assert_first(
        &text,
        "provider.retention_max_ms",
        (18, 25),
        "86400000,",
        &["needs retention_ms", "set retention_ms too"],
    );
}

#[test]
fn cli_retention_max_ms_below_the_floor_exits_2() {
    let dir = Scratch::new("retention_max");
    let file = dir.write(
        "prune.json",
        &edit("86400000,", "86400000, \"retention_max_ms\": 3600000,"),
    );
    let stderr = assert_input_error(&retrylab(&["check", arg(&file)]));
    let lines = problem_lines(&stderr, &file);
    assert_eq!(
        lines,
        [format!(
            "{}:18:51: provider.retention_max_ms: 3600000 is below retention_ms 86400000: records cannot be pruned before the floor",
            file.display()
        )]
    );
}

#[test]
fn an_http_face_route_without_its_placeholder_or_a_method() {
    let text = edit(
        "\"atomic\",",
        "\"atomic\", \"http\": {\"read\": \"GET /v1/tickets\"},",
    );
    // Points at the route's first character.
    assert_first(
        &text,
        "provider.http.read",
        (19, 45),
        "\"GET /v1/tickets\"",
        &["does not say where {id} goes"],
    );
    let text = edit(
        "\"atomic\",",
        "\"atomic\", \"http\": {\"create\": \"/v1/tickets\"},",
    );
    assert_first(
        &text,
        "provider.http.create",
        (19, 47),
        "\"/v1/tickets\"",
        &["expected \"METHOD /path\""],
    );
}

#[test]
fn cli_an_http_face_with_an_unknown_field_exits_2() {
    let dir = Scratch::new("http_face");
    let file = dir.write(
        "face.json",
        &edit(
            "\"atomic\",",
            "\"atomic\", \"http\": {\"key_header\": \"X-Key\"},",
        ),
    );
    let stderr = assert_input_error(&retrylab(&["check", arg(&file)]));
    assert!(
        stderr.contains("provider.http") && stderr.contains("unknown field `key_header`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("key_in"),
        "the known fields are listed: {stderr}"
    );
}

#[test]
fn a_redelivery_at_once_is_refused() {
    let text = edit("\"count\": 1 }", "\"count\": 1, \"redelivery_ms\": 0 }");
    assert_first(
        &text,
        "workers.redelivery_ms",
        (14, 45),
        "0 }",
        &["must be at least 1", "redelivered forever"],
    );
}

#[test]
fn unknown_enum_value() {
    let text = edit("\"atomic\"", "\"sometimes\"");
    // Points at the closing quote of "sometimes".
    assert_first(
        &text,
        "provider.atomicity",
        (19, 28),
        "\",",
        &[
            "unknown variant `sometimes`",
            "`atomic`",
            "`key_then_effect`",
            "`effect_then_key`",
        ],
    );
}

#[test]
fn unknown_fault_kind() {
    let text = edit("\"drop_reply\"", "\"drop_replies\"");
    assert_first(
        &text,
        "faults[0]",
        (22, 29),
        "\": {",
        &[
            "unknown variant `drop_replies`",
            "`drop_reply`",
            "`crash_worker`",
        ],
    );
}

#[test]
fn missing_required_field() {
    let text = edit("    \"max_calls\": 2,\n", "");
    // The path is the object missing the field; the position is its closing brace.
    assert_first(
        &text,
        "agent",
        (11, 3),
        "},",
        &["missing field `max_calls`"],
    );
}

#[test]
fn every_missing_required_field_is_reported_at_once() {
    // Four required fields left out, two at the top level and two in `agent` (`designs` is
    // not required: left out, it is "all"): serde alone
    // stops at the first; all four are reported, in the order of the text, each at the
    // closing brace of the object that lacks it, with what the field is and an example.
    let text = edit("  \"horizon_ms\": 600000,\n", "");
    let text = edited(&text, "  \"name\": \"bad_input\",\n", "");
    let text = edited(&text, "    \"max_calls\": 2,\n", "");
    let text = edited(&text, "    \"on_failure\": { \"replan\": 1 },\n", "");
    let ps = problems(&text);
    assert_eq!(ps.len(), 4, "{ps:?}");
    assert_problem(
        &text,
        &ps[0],
        "agent",
        (8, 3),
        "},",
        &[
            "missing field `max_calls` (a non-negative integer no larger than 4294967295 such as 3): Most tool calls the agent makes for one intent",
        ],
    );
    assert_problem(
        &text,
        &ps[1],
        "agent",
        (8, 3),
        "},",
        &[
            "missing field `on_failure` (an object such as {\"replan\": 1}): Reaction weights after a definite failure.",
        ],
    );
    assert_problem(
        &text,
        &ps[2],
        "(root)",
        (19, 1),
        "}",
        &["missing field `name` (a string such as \"ticket_lost_response\"): The model's name"],
    );
    assert_problem(
        &text,
        &ps[3],
        "(root)",
        (19, 1),
        "}",
        &[
            "missing field `horizon_ms` (a non-negative integer such as 600000): A run stops at this virtual time",
        ],
    );
}

#[test]
fn missing_fields_inside_a_fault_and_an_explore_bound() {
    let text = edit("{ \"attempt\": 1 }", "{}");
    let text = format!(
        "{}, \"explore\": {{ \"max_runs\": 5 }} }}\n",
        text.trim_end().trim_end_matches('}').trim_end()
    );
    let ps = problems(&text);
    assert_eq!(ps.len(), 2, "{ps:?}\n{text}");
    assert_problem(
        &text,
        &ps[0],
        "faults[0].drop_reply",
        (22, 31),
        "} }]",
        &[
            "missing field `attempt` (a non-negative integer no larger than 4294967295 such as 1): The create request, numbered from 1 across the run.",
        ],
    );
    assert_problem(
        &text,
        &ps[1],
        "explore",
        (22, 64),
        "} }",
        &[
            "missing field `max_faults` (a non-negative integer no larger than 4294967295 such as 2)",
        ],
    );
}

#[test]
fn wrong_shapes_name_the_expected_shape_with_an_example() {
    /// (edit from, edit to, path, line:column, text there, message)
    type Case<'a> = (&'a str, &'a str, &'a str, (usize, usize), &'a str, &'a str);
    let cases: [Case; 8] = [
        (
            "\"count\": 1",
            "\"count\": 1, \"journal\": 3",
            "workers.journal",
            (14, 39),
            "3 }",
            "invalid type: integer `3`, expected one of \"durable\", \"volatile\"",
        ),
        (
            "[{ \"drop_reply\": { \"attempt\": 1 } }]",
            "{ \"drop_reply\": { \"attempt\": 1 } }",
            "faults",
            (22, 13),
            "{ \"drop_reply\"",
            "invalid type: map, expected an array such as [{\"drop_reply\": {\"attempt\": 1}}, {\"crash_worker\": {\"attempt\": 2, \"point\": \"after_send\"}}]",
        ),
        (
            "{ \"attempt\": 1 }",
            "1",
            "faults[0].drop_reply",
            (22, 30),
            "1 }]",
            "invalid type: integer `1`, expected an object such as {\"attempt\": 1}",
        ),
        (
            "{ \"min\": 5, \"max\": 80 }",
            "\"fast\"",
            "network.latency_ms",
            (15, 35),
            "\",",
            "invalid type: string \"fast\", expected a duration in milliseconds or {\"min\": .., \"max\": ..} such as 50 or {\"min\": 20, \"max\": 300}",
        ),
        (
            "\"reply_loss\": 0",
            "\"reply_loss\": true",
            "network.reply_loss",
            (15, 72),
            "e }",
            "invalid type: boolean `true`, expected a probability such as \"1/20\" or 0.05 or 0",
        ),
        (
            "\"intents\": 1",
            "\"intents\": 1, \"steps\": [\"ticket\", \"notify\"]",
            "workload.steps",
            (5, 40),
            "[\"ticket\"",
            "invalid type: sequence, expected a non-negative integer no larger than 4294967295 such as 2",
        ),
        (
            "\"workers\": { \"count\": 1 }",
            "\"workers\": 2",
            "workers",
            (14, 14),
            "2,",
            "invalid type: integer `2`, expected an object such as {\"count\": 2, \"journal\": \"durable\"}",
        ),
        (
            "{ \"replan\": 1 },\n    \"on_unknown\"",
            "\"replan\",\n    \"on_unknown\"",
            "agent.on_failure",
            (10, 26),
            "\",",
            "invalid type: string \"replan\", expected an object such as {\"replan\": 1}",
        ),
    ];
    for (from, to, path, at_pos, at, message) in cases {
        let text = edit(from, to);
        let ps = problems(&text);
        assert_eq!(ps.len(), 1, "{ps:?}");
        assert_problem(&text, &ps[0], path, at_pos, at, &[message]);
        assert!(!ps[0].message.contains("Fault::"), "{:?}", ps[0].message);
    }
}

#[test]
fn wrong_shapes_after_a_missing_field_are_reported_too() {
    // serde stops at the missing field; the schema finds the wrong shapes after it, each at
    // the start of the value.
    let text = edit("    \"max_calls\": 2,\n", "");
    let text = edited(&text, "[{ \"drop_reply\": { \"attempt\": 1 } }]", "{}");
    let text = edited(&text, "\"reply_loss\": 0", "\"reply_loss\": [0]");
    let ps = problems(&text);
    let located: Vec<(&str, usize, usize)> = ps
        .iter()
        .map(|p| (p.path.as_str(), p.line, p.column))
        .collect();
    assert_eq!(
        located,
        [
            ("agent", 11, 3),
            ("network.reply_loss", 14, 69),
            ("faults", 21, 13)
        ],
        "{ps:?}"
    );
    assert!(ps[0].message.starts_with("missing field `max_calls`"));
    assert!(
        ps[1]
            .message
            .starts_with("invalid type: sequence, expected a probability such as")
    );
    assert!(
        ps[2]
            .message
            .starts_with("invalid type: map, expected an array such as")
    );
}

/// A text that is JSON but not an object is one problem, at its start; an empty file is at
/// line 1, column 1 (columns count from 1).
#[test]
fn a_text_that_is_not_an_object_is_one_problem_at_its_start() {
    for (text, got) in [
        ("[]", "sequence"),
        ("[1, 2]", "sequence"),
        ("null", "null"),
        ("\"x\"", "string \"x\""),
        ("42", "integer `42`"),
    ] {
        let ps = problems(text);
        assert_eq!(ps.len(), 1, "{text}: {ps:?}");
        assert_eq!(
            (ps[0].path.as_str(), ps[0].line, ps[0].column),
            ("(root)", 1, 1)
        );
        assert!(
            ps[0].message.starts_with(&format!(
                "invalid type: {got}, expected an object such as {{"
            )),
            "{text}: {}",
            ps[0].message
        );
    }
    let ps = problems("");
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert_eq!((ps[0].line, ps[0].column), (1, 1));
    assert_eq!(ps[0].message, "EOF while parsing a value");
}

/// One mistake reads the same whether serde finds it (it alone is wrong) or the schema does
/// (serde stopped at another problem first).
#[test]
fn a_mistake_reads_the_same_alone_or_beside_another() {
    let alone = edit("\"count\": 1", "\"count\": \"one\"");
    let beside = edited(&alone, "\"attempts\": 1,", "\"attempts\": 1, \"bogus\": 1,");
    let words = "invalid type: string \"one\", expected a non-negative integer no larger than \
                 4294967295";
    let ps = problems(&alone);
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert_eq!(ps[0].message, words);
    let ps = problems(&beside);
    assert_eq!(ps.len(), 2, "{ps:?}");
    assert_eq!(ps[0].path, "executor.bogus");
    assert_eq!(ps[1].path, "workers.count");
    assert_eq!(ps[1].message, words);
    // An unknown field's list is alphabetical whoever finds it.
    let unknown = edit("\"attempts\": 1,", "\"attempts\": 1, \"bogus\": 1,");
    assert_eq!(problems(&unknown)[0].message, ps[0].message);
    assert!(
        ps[0].message.starts_with(
            "unknown field `bogus`, expected one of `assumed_retention_ms`, `attempts`, "
        ),
        "{}",
        ps[0].message
    );
}

/// An integer too large for JSON's integers (read as a float) is named as written.
#[test]
fn an_integer_too_large_is_named_as_written() {
    let text = edit("\"intents\": 1", "\"intents\": 99999999999999999999");
    let ps = problems(&text);
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert_eq!(ps[0].path, "workload.intents");
    assert_eq!(
        ps[0].message,
        "invalid type: integer 99999999999999999999 (too large), expected a non-negative \
         integer no larger than 4294967295 such as 1"
    );
    // A fraction is not an integer written out: serde's words stand.
    let text = edit("\"intents\": 1", "\"intents\": 1.5");
    let ps = problems(&text);
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert!(
        ps[0]
            .message
            .starts_with("invalid type: floating point `1.5`, expected"),
        "{}",
        ps[0].message
    );
    // Nor is an exponent.
    let text = edit("\"intents\": 1", "\"intents\": 1e30");
    assert!(
        problems(&text)[0]
            .message
            .starts_with("invalid type: floating point `1e+30`, expected"),
        "{:?}",
        problems(&text)
    );
    // Columns past a character of several bytes on the line: named all the same.
    let text = edit(
        "{ \"intents\": 1 }",
        "{ \"é\": 0, \"intents\": 99999999999999999999 }",
    );
    let ps = problems(&text);
    let intents = ps.iter().find(|p| p.path == "workload.intents");
    assert!(
        intents.is_some_and(|p| p
            .message
            .contains("integer 99999999999999999999 (too large)")),
        "{ps:?}"
    );
}

#[test]
fn every_unknown_field_is_reported_at_once() {
    // Three misspelt fields: serde stops at the first (its position is kept, the end of the
    // key; the words are the schema's, as for the others, so that one mistake reads the same
    // whatever else is wrong); the others are found by the schema, each where its value
    // starts. A misspelt required field is missing too.
    let text = edit("\"retention_ms\"", "\"retention_msec\"");
    let text = edited(&text, "\"tool_timeout_ms\"", "\"tool_timeout\"");
    let text = edited(&text, "\"reply_loss\"", "\"reply_lost\"");
    let ps = problems(&text);
    assert_eq!(ps.len(), 4, "{ps:?}");
    assert_problem(
        &text,
        &ps[0],
        "agent.tool_timeout",
        (7, 18),
        "\": 60000",
        &[
            "unknown field `tool_timeout`, expected one of `authorization_loss`, `compensate`, \
             `max_calls`, `on_failure`, `on_step_failure`, `on_unknown`, `think_ms`, \
             `tool_timeout_ms`",
        ],
    );
    assert_problem(
        &text,
        &ps[1],
        "agent",
        (12, 3),
        "},",
        &["missing field `tool_timeout_ms` (a non-negative integer such as 60000)"],
    );
    assert_problem(
        &text,
        &ps[2],
        "network.reply_lost",
        (15, 69),
        "0 }",
        &[
            "unknown field `reply_lost`, expected one of `connection_reset`, `duplicate`, `latency_ms`, `reply_loss`, `request_loss`",
        ],
    );
    assert_problem(
        &text,
        &ps[3],
        "provider.retention_msec",
        (18, 23),
        "86400000,",
        &[
            "unknown field `retention_msec`, expected one of",
            "`retention_ms`",
        ],
    );
}

#[test]
fn cli_missing_fields_each_on_its_own_line() {
    let dir = Scratch::new("missing_fields");
    let text = edit("  \"horizon_ms\": 600000,\n", "");
    let text = edited(&text, "  \"workload\": { \"intents\": 1 },\n", "");
    let file = dir.write("first.json", &text);
    let stderr = assert_input_error(&retrylab(&["run", arg(&file)]));
    let lines = problem_lines(&stderr, &file);
    let f = file.display();
    assert_eq!(
        lines,
        [
            format!(
                "{f}:21:1: (root): missing field `horizon_ms` (a non-negative integer such as 600000): A run stops at this virtual time; whatever is still open then is unresolved."
            ),
            format!(
                "{f}:21:1: (root): missing field `workload` (an object such as {{\"intents\": 1}}): Intents arriving over time."
            ),
        ],
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------------------
// Several problems
// ---------------------------------------------------------------------------------------

/// Four independent mistakes found by the checks after parsing.
fn four_problems() -> String {
    let text = edit("\"same_key\"", "\"nope\"");
    let text = edited(&text, "\"count\": 1", "\"count\": 0");
    let text = edited(&text, "86400000", "0");
    edited(&text, "\"attempt\": 1 ", "\"attempt\": 0 ")
}

#[test]
fn several_problems_are_all_reported() {
    let text = four_problems();
    let e = Model::from_json(&text, "m.json").expect_err("four problems");
    let ps = &e.problems;
    assert_eq!(ps.len(), 4, "{ps:?}");
    assert_problem(
        &text,
        &ps[0],
        "designs[1]",
        (4, 27),
        "\"nope\"",
        &["unknown design \"nope\"", KNOWN_DESIGNS],
    );
    assert_problem(
        &text,
        &ps[1],
        "workers.count",
        (14, 25),
        "0 }",
        &["must be at least 1"],
    );
    assert_problem(
        &text,
        &ps[2],
        "provider.retention_ms",
        (18, 21),
        "0,",
        &["must be at least 1"],
    );
    assert_problem(
        &text,
        &ps[3],
        "faults[0].drop_reply.attempt",
        (22, 43),
        "0 }",
        &["numbered from 1"],
    );
    // Displayed one line per problem: `origin:line:column: path: message`.
    let shown = e.to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 4, "{shown}");
    for (line, p) in lines.iter().zip(ps) {
        assert_eq!(
            *line,
            format!("m.json:{}:{}: {}: {}", p.line, p.column, p.path, p.message)
        );
    }
}

// ---------------------------------------------------------------------------------------
// Through the binary
// ---------------------------------------------------------------------------------------

#[test]
fn cli_valid_model_runs() {
    let dir = Scratch::new("valid");
    let file = dir.write("valid.json", VALID);
    let out = retrylab(&["run", arg(&file), "--seeds", "20"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn cli_bad_model_files_exit_2_with_file_line_column() {
    let dir = Scratch::new("bad_files");
    // (file name, text, expected `line:column: path: ` after the file, message words)
    let cases: [(&str, String, &str, &[&str]); 6] = [
        (
            "missing_comma.json",
            edit("\"horizon_ms\": 600000,", "\"horizon_ms\": 600000"),
            "4:3: (root): ",
            &["expected `,` or `}`"],
        ),
        (
            "trailing.json",
            format!("{VALID}x"),
            "24:1: (root): ",
            &["trailing characters"],
        ),
        (
            "wrong_type.json",
            edit("600000", "\"soon\""),
            "3:22: horizon_ms: ",
            &["\"soon\"", "non-negative integer"],
        ),
        (
            "unknown_field.json",
            edit("\"retention_ms\"", "\"retention_msec\""),
            "18:20: provider.retention_msec: ",
            &["unknown field `retention_msec`"],
        ),
        (
            "negative.json",
            edit("{ \"min\": 5, \"max\": 80 }", "-5"),
            "15:31: network.latency_ms: ",
            &["duration -5 is negative"],
        ),
        (
            "unknown_design.json",
            edit("\"same_key\"", "\"same_keys\""),
            "4:27: designs[1]: ",
            &["unknown design \"same_keys\"", KNOWN_DESIGNS],
        ),
    ];
    for (name, text, located, words) in cases {
        let file = dir.write(name, &text);
        let stderr = assert_input_error(&retrylab(&["run", arg(&file)]));
        let lines = problem_lines(&stderr, &file);
        assert_eq!(lines.len(), 1, "{name}: {stderr}");
        let expected = format!("{}:{located}", file.display());
        assert!(
            lines[0].starts_with(&expected),
            "{name}: {:?} should start with {expected:?}",
            lines[0]
        );
        for w in words {
            assert!(lines[0].contains(w), "{name}: {:?} lacks {w:?}", lines[0]);
        }
        // The binary prints exactly what the library reports.
        let e = Model::from_json(&text, &file.display().to_string()).unwrap_err();
        assert_eq!(lines[0], e.to_string(), "{name}");
    }
}

#[test]
fn cli_bad_model_is_refused_by_trace_and_replay_too() {
    let dir = Scratch::new("trace_replay");
    let file = dir.write("zero_workers.json", &edit("\"count\": 1", "\"count\": 0"));
    let expected = format!(
        "{}:14:25: workers.count: must be at least 1",
        file.display()
    );
    for args in [
        vec!["trace", arg(&file), "--design", "same_key"],
        vec![
            "replay",
            arg(&file),
            "--design",
            "same_key",
            "--choices",
            "",
        ],
    ] {
        let stderr = assert_input_error(&retrylab(&args));
        let lines = problem_lines(&stderr, &file);
        assert_eq!(lines.len(), 1, "{args:?}: {stderr}");
        assert_eq!(lines[0], expected, "{args:?}");
    }
}

#[test]
fn cli_reports_every_problem_on_its_own_line() {
    let dir = Scratch::new("several");
    let file = dir.write("four.json", &four_problems());
    let stderr = assert_input_error(&retrylab(&["run", arg(&file)]));
    let lines = problem_lines(&stderr, &file);
    let f = file.display();
    let located: Vec<String> = lines
        .iter()
        .map(|l| l.split(": ").take(2).collect::<Vec<_>>().join(": "))
        .collect();
    assert_eq!(
        located,
        [
            format!("{f}:4:27: designs[1]"),
            format!("{f}:14:25: workers.count"),
            format!("{f}:18:21: provider.retention_ms"),
            format!("{f}:22:43: faults[0].drop_reply.attempt"),
        ],
        "{stderr}"
    );
}

#[test]
fn cli_unknown_design_flag_names_known_designs() {
    let dir = Scratch::new("design_flag");
    let file = dir.write("valid.json", VALID);
    for command in ["run", "trace"] {
        let stderr = assert_input_error(&retrylab(&[command, arg(&file), "--design", "nope"]));
        assert!(
            stderr.contains("--design nope: unknown design"),
            "{command}: {stderr}"
        );
        assert!(stderr.contains(KNOWN_DESIGNS), "{command}: {stderr}");
    }
}

#[test]
fn cli_missing_model_file() {
    let dir = Scratch::new("missing");
    let file = dir.0.join("does_not_exist.json");
    let stderr = assert_input_error(&retrylab(&["run", arg(&file)]));
    let lines = problem_lines(&stderr, &file);
    assert_eq!(lines.len(), 1, "{stderr}");
    // Not about a place in the file: no line, column or path.
    assert!(
        lines[0].starts_with(&format!("{}: cannot read the file", file.display())),
        "{stderr}"
    );
}

#[test]
fn cli_replay_malformed_choices() {
    let dir = Scratch::new("choices_malformed");
    let file = dir.write("valid.json", VALID);
    let stderr = assert_input_error(&retrylab(&[
        "replay",
        arg(&file),
        "--design",
        "same_key",
        "--choices",
        "1,x",
    ]));
    assert!(
        stderr.contains(
            "--choices: item 2 is \"x\": expected a non-negative integer or POSITION=VALUE"
        ),
        "{stderr}"
    );
    // A key whose digest is not one.
    let stderr = assert_input_error(&retrylab(&[
        "replay",
        arg(&file),
        "--design",
        "same_key",
        "--choices",
        "12ab:3=1",
    ]));
    assert!(
        stderr.contains(
            "--choices: \"12ab\" before the colon: expected a model digest of 16 hex digits"
        ),
        "{stderr}"
    );
}

#[test]
fn cli_replay_impossible_choice() {
    let dir = Scratch::new("choices_impossible");
    let file = dir.write("valid.json", VALID);
    let stderr = assert_input_error(&retrylab(&[
        "replay",
        arg(&file),
        "--design",
        "same_key",
        "--choices",
        "999999",
    ]));
    assert!(stderr.contains("--choices: choice 1 is 999999"), "{stderr}");
    assert!(stderr.contains("not a possible one"), "{stderr}");
}

// ---------------------------------------------------------------------------------------
// Expectations
// ---------------------------------------------------------------------------------------

/// [`VALID`] with an `expect` section (on line 22).
fn with_expect(expect: &str) -> String {
    edit(
        "  \"faults\": [{ \"drop_reply\": { \"attempt\": 1 } }]\n}",
        &format!(
            "  \"faults\": [{{ \"drop_reply\": {{ \"attempt\": 1 }} }}],\n  \"expect\": {expect}\n}}"
        ),
    )
}

#[test]
fn expectation_is_accepted_and_parsed() {
    let text = with_expect(
        r#"{ "same_key": { "hold": ["no_duplicate", "resolved_within(60000)"], "violate": ["no_false_failure"] } }"#,
    );
    let m = Model::from_json(&text, "m.json").unwrap_or_else(|e| panic!("{e}"));
    use retrylab::check::Property;
    use retrylab::model::Want;
    assert_eq!(
        m.expectations("same_key"),
        vec![
            (Property::NoDuplicate, Want::Hold),
            (Property::ResolvedWithin(60_000), Want::Hold),
            (Property::NoFalseFailure, Want::Violate)
        ]
    );
    assert!(m.expectations("no_dedup").is_empty());
}

#[test]
fn expectation_unknown_property() {
    let text = with_expect(r#"{ "same_key": { "hold": ["no_duplicate", "no_dup"] } }"#);
    assert_first(
        &text,
        "expect.same_key.hold[1]",
        (23, 54),
        "\"no_dup\"",
        &[
            "unknown property \"no_dup\"",
            "no_duplicate",
            "resolved_within(T)",
        ],
    );
}

#[test]
fn expectation_malformed_parameter() {
    let text = with_expect(r#"{ "same_key": { "violate": ["resolved_within(1h)"] } }"#);
    assert_first(
        &text,
        "expect.same_key.violate[0]",
        (23, 41),
        "\"resolved_within(1h)\"",
        &["whole number of milliseconds"],
    );
}

#[test]
fn expectation_for_a_design_the_model_does_not_list() {
    let text = with_expect(r#"{ "journal": { "hold": ["no_duplicate"] } }"#);
    assert_first(
        &text,
        "expect.journal",
        (23, 26),
        "{ \"hold\"",
        &["\"journal\" is not listed in `designs`"],
    );
    let text = with_expect(r#"{ "nope": { "hold": ["no_duplicate"] } }"#);
    assert_first(
        &text,
        "expect.nope",
        (23, 23),
        "{ \"hold\"",
        &["unknown design", KNOWN_DESIGNS],
    );
}

#[test]
fn expectation_names_a_property_twice() {
    let text =
        with_expect(r#"{ "same_key": { "hold": ["no_duplicate"], "violate": ["no_duplicate"] } }"#);
    assert_first(
        &text,
        "expect.same_key.violate[0]",
        (23, 67),
        "\"no_duplicate\"",
        &["no_duplicate is named twice"],
    );
}

#[test]
fn expectation_unknown_field_is_refused_by_check_with_exit_2() {
    let dir = Scratch::new("expect-field");
    let text = with_expect(r#"{ "same_key": { "holds": ["no_duplicate"] } }"#);
    let file = dir.write("m.json", &text);
    let stderr = assert_input_error(&retrylab(&["check", arg(&file)]));
    let lines = problem_lines(&stderr, &file);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("expect.same_key"), "{stderr}");
    assert!(lines[0].contains("unknown field `holds`"), "{stderr}");
}

/// VALID with an `explore` section.
fn with_explore(explore: &str) -> String {
    edit(
        "  \"faults\": [{ \"drop_reply\": { \"attempt\": 1 } }]\n}",
        &format!(
            "  \"faults\": [{{ \"drop_reply\": {{ \"attempt\": 1 }} }}],\n  \"explore\": {explore}\n}}"
        ),
    )
}

#[test]
fn explore_bound_is_accepted_with_its_default_run_limit() {
    let m = Model::from_json(&with_explore(r#"{ "max_faults": 2 }"#), "m.json").unwrap();
    let e = m.explore.unwrap();
    assert_eq!((e.max_faults, e.max_runs), (2, 1_000_000));
    assert!(Model::from_json(VALID, "m.json").unwrap().explore.is_none());
}

#[test]
fn explore_bound_too_many_faults() {
    let text = with_explore(r#"{ "max_faults": 9 }"#);
    assert_first(
        &text,
        "explore.max_faults",
        (23, 30),
        "9 }",
        &["9 faults per run", "limit of 6", "run"],
    );
}

#[test]
fn explore_bound_zero_runs_and_unknown_fields() {
    let text = with_explore(r#"{ "max_faults": 1, "max_runs": 0 }"#);
    assert_first(&text, "explore.max_runs", (23, 45), "0 }", &["at least 1"]);
    let text = with_explore(r#"{ "faults": 1 }"#);
    assert_first(
        &text,
        "explore.faults",
        (23, 23),
        "\": 1 }",
        &["unknown field `faults`", "`max_faults`"],
    );
}

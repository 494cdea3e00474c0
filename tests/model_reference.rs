//! The model format's reference: the JSON Schema committed as `models/schema.json`, the
//! defaults table of docs/models.md, the bundled models' `$schema`, and the commands that
//! show a model (`show-model`), the presets (`presets`) and the designs (`designs`); and
//! the links of the README and docs/.

use std::path::PathBuf;
use std::process::{Command, Output};

use retrylab::model::Model;
use retrylab::model::reference::{defaults_markdown, schema, schema_text};
use serde_json::Value;

use crate::common::golden;
use golden::assert_same_text;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn retrylab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("start the retrylab binary")
}

#[track_caller]
fn stdout_of(args: &[&str]) -> String {
    let out = retrylab(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The bundled model files (not the presets, not the schema), with the `$schema` each must
/// name.
fn bundled_models() -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    for (dir, reference) in [
        ("models", "schema.json"),
        ("models/windows", "../schema.json"),
        ("models/bad", "../schema.json"),
        ("models/guarantees", "../schema.json"),
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter(|p| !p.ends_with("schema.json"))
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|f| (f, reference)));
    }
    out
}

// ---------------------------------------------------------------------------------------
// The schema
// ---------------------------------------------------------------------------------------

#[test]
fn committed_schema_is_current() {
    let mut golden = golden::Golden::in_project("models");
    golden.note("(or regenerate it with\n  cargo run --release -- schema > models/schema.json)");
    golden.check("schema.json", &schema_text());
    golden.finish();
}

#[test]
fn schema_command_prints_the_committed_schema() {
    let committed = std::fs::read_to_string(root().join("models/schema.json")).unwrap();
    let printed = stdout_of(&["schema"]);
    assert_same_text(
        &committed,
        &printed,
        "retrylab schema against models/schema.json",
    );
    let printed = stdout_of(&["schema", "--markdown"]);
    assert_same_text(&defaults_markdown(), &printed, "retrylab schema --markdown");
}

/// Every object schema of `v`, with a name for messages.
fn objects<'a>(name: &str, v: &'a Value, out: &mut Vec<(String, &'a Value)>) {
    if let Value::Object(o) = v {
        if o.contains_key("properties") {
            out.push((name.to_string(), v));
        }
        for (k, x) in o {
            objects(&format!("{name}/{k}"), x, out);
        }
    } else if let Value::Array(a) = v {
        for (i, x) in a.iter().enumerate() {
            objects(&format!("{name}[{i}]"), x, out);
        }
    }
}

#[test]
fn every_field_has_a_description_and_every_optional_field_a_default() {
    let s = schema();
    assert_eq!(s["$schema"], "http://json-schema.org/draft-07/schema#");
    let mut all = Vec::new();
    objects("#", &s, &mut all);
    // The model, its sections, the provider's knobs, the fault kinds and the range.
    assert!(all.len() > 20, "{}", all.len());
    let mut fields = 0;
    for (name, o) in all {
        let required: Vec<&str> = o["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (field, p) in o["properties"].as_object().unwrap() {
            fields += 1;
            let d = p["description"].as_str().unwrap_or_default();
            assert!(!d.is_empty(), "{name}: `{field}` has no description");
            assert!(!d.contains('\n'), "{name}: `{field}`: {d:?}");
            // A fault's kind is its one required key; the rest either is required or has a
            // default. The provider's `preset` has none: without it, `dedup` is required.
            let fault_kind =
                o["properties"].as_object().unwrap().len() == 1 && required == [field.as_str()];
            if !required.contains(&field.as_str()) && field != "preset" && !fault_kind {
                assert!(
                    p.get("default").is_some(),
                    "{name}: optional `{field}` has no default"
                );
            }
        }
    }
    assert!(fields > 100, "{fields}");
}

#[test]
fn schema_describes_what_the_hand_written_readers_accept() {
    let s = schema();
    let d = &s["definitions"];
    assert_eq!(
        d["Range"]["examples"],
        serde_json::json!([50, {"min": 20, "max": 300}])
    );
    assert_eq!(d["Ratio"]["examples"], serde_json::json!(["1/20", 0.05, 0]));
    assert_eq!(
        d["Property"]["examples"],
        serde_json::json!(["no_duplicate", "resolved_within(60000)"])
    );
    // The provider: a preset name, or an object with `preset` or `dedup`.
    let provider = &d["Provider"]["anyOf"];
    assert_eq!(provider[0]["type"], "string");
    assert_eq!(provider[0]["enum"].as_array().unwrap().len(), 12);
    assert_eq!(
        provider[1]["anyOf"],
        serde_json::json!([{"required": ["preset"]}, {"required": ["dedup"]}])
    );
    assert_eq!(provider[1]["additionalProperties"], false);
    // Every example the schema gives for the provider, a fault or a section is a value the
    // reader accepts, inside an otherwise valid model.
    let base: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("models/ticket_lost_response.json")).unwrap(),
    )
    .unwrap();
    let cases: [(&str, &Value); 4] = [
        ("provider", &d["Provider"]["examples"]),
        ("network", &s["properties"]["network"]["examples"]),
        ("workers", &s["properties"]["workers"]["examples"]),
        ("executor", &s["properties"]["executor"]["examples"]),
    ];
    for (field, examples) in cases {
        for example in examples.as_array().unwrap() {
            let mut m = base.clone();
            m[field] = example.clone();
            Model::from_json(&m.to_string(), "example")
                .unwrap_or_else(|e| panic!("{field} = {example}: {e}"));
        }
    }
    for example in d["Fault"]["examples"].as_array().unwrap() {
        let mut m = base.clone();
        m["faults"] = Value::Array(vec![example.clone()]);
        Model::from_json(&m.to_string(), "example")
            .unwrap_or_else(|e| panic!("fault {example}: {e}"));
    }
}

#[test]
fn every_bundled_model_names_the_schema() {
    let models = bundled_models();
    assert!(models.len() > 40, "{}", models.len());
    for (path, reference) in models {
        let text = std::fs::read_to_string(&path).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["$schema"], reference, "{}", path.display());
        // And the file it names is the schema.
        let named = path.parent().unwrap().join(reference);
        assert_eq!(
            std::fs::canonicalize(named).unwrap(),
            std::fs::canonicalize(root().join("models/schema.json")).unwrap()
        );
    }
    // Presets are not models: they carry no `$schema`.
    for e in std::fs::read_dir(root().join("models/providers")).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert!(!text.contains("$schema"));
    }
}

#[test]
fn a_model_may_name_any_schema_and_check_passes_over_the_schema_file() {
    let text = std::fs::read_to_string(root().join("models/ticket_lost_response.json")).unwrap();
    let other = text.replacen("\"schema.json\"", "\"https://example.org/s.json\"", 1);
    assert_ne!(text, other);
    Model::from_json(&other, "m.json").unwrap();
    let out = retrylab(&[
        "check",
        "models/schema.json",
        "models/ticket_lost_response.json",
        "--seeds",
        "5",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("models/schema.json: the JSON Schema of model files, not a model: skipped"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------------------
// The model reference (docs/models.md), and the links of the README and docs/
// ---------------------------------------------------------------------------------------

fn readme() -> String {
    std::fs::read_to_string(root().join("docs/models.md")).unwrap()
}

#[test]
fn the_defaults_table_of_the_model_reference_is_current() {
    let readme = readme();
    let begin = "<!-- defaults:begin -->\n";
    let start = readme
        .find(begin)
        .expect("the defaults table's begin marker")
        + begin.len();
    let end = readme
        .find("<!-- defaults:end -->")
        .expect("its end marker");
    assert_same_text(
        &readme[start..end],
        &defaults_markdown(),
        "the defaults table of docs/models.md is stale: replace the lines between the markers with the output of\n  cargo run --release -- schema --markdown",
    );
    // One row per field: spot checks of defaults that live nowhere else in the docs.
    for row in [
        "| `executor.lease_ms` | ms | `30000` |",
        "| `executor.timeout_ms` | ms | `5000` |",
        "| `network.latency_ms` | range (ms) | `10` |",
        "| `provider.processing_ms` | range (ms) | `50` |",
        "| `workload.steps` | integer | `1` |",
        "| `horizon_ms` | ms | required |",
    ] {
        assert!(readme.contains(row), "{row}");
    }
}

#[test]
fn the_complete_model_of_the_model_reference_loads_and_runs() {
    let readme = readme();
    let at = readme
        .find("A complete model:")
        .expect("the complete model");
    let start = readme[at..].find("```json\n").unwrap() + at + "```json\n".len();
    let end = readme[start..].find("```").unwrap() + start;
    let m =
        Model::from_json(&readme[start..end], "docs/models.md").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.workers.count, 2);
    assert_eq!(m.provider.retention_ms, Some(86_400_000));
    assert_eq!(m.network.reply_loss.to_string(), "1/10");
    assert_eq!(m.faults.len(), 1);
}

// ---------------------------------------------------------------------------------------
// show-model, presets, designs
// ---------------------------------------------------------------------------------------

#[test]
fn show_model_prints_every_field_and_where_it_comes_from() {
    let text = stdout_of(&["show-model", "models/windows/retention_expired.json"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "# models/windows/retention_expired.json (retention_expired): every field, with where its value comes from"
    );
    let at = |prefix: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line {prefix:?}"))
    };
    let from = at("provider.preset");
    let to = at("provider.crash_during_processing");
    // The provider section: the preset expanded, with its source and notes, what the file
    // changes (`lookup`) and the defaults no preset sets.
    let w = 55;
    let line = |field: &str, origin: &str| format!("{field:<w$}   # {origin}");
    let mut expected = vec![line("provider.preset = \"stripe_v1\"", "set")];
    expected.extend(
        [
            "# provider.source (preset stripe_v1):",
            "#   Stripe API reference, Idempotent requests: https://docs.stripe.com/api/idempotent_requests;",
            "#   Advanced error handling (409 idempotency_key_in_use, 24 h):",
            "#   https://docs.stripe.com/error-low-level",
            "# provider.notes (preset stripe_v1):",
        ]
        .map(String::from),
    );
    // The notes run until the first line that is not one of theirs.
    let notes_end = (from + expected.len()..lines.len())
        .find(|&i| !lines[i].starts_with("#   "))
        .unwrap();
    for (field, origin) in [
        ("provider.dedup = \"by_key\"", "preset stripe_v1"),
        ("provider.key_source = \"client\"", "default"),
        ("provider.key_scope = \"tenant\"", "preset stripe_v1"),
        ("provider.retention_ms = 86400000", "preset stripe_v1"),
        ("provider.retention_max_ms = 259200000", "preset stripe_v1"),
        (
            "provider.retention_from = \"first_request\"",
            "preset stripe_v1",
        ),
        (
            "provider.after_expiry = \"new_request\"",
            "preset stripe_v1",
        ),
        ("provider.in_progress_expiry_ms = null", "default"),
        ("provider.atomicity = \"atomic\"", "preset stripe_v1"),
        ("provider.in_flight = \"reject\"", "preset stripe_v1"),
        ("provider.mismatch = \"reject\"", "preset stripe_v1"),
        ("provider.stored_outcomes = \"all\"", "preset stripe_v1"),
        ("provider.replay = \"stored_response\"", "preset stripe_v1"),
        ("provider.accept_async = false", "default"),
        ("provider.async_failure = \"0/1\"", "default"),
        ("provider.require_key = false", "default"),
        ("provider.lookup = \"search\"", "set"),
        ("provider.key_lifetime = \"record\"", "default"),
        ("provider.visibility_lag_ms = 0", "default"),
        ("provider.processing_ms = 50", "default"),
        ("provider.error_before_commit = \"0/1\"", "default"),
        ("provider.error_after_commit = \"0/1\"", "default"),
        ("provider.crash_during_processing = \"0/1\"", "default"),
    ] {
        expected.push(line(field, origin));
    }
    let notes: Vec<&str> = lines[from + 6..notes_end].to_vec();
    assert!(
        notes
            .iter()
            .all(|l| l.starts_with("#   ") && l.len() <= 100),
        "{notes:?}"
    );
    assert!(
        notes[0].starts_with("#   Keys are per account."),
        "{notes:?}"
    );
    let mut got: Vec<String> = lines[from..from + 6]
        .iter()
        .map(|l| l.to_string())
        .collect();
    got.extend(lines[notes_end..=to].iter().map(|l| l.to_string()));
    assert_eq!(got, expected, "{text}");
    // Elsewhere: what the file sets, defaults filled in, faults one per line, ranges read as
    // the model writes them.
    for (field, origin) in [
        ("workload.intents = 1", "set"),
        ("workload.steps = 1", "default"),
        ("agent.think_ms = 0", "default"),
        ("executor.lease_ms = 30000", "default"),
        ("executor.reconcile = \"search\"", "set"),
        ("workers.journal = \"durable\"", "set"),
        ("network.latency_ms = 10", "set"),
        ("faults[0] = {\"drop_reply\": {\"attempt\": 1}}", "set"),
        ("explore.max_faults = 2", "set"),
        ("explore.max_runs = 1000000", "default"),
        // The provider's HTTP face: the preset's, field by field.
        (
            "provider.http.create = \"POST /v1/customers\"",
            "preset stripe_v1",
        ),
        ("provider.http.body = \"form\"", "preset stripe_v1"),
        (
            "provider.http.ref_field = \"metadata[ref]\"",
            "preset stripe_v1",
        ),
        ("provider.http.key_name = \"Idempotency-Key\"", "default"),
        ("provider.http.in_progress.status = 409", "preset stripe_v1"),
        (
            "provider.http.in_progress.code = \"idempotency_key_in_use\"",
            "preset stripe_v1",
        ),
    ] {
        assert!(
            lines.contains(&line(field, origin).as_str()),
            "{field}\n{text}"
        );
    }
    // No `$schema`: it is not part of the model.
    assert!(!text.contains("$schema"));
}

#[test]
fn show_model_json_lists_the_same_fields() {
    let text = stdout_of(&[
        "show-model",
        "models/windows/retention_expired.json",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["preset"], "stripe_v1");
    assert_eq!(v["name"], "retention_expired");
    let fields = v["fields"].as_array().unwrap();
    let find = |path: &str| {
        fields
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("no {path}"))
    };
    assert_eq!(
        find("provider.retention_ms"),
        &serde_json::json!({"path": "provider.retention_ms", "value": 86400000, "from": "preset", "preset": "stripe_v1"})
    );
    assert_eq!(
        find("provider.lookup"),
        &serde_json::json!({"path": "provider.lookup", "value": "search", "from": "set"})
    );
    assert_eq!(
        find("executor.lease_ms"),
        &serde_json::json!({"path": "executor.lease_ms", "value": 30000, "from": "default"})
    );
    assert!(
        find("provider.notes")["value"]
            .as_str()
            .unwrap()
            .starts_with("Keys are per account.")
    );
    // As many fields as the text shows (source and notes are comment blocks there).
    let shown = stdout_of(&["show-model", "models/windows/retention_expired.json"]);
    let field_lines = shown.lines().filter(|l| l.contains(" = ")).count();
    assert_eq!(fields.len(), field_lines + 2);
}

#[test]
fn show_model_of_a_bad_file_exits_2() {
    let out = retrylab(&["show-model", "models/does_not_exist.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the file"));
}

#[test]
fn presets_one_line_each() {
    let text = stdout_of(&["presets"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 12, "{text}");
    assert_eq!(
        lines[1],
        "stripe_v1            by key, tenant, 24 h           https://docs.stripe.com/api/idempotent_requests"
    );
    assert_eq!(
        lines[0],
        "no_dedup             no dedup                       https://www.rfc-editor.org/rfc/rfc9110.html#section-9.2.2"
    );
    for (line, name) in lines.iter().zip(retrylab::model::provider::preset_names()) {
        assert!(line.starts_with(&format!("{name} ")), "{line}");
        assert!(line.contains("https://"), "{line}");
    }
}

#[test]
fn designs_fit_100_columns() {
    let text = stdout_of(&["designs"]);
    for line in text.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.len()
        );
    }
    // Every design is named at the start of a line, its summary whole across its lines.
    for d in retrylab::design::all() {
        let at = text
            .lines()
            .position(|l| l.starts_with(&format!("{} ", d.name())))
            .unwrap_or_else(|| panic!("{} is not listed", d.name()));
        let mut summary: Vec<&str> = vec![text.lines().nth(at).unwrap()[25..].trim()];
        summary.extend(
            text.lines()
                .skip(at + 1)
                .take_while(|l| l.starts_with(' '))
                .map(str::trim),
        );
        assert_eq!(
            summary.join(" "),
            d.summary().split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    // The old list ran to 108 columns.
    assert!(
        retrylab::design::all()
            .iter()
            .any(|d| 25 + d.summary().len() > 100)
    );
}

/// The anchor GitHub gives a Markdown heading: lower case, punctuation but `-` and `_` left
/// out, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of the headings of Markdown `text` (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            code = !code;
        } else if !code && line.starts_with('#') {
            out.push(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// The relative links `[text](target)` of Markdown `text` (outside code blocks).
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            code = !code;
            continue;
        }
        if code {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(j) = after.find(')') else { break };
            let target = after[..j].trim();
            if !target.contains("://") && !target.starts_with("mailto:") {
                out.push(target.to_string());
            }
            rest = &after[j..];
        }
    }
    out
}

/// Every relative link of the README and of docs/ leads somewhere: the file exists, and an
/// anchor names a heading of its page. Moving a section between pages cannot leave a link
/// behind.
#[test]
fn every_link_of_the_readme_and_the_docs_resolves() {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for link in links(&text) {
            checked += 1;
            if link.is_empty() {
                broken.push(format!("{}: an empty link target", page.display()));
                continue;
            }
            let (file, fragment) = match link.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (link.as_str(), None),
            };
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", page.display()));
                continue;
            }
            if let Some(a) = fragment
                && target.extension().is_some_and(|x| x == "md")
                && !anchors(&std::fs::read_to_string(&target).unwrap())
                    .iter()
                    .any(|x| x == a)
            {
                broken.push(format!("{}: {link}: no such heading", page.display()));
            }
        }
    }
    assert!(checked > 20, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The README's commands table has a row for every subcommand `retrylab --help` lists
/// (`help` aside), and no row for one it does not.
#[test]
fn the_readme_lists_every_command() {
    let help = stdout_of(&["--help"]);
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(listed.len() >= 12, "{help}");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let rows: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `retrylab "))
        .filter_map(|rest| rest.split([' ', '`']).next())
        .collect();
    let mut missing: Vec<&&str> = listed.iter().filter(|c| !rows.contains(c)).collect();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "commands without a README row: {missing:?}"
    );
    let unknown: Vec<&&str> = rows.iter().filter(|r| !listed.contains(r)).collect();
    assert!(unknown.is_empty(), "README rows of no command: {unknown:?}");
}

#[test]
fn anchors_are_githubs() {
    assert_eq!(
        anchor(" `check` in CI: exit codes, JSON, JUnit and a GitHub Actions workflow"),
        "check-in-ci-exit-codes-json-junit-and-a-github-actions-workflow"
    );
    assert_eq!(
        links("see [a](docs/x.md#y) and [b](https://e.org)"),
        ["docs/x.md#y"]
    );
}

//! Mutated copies of every bundled model: each one loads and then runs (a few seeds with every
//! design, to its end or to the events budget) or is refused with a message; never a panic,
//! an abort or a hang. Mutations are deterministic: truncations at many offsets, a value of
//! every other JSON type at every path, huge and negative numbers at every numeric path, deep
//! nesting, invalid UTF-8, duplicate keys, unknown presets and designs. About 40 000 cases,
//! in a few seconds in a debug build.

use crate::common::cli;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use retrylab::design;
use retrylab::model::Model;
use retrylab::run::run_seeds;
use serde_json::{Map, Value, json};

/// Every bundled model file, sorted.
fn bundled() -> Vec<(String, String)> {
    let root = cli::root();
    let mut files: Vec<PathBuf> = [
        "models",
        "models/windows",
        "models/guarantees",
        "models/providers",
        "models/bad",
    ]
    .iter()
    .flat_map(|d| {
        std::fs::read_dir(root.join(d))
            .unwrap()
            .map(|e| e.unwrap().path())
    })
    .filter(|p| p.extension().is_some_and(|e| e == "json"))
    .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(&root).unwrap().display().to_string();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Every path of `v`, as JSON pointers, in document order.
fn paths(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                paths(c, p, out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                paths(c, p, out);
            }
        }
        _ => {}
    }
}

fn replaced(v: &Value, pointer: &str, with: Value) -> String {
    let mut v = v.clone();
    *v.pointer_mut(pointer).unwrap() = with;
    v.to_string()
}

/// `v` as text with the first member of the object at `pointer` written twice (the second
/// time with `dup` as its value).
fn duplicated(v: &Value, pointer: &str, dup: &Value) -> Option<String> {
    fn write(v: &Value, at: &str, target: &str, dup: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                out.push('{');
                for (i, (k, c)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let p = format!("{at}/{k}");
                    out.push_str(&format!("{}:", Value::String(k.clone())));
                    write(c, &p, target, dup, out);
                    if i == 0 && at == target {
                        out.push_str(&format!(",{}:{dup}", Value::String(k.clone())));
                    }
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, c) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(c, &format!("{at}/{i}"), target, dup, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let target = v.pointer(pointer)?;
    if target.as_object().is_none_or(Map::is_empty) {
        return None;
    }
    let mut out = String::new();
    write(v, "", pointer, dup, &mut out);
    Some(out)
}

/// The deterministic mutations of one model.
fn mutations(index: usize, text: &str) -> Vec<(String, String)> {
    let v: Value = serde_json::from_str(text).unwrap();
    let mut out = Vec::new();
    // Truncations: 16 offsets spread over the text, on character boundaries.
    let n = text.len();
    for k in 0..16 {
        let mut at = n * k / 16 + (index * 7 + k * 13) % 11;
        while at > 0 && !text.is_char_boundary(at.min(n)) {
            at -= 1;
        }
        let at = at.min(n.saturating_sub(1));
        out.push((format!("truncated at byte {at}"), text[..at].to_string()));
    }
    let mut all = Vec::new();
    paths(&v, String::new(), &mut all);
    let others = [
        json!(1),
        json!("x"),
        json!([]),
        json!({}),
        json!(null),
        json!(true),
    ];
    // Type swaps: every path, with a value of each type.
    for p in &all {
        for with in &others {
            out.push((format!("{p} = {with}"), replaced(&v, p, with.clone())));
        }
    }
    // Huge and negative numbers at every numeric path.
    let numeric: Vec<&String> = all
        .iter()
        .filter(|p| v.pointer(p).is_some_and(Value::is_number))
        .collect();
    for p in numeric {
        for raw in [
            "18446744073709551615",
            "-1",
            "1e300",
            "9007199254740993",
            "4294967296",
            "4294967295",
            "1000000000001",
        ] {
            let with: Value = serde_json::from_str(raw).unwrap();
            out.push((format!("{p} = {raw}"), replaced(&v, p, with)));
        }
    }
    // Duplicate keys in every object.
    let root = String::new();
    let objects: Vec<&String> = std::iter::once(&root)
        .chain(all.iter())
        .filter(|p| v.pointer(p).is_some_and(Value::is_object))
        .collect();
    for p in objects {
        if let Some(t) = duplicated(&v, p, &json!(7)) {
            out.push((format!("{p}: first key twice"), t));
        }
    }
    // Unknown presets and designs.
    let mut bad = v.clone();
    bad["designs"] = json!(["no_such_design"]);
    out.push(("unknown design".into(), bad.to_string()));
    let mut bad = v.clone();
    bad["provider"] = json!("no_such_preset");
    out.push(("unknown preset".into(), bad.to_string()));
    let mut bad = v.clone();
    if let Some(p) = bad["provider"].as_object_mut() {
        p.insert("preset".into(), json!("no_such_preset"));
        out.push(("unknown preset in provider".into(), bad.to_string()));
    }
    let mut bad = v.clone();
    bad["expect"] = json!({ "no_such_design": { "hold": ["no_duplicate"] } });
    out.push(("unknown design in expect".into(), bad.to_string()));
    out
}

/// 10 000 arrays deep, in place of the model and of its workload.
fn deep() -> Vec<(String, String)> {
    let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let objects = format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
    let base = r#"{"name": "deep", "horizon_ms": 1000, "designs": ["same_key"], "workload": WORKLOAD, "agent": {"tool_timeout_ms": 1000, "max_calls": 1, "on_failure": {"give_up": 1}, "on_unknown": {"give_up": 1}}, "provider": "stripe_v1"}"#;
    vec![
        ("10 000 nested arrays".into(), nested.clone()),
        ("10 000 nested objects".into(), objects.clone()),
        (
            "workload 10 000 arrays deep".into(),
            base.replace("WORKLOAD", &nested),
        ),
        (
            "workload 10 000 objects deep".into(),
            base.replace("WORKLOAD", &objects),
        ),
    ]
}

/// Loads `text`; if it is accepted, runs two seeds of every design. Returns the problems'
/// messages (empty when accepted). Panics propagate to the caller's `catch_unwind`.
fn exercise(text: &str) -> Result<(), Vec<String>> {
    match Model::from_json(text, "mutated.json") {
        Ok(m) => {
            for name in design::names() {
                let d = design::find(name).unwrap();
                run_seeds(&m, d, 0..2);
            }
            Ok(())
        }
        Err(e) => Err(e
            .problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect()),
    }
}

#[test]
fn every_mutation_of_every_bundled_model_loads_and_runs_or_is_refused() {
    let mut cases: Vec<(String, String)> = Vec::new();
    for (i, (name, text)) in bundled().iter().enumerate() {
        for (what, t) in mutations(i, text) {
            cases.push((format!("{name}: {what}"), t));
        }
    }
    cases.extend(deep());
    let (mut accepted, mut refused) = (0, 0);
    let mut failures = Vec::new();
    // Silence the hook's report of the panics caught here (each is listed below), and only
    // those: the other tests of the binary run meanwhile, and their failures must print.
    let previous = std::sync::Arc::new(std::panic::take_hook());
    let others = std::sync::Arc::clone(&previous);
    let here = std::thread::current().id();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() != here {
            others(info);
        }
    }));
    for (what, text) in &cases {
        match catch_unwind(AssertUnwindSafe(|| exercise(text))) {
            Ok(Ok(())) => accepted += 1,
            Ok(Err(messages)) => {
                refused += 1;
                if messages.is_empty() || messages.iter().any(|m| m.trim().is_empty()) {
                    failures.push(format!("{what}: refused without a message: {messages:?}"));
                }
            }
            Err(panic) => {
                let why = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{what}: panicked: {why}"));
            }
        }
    }
    drop(std::panic::take_hook());
    match std::sync::Arc::try_unwrap(previous) {
        Ok(hook) => std::panic::set_hook(hook),
        Err(_) => unreachable!("the hook that shared it was dropped"),
    }
    assert!(
        failures.is_empty(),
        "{} of {} mutations failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    // Both outcomes occur, in numbers that show the mutations reach past the parser.
    assert!(
        accepted > 100 && refused > 1_000,
        "accepted {accepted}, refused {refused}"
    );
    eprintln!(
        "{} mutations: {accepted} accepted and run, {refused} refused",
        cases.len()
    );
}

/// Invalid UTF-8 in a model file is refused when it is read, with a message.
#[test]
fn invalid_utf8_is_refused_with_a_message() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("retrylab-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    let mut bytes = std::fs::read(cli::root().join("models/ticket_lost_response.json")).unwrap();
    bytes.splice(10..10, [0xff, 0xfe, 0xc3]);
    std::fs::write(&path, &bytes).unwrap();
    let e = Model::load(&path).unwrap_err();
    assert!(e.to_string().contains("cannot read the file"), "{e}");
    let out = cli::retrylab(&["run", path.to_str().unwrap(), "--seeds", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        cli::stderr(&out).contains("cannot read the file"),
        "{}",
        cli::stderr(&out)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A handful of mutations through the binary: exit 2 and a message on stderr naming the file.
#[test]
fn the_binary_refuses_mutations_with_exit_2_and_a_message() {
    let text =
        std::fs::read_to_string(cli::root().join("models/ticket_lost_response.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let with = |pointer: &str, x: Value| replaced(&v, pointer, x);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "truncated",
            text[..text.len() / 2].to_string(),
            "EOF while parsing",
        ),
        ("type swap", with("/workload", json!("x")), "workload"),
        (
            "u64::MAX workers",
            with("/workers/count", json!(u64::MAX)),
            "workers.count",
        ),
        (
            "negative",
            with("/agent/max_calls", json!(-1)),
            "agent.max_calls",
        ),
        ("1e300", with("/horizon_ms", json!(1e300)), "horizon_ms"),
        (
            "deep",
            deep()[2].1.clone(),
            "workload[0]: invalid type: sequence",
        ),
        (
            "duplicate key",
            // The first key in key order is `$schema`.
            duplicated(&v, "", &json!(7)).unwrap(),
            "duplicate field `$schema`",
        ),
        (
            "unknown design",
            with("/designs", json!(["no_such_design"])),
            "unknown design",
        ),
        (
            "unknown preset",
            with("/provider", json!("no_such_preset")),
            "no_such_preset",
        ),
    ];
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("retrylab-mutations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (what, text, needle)) in cases.iter().enumerate() {
        let path = dir.join(format!("m{i}.json"));
        std::fs::write(&path, text).unwrap();
        let out = cli::retrylab(&["check", path.to_str().unwrap(), "--seeds", "1"]);
        let err = cli::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(
            err.contains(&format!("m{i}.json:")) && err.contains(needle),
            "{what}: {err}"
        );
        assert!(!err.contains("panicked"), "{what}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

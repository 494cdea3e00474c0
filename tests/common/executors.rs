//! Running external executors from tests through the library's entry point: argument
//! lists, the totals of a JSON run, the lines of a trace.
#![allow(dead_code)]

use retrylab::cli::{Outcome, run_with};

/// `retrylab ARGS...` through the library (stdout and stderr as text, the exit code).
pub fn retrylab(args: &[String]) -> Outcome {
    let mut all = vec!["retrylab".to_string()];
    all.extend_from_slice(args);
    run_with(all, &[])
}

/// An owned argument list.
pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The totals of the `i`-th design of a `run --format json` that exited 0.
pub fn totals_at(out: &Outcome, i: usize) -> serde_json::Value {
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    v["results"][i]["totals"].clone()
}

/// The totals of executor `spec` (`NAME=COMMAND`), run as design `name` on `seeds` seeds
/// of `model`.
pub fn totals(model: &str, name: &str, spec: String, seeds: &str) -> serde_json::Value {
    let mut a = args(&[
        "run",
        model,
        "--design",
        name,
        "--seeds",
        seeds,
        "--format",
        "json",
        "--executor",
    ]);
    a.push(spec);
    totals_at(&retrylab(&a), 0)
}

/// Asserts that `text` holds the lines of `want` one after the other, from the first line
/// equal to `want[0]`.
#[track_caller]
pub fn assert_lines(text: &str, want: &[&str]) {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == want[0])
        .unwrap_or_else(|| panic!("no line {:?} in\n{text}", want[0]));
    assert_eq!(
        &lines[at..(at + want.len()).min(lines.len())],
        want,
        "{text}"
    );
}

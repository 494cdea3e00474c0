//! The Node examples (examples/node/) under the simulator, with the real packages pinned in
//! examples/node/package-lock.json and the client of clients/node, and their exact figures.
//!
//! `node` is `RETRYLAB_NODE`, else `node` on PATH (20 or later), with `npm` beside it on
//! PATH. A test never writes into the source tree, and node_modules inside examples/node
//! would be in it: so the client and the examples are copied to a stage under target/tmp
//! that mirrors the repository's layout (the example's dependency
//! `"retrylab": "file:../../clients/node"` resolves there), installed with `npm ci` from the
//! committed lockfiles (again only when a lockfile changed; `.ci/run`'s own `npm ci` has
//! filled npm's cache) and the client built with its pinned `tsc`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::executors;

use executors::{args, assert_lines, retrylab};

pub(crate) fn node() -> String {
    std::env::var("RETRYLAB_NODE").unwrap_or_else(|_| "node".to_string())
}

fn run_ok(c: &mut Command, what: &str) {
    let s = c
        .status()
        .unwrap_or_else(|e| panic!("{what}: {e} (is npm on PATH?)"));
    assert!(s.success(), "{what} failed: {s}");
}

/// Copy `files` (and, recursively, `dirs`) of `from` into `to`, which is emptied of them first.
fn copy(from: &Path, to: &Path, files: &[&str], dirs: &[&str]) {
    std::fs::create_dir_all(to).unwrap();
    for f in files {
        std::fs::copy(from.join(f), to.join(f))
            .unwrap_or_else(|e| panic!("copy {}: {e}", from.join(f).display()));
    }
    for d in dirs {
        let _ = std::fs::remove_dir_all(to.join(d));
        copy_tree(&from.join(d), &to.join(d));
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `npm ci` in `dir` unless its node_modules was installed from the same lockfile.
fn npm_ci(dir: &Path) {
    let lock = std::fs::read(dir.join("package-lock.json")).unwrap();
    let stamp = dir.join("node_modules/.retrylab-installed-lock");
    if std::fs::read(&stamp).ok().as_deref() == Some(&lock[..]) {
        return;
    }
    run_ok(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--prefer-offline"])
            .current_dir(dir),
        &format!("npm ci in {}", dir.display()),
    );
    std::fs::write(&stamp, lock).unwrap();
}

/// The stage: target/tmp/node-stage/{clients,examples}/node, installed and built (tests/corpus.rs
/// runs its Node executors from a directory of its own inside the examples' stage).
pub(crate) fn stage() -> &'static Path {
    static STAGE: OnceLock<PathBuf> = OnceLock::new();
    STAGE.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("node-stage");
        let client = root.join("clients/node");
        let examples = root.join("examples/node");
        let lockfiles = ["package.json", "package-lock.json"];
        copy(
            Path::new("clients/node"),
            &client,
            &[&lockfiles[..], &["tsconfig.json"]].concat(),
            &["src"],
        );
        let scripts: Vec<String> = std::fs::read_dir("examples/node")
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".js"))
            .collect();
        let scripts: Vec<&str> = scripts.iter().map(|s| s.as_str()).collect();
        copy(
            Path::new("examples/node"),
            &examples,
            &[&lockfiles[..], &scripts[..]].concat(),
            &[],
        );
        npm_ci(&client);
        let _ = std::fs::remove_dir_all(client.join("dist"));
        run_ok(
            Command::new(node())
                .args(["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"])
                .current_dir(&client),
            "tsc (the client's build)",
        );
        npm_ci(&examples);
        root
    })
}

fn executor(name: &str, script: &str) -> String {
    let script = stage().join("examples/node").join(script);
    let script = script.to_str().expect("a UTF-8 path");
    let node = node();
    format!(
        "{name}={} {}",
        shlex::try_quote(&node).unwrap(),
        shlex::try_quote(script).unwrap()
    )
}

#[test]
fn naive_retry_creates_two_tickets_on_every_seed_as_no_dedup_does() {
    let mut a = args(&[
        "run",
        "models/ticket_lost_response.json",
        "--design",
        "naive",
        "--design",
        "no_dedup",
        "--seeds",
        "200",
        "--format",
        "json",
        "--executor",
    ]);
    a.push(executor("naive", "naive_retry.js"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let naive = &v["results"][0]["totals"];
    let no_dedup = &v["results"][1]["totals"];
    assert_eq!(v["results"][0]["design"], "naive");
    assert_eq!(v["results"][1]["design"], "no_dedup");
    for t in [naive, no_dedup] {
        assert_eq!(t["intents"], 200);
        assert_eq!(t["effects"], 400);
        assert_eq!(t["duplicate_effects"], 200);
        assert_eq!(t["false_success"], 0);
        assert_eq!(t["remote_calls"], 400);
    }
    // p-retry's own retry succeeds, so the agent is told success (no_dedup's single
    // attempt leaves it unknown, and the agent's replan makes the second ticket).
    assert_eq!(naive["completed"], 200);
    assert_eq!(naive["wrong_receipts"], 0);
    assert_eq!(naive["unknown_ops"], 0);
    assert_eq!(no_dedup["unknown_ops"], 200);
}

#[test]
fn naive_retrys_trace_shows_p_retrys_virtual_backoff_after_the_signals_timeout() {
    let mut a = args(&[
        "trace",
        "models/ticket_lost_response.json",
        "--design",
        "naive",
        "--seed",
        "3",
        "--executor",
    ]);
    a.push(executor("naive", "naive_retry.js"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // AbortSignal.timeout(5000) is the request's timeout_ms; p-retry's 100 ms backoff is a
    // virtual sleep: the same lines as tenacity's in examples/python/naive_retry.py.
    let want = [
        "        5000 ms  executor  worker 0: attempt 1 timed out",
        "        5000 ms  executor  worker 0: naive: sleeps 100 ms",
        "        5100 ms  executor  worker 0: naive: POST /v1/resources",
        "        5100 ms  executor  worker 0: op 0 sends attempt 2: create with params 1, no key",
    ];
    assert_lines(&out.stdout, &want);
    assert!(
        out.stdout
            .contains("outcome: intent 0: completed (duplicate effect r1 of r0)")
    );
}

#[test]
fn naive_retry_passes_the_determinism_check() {
    let mut a = args(&[
        "run",
        "models/ticket_lost_response.json",
        "--design",
        "naive",
        "--seeds",
        "20",
        "--check-determinism",
        "--executor",
    ]);
    a.push(executor("naive", "naive_retry.js"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

/// The totals of `design` (an executor of examples/node) on `seeds` seeds of `model`.
fn totals(model: &str, name: &str, script: &str, seeds: &str) -> serde_json::Value {
    executors::totals(model, name, executor(name, script), seeds)
}

const CRASH: &str = "models/bad/crash_after_send_rare.json";

/// journaled.js is the port of examples/python/journaled.py: the same figures as
/// tests/python_examples.rs pins for it (one contract, two bindings).
#[test]
fn journaled_keeps_one_ticket_through_crashes_after_the_send_as_the_python_port_does() {
    let t = totals(CRASH, "journaled", "journaled.js", "1000");
    assert_eq!(t["intents"], 1000);
    assert_eq!(t["effects"], 1000);
    assert_eq!(t["duplicate_effects"], 0);
    assert_eq!(t["completed"], 1000);
    assert_eq!(t["false_success"], 0);
    assert_eq!(t["wrong_receipts"], 0);
    // 14 seeds crashed after the send: the resend under the stored key is replayed.
    assert_eq!(t["remote_calls"], 1014);
}

#[test]
fn explore_certifies_journaled_within_two_faults_as_the_python_port() {
    let mut a = args(&["explore", CRASH, "--design", "journaled", "--executor"]);
    a.push(executor("journaled", "journaled.js"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("certified for 2 faults: no property is violated by any schedule within the bound (844 runs, complete)"),
        "{}",
        out.stdout
    );
}

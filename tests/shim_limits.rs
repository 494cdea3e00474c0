//! What retrylab's shim serves and where it stops (docs/executor-protocol.md, section 9),
//! through the binary (each command its own storage directory and flags):
//!
//! - a relative read of a project file finds it, and a relative write lands in the run's own
//!   storage (nothing in the project), run after run from empty;
//! - the size bound (`--executor-storage-max-mb`): a write beyond it fails with `EFBIG`;
//! - a clock read with the kernel's own entry (an inline `syscall` instruction, which no
//!   preloaded library sees) is not served: its key differs between two runs and the
//!   determinism check refuses the executor, naming the field; never silently certified;
//! - a statically linked executor cannot load the shim and is refused after its `hello`.
//!
//! The C executor (tests/executors/raw_clock.c) is built here with the system's C compiler
//! (`$CC`, else `cc`), under `CARGO_TARGET_TMPDIR`, as build.rs builds the shim.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::python::python;

const LOST: &str = "models/ticket_lost_response.json";

fn scratch() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shim_limits");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `TMPDIR` of the commands of `logs(_, arg)`: a directory of their own, so that what
/// a command leaves there is not confused with what another test's command, running at the
/// same time, has there still.
fn tmp_of(arg: &str) -> PathBuf {
    let dir = scratch().join(format!(
        "tmp-{}",
        if arg.is_empty() { "plain" } else { arg }
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The binary with `args`, `TMPDIR` the tests' scratch directory: its exit code, stdout and
/// stderr.
fn binary(args: &[&str]) -> (i32, String, String) {
    binary_in(&scratch(), args)
}

/// The binary with `args` and `TMPDIR` `tmp`.
fn binary_in(tmp: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .env("TMPDIR", tmp)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn relative_paths(arg: &str) -> String {
    format!("r={} tests/executors/relative_paths.py {arg}", python())
}

/// The trace of seed 0, one intent: its log lines.
fn logs(extra: &[&str], arg: &str) -> Vec<String> {
    let spec = relative_paths(arg);
    let mut a = vec!["trace", LOST, "--design", "r", "--seed", "0"];
    a.extend_from_slice(extra);
    a.extend_from_slice(&["--executor", &spec]);
    let (code, stdout, stderr) = binary_in(&tmp_of(arg), &a);
    assert_eq!(code, 0, "{stderr}");
    stdout
        .lines()
        .filter(|l| {
            l.contains("read '") || l.contains("wrote 2 MiB") || l.contains("the write failed")
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn a_relative_read_finds_the_project_and_a_relative_write_lands_in_the_runs_storage() {
    let lines = logs(&[], "");
    // One intent, called twice (the first reply is lost, the agent calls again): the second
    // call finds the first's line, and the next run (trace runs seed 0 once more for the
    // determinism check) started from an empty directory.
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines[0].ends_with(
            "read '# retrylab'; notes/receipts.txt has 1 line(s); cwd is the worker's directory: True"
        ),
        "{lines:#?}"
    );
    assert!(
        lines[1].ends_with(
            "read '# retrylab'; notes/receipts.txt has 2 line(s); cwd is the worker's directory: True"
        ),
        "{lines:#?}"
    );
    assert!(
        !Path::new("notes").exists(),
        "a relative write reached the project"
    );
    // The command removed its storage.
    let left: Vec<_> = std::fs::read_dir(tmp_of(""))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("retrylab-"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_file_beyond_the_size_bound_is_refused_by_the_kernel() {
    let lines = logs(&["--executor-storage-max-mb", "1"], "big");
    assert!(!lines.is_empty());
    assert!(
        lines
            .iter()
            .all(|l| l.ends_with("the write failed: File too large")),
        "{lines:#?}"
    );
    let lines = logs(&[], "big");
    assert!(
        lines.iter().all(|l| l.ends_with("wrote 2 MiB")),
        "{lines:#?}"
    );
}

/// tests/executors/raw_clock.c built with `flags` into `name`.
fn build_raw_clock(name: &str, flags: &[&str]) -> PathBuf {
    let exe = scratch().join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(flags)
        .arg("-O1")
        .arg("-o")
        .arg(&exe)
        .arg("tests/executors/raw_clock.c")
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(
        out.status.success(),
        "`{cc} {flags:?}` failed on tests/executors/raw_clock.c: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

#[test]
fn a_clock_read_with_an_inline_system_call_is_refused_by_the_determinism_check() {
    let exe = build_raw_clock("raw_clock_dynamic", &[]);
    let spec = format!("c={}", exe.display());
    for cmd in [
        vec![
            "run",
            LOST,
            "--design",
            "c",
            "--seeds",
            "5",
            "--executor",
            &spec,
        ],
        vec!["explore", LOST, "--design", "c", "--executor", &spec],
    ] {
        let (code, stdout, stderr) = binary(&cmd);
        assert_eq!(code, 2, "{cmd:?}\n{stdout}\n{stderr}");
        assert_eq!(stdout, "", "{cmd:?}: no verdict");
        assert!(
            stderr.starts_with("error: executor c is not deterministic (model ticket_lost_response, seed 0, worker 0) [protocol error 30]\n  two runs with the same inputs diverged at message #4 (executor -> simulator), first at field headers.idempotency-key:"),
            "{cmd:?}\n{stderr}"
        );
        assert!(
            stderr.contains("an entropy source retrylab does not serve (the kernel's /proc/sys/kernel/random/uuid, a system call made without libc,"),
            "{cmd:?}\n{stderr}"
        );
    }
}

#[test]
fn a_static_executor_without_the_shim_is_refused_after_its_hello() {
    let exe = build_raw_clock("raw_clock_static", &["-static"]);
    let spec = format!("c={}", exe.display());
    let (code, stdout, stderr) = binary(&[
        "run",
        LOST,
        "--design",
        "c",
        "--seeds",
        "1",
        "--executor",
        &spec,
    ]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert_eq!(stdout, "");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("error: executor c: `{}`: retrylab's shim (libretrylab_shim.so, preloaded through LD_PRELOAD) is not loaded in the executor's process (pid ", exe.display())),
        "{stderr}"
    );
    assert!(
        first.ends_with("a statically linked program, a setuid one, or a launcher that clears LD_PRELOAD does not load it (run the interpreter itself, e.g. `.venv/bin/python tool.py`; docs/executor-protocol.md, section 9)"),
        "{stderr}"
    );
}

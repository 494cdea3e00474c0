//! No leftovers (issue 40, part 7): the binary, run with `TMPDIR` a fresh empty directory
//! and its executors' pids written to a file (`RETRYLAB_TEST_PIDS`: retrylab appends the pid
//! of every process it starts or has a zygote fork), leaves that directory empty and none of
//! those processes alive, after a success, a protocol error (exit 2), the watchdog (exit 2,
//! protocol error 31), and SIGINT (exit 130) or SIGTERM (exit 143) mid-turn.
//!
//! Each test sets the variables on its own `Command`, not on the test process: they run
//! beside the rest of the suite.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::python::python;

const MODEL: &str = "models/ticket_lost_response.json";
const CRASH: &str = "models/bad/crash_after_send_rare.json";

/// The files of one test under target/tmp: an empty `TMPDIR`, the pid file, the file the
/// executor writes when a turn is under way.
struct Scratch {
    tmpdir: PathBuf,
    pids: PathBuf,
    ready: PathBuf,
}

impl Scratch {
    fn new(test: &str) -> Self {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("leftovers")
            .join(test);
        let _ = std::fs::remove_dir_all(&root);
        let tmpdir = root.join("tmp");
        std::fs::create_dir_all(&tmpdir).unwrap();
        Self {
            tmpdir,
            pids: root.join("pids"),
            ready: root.join("ready"),
        }
    }

    /// The binary with `args`, its temporary directory and pid file this test's.
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_retrylab"));
        c.args(args)
            .env("TMPDIR", &self.tmpdir)
            .env("RETRYLAB_TEST_PIDS", &self.pids)
            .env("RETRYLAB_TEST_READY", &self.ready)
            .stdin(Stdio::null());
        c
    }

    /// The pids recorded so far.
    fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(&self.pids)
            .unwrap_or_default()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect()
    }

    /// Asserts that `TMPDIR` is empty and that every recorded process is gone (given up to
    /// 2 s to vanish from /proc: a killed process's parent may not have reaped it yet).
    #[track_caller]
    fn assert_nothing_left(&self) -> usize {
        let left: Vec<_> = std::fs::read_dir(&self.tmpdir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "left in TMPDIR: {left:?}");
        let pids = self.pids();
        assert!(!pids.is_empty(), "no executor process recorded its pid");
        let start = Instant::now();
        for pid in &pids {
            let proc = Path::new("/proc").join(pid.to_string());
            while proc.exists() && start.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(!proc.exists(), "executor process {pid} is still there");
        }
        pids.len()
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_run_with_fork_restarts_through_crashes_leaves_nothing() {
    let s = Scratch::new("success");
    let spec = format!("journaled={} examples/python/journaled.py", python());
    let out = s
        .command(&[
            "run",
            CRASH,
            "--design",
            "journaled",
            "--seeds",
            "200",
            "--format",
            "json",
            "--executor-lives=fork",
            "--executor",
            &spec,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["results"][0]["totals"];
    assert_eq!(t["effects"], 200);
    assert_eq!(t["duplicate_effects"], 0);
    // Seeds that crashed after the send resent under the stored key, from a forked life.
    assert_eq!(t["remote_calls"], 203);
    // Every run's first life is a fork of its own, besides the processes started (the
    // zygote among them): all gone.
    assert!(s.assert_nothing_left() > 200);
}

#[test]
fn a_protocol_error_in_a_forked_process_leaves_nothing() {
    let s = Scratch::new("error");
    let out = s
        .command(&[
            "run",
            MODEL,
            "--design",
            "bad",
            "--seeds",
            "3",
            "--executor-lives=fork",
            // In a forked life, not in the determinism check's new processes.
            "--no-determinism-check",
            "--executor",
            "bad=python3 tests/executors/misbehave.py fork_raise_mid_run",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("[protocol error 13]"), "{e}");
    s.assert_nothing_left();
}

#[test]
fn the_watchdog_leaves_nothing() {
    let s = Scratch::new("watchdog");
    let out = s
        .command(&[
            "run",
            MODEL,
            "--design",
            "bad",
            "--seeds",
            "3",
            "--executor-turn-timeout-ms",
            "1500",
            "--executor-lives=fork",
            // In a forked life, not in the determinism check's new processes.
            "--no-determinism-check",
            "--executor",
            "bad=python3 tests/executors/misbehave.py fork_hang",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("[protocol error 31]"), "{e}");
    s.assert_nothing_left();
}

/// `signal` to retrylab while `mode`'s turn spins: exit 128 + `signal`, nothing left.
fn interrupted(test: &str, signal: libc::c_int, mode: &str, flags: &[&str]) {
    let s = Scratch::new(test);
    let spec = format!("bad=python3 tests/executors/misbehave.py {mode}");
    let mut args = vec!["run", MODEL, "--design", "bad", "--seeds", "3"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--executor", &spec]);
    let mut child = s
        .command(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The executor writes the file as its turn starts to spin (the watchdog is 10 s).
    let start = Instant::now();
    while !s.ready.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the executor never reached its turn"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("retrylab ended before the turn: {status}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let spinning: u32 = std::fs::read_to_string(&s.ready)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: a signal to the child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128 + signal), "{}", text(&out));
    assert!(s.pids().contains(&spinning), "{:?}", s.pids());
    s.assert_nothing_left();
}

#[test]
fn sigint_mid_turn_leaves_nothing() {
    interrupted("sigint", libc::SIGINT, "hang", &[]);
}

#[test]
fn sigterm_mid_turn_leaves_nothing() {
    interrupted("sigterm", libc::SIGTERM, "hang", &[]);
}

#[test]
fn sigint_mid_turn_of_a_forked_process_leaves_nothing() {
    interrupted(
        "sigint_fork",
        libc::SIGINT,
        "fork_hang",
        &["--executor-lives=fork", "--no-determinism-check"],
    );
}

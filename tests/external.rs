//! External executors through the command line, with executors that speak the protocol by
//! hand (tests/executors/*.py, standard library only): exact figures of a naive executor,
//! and every way of breaking the protocol refused with exit 2, a message that names the
//! executor and what went wrong, and no process left behind.

use std::path::{Path, PathBuf};

use retrylab::cli::{Outcome, run_with};

const MODEL: &str = "models/ticket_lost_response.json";

/// Runs a command line, one at a time: the processes it starts inherit the environment,
/// where [`without_leftovers`] names the file their pids go to.
fn retrylab(args: &[&str]) -> Outcome {
    let mut all = vec!["retrylab"];
    all.extend_from_slice(args);
    let _guard = ENV.lock().unwrap_or_else(|e| e.into_inner());
    run_with(all, &[])
}

/// A fresh file under target/tmp for the pids of the processes a test starts.
fn pid_file(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("external");
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(format!("{test}.pids"));
    let _ = std::fs::remove_file(&f);
    f
}

/// Runs `args` with the executor's pids written to a file, then asserts that every process
/// it started is gone.
fn without_leftovers(test: &str, args: &[&str]) -> Outcome {
    let pids = pid_file(test);
    let out = {
        let _guard = ENV.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: every command of this file runs under ENV, so no other thread of it
        // reads the environment (or starts a process) meanwhile.
        unsafe { std::env::set_var("RETRYLAB_TEST_PIDS", &pids) };
        let mut all = vec!["retrylab"];
        all.extend_from_slice(args);
        let out = run_with(all, &[]);
        unsafe { std::env::remove_var("RETRYLAB_TEST_PIDS") };
        out
    };
    let listed = std::fs::read_to_string(&pids).unwrap_or_default();
    assert!(!listed.is_empty(), "no executor process recorded its pid");
    for pid in listed.lines() {
        let proc = Path::new("/proc").join(pid);
        assert!(
            !proc.exists(),
            "executor process {pid} is still there after the command ({test})"
        );
    }
    out
}

/// The environment is the process's: one test at a time sets the pid file.
static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_naive_executor_duplicates_the_lost_response_on_every_seed() {
    let out = without_leftovers(
        "naive",
        &[
            "run",
            MODEL,
            "--executor",
            "naive=python3 tests/executors/naive.py",
            "--design",
            "naive",
            "--seeds",
            "50",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let totals = &v["results"][0]["totals"];
    assert_eq!(v["results"][0]["design"], "naive");
    // Its own retry after the timeout creates the second ticket, and succeeds: the agent
    // is told success, with the second ticket's id.
    assert_eq!(totals["intents"], 50);
    assert_eq!(totals["effects"], 100);
    assert_eq!(totals["duplicate_effects"], 50);
    assert_eq!(totals["completed"], 50);
    assert_eq!(totals["false_success"], 0);
    assert_eq!(totals["wrong_receipts"], 0);
    assert_eq!(totals["remote_calls"], 100);
}

#[test]
fn run_adds_the_executor_beside_the_models_designs_and_replays_carry_it() {
    let out = retrylab(&[
        "run",
        MODEL,
        "--executor",
        "naive=python3 tests/executors/naive.py",
        "--seeds",
        "3",
        "--show-failures",
        "1",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for d in ["no_dedup", "same_key", "new_key_after_replan", "naive"] {
        assert!(out.stdout.contains(d), "{d} missing:\n{}", out.stdout);
    }
    assert!(
        out.stdout.contains(
            "retrylab --executor 'naive=python3 tests/executors/naive.py' trace models/ticket_lost_response.json --design naive --seed 0"
        ),
        "{}",
        out.stdout
    );
}

/// With `--design`, `run` runs only the designs named: an executor of the command line left
/// out is not run, and `run` says so.
#[test]
fn run_warns_of_an_executor_that_design_leaves_out() {
    let run = |design: &str| {
        let out = retrylab(&[
            "run",
            MODEL,
            "--executor",
            "naive=python3 tests/executors/naive.py",
            "--design",
            design,
            "--seeds",
            "2",
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out
    };
    let out = run("same_key");
    assert_eq!(
        out.stderr,
        "warning: --executor naive: not run, since --design names the designs to run (add --design naive)\n"
    );
    assert!(!out.stdout.contains("naive"), "{}", out.stdout);
    let out = run("naive");
    assert!(!out.stderr.contains("not run"), "{}", out.stderr);
    assert!(out.stdout.contains("\nnaive "), "{}", out.stdout);
}

#[test]
fn a_trace_shows_the_executors_sends_and_sleeps() {
    let out = retrylab(&[
        "trace",
        MODEL,
        "--executor",
        "naive=python3 tests/executors/naive.py",
        "--design",
        "naive",
        "--seed",
        "3",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("worker 0: op 0 sends attempt 1: create with params 1, no key"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("5000 ms  executor  worker 0: attempt 1 timed out"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("5100 ms  executor  worker 0: op 0 sends attempt 2"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("violates: no_duplicate"),
        "{}",
        out.stdout
    );
}

/// Runs the misbehaving executor in `mode` on the seeds' model and returns stderr, after
/// asserting exit 2 and no process left.
fn refused(mode: &str) -> String {
    let command = format!("bad=python3 tests/executors/misbehave.py {mode}");
    let out = without_leftovers(
        mode,
        &[
            "run",
            MODEL,
            "--executor",
            &command,
            "--design",
            "bad",
            "--seeds",
            "3",
            "--executor-turn-timeout-ms",
            "1500",
        ],
    );
    assert_eq!(out.code, 2, "{mode}: {}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("executor bad"),
        "{mode}: {}",
        out.stderr
    );
    out.stderr
}

#[test]
fn a_command_that_does_not_exist_is_bad_input() {
    let out = retrylab(&[
        "run",
        MODEL,
        "--executor",
        "gone=./no/such/executor --flag",
        "--design",
        "gone",
    ]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: executor gone: cannot start `./no/such/executor --flag`: No such file or directory (os error 2)\n"
    );
}

#[test]
fn an_executor_that_exits_at_start_shows_its_status_and_output() {
    let e = refused("exit_at_start");
    assert!(e.contains("does not speak the executor protocol: it ended before its hello: it exited: exit status: 7"), "{e}");
    assert!(e.contains("stderr: starting up"), "{e}");
}

#[test]
fn another_protocol_version_is_refused() {
    let e = refused("protocol_2");
    assert!(
        e.contains("protocol 2; this retrylab speaks protocol 1 only"),
        "{e}"
    );
}

#[test]
fn a_print_on_the_protocol_channel_is_named() {
    let e = refused("print_on_protocol");
    assert!(e.contains("not a JSON line"), "{e}");
    assert!(e.contains("the line: hello from the executor"), "{e}");
}

#[test]
fn an_exception_mid_run_shows_the_traceback() {
    let e = refused("raise_mid_run");
    assert!(
        e.contains("the process closed the channel: it exited: exit status: 1 [protocol error 13]"),
        "{e}"
    );
    assert!(e.contains("RuntimeError: the handler failed"), "{e}");
    assert!(
        e.contains("last message sent to it: {\"args\":{\"authorization\""),
        "{e}"
    );
}

#[test]
fn garbage_unknown_messages_and_fields_are_malformed() {
    let e = refused("garbage");
    assert!(
        e.contains("not a JSON line") && e.contains("[protocol error 12]"),
        "{e}"
    );
    let e = refused("unknown_message");
    assert!(
        e.contains("unknown message type \"jump\"") && e.contains("[protocol error 10]"),
        "{e}"
    );
    let e = refused("unknown_field");
    assert!(
        e.contains("unknown field `colour`") && e.contains("[protocol error 12]"),
        "{e}"
    );
}

#[test]
fn results_for_calls_not_given_or_twice_are_refused() {
    let e = refused("result_for_other_call");
    assert!(
        e.contains("\"c99\" is not a call this process was given [protocol error 20]"),
        "{e}"
    );
    let e = refused("two_results");
    assert!(
        e.contains("which the process is not working on (a second result?) [protocol error 21]"),
        "{e}"
    );
    let e = refused("bad_receipt");
    assert!(e.contains("receipt \"ticket-9\" is not a resource id the provider returns (res_N) [protocol error 22]"), "{e}");
    let e = refused("ready_mid_call");
    assert!(
        e.contains("a ready message does not fit here") && e.contains("[protocol error 14]"),
        "{e}"
    );
}

#[test]
fn a_turn_that_never_ends_hits_the_watchdog() {
    let e = refused("hang");
    assert!(
        e.contains("did not end its turn within 1500 ms of real time"),
        "{e}"
    );
    assert!(e.contains("[protocol error 31]"), "{e}");
    assert!(e.contains("stderr: about to spin"), "{e}");
}

#[test]
fn a_bad_executor_spec_is_bad_input() {
    let out = retrylab(&["run", MODEL, "--executor", "naive"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("expected NAME=COMMAND"),
        "{}",
        out.stderr
    );
    let out = retrylab(&[
        "run",
        MODEL,
        "--executor",
        "same_key=python3 tests/executors/naive.py",
    ]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("design \"same_key\": a built-in design has this name"),
        "{}",
        out.stderr
    );
}

fn explore_with(script: &str) -> Outcome {
    let command = format!("e=python3 tests/executors/{script}.py");
    retrylab(&["explore", MODEL, "--executor", &command, "--design", "e"])
}

#[test]
fn explore_refuses_an_executor_with_real_entropy() {
    let out = explore_with("entropy");
    assert_eq!(out.code, 2, "{}", out.stdout);
    let e = &out.stderr;
    assert!(e.starts_with("error: executor e is not deterministic (model ticket_lost_response, seed 0, worker 0) [protocol error 30]\n  two runs with the same inputs diverged at message #4 (executor -> simulator), first at field headers.idempotency-key:\n    run 1: "), "{e}");
    assert!(
        e.contains("diverged at message #4 (executor -> simulator), first at field headers.idempotency-key:\n"),
        "{e}"
    );
    assert!(
        e.contains("likely cause: headers.idempotency-key holds a key-shaped value that differs: an entropy source retrylab does not serve"),
        "{e}"
    );
    assert_eq!(out.stdout, "");
}

#[test]
fn explore_refuses_an_executor_whose_state_leaks_between_runs() {
    // Reused processes are opt-in: the check compares them with new ones.
    let out = retrylab(&[
        "explore",
        MODEL,
        "--executor",
        "e=python3 tests/executors/leaky.py",
        "--design",
        "e",
        "--executor-lives",
        "reuse",
    ]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    let e = &out.stderr;
    assert!(e.contains("\"idempotency-key\":\"k1\""), "{e}");
    assert!(e.contains("reused process: {"), "{e}");
    assert!(e.contains("\"idempotency-key\":\"k3\""), "{e}");
    assert!(e.contains("first at field headers.idempotency-key:"), "{e}");
    assert!(
        e.contains("likely cause: state left from an earlier life in a reused process"),
        "{e}"
    );
}

#[test]
fn explore_finds_the_naive_executors_duplicate_with_a_replay_that_reproduces_it() {
    let out = explore_with("naive");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.starts_with("determinism: ticket_lost_response: executor e: 3 seeds (the model makes no worker crash to restart from), each twice in new processes: the message streams agree\n"), "{}", out.stderr);
    assert!(
        out.stdout.contains("violates: no_duplicate"),
        "{}",
        out.stdout
    );
    let replay = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a replay command");
    assert!(replay.starts_with("retrylab --executor 'e=python3 tests/executors/naive.py' replay models/ticket_lost_response.json --design e --choices "), "{replay}");
    let words = shlex::split(replay).unwrap();
    let again = {
        let _guard = ENV.lock().unwrap_or_else(|e| e.into_inner());
        run_with(words, &[])
    };
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stdout.contains("violates: no_duplicate"),
        "{}",
        again.stdout
    );
    assert!(
        again
            .stdout
            .contains("outcome: intent 0: completed (duplicate effect r1 of r0)"),
        "{}",
        again.stdout
    );
}

#[test]
fn a_models_designs_may_list_an_external_executor_for_check() {
    let out = retrylab(&["check", "tests/fixtures/external_naive.json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    for line in [
        "  ok    naive                    violate  no_duplicate               1000 of 1000 seeds violate it",
        "  ok    naive                    hold     no_false_success           0 of 1000 seeds violate it",
        "  ok    naive                    explore  certified within 2 faults: 35 runs; no fault choice in the model; held fixed: the executor's own random draws as seeded per worker and incarnation (one seed each, not enumerated), and every worker life (a run's first and each restart) in a new process",
    ] {
        assert!(out.stdout.contains(line), "{line}\n{}", out.stdout);
    }
    assert!(
        out.stderr
            .contains("determinism: external_naive: executor naive: 3 seeds ("),
        "{}",
        out.stderr
    );
    // The same name with another command in the same command line is refused.
    let out = retrylab(&[
        "run",
        "tests/fixtures/external_naive.json",
        "--executor",
        "naive=python3 tests/executors/leaky.py",
    ]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: --executor naive: a design of that name is given twice (by --executor or by a model's designs)\n"
    );
}

#[test]
fn shards_of_an_external_executor_merge_to_the_unsharded_bytes() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("external-shards");
    std::fs::create_dir_all(&dir).unwrap();
    let exec = "naive=python3 tests/executors/naive.py";
    let mut parts = Vec::new();
    for i in 1..=2 {
        let part = dir.join(format!("part-{i}.json")).display().to_string();
        let shard = format!("{i}/2");
        let out = retrylab(&[
            "run",
            MODEL,
            "--seeds",
            "40",
            "--executor",
            exec,
            "--shard",
            &shard,
            "--out",
            &part,
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        parts.push(part);
    }
    let merged = retrylab(&["merge", &parts[0], &parts[1]]);
    let whole = retrylab(&["run", MODEL, "--seeds", "40", "--executor", exec]);
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    assert_eq!(merged.stdout, whole.stdout);
    assert!(whole.stdout.contains("naive "), "{}", whole.stdout);
}

#[test]
fn an_async_executor_by_hand_gives_the_sync_ones_figures() {
    let out = without_leftovers(
        "async_naive",
        &[
            "run",
            MODEL,
            "--executor",
            "naive=python3 tests/executors/naive.py",
            "--executor",
            "anaive=python3 tests/executors/async_naive.py",
            "--design",
            "naive",
            "--design",
            "anaive",
            "--seeds",
            "50",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["results"][1]["design"], "anaive");
    let (sync, not) = (&v["results"][0]["totals"], &v["results"][1]["totals"]);
    assert_eq!(sync, not);
    assert_eq!(not["effects"], 100);
    assert_eq!(not["duplicate_effects"], 50);
    assert_eq!(not["completed"], 50);
}

#[test]
fn async_turn_rules_are_enforced() {
    let e = refused("idle_in_sync");
    assert!(
        e.contains("an idle message from a sync process") && e.contains("[protocol error 14]"),
        "{e}"
    );
    let e = refused("async_idle_after_start");
    assert!(
        e.contains("a idle message does not fit here") && e.contains("[protocol error 14]"),
        "{e}"
    );
    let e = refused("async_ready_mid_call");
    assert!(
        e.contains("a ready message does not fit here") && e.contains("[protocol error 14]"),
        "{e}"
    );
    let e = refused("async_http_after_result");
    assert!(
        e.contains("an http request outside a call") && e.contains("[protocol error 14]"),
        "{e}"
    );
    let e = refused("async_reused_msg_id");
    assert!(
        e.contains("msg_id 1 is already outstanding") && e.contains("[protocol error 14]"),
        "{e}"
    );
    let e = refused("async_two_results");
    assert!(
        e.contains("which the process is not working on (a second result?) [protocol error 21]"),
        "{e}"
    );
}

#[test]
fn an_unknown_mode_is_refused() {
    let e = refused("mode_parallel");
    assert!(
        e.contains("mode \"parallel\"; protocol 1 runs \"sync\" and \"async\" executors [10]"),
        "{e}"
    );
}

#[test]
fn an_async_cancel_is_a_turn_in_which_the_call_may_answer() {
    let out = without_leftovers(
        "async_cancel",
        &[
            "trace",
            MODEL,
            "--executor",
            "f=python3 tests/executors/async_naive.py forever",
            "--design",
            "f",
            "--seed",
            "0",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let want = [
        "       60000 ms  agent     call 1: no result within the tool timeout",
        "       60000 ms  agent     intent 0: unknown; decides to replan at 60911 ms",
        "       60000 ms  executor  worker 0: f: c1: cancelled",
        "       60000 ms  executor  worker 0: op 0 dispatched -> unknown",
        "       60000 ms  executor  worker 0: reports unknown for call 1",
        "       60000 ms  agent     call 1 (issue 1): late result (unknown) ignored",
    ];
    let lines: Vec<&str> = out.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == want[0])
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert_eq!(&lines[at..at + want.len()], want);
}

#[test]
fn an_async_unmapped_request_is_answered_404_by_an_event_of_its_own() {
    let out = without_leftovers(
        "async_unmapped",
        &[
            "trace",
            MODEL,
            "--executor",
            "u=python3 tests/executors/async_naive.py unmapped",
            "--design",
            "u",
            "--seed",
            "0",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let want = [
        "           0 ms  executor  worker 0: u: GET http://provider.sim/nowhere: no route of this provider's face matches (provider.http: create \"POST /v1/resources\", compensate \"DELETE /v1/resources/{id}\", read \"GET /v1/resources/{id}\", search \"GET /v1/resources?ref={ref}\", key_lookup \"GET /v1/idempotency/{key}\", operation \"GET /v1/operations/{handle}\"): answered 404",
        "           0 ms  executor  worker 0: u: probe answered 404",
        "           0 ms  executor  worker 0: op 0 proposed -> dispatched",
        "           0 ms  executor  worker 0: u: POST /v1/resources",
    ];
    let lines: Vec<&str> = out.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == want[0])
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert_eq!(&lines[at..at + want.len()], want);
}

/// `run` of the naive executor on 50 seeds with `flags`: its totals.
fn naive_totals(test: &str, command: &str, flags: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run",
        MODEL,
        "--executor",
        command,
        "--design",
        "naive",
        "--seeds",
        "50",
        "--format",
        "json",
    ];
    args.extend_from_slice(flags);
    let out = without_leftovers(test, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    v["results"][0]["totals"].clone()
}

#[test]
fn forked_lives_give_the_reused_processes_figures_and_leave_no_process_behind() {
    let fork = "naive=python3 tests/executors/naive.py --fork";
    // Forked lives are the default; the old flag is an alias of it.
    let forked = naive_totals("naive_forked", fork, &[]);
    assert_eq!(
        forked,
        naive_totals("naive_reused", fork, &["--executor-lives", "reuse"])
    );
    assert_eq!(
        forked,
        naive_totals("naive_fork_alias", fork, &["--executor-fork-restarts"])
    );
    assert_eq!(forked["effects"], 100);
    assert_eq!(forked["duplicate_effects"], 50);
    assert_eq!(forked["remote_calls"], 100);
}

#[test]
fn fork_lives_without_the_capability_run_new_processes_with_the_same_figures() {
    let plain = "naive=python3 tests/executors/naive.py";
    let no_fork = naive_totals("naive_no_fork", plain, &[]);
    assert_eq!(
        no_fork,
        naive_totals("naive_fresh", plain, &["--executor-lives", "fresh"])
    );
    assert_eq!(
        no_fork,
        naive_totals("naive_fresh_alias", plain, &["--executor-fresh-restarts"])
    );
    assert_eq!(
        no_fork,
        naive_totals("naive_plain", plain, &["--executor-lives", "reuse"])
    );
}

#[test]
fn the_lives_flag_and_its_old_aliases_are_exclusive() {
    for flags in [
        ["--executor-fork-restarts", "--executor-fresh-restarts"],
        ["--executor-fork-restarts", "--executor-lives=reuse"],
        ["--executor-fresh-restarts", "--executor-lives=fork"],
    ] {
        let out = retrylab(&["run", MODEL, flags[0], flags[1]]);
        assert_eq!(out.code, 2, "{flags:?}: {}", out.stderr);
        assert!(out.stderr.contains("cannot be used with"), "{}", out.stderr);
    }
    let out = retrylab(&["run", MODEL, "--executor-lives", "forked"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("invalid value 'forked' for '--executor-lives <LIVES>'"),
        "{}",
        out.stderr
    );
}

#[test]
fn explore_accepts_the_leaky_executor_when_every_life_is_a_fork() {
    // Its counter lives in the zygote, which never runs a call: each forked life starts at
    // 0, as a new process does, so the determinism check passes where reuse is refused
    // (explore_refuses_an_executor_whose_state_leaks_between_runs) and the search runs.
    // Forked lives are the default.
    let out = retrylab(&[
        "explore",
        MODEL,
        "--executor",
        "e=python3 tests/executors/leaky.py",
        "--design",
        "e",
    ]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("determinism: ticket_lost_response: executor e: 3 seeds (the model makes no worker crash to restart from), each in new processes and in forked ones, the first twice in new ones: the message streams agree"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout
            .contains("no_duplicate violated by a run with 0 faults (found after 1 run)"),
        "{}",
        out.stdout
    );
    let replay = out
        .stdout
        .lines()
        .find(|l| l.starts_with("replay: "))
        .expect("a replay command");
    assert!(
        !replay.contains("--executor-lives") && !replay.contains("restarts"),
        "the default needs no flag in the replay: {replay}"
    );
}

#[test]
fn a_forked_process_that_fails_mid_run_is_an_error_and_leaves_no_process_behind() {
    let command = "bad=python3 tests/executors/misbehave.py fork_raise_mid_run";
    let out = without_leftovers(
        "fork_raise_mid_run",
        &[
            "run",
            MODEL,
            "--executor",
            command,
            "--design",
            "bad",
            "--seeds",
            "3",
            "--executor-lives=fork",
            // The check's new processes would meet the failure first.
            "--no-determinism-check",
        ],
    );
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let e = &out.stderr;
    assert!(
        e.contains("the process closed the channel: it exited (a forked process: its status is its zygote's to read) [protocol error 13]"),
        "{e}"
    );
    // Its stderr is its zygote's: the traceback is there.
    assert!(e.contains("RuntimeError: the handler failed"), "{e}");
}

/// Runs `command` (`run`, `trace`) of `tests/executors/unservable.py MODE` on `model`, with
/// `extra` flags.
fn unservable(test: &str, model: &str, mode: &str, extra: &[&str], command: &str) -> Outcome {
    let executor = format!("u=python3 tests/executors/unservable.py {mode}");
    let mut args = vec![command, model, "--executor", &executor, "--seed", "0"];
    args.extend_from_slice(extra);
    without_leftovers(test, &args)
}

#[test]
fn a_request_to_another_host_stops_the_command_naming_the_field() {
    let out = unservable("unservable_foreign", MODEL, "foreign", &[], "run");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    let first = out.stderr.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        "error: executor u (worker 0, incarnation 0, at 0 ms): POST https://api.example.com/v1/resources: host \"api.example.com\" is not the simulated provider's (its base URL is http://provider.sim): send the provider's requests to the base_url that init gives, on the routes of the model's provider.http (set provider.http.create to the create's route; now \"POST /v1/resources\"); the request cannot be served (--executor-unmapped warn answers it 404 and goes on) [protocol error 23]"
    );
}

#[test]
fn a_create_of_no_route_stops_the_command_naming_the_field() {
    let out = unservable("unservable_create", MODEL, "create", &[], "run");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    let first = out.stderr.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        "error: executor u (worker 0, incarnation 0, at 0 ms): POST http://provider.sim/v1/charges: a create that matches no route of the provider's face: set the model's provider.http.create to its route (now \"POST /v1/resources\"); the request cannot be served (--executor-unmapped warn answers it 404 and goes on) [protocol error 23]"
    );
}

#[test]
fn the_lenient_flag_answers_an_unservable_request_404_and_goes_on() {
    let out = unservable(
        "unservable_lenient",
        MODEL,
        "create",
        &["--executor-unmapped", "warn", "--design", "u"],
        "trace",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[4],
        "           0 ms  executor  worker 0: u: POST http://provider.sim/v1/charges: a create that matches no route of the provider's face: set the model's provider.http.create to its route (now \"POST /v1/resources\") (--executor-unmapped warn: served as unmapped): answered 404",
        "{}",
        out.stdout
    );
    // Every intent of the executor ends unresolved, as before the refusal.
    assert!(
        lines.contains(&"outcome: intent 0: unresolved (no effect)"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_lookup_the_face_declares_absent_is_answered_404_with_a_warning() {
    // The face has no read, search or key lookup, as several presets (Adyen, PayPal).
    let mut model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(MODEL).unwrap()).unwrap();
    model["provider"]["http"] = serde_json::json!({"read": "", "search": "", "key_lookup": ""});
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("external");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("no_lookups.json");
    std::fs::write(&path, model.to_string()).unwrap();
    let path = path.to_str().unwrap();
    let out = unservable(
        "unservable_lookup",
        path,
        "lookup",
        &["--design", "u"],
        "trace",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[4],
        "           0 ms  executor  worker 0: u: GET http://provider.sim/v1/resources/res_1: no route of this provider's face matches (provider.http: create \"POST /v1/resources\", compensate \"DELETE /v1/resources/{id}\", operation \"GET /v1/operations/{handle}\"): answered 404",
        "{}",
        out.stdout
    );
    // The create that follows the 404 is served: the intent completes.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("outcome: intent 0: completed")),
        "{}",
        out.stdout
    );
    // `run` goes on as well (the warning goes to the process's stderr, once).
    let out = unservable("unservable_lookup_run", path, "lookup", &[], "run");
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// A model file under the test's temporary directory: external_naive.json with its
/// executor's command `command`, and without its explore bound unless `explore`.
fn model_with(name: &str, command: &[&str], explore: bool) -> String {
    let text = std::fs::read_to_string("tests/fixtures/external_naive.json").unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["designs"][1]["command"] = serde_json::json!(command);
    if !explore {
        v.as_object_mut().unwrap().remove("explore");
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("determinism-models");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path.display().to_string()
}

#[test]
fn every_command_refuses_a_nondeterministic_executor_before_its_verdict() {
    let exec = "e=python3 tests/executors/entropy.py";
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("determinism-refusals");
    std::fs::create_dir_all(&dir).unwrap();
    let (out_dir, part) = (
        dir.join("report").display().to_string(),
        dir.join("part-1.json").display().to_string(),
    );
    let checked = model_with(
        "entropy_explored",
        &["python3", "tests/executors/entropy.py"],
        true,
    );
    let unexplored = model_with(
        "entropy_run",
        &["python3", "tests/executors/entropy.py"],
        false,
    );
    let commands: Vec<Vec<&str>> = vec![
        vec![
            "run",
            MODEL,
            "--executor",
            exec,
            "--design",
            "e",
            "--seeds",
            "5",
        ],
        vec![
            "run",
            MODEL,
            "--executor",
            exec,
            "--seeds",
            "5",
            "--shard",
            "1/2",
            "--out",
            &part,
        ],
        vec![
            "trace",
            MODEL,
            "--executor",
            exec,
            "--design",
            "e",
            "--seed",
            "3",
        ],
        vec![
            "replay",
            MODEL,
            "--executor",
            exec,
            "--design",
            "e",
            "--choices",
            "0",
        ],
        vec!["explore", MODEL, "--executor", exec, "--design", "e"],
        vec![
            "report",
            MODEL,
            "--executor",
            exec,
            "--seeds",
            "5",
            "--out",
            &out_dir,
        ],
        vec!["check", &checked],
        vec!["check", &unexplored, "--seeds", "5"],
        vec![
            "check",
            &unexplored,
            "--seeds",
            "5",
            "--shard",
            "1/2",
            "--out",
            &part,
        ],
    ];
    for c in &commands {
        let out = retrylab(c);
        assert_eq!(out.code, 2, "{c:?}\n{}\n{}", out.stdout, out.stderr);
        assert_eq!(out.stdout, "", "{c:?}: no verdict");
        let e = &out.stderr;
        assert!(
            e.contains("is not deterministic (model ") && e.contains("[protocol error 30]"),
            "{c:?}: {e}"
        );
        assert!(
            e.contains("first at field headers.idempotency-key:")
                && e.contains("likely cause: headers.idempotency-key holds a key-shaped value that differs: an entropy source retrylab does not serve"),
            "{c:?}: {e}"
        );
    }
    assert!(
        !Path::new(&part).exists(),
        "a refused shard writes no partial"
    );
}

#[test]
fn the_determinism_check_switched_off_runs_and_says_so() {
    let exec = "e=python3 tests/executors/entropy.py";
    let out = retrylab(&[
        "run",
        MODEL,
        "--executor",
        exec,
        "--design",
        "e",
        "--seeds",
        "5",
        "--no-determinism-check",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "warning: executor e: determinism not checked (--no-determinism-check): its figures, replays and certificates assume an executor that is a function of its messages\n"
    );
    assert!(out.stdout.contains("\ne  "), "{}", out.stdout);
    let out = retrylab(&[
        "explore",
        MODEL,
        "--executor",
        exec,
        "--design",
        "e",
        "--property",
        "no_false_success",
        "--no-determinism-check",
    ]);
    assert!(
        out.stdout
            .contains("the executor's determinism assumed, not checked (--no-determinism-check)"),
        "the certificate's scope says so: {}\n{}",
        out.stdout,
        out.stderr
    );
}

#[test]
fn the_check_runs_once_per_executor_and_init_in_a_command() {
    // Two models with the same executor section and provider: one init line, one check.
    let out = retrylab(&[
        "report",
        MODEL,
        "models/ticket_lost_response.json",
        "--executor",
        "e=python3 tests/executors/naive.py",
        "--seeds",
        "2",
        "--out",
        &Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("determinism-once")
            .display()
            .to_string(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr
            .matches("determinism: ticket_lost_response: executor e:")
            .count(),
        1,
        "{}",
        out.stderr
    );
}

//! The Python examples (examples/python/) under the simulator, with the real packages
//! pinned in examples/python/requirements.txt and the client of clients/python, and their
//! exact figures.
//!
//! The interpreter is `RETRYLAB_PYTHON` (`.ci/run` creates a fresh virtual environment and
//! names it), else a virtual environment this test creates once under target/tmp with
//! `python3 -m venv` and pip (which needs PyPI).

use std::path::PathBuf;
use std::process::Command;

use crate::common::executors;
use crate::common::python;

use executors::{args, assert_lines, retrylab};
use python::python;
use retrylab::cli::run_with;

fn executor(name: &str, script: &str) -> String {
    let script: PathBuf = ["examples", "python", script].iter().collect();
    format!("{name}={} {}", python(), script.display())
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
    a.push(executor("naive", "naive_retry.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let naive = &v["results"][0]["totals"];
    let no_dedup = &v["results"][1]["totals"];
    assert_eq!(v["results"][0]["design"], "naive");
    for t in [naive, no_dedup] {
        assert_eq!(t["intents"], 200);
        assert_eq!(t["effects"], 400);
        assert_eq!(t["duplicate_effects"], 200);
        assert_eq!(t["false_success"], 0);
        assert_eq!(t["remote_calls"], 400);
    }
    // tenacity's own retry succeeds, so the agent is told success (no_dedup's single
    // attempt leaves it unknown, and the agent's replan makes the second ticket).
    assert_eq!(naive["completed"], 200);
    assert_eq!(naive["wrong_receipts"], 0);
}

#[test]
fn naive_retrys_trace_shows_tenacitys_virtual_backoff() {
    let mut a = args(&[
        "trace",
        "models/ticket_lost_response.json",
        "--design",
        "naive",
        "--seed",
        "3",
        "--executor",
    ]);
    a.push(executor("naive", "naive_retry.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
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

/// stripe-python's own client (examples/python/stripe_sdk.py) on the seeds' lost reply,
/// against the simulated Stripe v1 API: as shipped, and with the SDK's network retries.
#[test]
fn stripe_sdk_as_shipped_duplicates_and_its_own_retries_do_not() {
    let mut a = args(&[
        "run",
        "models/ticket_lost_response.json",
        "--provider",
        "stripe_v1",
        "--design",
        "new_key_after_replan",
        "--design",
        "shipped",
        "--design",
        "retries",
        "--seeds",
        "200",
        "--format",
        "json",
        "--executor",
    ]);
    a.push(executor("shipped", "stripe_sdk.py"));
    a.push("--executor".into());
    a.push(executor("retries", "stripe_sdk.py") + " --max-network-retries 2 --timeout 20");
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Nothing the SDK sent was left unmapped by the Stripe face.
    assert!(!out.stderr.contains("answered 404"), "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let totals = |i: usize, name: &str| {
        assert_eq!(v["results"][i]["design"], name);
        v["results"][i]["totals"].clone()
    };
    // As shipped: no network retry, so the lost reply reaches the agent, whose replan is a
    // new SDK call with a new key: the seeds' new_key_after_replan line, exactly.
    let (baseline, shipped) = (totals(0, "new_key_after_replan"), totals(1, "shipped"));
    for field in [
        "intents",
        "effects",
        "duplicate_effects",
        "completed",
        "false_success",
        "false_failure",
        "remote_calls",
        "unknown_ops",
    ] {
        assert_eq!(shipped[field], baseline[field], "{field}");
    }
    assert_eq!(shipped["effects"], 400);
    assert_eq!(shipped["duplicate_effects"], 200);
    // max_network_retries=2 with a 20 s timeout: the SDK resends under its own key, Stripe
    // replays, and each intent has one customer.
    let retries = totals(2, "retries");
    assert_eq!(retries["effects"], 200);
    assert_eq!(retries["duplicate_effects"], 0);
    assert_eq!(retries["completed"], 200);
    assert_eq!(retries["remote_calls"], 400);
    assert_eq!(retries["wrong_receipts"], 0);
    assert_eq!(retries["false_success"], 0);
}

#[test]
fn stripe_sdks_retry_reuses_its_key_and_is_replayed() {
    let mut a = args(&[
        "trace",
        "models/ticket_lost_response.json",
        "--provider",
        "stripe_v1",
        "--design",
        "retries",
        "--seed",
        "3",
        "--executor",
    ]);
    a.push(executor("retries", "stripe_sdk.py") + " --max-network-retries 2 --timeout 20");
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let want = [
        "       20000 ms  executor  worker 0: attempt 1 timed out",
        "       20000 ms  executor  worker 0: retries: sleeps 500 ms",
        "       20500 ms  executor  worker 0: retries: POST /v1/customers",
        "       20500 ms  executor  worker 0: op 0 sends attempt 2: create with params 1, key k1",
        "       20506 ms  provider  attempt 2: key k1 seen: replay -> 201 created r0, replayed",
    ];
    assert_lines(&out.stdout, &want);
    assert!(out.stdout.contains("outcome: intent 0: completed\n"));
}

const FROZEN: &str = "examples/python/frozen_worker_redelivered.json";

/// examples/python/two_workers.py: worker 0 frozen mid-call while the queue hands its call
/// to worker 1, on a provider without keys: the lease and the read-back keep one ticket
/// where naive_retry.py, which sends whenever it holds the call, makes more.
#[test]
fn two_workers_keeps_one_ticket_when_a_frozen_workers_call_is_redelivered() {
    let mut a = args(&[
        "run",
        FROZEN,
        "--design",
        "two",
        "--design",
        "naive",
        "--seeds",
        "200",
        "--format",
        "json",
        "--executor",
    ]);
    a.push(executor("two", "two_workers.py"));
    a.push("--executor".into());
    a.push(executor("naive", "naive_retry.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let (two, naive) = (&v["results"][0]["totals"], &v["results"][1]["totals"]);
    assert_eq!(v["results"][0]["design"], "two");
    assert_eq!(two["intents"], 200);
    assert_eq!(two["effects"], 200);
    assert_eq!(two["duplicate_effects"], 0);
    assert_eq!(two["completed"], 200);
    assert_eq!(two["false_success"], 0);
    assert_eq!(two["wrong_receipts"], 0);
    assert_eq!(two["unknown_ops"], 0);
    // The send and one search per intent, and what the model's random reply losses and
    // crashes add.
    assert_eq!(two["remote_calls"], 423);
    // naive_retry.py sends whenever a call is in its hands: its own retries after the lost
    // reply, and the redelivered call on the other worker.
    assert_eq!(naive["effects"], 528);
    assert_eq!(naive["duplicate_effects"], 328);
}

#[test]
fn two_workers_trace_shows_the_redelivery_waiting_for_the_lease() {
    let mut a = args(&[
        "trace",
        FROZEN,
        "--design",
        "two",
        "--seed",
        "0",
        "--executor",
    ]);
    a.push(executor("two", "two_workers.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let want = [
        "       10000 ms  executor  call 1 not answered within the queue's visibility timeout: delivered again, to worker 1",
        "       10000 ms  executor  worker 1: two: sleeps 10001 ms",
        "       20000 ms  executor  call 1 not answered within the queue's visibility timeout: delivered again, to worker 1",
        "       20000 ms  executor  worker 1: two: c1 redelivered to the process already working on it: ignored",
        "       20001 ms  executor  worker 1: two: store lease:t0:a0 = {\"holder\": \"1:0\", \"until\": 40001} if version 1: written (version 3)",
        "       20001 ms  executor  worker 1: two: GET /v1/resources?ref=r1",
    ];
    assert_lines(&out.stdout, &want);
    assert!(out.stdout.contains("outcome: intent 0: completed\n"));
}

#[test]
fn explore_certifies_two_workers_on_both_windows() {
    for (model, runs) in [
        (FROZEN, "(576 runs, complete)"),
        (
            "models/windows/two_workers_recovering.json",
            "(3 runs, complete)",
        ),
    ] {
        let mut a = args(&["explore", model, "--design", "two", "--executor"]);
        a.push(executor("two", "two_workers.py"));
        let out = retrylab(&a);
        assert_eq!(out.code, 0, "{model}\n{}\n{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains(&format!(
                "certified for 2 faults: no property is violated by any schedule within the bound {runs}"
            )),
            "{model}\n{}",
            out.stdout
        );
    }
}

/// A key resent with a body that changed (a timestamp): the simulated provider compares
/// only the reference, so retrylab says so, once, where a real provider would refuse it.
#[test]
fn a_key_resent_with_another_body_is_warned_once() {
    let mut a = args(&[
        "run",
        "models/ticket_lost_response.json",
        "--design",
        "cb",
        "--seeds",
        "20",
        "--executor",
    ]);
    a.push(format!("cb={} tests/executors/changing_body.py", python()));
    // The binary: warnings go to its stderr.
    let out = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(&a)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let warning = "warning: executor cb: one key was sent with two different create bodies: the simulated provider compares only the request's reference under a key, where the real one compares every parameter and would refuse the second as a mismatch (docs/executor-protocol.md, section 6)";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
}

/// The totals of `design` (an executor of examples/python) on `seeds` seeds of `model`.
fn totals(model: &str, name: &str, script: &str, seeds: &str) -> serde_json::Value {
    executors::totals(model, name, executor(name, script), seeds)
}

const CRASH: &str = "models/bad/crash_after_send_rare.json";

#[test]
fn journaled_keeps_one_ticket_through_crashes_after_the_send() {
    let t = totals(CRASH, "journaled", "journaled.py", "1000");
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
fn journaled_in_reused_processes_gives_the_forked_processes_totals() {
    // journaled.py keeps nothing in memory that its on_reset would have to clear: the
    // opt-in reuse mode gives the default forked lives' figures.
    let mut a = args(&[
        "run",
        CRASH,
        "--design",
        "journaled",
        "--seeds",
        "1000",
        "--format",
        "json",
        "--executor-lives",
        "reuse",
        "--executor",
    ]);
    a.push(executor("journaled", "journaled.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let t = &v["results"][0]["totals"];
    assert_eq!(*t, totals(CRASH, "journaled", "journaled.py", "1000"));
    assert_eq!(t["effects"], 1000);
    assert_eq!(t["duplicate_effects"], 0);
    assert_eq!(t["remote_calls"], 1014);
}

/// journaled.py's records in SQLite on the run's shared disk (issue 41): the run's own
/// storage, kept by a crash, gives the store's figures seed by seed, and `explore` the same
/// certificate in as many runs (the run's files are part of each state's fingerprint).
#[test]
fn journaled_with_its_records_in_sqlite_gives_the_stores_totals_and_certificate() {
    let t = totals(CRASH, "journaled_sqlite", "journaled_sqlite.py", "1000");
    assert_eq!(t, totals(CRASH, "journaled", "journaled.py", "1000"));
    assert_eq!(t["effects"], 1000);
    assert_eq!(t["duplicate_effects"], 0);
    assert_eq!(t["remote_calls"], 1014);
    let mut a = args(&[
        "explore",
        CRASH,
        "--design",
        "journaled_sqlite",
        "--executor",
    ]);
    a.push(executor("journaled_sqlite", "journaled_sqlite.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("certified for 2 faults: no property is violated by any schedule within the bound (844 runs, complete)"),
        "{}",
        out.stdout
    );
}

#[test]
fn journaled_memory_key_duplicates_where_a_crash_lost_its_key() {
    let t = totals(CRASH, "memory", "journaled_memory_key.py", "1000");
    assert_eq!(t["effects"], 1009);
    assert_eq!(t["duplicate_effects"], 9);
    assert_eq!(t["completed"], 1000);
}

#[test]
fn explore_certifies_journaled_within_two_faults() {
    let mut a = args(&["explore", CRASH, "--design", "journaled", "--executor"]);
    a.push(executor("journaled", "journaled.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("certified for 2 faults: no property is violated by any schedule within the bound (844 runs, complete)"),
        "{}",
        out.stdout
    );
    // The scope says what the search held fixed: the certificate claims no more.
    assert!(
        out.stdout.contains("; the executor's own random draws as seeded per worker and incarnation (one seed each, not enumerated); every worker life in a process forked from a zygote that ran its imports, hello and init and no call"),
        "{}",
        out.stdout
    );
}

#[test]
fn explore_gives_journaled_memory_key_a_shrunk_counterexample_that_replays() {
    let mut a = args(&["explore", CRASH, "--design", "memory", "--executor"]);
    a.push(executor("memory", "journaled_memory_key.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "no_duplicate violated by a run with 1 fault (found after 41 runs); shrunk to 2 choices"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("executor  worker 0 crashes after_send of attempt 1; restarts at 1000 ms"),
        "{}",
        out.stdout
    );
    let replay = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a replay command");
    let words = shlex::split(replay).unwrap();
    let again = run_with(words, &[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again
            .stdout
            .contains("outcome: intent 0: completed (duplicate effect r1 of r0)"),
        "{}",
        again.stdout
    );
    assert!(
        again.stdout.contains("violates: no_duplicate"),
        "{}",
        again.stdout
    );
}

const TWO: &str = "tests/fixtures/async_two_intents.json";

#[test]
fn async_two_intents_makes_one_ticket_per_intent_on_every_seed() {
    let mut a = args(&[
        "run",
        TWO,
        "--design",
        "async",
        "--design",
        "no_dedup",
        "--seeds",
        "200",
        "--format",
        "json",
        "--executor",
    ]);
    a.push(executor("async", "async_two_intents.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let (t, no_dedup) = (&v["results"][0]["totals"], &v["results"][1]["totals"]);
    assert_eq!(v["results"][0]["design"], "async");
    assert_eq!(t["intents"], 400);
    assert_eq!(t["effects"], 400);
    assert_eq!(t["duplicate_effects"], 0);
    assert_eq!(t["completed"], 400);
    assert_eq!(t["false_success"], 0);
    assert_eq!(t["wrong_receipts"], 0);
    assert_eq!(t["unresolved"], 0);
    // The first create's reply is lost: one resend under its stored key, replayed.
    assert_eq!(t["remote_calls"], 600);
    // The model bites: without a key the resend is a second ticket.
    assert_eq!(no_dedup["effects"], 600);
    assert_eq!(no_dedup["duplicate_effects"], 200);
}

#[test]
fn async_two_intents_has_both_calls_in_flight_and_traces_the_same_bytes_twice() {
    let mut a = args(&[
        "trace",
        TWO,
        "--design",
        "async",
        "--seed",
        "0",
        "--executor",
    ]);
    a.push(executor("async", "async_two_intents.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let again = retrylab(&a);
    assert_eq!(out.stdout, again.stdout);
    let at = |needle: &str| {
        out.stdout
            .lines()
            .position(|l| l.ends_with(needle))
            .unwrap_or_else(|| panic!("{needle:?} not in\n{}", out.stdout))
    };
    // The second call is handed over and sent while the first waits for its lost reply.
    let second_sent = at("executor  worker 0: op 1 sends attempt 2: create with params 2, key k2");
    assert!(second_sent < at("worker 0: reports success (r1) for call 2"));
    assert!(second_sent < at("executor  worker 0: attempt 1 timed out"));
    assert!(
        at("worker 0: reports success (r1) for call 2")
            < at("worker 0: reports success (r0) for call 1")
    );
    assert!(
        out.stdout
            .contains("        5100 ms  executor  worker 0: op 0 sends attempt 3: create with params 1, key k1"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("outcome: intent 0: completed; intent 1: completed")
    );
}

#[test]
fn async_two_intents_survives_crashes_after_the_send_as_journaled_does() {
    let t = totals(CRASH, "async", "async_two_intents.py", "1000");
    assert_eq!(t, totals(CRASH, "journaled", "journaled.py", "1000"));
    assert_eq!(t["effects"], 1000);
    assert_eq!(t["duplicate_effects"], 0);
    assert_eq!(t["remote_calls"], 1014);
}

#[test]
fn explore_certifies_async_two_intents_with_both_calls_in_flight_in_reused_processes() {
    let mut a = args(&[
        "explore",
        TWO,
        "--design",
        "async",
        "--executor-lives",
        "reuse",
        "--executor",
    ]);
    a.push(executor("async", "async_two_intents.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("determinism: async_two_intents: executor async: 3 seeds (the model makes no worker crash to restart from), each in new processes and in reused ones that last served another seed and worker, the first twice in new ones: the message streams agree"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("certified for 2 faults: no property is violated by any schedule within the bound (1255 runs, complete)"),
        "{}",
        out.stdout
    );
}

/// `run` of async_two_intents.py on 1000 seeds of the crash model with `restarts` (a flag):
/// the whole JSON output and the stderr.
fn async_crash_run(restarts: &str) -> (serde_json::Value, String) {
    let mut a = args(&[
        "run",
        CRASH,
        "--design",
        "async",
        "--seeds",
        "1000",
        "--format",
        "json",
        restarts,
        "--executor",
    ]);
    a.push(executor("async", "async_two_intents.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    (serde_json::from_str(&out.stdout).unwrap(), out.stderr)
}

#[test]
fn async_two_intents_in_forked_lives_gives_the_fresh_processes_figures() {
    // An async process is a zygote too: it forks before its event loop exists, and each
    // worker life (a run's first, and the restart after each crash) is a child of it.
    let (forked, stderr) = async_crash_run("--executor-lives=fork");
    assert!(!stderr.contains("does not declare \"fork\""), "{stderr}");
    let (fresh, _) = async_crash_run("--executor-lives=fresh");
    assert_eq!(forked["results"], fresh["results"]);
    let t = &forked["results"][0]["totals"];
    assert_eq!(t["effects"], 1000);
    assert_eq!(t["duplicate_effects"], 0);
    assert_eq!(t["completed"], 1000);
    assert_eq!(t["remote_calls"], 1014);
}

#[test]
fn explore_checks_async_two_intents_forked_lives_against_fresh_processes() {
    let mut a = args(&["explore", TWO, "--design", "async", "--executor"]);
    a.push(executor("async", "async_two_intents.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("determinism: async_two_intents: executor async: 3 seeds (the model makes no worker crash to restart from), each in new processes and in forked ones, the first twice in new ones: the message streams agree"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("certified for 2 faults: no property is violated by any schedule within the bound (1255 runs, complete)"),
        "{}",
        out.stdout
    );
}

#[test]
fn explore_certifies_async_two_intents_through_crashes_with_journaleds_run_count() {
    let mut a = args(&["explore", CRASH, "--design", "async", "--executor"]);
    a.push(executor("async", "async_two_intents.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    // The same schedules as the sync binding (explore_certifies_journaled_within_two_faults):
    // crashes, restarts in reset processes, redeliveries and runs cut short all hold.
    assert!(
        out.stdout.contains("certified for 2 faults: no property is violated by any schedule within the bound (844 runs, complete)"),
        "{}",
        out.stdout
    );
}

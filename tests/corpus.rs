//! The acceptance corpus of issue 40 ("A crash kills the process"): executors written the way
//! a team writes them from the user docs (docs/your-executor.md, the clients' READMEs, the
//! examples), not shaped for retrylab, in tests/corpus/, each with the figures retrylab gives
//! it under the simulator and what the deployed process would do.
//!
//! - Memory that a real crash loses: an idempotency key kept in a module-level dict, a class
//!   attribute, behind `functools.lru_cache`, or in a module-level client object, reused for
//!   the resend after a timeout. A crash after the send (models/bad/crash_after_send_rare)
//!   kills the process in production, and the restarted worker mints another key: each must
//!   show those duplicates with every worker life a real process life (`fork`, the default,
//!   and `fresh`), where the same code with the key in the store (`ctx.kv`) shows none.
//! - Entropy, each the source of an executor's key: what the client patches or the shim
//!   serves (issue 41: `/dev/urandom`, `getrandom` below the interpreter) is deterministic and
//!   is judged by its figures; what neither does is refused by every command that runs the
//!   executor (issue 40, part 3).
//! - Requests the provider's face cannot serve: a create on a route the face does not map, a
//!   request to another host, and a lookup the preset declares absent.
//!
//! The interpreters are the examples' (tests/python_examples.rs, tests/node_examples.rs):
//! `RETRYLAB_PYTHON`, else a virtual environment made once under target/tmp; `RETRYLAB_NODE`,
//! else `node`, with the Node executor run from the examples' stage under target/tmp. Every
//! file a test writes is under `CARGO_TARGET_TMPDIR`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::executors;
use crate::common::python::python;

use executors::{args, retrylab, totals_at};
use retrylab::cli::Outcome;

const CRASH: &str = "models/bad/crash_after_send_rare.json";
const LOST: &str = "models/ticket_lost_response.json";

/// `NAME=PYTHON tests/corpus/SCRIPT`.
pub(crate) fn py(name: &str, script: &str) -> String {
    let script: PathBuf = ["tests", "corpus", script].iter().collect();
    format!("{name}={} {}", python(), script.display())
}

/// `NAME=NODE .../SCRIPT`: tests/corpus/SCRIPT copied beside the Node examples' stage (so
/// that `p-retry` and `retrylab` resolve from its node_modules).
pub(crate) fn node(name: &str, script: &str) -> String {
    static COPIED: OnceLock<PathBuf> = OnceLock::new();
    let dir = COPIED.get_or_init(|| {
        let dir = crate::node_examples::stage().join("examples/node/corpus");
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir("tests/corpus").unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "js") {
                std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
            }
        }
        dir
    });
    let script = dir.join(script);
    format!(
        "{name}={} {}",
        shlex::try_quote(&crate::node_examples::node()).unwrap(),
        shlex::try_quote(script.to_str().expect("a UTF-8 path")).unwrap()
    )
}

/// `run MODEL --design NAME --seeds SEEDS --format json EXTRA... --executor SPEC`.
pub(crate) fn run(model: &str, name: &str, spec: String, seeds: &str, extra: &[&str]) -> Outcome {
    let mut a = args(&[
        "run", model, "--design", name, "--seeds", seeds, "--format", "json",
    ]);
    a.extend(extra.iter().map(|s| s.to_string()));
    a.push("--executor".into());
    a.push(spec);
    retrylab(&a)
}

/// The totals of `run`, which must exit 0.
pub(crate) fn totals(
    model: &str,
    name: &str,
    spec: String,
    seeds: &str,
    extra: &[&str],
) -> serde_json::Value {
    totals_at(&run(model, name, spec, seeds, extra), 0)
}

/// The binary itself, for what goes to its own stderr (the warnings).
fn binary(a: &[String]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(a)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A scratch directory of this file's tests under target/tmp.
fn scratch() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// --- A. Memory that a real crash loses --------------------------------------------------

/// Asserts the figures of an executor that keeps its key in memory on the crash model: 500
/// seeds with its worker lives forked (the default), 5 of them crashing after the send and
/// each making a second ticket; and, on seeds 70 to 79 (the two crashes at 73 and 76), the
/// same totals whether each life is forked or a new process.
fn memory_key_duplicates(script: &str) {
    let t = totals(CRASH, "mem", py("mem", script), "500", &[]);
    assert_eq!(t["intents"], 500, "{script}");
    assert_eq!(t["effects"], 505, "{script}");
    assert_eq!(t["duplicate_effects"], 5, "{script}");
    assert_eq!(t["completed"], 500, "{script}");
    assert_eq!(t["false_success"], 0, "{script}");
    assert_eq!(t["unresolved"], 0, "{script}");
    assert_eq!(t["unknown_ops"], 0, "{script}");
    // The first send and, on each of the 5 seeds that crash, the restarted worker's send
    // under its new key.
    assert_eq!(t["remote_calls"], 505, "{script}");
    let window = ["--first-seed", "70"];
    let fork = run(CRASH, "mem", py("mem", script), "10", &window);
    let fresh = run(
        CRASH,
        "mem",
        py("mem", script),
        "10",
        &["--first-seed", "70", "--executor-lives", "fresh"],
    );
    let (fork, fresh) = (totals_at(&fork, 0), totals_at(&fresh, 0));
    assert_eq!(fork, fresh, "{script}");
    assert_eq!(fork["effects"], 12, "{script}");
    assert_eq!(fork["duplicate_effects"], 2, "{script}");
}

#[test]
fn a_key_in_a_module_level_dict_is_lost_with_the_process() {
    memory_key_duplicates("module_dict_key.py");
}

#[test]
fn a_key_in_a_class_attribute_is_lost_with_the_process() {
    memory_key_duplicates("class_attribute_key.py");
}

#[test]
fn a_key_behind_lru_cache_is_lost_with_the_process() {
    memory_key_duplicates("lru_cache_key.py");
}

#[test]
fn a_key_held_by_a_module_level_client_object_is_lost_with_the_process() {
    memory_key_duplicates("client_object_key.py");
}

/// The totals of store_key.py (module_dict_key.py with the key in `ctx.kv`) on 500 seeds.
fn store_key_totals() -> serde_json::Value {
    totals(CRASH, "store", py("store", "store_key.py"), "500", &[])
}

#[test]
fn the_same_key_in_the_store_survives_the_crash() {
    let t = store_key_totals();
    assert_eq!(t["intents"], 500);
    assert_eq!(t["effects"], 500);
    assert_eq!(t["duplicate_effects"], 0);
    assert_eq!(t["completed"], 500);
    assert_eq!(t["false_success"], 0);
    assert_eq!(t["wrong_receipts"], 0);
    // 5 seeds crash after the send; the restarted worker resends the stored key. On 3 of
    // them the first request is still being processed: 409 in progress, which this tool
    // does not retry (raise_for_status: unknown), and the agent's replan is replayed.
    assert_eq!(t["unknown_ops"], 3);
    assert_eq!(t["remote_calls"], 508);
}

/// Reused processes are opt-in (`--executor-lives reuse`); without an `on_reset`, the dict
/// survives the simulated crash, which a real process death does not allow. The
/// determinism check (issue 40, parts 2 and 3) now runs the reused processes on another
/// seed and worker first, and every command refuses the executor; with the check switched
/// off, the run shows the leak: the store's figures, where the deployed process duplicates.
#[test]
fn reused_processes_without_on_reset_are_refused_and_unchecked_look_as_safe_as_the_store() {
    for command in ["run", "explore"] {
        let mut a = args(&[
            command,
            CRASH,
            "--design",
            "mem",
            "--executor-lives",
            "reuse",
        ]);
        a.push("--executor".into());
        a.push(py("mem", "module_dict_key.py"));
        let out = retrylab(&a);
        assert_eq!(out.code, 2, "{command}\n{}\n{}", out.stdout, out.stderr);
        assert_eq!(out.stdout, "", "{command}");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(
            lines[..2],
            [
                "error: executor mem is not deterministic (model crash_after_send_rare, seed 0, worker 0) [protocol error 30]",
                "  two runs with the same inputs diverged at message #8 (executor -> simulator), first at field headers.idempotency-key:",
            ],
            "{command}\n{}",
            out.stderr
        );
        assert!(
            lines[2].starts_with("    new process   : {"),
            "{}",
            out.stderr
        );
        assert!(
            lines[3].starts_with("    reused process: {"),
            "{}",
            out.stderr
        );
        // Only the reused process differs (the first seed agreed with itself in new
        // processes): the cause is the reused process, whatever the key's shape.
        assert_eq!(
            lines[4],
            "  likely cause: state left from an earlier life in a reused process (a cache, a counter, a client object): forget it in the client's on_reset hook, or run without --executor-lives reuse",
            "{}",
            out.stderr
        );
    }
    let mut a = args(&[
        "run",
        CRASH,
        "--design",
        "mem",
        "--seeds",
        "500",
        "--format",
        "json",
        "--executor-lives",
        "reuse",
        "--no-determinism-check",
        "--executor",
    ]);
    a.push(py("mem", "module_dict_key.py"));
    let (code, stdout, stderr) = binary(&a);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        "warning: executor mem: determinism not checked (--no-determinism-check): its figures, replays and certificates assume an executor that is a function of its messages\n"
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let t = &v["results"][0]["totals"];
    assert_eq!(*t, store_key_totals());
    assert_eq!(t["duplicate_effects"], 0);
    // With the default lives, the search finds the duplicate at once.
    let mut a = args(&["explore", CRASH, "--design", "mem", "--executor"]);
    a.push(py("mem", "module_dict_key.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "no_duplicate violated by a run with 1 fault (found after 41 runs); shrunk to 2 choices"
        ),
        "{}",
        out.stdout
    );
}

// --- B. Entropy retrylab does not serve -------------------------------------------------

/// The executors whose key comes from a source retrylab does not serve: the kernel's
/// `/proc/sys/kernel/random/uuid`, and a hash of the process id (with the virtual clock and a
/// counter). Until issue 41's shim, `/dev/urandom` read with open() and a
/// `random.SystemRandom()` made at import were here: they are served from the run's seed now
/// (`c_level_entropy_is_seeded_by_the_shim`).
const UNSEEDED: [&str; 2] = ["proc_uuid_key.py", "pid_key.py"];

/// Asserts the one refusal of an executor with unseeded entropy (issue 40, part 3): exit 2,
/// the first differing field named by its path, and the cause.
#[track_caller]
fn refused(what: &str, out: &Outcome) {
    assert_eq!(out.code, 2, "{what}\n{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("first at field headers.idempotency-key"),
        "{what}\n{}",
        out.stderr
    );
    // Before any table, certificate or partial.
    assert_eq!(out.stdout, "", "{what}");
    assert!(
        out.stderr
            .contains("an entropy source retrylab does not serve"),
        "{what}\n{}",
        out.stderr
    );
}

#[test]
fn run_refuses_unseeded_entropy() {
    for script in UNSEEDED {
        refused(script, &run(LOST, "e", py("e", script), "20", &[]));
    }
}

#[test]
fn run_shard_refuses_unseeded_entropy() {
    for script in UNSEEDED {
        let part = scratch().join(format!("shard-{script}.json"));
        let _ = std::fs::remove_file(&part);
        let mut a = args(&["run", LOST, "--seeds", "20", "--shard", "1/2", "--out"]);
        a.push(part.display().to_string());
        a.push("--executor".into());
        a.push(py("e", script));
        refused(script, &retrylab(&a));
        assert!(!part.exists(), "{script}: a partial was written");
    }
}

#[test]
fn trace_refuses_unseeded_entropy() {
    for script in UNSEEDED {
        let mut a = args(&["trace", LOST, "--design", "e", "--seed", "0", "--executor"]);
        a.push(py("e", script));
        refused(script, &retrylab(&a));
    }
}

#[test]
fn replay_refuses_unseeded_entropy() {
    for script in UNSEEDED {
        // A bare vector: every decision at its default.
        let mut a = args(&[
            "replay",
            LOST,
            "--design",
            "e",
            "--choices",
            "0",
            "--executor",
        ]);
        a.push(py("e", script));
        refused(script, &retrylab(&a));
    }
}

#[test]
fn explore_refuses_unseeded_entropy() {
    for script in UNSEEDED {
        let mut a = args(&["explore", LOST, "--design", "e", "--executor"]);
        a.push(py("e", script));
        refused(script, &retrylab(&a));
    }
}

#[test]
fn report_refuses_unseeded_entropy() {
    for script in UNSEEDED {
        let out_dir = scratch().join(format!("report-{script}"));
        let _ = std::fs::remove_dir_all(&out_dir);
        let mut a = args(&["report", LOST, "--seeds", "20", "--out"]);
        a.push(out_dir.display().to_string());
        a.push("--executor".into());
        a.push(py("e", script));
        refused(script, &retrylab(&a));
        assert!(
            !out_dir.join("report.json").exists(),
            "{script}: a report was written"
        );
    }
}

/// ticket_lost_response with `script` listed in its designs as `e`, with an expectation of
/// its own, and with the model's explore bound or without one; written under target/tmp.
fn model_listing(script: &str, explore: bool) -> String {
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(LOST).unwrap()).unwrap();
    let m = m.as_object_mut().unwrap();
    m.remove("$schema");
    let command = [python().to_string(), format!("tests/corpus/{script}")];
    m.insert(
        "designs".into(),
        serde_json::json!(["same_key", {"name": "e", "command": command}]),
    );
    let same_key = m["expect"]["same_key"].clone();
    m.insert(
        "expect".into(),
        serde_json::json!({"same_key": same_key, "e": {"hold": ["no_duplicate", "no_false_success"]}}),
    );
    if !explore {
        m.remove("explore");
    }
    let bound = if explore { "explore" } else { "plain" };
    let path = scratch().join(format!("check-{bound}-{script}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(m).unwrap()).unwrap();
    path.display().to_string()
}

#[test]
fn check_refuses_unseeded_entropy_with_and_without_an_explore_bound() {
    for script in UNSEEDED {
        for explore in [true, false] {
            let model = model_listing(script, explore);
            let out = retrylab(&args(&["check", &model, "--seeds", "20"]));
            refused(&format!("{script}, explore bound: {explore}"), &out);
        }
    }
}

/// The switch that turns the check off (issue 40, part 3).
const ENTROPY_CHECK_OFF: &str = "--no-determinism-check";

#[test]
fn the_switch_turns_the_entropy_check_off_and_the_output_says_so() {
    for script in UNSEEDED {
        let mut a = args(&[
            "run",
            LOST,
            "--design",
            "e",
            "--seeds",
            "20",
            "--format",
            "json",
            ENTROPY_CHECK_OFF,
            "--executor",
        ]);
        a.push(py("e", script));
        let (code, stdout, stderr) = binary(&a);
        assert_eq!(code, 0, "{script}\n{stderr}");
        assert_eq!(
            stderr,
            "warning: executor e: determinism not checked (--no-determinism-check): its figures, replays and certificates assume an executor that is a function of its messages\n",
            "{script}"
        );
        // The key is random, but the same on tenacity's resend: one ticket on every seed.
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let t = &v["results"][0]["totals"];
        assert_eq!(t["effects"], 20, "{script}");
        assert_eq!(t["duplicate_effects"], 0, "{script}");
        assert_eq!(t["completed"], 20, "{script}");
        assert_eq!(t["remote_calls"], 40, "{script}");
    }
}

/// The sources the clients patch: `os.getrandom`, a `random.SystemRandom()` made in the
/// handler (after `retrylab.run()` patched the class), and Node's `crypto.randomBytes`. The
/// executor is a function of its messages: judged by its figures, never refused. On the
/// lost reply, the retry library resends the call's key and the provider replays it.
fn seeded_figures(name: &str, spec: String) {
    let t = totals(LOST, name, spec.clone(), "200", &[]);
    assert_eq!(t["intents"], 200, "{name}");
    assert_eq!(t["effects"], 200, "{name}");
    assert_eq!(t["duplicate_effects"], 0, "{name}");
    assert_eq!(t["completed"], 200, "{name}");
    assert_eq!(t["false_success"], 0, "{name}");
    assert_eq!(t["wrong_receipts"], 0, "{name}");
    assert_eq!(t["remote_calls"], 400, "{name}");
    let mut a = args(&["explore", LOST, "--design", name, "--executor"]);
    a.push(spec);
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{name}\n{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("certified for 2 faults: no property is violated by any schedule within the bound (12 runs, complete)"),
        "{name}\n{}",
        out.stdout
    );
}

#[test]
fn os_getrandom_is_seeded_by_the_client() {
    seeded_figures("getrandom", py("getrandom", "getrandom_key.py"));
}

#[test]
fn a_system_random_made_in_the_handler_is_seeded_by_the_client() {
    seeded_figures("sysrand", py("sysrand", "system_random_call_key.py"));
}

/// Below the interpreter (issue 41): a key read from `/dev/urandom` with open(), and one from
/// a `random.SystemRandom()` made at import, before the client patches the class (an
/// instance of the real class reads the OS through `os.urandom` bound in `random` at its
/// import, then C's `getrandom`): the shim serves both from the run's seed.
#[test]
fn c_level_entropy_is_seeded_by_the_shim() {
    seeded_figures("urandom", py("urandom", "urandom_file_key.py"));
    seeded_figures(
        "sysrand_import",
        py("sysrand_import", "system_random_key.py"),
    );
}

#[test]
fn node_crypto_random_bytes_is_seeded_by_the_client() {
    seeded_figures("randombytes", node("randombytes", "random_bytes_key.js"));
}

// --- C. Routes and hosts the provider's face cannot serve -------------------------------

/// The first line of a refused request's error, for executor `u` at its first request.
fn unservable(request: &str, why: &str) -> String {
    format!(
        "error: executor u (worker 0, incarnation 0, at 0 ms): {request}: {why}; the request cannot be served (--executor-unmapped warn answers it 404 and goes on) [protocol error 23]"
    )
}

/// `run` refuses (exit 2, the first line naming the `provider.http` field); with
/// `--executor-unmapped warn`, each create is answered 404 with one warning, the tool
/// raises on it (unknown), the agent's replan meets the same 404, and every intent ends
/// unresolved without an effect.
fn refused_then_served_404(script: &str, first_line: &str, warning: &str) {
    let out = run(LOST, "u", py("u", script), "100", &[]);
    assert_eq!(out.code, 2, "{script}\n{}", out.stderr);
    assert_eq!(out.stdout, "", "{script}");
    assert_eq!(out.stderr.lines().next().unwrap_or_default(), first_line);
    let mut a = args(&[
        "run",
        LOST,
        "--design",
        "u",
        "--seeds",
        "100",
        "--format",
        "json",
        "--executor-unmapped",
        "warn",
        "--executor",
    ]);
    a.push(py("u", script));
    let (code, stdout, stderr) = binary(&a);
    assert_eq!(code, 0, "{script}\n{stderr}");
    assert_eq!(stderr.matches(warning).count(), 1, "{script}\n{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let t = &v["results"][0]["totals"];
    assert_eq!(t["intents"], 100, "{script}");
    assert_eq!(t["effects"], 0, "{script}");
    assert_eq!(t["completed"], 0, "{script}");
    assert_eq!(t["unresolved"], 100, "{script}");
    assert_eq!(t["false_success"], 0, "{script}");
    assert_eq!(t["false_failure"], 0, "{script}");
    // A request the face cannot serve reaches no provider: no remote call, no operation.
    assert_eq!(t["remote_calls"], 0, "{script}");
    assert_eq!(t["unknown_ops"], 0, "{script}");
}

#[test]
fn a_create_on_a_route_the_face_does_not_map_is_refused_naming_provider_http_create() {
    let why = "a create that matches no route of the provider's face: set the model's provider.http.create to its route (now \"POST /v1/resources\")";
    refused_then_served_404(
        "v2_route.py",
        &unservable("POST http://provider.sim/v2/tickets", why),
        &format!(
            "warning: executor u: POST http://provider.sim/v2/tickets: {why} (--executor-unmapped warn: served as unmapped); answered 404 (docs/executor-protocol.md, section 6)"
        ),
    );
}

#[test]
fn a_request_to_another_host_is_refused_naming_provider_http() {
    let why = "host \"api.example.com\" is not the simulated provider's (its base URL is http://provider.sim): send the provider's requests to the base_url that init gives, on the routes of the model's provider.http (set provider.http.create to the create's route; now \"POST /v1/resources\")";
    refused_then_served_404(
        "hardcoded_host.py",
        &unservable("POST https://api.example.com/v1/resources", why),
        &format!(
            "warning: executor u: POST https://api.example.com/v1/resources: {why} (--executor-unmapped warn: served as unmapped); answered 404 (docs/executor-protocol.md, section 6)"
        ),
    );
}

/// PayPal Orders v2 has no search (its preset's `provider.http.search` is empty): the tool's
/// lookup by reference after the lost reply is answered 404 with a warning, read as "not
/// found", and the resend under the stored `PayPal-Request-Id` is replayed.
#[test]
fn a_lookup_the_preset_declares_absent_is_answered_404_with_a_warning() {
    let mut a = args(&[
        "run",
        LOST,
        "--provider",
        "paypal_orders",
        "--design",
        "pp",
        "--seeds",
        "200",
        "--format",
        "json",
        "--executor",
    ]);
    a.push(py("pp", "paypal_search.py"));
    let (code, stdout, stderr) = binary(&a);
    assert_eq!(code, 0, "{stderr}");
    let warning = "warning: executor pp: GET http://provider.sim/v2/checkout/orders?reference_id=r1: no route of this provider's face matches (provider.http: create \"POST /v2/checkout/orders\", read \"GET /v2/checkout/orders/{id}\", operation \"GET /v1/operations/{handle}\"); answered 404 (docs/executor-protocol.md, section 6)";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let t = &v["results"][0]["totals"];
    assert_eq!(t["intents"], 200);
    assert_eq!(t["effects"], 200);
    assert_eq!(t["duplicate_effects"], 0);
    assert_eq!(t["completed"], 200);
    assert_eq!(t["wrong_receipts"], 0);
    assert_eq!(t["unresolved"], 0);
    // The create and its resend: the lookup between them is no remote call.
    assert_eq!(t["remote_calls"], 400);
    // The trace shows the 404 where it happened.
    let mut a = args(&[
        "trace",
        LOST,
        "--provider",
        "paypal_orders",
        "--design",
        "pp",
        "--seed",
        "3",
        "--executor",
    ]);
    a.push(py("pp", "paypal_search.py"));
    let out = retrylab(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    executors::assert_lines(
        &out.stdout,
        &[
            "        5000 ms  executor  worker 0: attempt 1 timed out",
            "        5000 ms  executor  worker 0: pp: sleeps 200 ms",
            "        5200 ms  executor  worker 0: pp: GET http://provider.sim/v2/checkout/orders?reference_id=r1: no route of this provider's face matches (provider.http: create \"POST /v2/checkout/orders\", read \"GET /v2/checkout/orders/{id}\", operation \"GET /v1/operations/{handle}\"): answered 404",
            "        5200 ms  executor  worker 0: pp: POST /v2/checkout/orders",
            "        5200 ms  executor  worker 0: op 0 sends attempt 2: create with params 1, key k1",
            "        5206 ms  provider  attempt 2: key k1 seen: replay -> 201 created r0, replayed",
        ],
    );
}

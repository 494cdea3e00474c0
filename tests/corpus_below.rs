//! The acceptance corpus of issue 41 ("Below the interpreter"): executors written the way a
//! team writes them from the user docs (docs/your-executor.md, "Files: the run's own storage",
//! "Clocks and entropy below the interpreter"; the clients' READMEs; protocol section 9), not
//! shaped for retrylab, in tests/corpus/b41_*, each with the figures retrylab gives it beside
//! what the deployed process does, or its refusal.
//!
//! - Files: a JSON key file and a receipt log opened with relative paths in the handler, a
//!   keys file next to the module, SQLite with a connection per call (an idempotency-key
//!   journal; a result cache), `tempfile` in the handler, `~/.cache/...` resolved in the
//!   handler: each is the worker's own disk, made empty for every run, kept by a crash
//!   (models/bad/crash_after_send_rare) and emptied by a volatile journal's restart, and each
//!   gives exactly the figures of the same code with the client's store (`ctx.kv`). SQLite
//!   opened at import, `tempfile.gettempdir()` at import and `~` resolved at import are
//!   refused, the executor exiting with status 4 and the path.
//! - Clocks: one retry budget (2.5 s; each attempt's timeout what is left of it) measured on
//!   `time.monotonic()` (the control), on `monotonic` bound by `from time import` before
//!   `retrylab`, `datetime.now()`, `time.clock_gettime`, SQLite's `julianday('now')`, with a
//!   `threading.Event().wait` as its pause, and in Node on `process.hrtime.bigint()`: each
//!   gives the control's figures (61 of 200 seeds spend the budget on the lost reply; a real
//!   clock would spend none), and so does one measured on libc's `clock_gettime` through
//!   `ctypes.CDLL("libc.so.6")` (a finding of this corpus, fixed: the shim serves `dlsym`);
//!   with `sleep` bound by `from time import` too, the pause is a virtual sleep and the
//!   figures are the control's.
//! - Entropy in C: a key from SQLite's `randomblob(16)`, judged by its figures as the same
//!   tool with a `uuid4` key.
//!
//! After every command, the repository's root and tests/corpus hold no new file; run as the
//! binary, each command leaves its `--executor-storage` directory (under
//! `CARGO_TARGET_TMPDIR`) empty, whether the executor ran or was refused. The interpreters are
//! tests/corpus.rs's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::executors::{args, retrylab};
use crate::corpus::{node, py, run, totals};

const CRASH: &str = "models/bad/crash_after_send_rare.json";
const LOST: &str = "models/ticket_lost_response.json";
/// Two intents, the second a genuine repeat of the first, random faults and one worker crash
/// at any point: a result cache per reference is hit there.
const CONTRACT: &str = "models/guarantees/contract_as_assumed.json";

/// A scratch directory of this file's tests under target/tmp.
fn scratch() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus_below");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// crash_after_send_rare with `workers.journal: volatile`: a restarted worker finds its
/// directory empty (and the store), as a replaced container would.
fn volatile_crash() -> String {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(CRASH).unwrap()).unwrap();
        let m = m.as_object_mut().unwrap();
        m.remove("$schema");
        m["name"] = "crash_after_send_rare_volatile".into();
        m["workers"]["journal"] = "volatile".into();
        let path = scratch().join("crash_after_send_rare_volatile.json");
        std::fs::write(&path, serde_json::to_string_pretty(m).unwrap()).unwrap();
        path.display().to_string()
    })
    .clone()
}

/// The names in the repository's root and in tests/corpus.
fn source_tree() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for dir in [".", "tests/corpus"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            names.insert(format!("{dir}/{name}"));
        }
    }
    names
}

/// The storage directory passed to every command of these tests (`--executor-storage`).
/// In the test binary the commands run in one process, where the storage directory is made
/// by the first command that starts an executor and kept by the later ones (`configure`'s
/// first call wins; only the binary's `main` removes it): this one when a test of this file
/// comes first. `the_binary_leaves_no_storage_and_no_file_in_the_project` runs the binary,
/// one process per command, and checks what each leaves.
fn storage() -> &'static str {
    static DIR: OnceLock<String> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch().join("storage");
        std::fs::create_dir_all(&dir).unwrap();
        dir.display().to_string()
    })
}

/// Runs `f`, then asserts that no new file appeared in the repository's root or in
/// tests/corpus.
fn untouched<T>(f: impl FnOnce() -> T) -> T {
    let before = source_tree();
    let out = f();
    let after = source_tree();
    let new: Vec<&String> = after.difference(&before).collect();
    assert!(new.is_empty(), "files written in the source tree: {new:?}");
    out
}

/// The totals of tests/corpus/`script` run as design `x` on `seeds` seeds of `model`, with
/// its storage under target/tmp.
fn figures(model: &str, script: &str, seeds: &str) -> Value {
    untouched(|| {
        totals(
            model,
            "x",
            py("x", script),
            seeds,
            &["--executor-storage", storage()],
        )
    })
}

/// Asserts the figures a test pins, by name, and that the other counters of the totals that
/// judge an outcome are 0.
#[track_caller]
fn assert_figures(what: &str, t: &Value, want: &[(&str, u64)]) {
    for (name, value) in want {
        assert_eq!(t[*name], *value, "{what}: {name}\n{t:#}");
    }
    for name in [
        "true_failures",
        "drifted_effects",
        "compensations",
        "false_success",
        "false_failure",
        "merged_repeats",
        "wrong_receipts",
        "wrong_compensations",
        "masked_mismatches",
        "unresolved",
        "false_resolutions",
        "unknown_ops",
        "duplicate_effects",
    ] {
        if !want.iter().any(|(n, _)| *n == name) {
            assert_eq!(t[name], 0, "{what}: {name}\n{t:#}");
        }
    }
}

/// A refused executor: exit 2 before any output, the process's exit status 4, and `why`
/// among its last lines.
#[track_caller]
fn assert_refused(what: &str, model: &str, script: &str, why: &str) {
    let out = untouched(|| {
        run(
            model,
            "x",
            py("x", script),
            "20",
            &["--executor-storage", storage()],
        )
    });
    assert_eq!(out.code, 2, "{what}\n{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "", "{what}");
    assert!(
        out.stderr.contains("exit status: 4"),
        "{what}\n{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(why),
        "{what}: no {why:?} in\n{}",
        out.stderr
    );
}

// --- A. Files: the run's own storage ----------------------------------------------------

/// The lost reply with one attempt per call (the agent's replan is the retry): the replan
/// reads the first call's key back from the worker's disk, and the provider replays it.
const KEY_REUSED_BY_THE_REPLAN: [(&str, u64); 5] = [
    ("intents", 200),
    ("effects", 200),
    ("completed", 200),
    // The first call of every seed times out: unknown; the replan is replayed.
    ("unknown_ops", 200),
    ("remote_calls", 400),
];

/// The crash model, 500 seeds, with the key written before the first send and kept by the
/// crash (store_key.py's figures, tests/corpus.rs): 5 seeds crash after the send, the
/// restarted worker reads the key back and resends it; on 3 of them the first request is
/// still being processed (409 in progress: unknown) and the agent's replan is replayed.
const KEY_KEPT_BY_THE_CRASH: [(&str, u64); 5] = [
    ("intents", 500),
    ("effects", 500),
    ("completed", 500),
    ("unknown_ops", 3),
    ("remote_calls", 508),
];

/// The same with a volatile journal: the restarted worker's directory (and store) is empty,
/// it mints another key, and the 5 seeds that crash after the send make a second ticket.
const KEY_LOST_WITH_A_VOLATILE_DISK: [(&str, u64); 6] = [
    ("intents", 500),
    ("effects", 505),
    ("duplicate_effects", 5),
    ("completed", 500),
    ("unknown_ops", 5),
    ("remote_calls", 505),
];

#[test]
fn a_json_key_file_opened_with_a_relative_path_is_the_workers_disk() {
    for (model, seeds, want) in [
        (LOST.to_string(), "200", &KEY_REUSED_BY_THE_REPLAN[..]),
        (CRASH.to_string(), "500", &KEY_KEPT_BY_THE_CRASH[..]),
        (volatile_crash(), "500", &KEY_LOST_WITH_A_VOLATILE_DISK[..]),
    ] {
        let file = figures(&model, "b41_json_key_file.py", seeds);
        let store = figures(&model, "b41_kv_key_twin.py", seeds);
        assert_figures(&format!("b41_json_key_file.py on {model}"), &file, want);
        assert_eq!(file, store, "{model}: the file and the store differ");
    }
}

/// `Path(__file__).with_name(...)`: a file of the project opened for writing is the worker's
/// copy; nothing reaches tests/corpus.
#[test]
fn a_keys_file_next_to_the_module_is_the_workers_copy() {
    let t = figures(LOST, "b41_keys_beside_module.py", "200");
    assert_figures(
        "b41_keys_beside_module.py, lost reply",
        &t,
        &KEY_REUSED_BY_THE_REPLAN,
    );
    let t = figures(CRASH, "b41_keys_beside_module.py", "500");
    assert_figures(
        "b41_keys_beside_module.py, crash",
        &t,
        &KEY_KEPT_BY_THE_CRASH,
    );
    assert!(!Path::new("tests/corpus/b41_ticket_keys.json").exists());
}

/// `conn = sqlite3.connect("journal.db")` at import: every worker life forked from the
/// zygote would share the file (and SQLite forbids a connection used across a fork).
#[test]
fn a_module_level_sqlite_connection_is_refused_naming_the_path() {
    let db = std::env::current_dir().unwrap().join("journal.db");
    assert_refused(
        "b41_sqlite_module_conn.py",
        LOST,
        "b41_sqlite_module_conn.py",
        &format!(
            "retrylab strict mode violation: an open for writing of {} before the first `start` (at import or in init)",
            db.display()
        ),
    );
    assert!(!db.exists());
}

/// SQLite with a connection per call, the key committed before the first send: the same
/// figures as store_key.py (the key in `ctx.kv`) on the crash model, durable and volatile.
#[test]
fn a_sqlite_key_journal_connected_per_call_keeps_the_key_as_the_store_does() {
    let t = figures(LOST, "b41_sqlite_key.py", "200");
    assert_figures(
        "b41_sqlite_key.py, lost reply",
        &t,
        &[
            ("intents", 200),
            ("effects", 200),
            ("completed", 200),
            // tenacity's resend carries the key: replayed, no replan.
            ("remote_calls", 400),
        ],
    );
    for (model, want) in [
        (CRASH.to_string(), &KEY_KEPT_BY_THE_CRASH[..]),
        (volatile_crash(), &KEY_LOST_WITH_A_VOLATILE_DISK[..]),
    ] {
        let sqlite = figures(&model, "b41_sqlite_key.py", "500");
        let store = figures(&model, "store_key.py", "500");
        assert_figures(&format!("b41_sqlite_key.py on {model}"), &sqlite, want);
        assert_eq!(sqlite, store, "{model}: SQLite and the store differ");
    }
    // Seeds 70 to 79 (crashes after the send at 73 and 76): the disk is the same whatever the
    // kind of worker life, forked (the default), new or reused.
    for (model, effects) in [(CRASH.to_string(), 10), (volatile_crash(), 12)] {
        let lives: Vec<Value> = ["fork", "fresh", "reuse"]
            .iter()
            .map(|lives| {
                untouched(|| {
                    totals(
                        &model,
                        "x",
                        py("x", "b41_sqlite_key.py"),
                        "10",
                        &[
                            "--first-seed",
                            "70",
                            "--executor-lives",
                            lives,
                            "--executor-storage",
                            storage(),
                        ],
                    )
                })
            })
            .collect();
        assert_eq!(lives[0]["effects"], effects, "{model}");
        assert_eq!(lives[0], lives[1], "{model}: forked and new lives differ");
        assert_eq!(
            lives[0], lives[2],
            "{model}: forked and reused lives differ"
        );
    }
}

/// A key per call, tenacity's resend replayed: one ticket on every seed, as deployed.
const KEY_PER_CALL_RESENT: [(&str, u64); 4] = [
    ("intents", 200),
    ("effects", 200),
    ("completed", 200),
    ("remote_calls", 400),
];

/// `tempfile.mkdtemp()` and a `NamedTemporaryFile` in the handler: `TMPDIR` is below the
/// worker's directory, and strict mode lets the writes through.
#[test]
fn a_temporary_directory_made_in_the_handler_is_the_workers_own() {
    let t = figures(LOST, "b41_tempfile_body.py", "200");
    assert_figures("b41_tempfile_body.py", &t, &KEY_PER_CALL_RESENT);
    assert_eq!(t, figures(LOST, "b41_uuid4_key.py", "200"));
}

/// `Path(tempfile.gettempdir()) / "ticket-tool"` at import: `gettempdir()` finds its
/// directory by creating (and removing) a probe file in it, a write before the first `start`,
/// and the directory it would find is the machine's `/tmp`, outside the run's storage.
/// Refused, naming the probe; deployed, the tool works.
#[test]
fn tempfile_gettempdir_at_import_is_refused() {
    assert_refused(
        "b41_tempdir_at_import.py",
        LOST,
        "b41_tempdir_at_import.py",
        &format!(
            "retrylab strict mode violation: an open for writing of {}/",
            std::env::temp_dir()
                .display()
                .to_string()
                .trim_end_matches('/')
        ),
    );
}

/// `os.path.expanduser("~/.cache/ticket-tool/keys.json")` in the handler: `HOME` is the
/// worker's directory.
#[test]
fn a_home_cache_resolved_in_the_handler_is_the_workers_disk() {
    let t = figures(LOST, "b41_home_cache_keys_in_handler.py", "200");
    assert_figures(
        "b41_home_cache_keys_in_handler.py, lost reply",
        &t,
        &KEY_REUSED_BY_THE_REPLAN,
    );
    let t = figures(CRASH, "b41_home_cache_keys_in_handler.py", "500");
    assert_figures(
        "b41_home_cache_keys_in_handler.py, crash",
        &t,
        &KEY_KEPT_BY_THE_CRASH,
    );
}

/// The same path resolved at import, as module-level settings are: `HOME` is still the
/// machine's there (the worker's directory is entered at `start`), so the handler's
/// `makedirs` is outside the run's storage, refused in strict mode.
#[test]
fn a_home_cache_resolved_at_import_is_refused_naming_the_machines_home() {
    let home = std::env::var("HOME").unwrap();
    assert_refused(
        "b41_home_cache_keys.py",
        LOST,
        "b41_home_cache_keys.py",
        &format!(
            "retrylab strict mode violation: mkdir of {home}/.cache/ticket-tool outside the run's storage"
        ),
    );
}

/// A result cache per reference in SQLite (`cache.db`, a connection per call) and the same
/// in `ctx.kv`: the same figures everywhere, and no cache.db in the project.
#[test]
fn a_sqlite_result_cache_gives_the_stores_figures() {
    for (model, seeds, want) in [
        (
            LOST,
            "200",
            &[
                ("intents", 200),
                ("effects", 200),
                ("completed", 200),
                ("remote_calls", 400),
            ][..],
        ),
        // The crash after the send leaves nothing cached; the redelivered call mints a new
        // key per call: the 5 seeds that crash make a second ticket, as deployed.
        (
            CRASH,
            "500",
            &[
                ("intents", 500),
                ("effects", 505),
                ("duplicate_effects", 5),
                ("completed", 500),
                ("remote_calls", 505),
            ][..],
        ),
        // The genuine repeat (same reference) is answered from the cache: the second intent
        // is told success with the first intent's ticket, on every seed where the first
        // was cached.
        (
            CONTRACT,
            "500",
            &[
                ("intents", 1000),
                ("effects", 643),
                ("completed", 465),
                ("duplicate_effects", 126),
                ("false_success", 483),
                ("merged_repeats", 483),
                ("wrong_receipts", 483),
                ("false_resolutions", 483),
                ("unresolved", 52),
                ("unknown_ops", 121),
                ("remote_calls", 843),
            ][..],
        ),
    ] {
        let sqlite = figures(model, "b41_sqlite_result_cache.py", seeds);
        let store = figures(model, "b41_kv_result_cache.py", seeds);
        assert_figures(
            &format!("b41_sqlite_result_cache.py on {model}"),
            &sqlite,
            want,
        );
        assert_eq!(sqlite, store, "{model}: SQLite and the store differ");
        assert!(!Path::new("cache.db").exists());
    }
}

/// The binary, one process per command, each with a storage directory of its own under
/// target/tmp: whether the executor ran (a crash among its seeds) or was refused before its
/// `hello` or in a call, the command removes its storage when it ends, and nothing reaches
/// the project.
#[test]
fn the_binary_leaves_no_storage_and_no_file_in_the_project() {
    for (model, script, first, code) in [
        (CRASH, "b41_json_key_file.py", "70", 0),
        (CRASH, "b41_sqlite_key.py", "70", 0),
        (CRASH, "b41_sqlite_result_cache.py", "70", 0),
        (LOST, "b41_tempfile_body.py", "0", 0),
        (LOST, "b41_keys_beside_module.py", "0", 0),
        (LOST, "b41_sqlite_module_conn.py", "0", 2),
        (LOST, "b41_tempdir_at_import.py", "0", 2),
        (LOST, "b41_home_cache_keys.py", "0", 2),
    ] {
        let dir = scratch().join(format!("binary-{script}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let out = untouched(|| {
            Command::new(env!("CARGO_BIN_EXE_retrylab"))
                .args([
                    "run",
                    model,
                    "--design",
                    "x",
                    "--seeds",
                    "10",
                    "--first-seed",
                    first,
                ])
                .arg("--executor-storage")
                .arg(&dir)
                .arg("--executor")
                .arg(py("x", script))
                .output()
                .unwrap()
        });
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{script}\n{stderr}");
        let left: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(left.is_empty(), "{script}: storage left behind: {left:?}");
        std::fs::remove_dir(&dir).unwrap();
    }
}

// --- B. Clocks below the interpreter ----------------------------------------------------

/// The budget's figures on the lost reply, 200 seeds: attempt 1's reply is lost and it times
/// out at 2 s; after the 400 ms pause, attempt 2 has 100 ms left. On 61 seeds its replay takes
/// longer: the budget is spent, the call is unknown, and the agent's replan (a new call, a
/// new key) makes a second ticket. On a clock that did not move with virtual time, attempt
/// 2 would have 2 s and no seed would.
const BUDGET: [(&str, u64); 6] = [
    ("intents", 200),
    ("effects", 261),
    ("duplicate_effects", 61),
    ("completed", 200),
    ("unknown_ops", 61),
    ("remote_calls", 461),
];

fn budget_control() -> Value {
    let t = figures(LOST, "b41_budget_monotonic.py", "200");
    assert_figures("b41_budget_monotonic.py", &t, &BUDGET);
    t
}

#[test]
fn a_budget_on_clocks_the_client_patches_or_the_shim_serves_gives_the_controls_figures() {
    let control = budget_control();
    for script in [
        "b41_budget_from_time_import.py",
        "b41_budget_datetime.py",
        "b41_budget_clock_gettime.py",
        "b41_budget_sqlite_clock.py",
        "b41_budget_event_wait.py",
    ] {
        let t = figures(LOST, script, "200");
        assert_eq!(t, control, "{script}");
    }
}

/// `ctypes.CDLL("libc.so.6").clock_gettime`: a lookup in libc's own handle, which
/// preloading does not reach, so the shim also serves `dlsym` for the symbols it replaces
/// (found by this corpus: before that, the budget was measured in real time, which does not
/// move during virtual sleeps and timeouts, and the run showed 200 tickets where the deployed
/// tool makes 261).
#[test]
fn a_budget_on_libc_clock_gettime_through_ctypes_gives_the_controls_figures() {
    let control = budget_control();
    let t = figures(LOST, "b41_budget_ctypes.py", "200");
    assert_eq!(t, control);
}

/// `from time import monotonic, sleep` before `retrylab` (isort's order): the pause is a
/// C-level sleep on the protocol thread during a call, which the shim sends as a protocol
/// `sleep` (this corpus found it refused at first, as the docs then said).
#[test]
fn a_sleep_bound_before_retrylab_sleeps_in_virtual_time() {
    let control = budget_control();
    let t = figures(LOST, "b41_budget_from_time_import_sleep.py", "200");
    assert_eq!(t, control);
}

#[test]
fn a_node_budget_on_process_hrtime_bigint_gives_the_controls_figures() {
    let control = budget_control();
    let t = untouched(|| {
        totals(
            LOST,
            "x",
            node("x", "b41_budget_hrtime.js"),
            "200",
            &["--executor-storage", storage()],
        )
    });
    assert_eq!(t, control);
}

// --- C. Entropy in C --------------------------------------------------------------------

/// A key per call from SQLite's `randomblob(16)`: drawn from the run's seed, a function of
/// the executor's messages; judged by its figures, the uuid4 version's, and certified.
#[test]
fn a_key_from_sqlite_randomblob_is_judged_as_a_uuid4_key() {
    let t = figures(LOST, "b41_sqlite_randomblob_key.py", "200");
    assert_figures("b41_sqlite_randomblob_key.py", &t, &KEY_PER_CALL_RESENT);
    assert_eq!(t, figures(LOST, "b41_uuid4_key.py", "200"));
    let out = untouched(|| {
        let mut a = args(&[
            "explore",
            LOST,
            "--design",
            "x",
            "--executor-storage",
            storage(),
            "--executor",
        ]);
        a.push(py("x", "b41_sqlite_randomblob_key.py"));
        retrylab(&a)
    });
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("certified for 2 faults: no property is violated by any schedule within the bound (12 runs, complete)"),
        "{}",
        out.stdout
    );
}

// --- D. Crashes at storage commits --------------------------------------------------------

/// crash_after_send_rare with its worker crashing at storage commits (`at_commit`) or at the
/// turns' crash points only (`turns`), with probability 1/20 each, at most once.
fn crash_model(kind: &str) -> String {
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(CRASH).unwrap()).unwrap();
    let m = m.as_object_mut().unwrap();
    m.remove("$schema");
    m["name"] = format!("crash_{kind}").into();
    m["workers"]["crash"] = match kind {
        "at_commit" => serde_json::json!({"at_commit": "1/20"}),
        _ => {
            serde_json::json!({"before_dispatch": "1/20", "after_send": "1/20", "after_reply": "1/20"})
        }
    };
    let path = scratch().join(format!("crash_{kind}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(m).unwrap()).unwrap();
    path.display().to_string()
}

/// `explore` at one fault of tests/executors/two_commits.py (`order`: `cleanup-first` or
/// `record-first`) on `model`.
fn explore_two_commits(model: &str, order: &str) -> retrylab::cli::Outcome {
    untouched(|| {
        let mut a = args(&[
            "explore",
            model,
            "--design",
            "x",
            "--max-faults",
            "1",
            "--executor-storage",
            storage(),
            "--executor",
        ]);
        a.push(format!(
            "x={} tests/executors/two_commits.py {order}",
            crate::common::python::python()
        ));
        retrylab(&a)
    })
}

/// A tool that makes two SQLite commits in the turn after the provider's answer, the key
/// deleted before the receipt is recorded: a crash between them leaves neither, and the
/// restarted worker creates a second ticket under a new key. Crashes between turns never
/// fall there (certified, 1048 runs); a crash at a storage commit does, and `explore` finds
/// it: the worker dies at the run's 13th commit, an fsync of the SQLite journal of the second
/// transaction. The same tool recording first, then deleting, is certified.
#[test]
fn a_crash_between_two_commits_of_one_turn_is_found_by_explore() {
    let turns = explore_two_commits(&crash_model("turns"), "cleanup-first");
    assert_eq!(turns.code, 0, "{}\n{}", turns.stdout, turns.stderr);
    assert!(
        turns.stdout.contains("certified for 1 fault: no property is violated by any schedule within the bound (1048 runs, complete)"),
        "{}",
        turns.stdout
    );
    let commits = crash_model("at_commit");
    let found = explore_two_commits(&commits, "cleanup-first");
    assert_eq!(found.code, 1, "{}\n{}", found.stdout, found.stderr);
    for line in [
        "no_duplicate violated by a run with 1 fault",
        "x: dies at storage commit 13 (an fsync of w0/effects.db-journal)",
        "worker 0 crashes at storage commit 13; restarts at 1030 ms",
        "outcome: intent 0: completed (duplicate effect r1 of r0)",
    ] {
        assert!(found.stdout.contains(line), "{line}\n{}", found.stdout);
    }
    let fixed = explore_two_commits(&commits, "record-first");
    assert_eq!(fixed.code, 0, "{}\n{}", fixed.stdout, fixed.stderr);
    assert!(
        fixed.stdout.contains("certified for 1 fault: no property is violated by any schedule within the bound (919 runs, complete)"),
        "{}",
        fixed.stdout
    );
}

/// A scripted crash at the run's 13th storage commit replays the counterexample without a
/// search; commit 0 and a crash_worker at `at_commit` are refused with the field.
#[test]
fn a_scripted_crash_at_a_commit_is_the_counterexample() {
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(CRASH).unwrap()).unwrap();
    let m = m.as_object_mut().unwrap();
    m.remove("$schema");
    m["workers"]["crash"] = serde_json::json!({});
    m.insert(
        "faults".into(),
        serde_json::json!([{"crash_at_commit": {"commit": 13}}]),
    );
    let path = scratch().join("scripted_commit_crash.json");
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let spec = |order: &str| {
        format!(
            "x={} tests/executors/two_commits.py {order}",
            crate::common::python::python()
        )
    };
    let path = path.display().to_string();
    let t = untouched(|| {
        totals(
            &path,
            "x",
            spec("cleanup-first"),
            "1",
            &["--executor-storage", storage()],
        )
    });
    assert_eq!(t["duplicate_effects"], 1, "{t}");
    let t = untouched(|| {
        totals(
            &path,
            "x",
            spec("record-first"),
            "1",
            &["--executor-storage", storage()],
        )
    });
    assert_eq!(t["duplicate_effects"], 0, "{t}");
    for (fault, field, why) in [
        (
            serde_json::json!({"crash_at_commit": {"commit": 0}}),
            "faults[0].crash_at_commit.commit",
            "storage commits are numbered from 1",
        ),
        (
            serde_json::json!({"crash_worker": {"attempt": 1, "point": "at_commit"}}),
            "faults[0].crash_worker.point",
            "at_commit is not a point of an attempt",
        ),
    ] {
        m.insert("faults".into(), serde_json::json!([fault]));
        let bad = scratch().join("bad_commit_crash.json");
        std::fs::write(&bad, serde_json::to_string_pretty(&m).unwrap()).unwrap();
        let out = retrylab(&args(&["check", bad.to_str().unwrap()]));
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(
            out.stderr.contains(field) && out.stderr.contains(why),
            "{}",
            out.stderr
        );
    }
}

/// crash_after_send_rare whose crash (after the send, 1 in 20, at most once) may also lose
/// the worker's machine with probability `loss`.
fn machine_model(loss: &str) -> String {
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(CRASH).unwrap()).unwrap();
    let m = m.as_object_mut().unwrap();
    m.remove("$schema");
    m["name"] = "crash_machine_loss".into();
    m["workers"]["crash"] = serde_json::json!({"after_send": "1/20", "machine_loss": loss});
    let path = scratch().join(format!("machine_loss_{}.json", loss.replace('/', "_")));
    std::fs::write(&path, serde_json::to_string_pretty(m).unwrap()).unwrap();
    path.display().to_string()
}

/// `explore` at two faults of tests/executors/key_file.py (`arg`: `fsync` or nothing).
fn explore_key_file(model: &str, arg: &str) -> retrylab::cli::Outcome {
    untouched(|| {
        let mut a = args(&[
            "explore",
            model,
            "--design",
            "x",
            "--max-faults",
            "2",
            "--executor-storage",
            storage(),
            "--executor",
        ]);
        a.push(format!(
            "x={} tests/executors/key_file.py {arg}",
            crate::common::python::python()
        ));
        retrylab(&a)
    })
}

/// A key kept in a JSON file written and closed, never synced: a process's death keeps it
/// (certified at two faults, 844 runs: the model then offers one fault), the loss of the
/// machine with it does not, and `explore` finds the duplicate (a crash after the send, then
/// the machine lost: two faults); the same tool syncing the file before the send is
/// certified with machine losses too (898 runs), and so are a key file written to a
/// temporary file, synced and renamed over the old one, and SQLite with a connection per call
/// (582 runs each: the rename carries the committed bytes to the new name).
#[test]
fn a_machine_loss_loses_what_was_not_synced() {
    let certified = |out: &retrylab::cli::Outcome, runs: &str| {
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        let want = format!(
            "certified for 2 faults: no property is violated by any schedule within the bound ({runs} runs, complete)"
        );
        assert!(out.stdout.contains(&want), "{want}\n{}", out.stdout);
    };
    certified(&explore_key_file(&machine_model("0/1"), ""), "844");
    let machine = machine_model("1/2");
    let found = explore_key_file(&machine, "");
    assert_eq!(found.code, 1, "{}\n{}", found.stdout, found.stderr);
    for line in [
        "no_duplicate violated by a run with 2 faults",
        "worker 0 crashes after_send of attempt 1; restarts at 1000 ms",
        "worker 0's machine is lost: its directory keeps what its commits made durable",
        "outcome: intent 0: completed (duplicate effect r1 of r0)",
    ] {
        assert!(found.stdout.contains(line), "{line}\n{}", found.stdout);
    }
    certified(&explore_key_file(&machine, "fsync"), "898");
    for script in ["b41_json_key_file.py", "b41_sqlite_key.py"] {
        let out = untouched(|| {
            let mut a = args(&[
                "explore",
                &machine,
                "--design",
                "x",
                "--max-faults",
                "2",
                "--executor-storage",
                storage(),
                "--executor",
            ]);
            a.push(py("x", script));
            retrylab(&a)
        });
        certified(&out, "582");
    }
}

/// The JSON key file of b41_json_key_file.py written by Node (`fs.writeSync`, `fs.fsyncSync`,
/// `fs.renameSync`, `fs.appendFileSync` with relative paths): the same figures as the Python
/// tool on the lost reply and on the crash window (seeds 70 to 79: 2 of them crash after the
/// send), durable and volatile; and when every crash loses the machine (a scripted crash after
/// the first send), the synced key survives it, where key_file.py's unsynced one does not.
#[test]
fn a_node_key_file_is_the_workers_disk_as_pythons() {
    let window = ["--executor-storage", storage(), "--first-seed", "70"];
    for (model, seeds) in [
        (LOST.to_string(), "20"),
        (CRASH.to_string(), "10"),
        (volatile_crash(), "10"),
    ] {
        let node_t = untouched(|| {
            totals(
                &model,
                "x",
                node("x", "b41_json_key_file.js"),
                seeds,
                &window,
            )
        });
        let py_t =
            untouched(|| totals(&model, "x", py("x", "b41_json_key_file.py"), seeds, &window));
        assert_eq!(node_t, py_t, "{model}");
    }
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(CRASH).unwrap()).unwrap();
    let m = m.as_object_mut().unwrap();
    m.remove("$schema");
    m["workers"]["crash"] = serde_json::json!({"machine_loss": 1});
    m.insert(
        "faults".into(),
        serde_json::json!([{"crash_worker": {"attempt": 1, "point": "after_send"}}]),
    );
    let path = scratch().join("machine_lost_after_send.json");
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let path = path.display().to_string();
    let store = ["--executor-storage", storage()];
    let node_t = untouched(|| totals(&path, "x", node("x", "b41_json_key_file.js"), "10", &store));
    assert_eq!(node_t["duplicate_effects"], 0, "{node_t}");
    assert_eq!(node_t["effects"], 10, "{node_t}");
    let unsynced = untouched(|| {
        totals(
            &path,
            "x",
            format!(
                "x={} tests/executors/key_file.py",
                crate::common::python::python()
            ),
            "10",
            &store,
        )
    });
    assert_eq!(unsynced["duplicate_effects"], 10, "{unsynced}");
}

/// Where the storage cannot be: a missing directory, a file, a directory where nothing can be
/// made (`/proc`): exit 2, naming the path, before any run (the binary: the storage's
/// location is set once per process).
#[test]
fn a_storage_that_cannot_be_made_is_refused_naming_its_path() {
    for (dir, why) in [
        (
            "/nonexistent/storage",
            "--executor-storage /nonexistent/storage: No such file or directory",
        ),
        ("README.md", "--executor-storage README.md: not a directory"),
        (
            "/proc",
            "the executors' storage: cannot make a private directory in /proc",
        ),
    ] {
        let out = untouched(|| {
            Command::new(env!("CARGO_BIN_EXE_retrylab"))
                .args([
                    "run",
                    LOST,
                    "--design",
                    "x",
                    "--seeds",
                    "1",
                    "--executor-storage",
                    dir,
                ])
                .arg("--executor")
                .arg(py("x", "b41_uuid4_key.py"))
                .output()
                .unwrap()
        });
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{dir}: {stderr}");
        assert!(stderr.contains(why), "{dir}: {stderr}");
        assert!(out.stdout.is_empty(), "{dir}");
    }
}

//! Contract assumptions as data: what each design declares, how a model is judged against
//! them, and how `run` and `check` report it (the JSON field, the table's mark and footnote,
//! warnings on stderr that never change stdout or the exit code), with the warning for a
//! scripted fault that never fired.

use crate::common;
use crate::common::cli;

use std::path::PathBuf;

use cli::*;
use common::*;
use retrylab::design::assumptions::judge;
use serde_json::{Value, json};

/// Model files in a scratch directory of this test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "retrylab-assumptions-{}-{test}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn model(&self, file: &str, v: &Value) -> String {
        let path = self.0.join(file);
        std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
        path.to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn names(design_name: &str) -> Vec<&'static str> {
    design(design_name)
        .assumptions()
        .iter()
        .map(|a| a.name)
        .collect()
}

#[test]
fn each_design_declares_the_assumptions_its_guarantee_rests_on() {
    let key = [
        "atomic_dedup",
        "one_key_scope",
        "in_flight_refused_or_held",
        "every_outcome_stored",
        "retention_covers_retries",
    ];
    let with = |extra: &[&'static str]| [&key[..], extra].concat();
    assert_eq!(
        names("same_key"),
        with(&[
            "mismatch_refused_or_original",
            "durable_journal",
            "authorization_survives"
        ])
    );
    assert_eq!(
        names("journal"),
        with(&["durable_journal", "authorization_survives"])
    );
    assert_eq!(
        names("durable_authorization"),
        with(&["authorization_survives"])
    );
    assert_eq!(
        names("journal_reconcile"),
        with(&[
            "durable_journal",
            "authorization_survives",
            "read_back_identifies_operation",
            "visibility_bound_covers_lag"
        ])
    );
    assert_eq!(
        names("journal_reconcile_lease"),
        [
            "atomic_dedup",
            "one_key_scope",
            "lease_outlasts_request",
            "every_outcome_stored",
            "retention_covers_retries",
            "own_sends_spaced",
            "durable_journal",
            "authorization_survives",
            "read_back_identifies_operation",
            "visibility_bound_covers_lag",
            "lease_covers_step",
        ]
    );
    // Designs that promise nothing declare nothing.
    for d in [
        "no_dedup",
        "new_key_after_replan",
        "key_per_attempt",
        "payload_hash_key",
        "layered_retries",
        "single_use_token",
    ] {
        assert!(names(d).is_empty(), "{d}");
    }
    for d in retrylab::design::all() {
        for a in d.assumptions() {
            let snake = a.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
            assert!(snake, "{}", a.name);
            assert!(
                !a.description.is_empty() && !a.description.contains('\n'),
                "{}",
                a.name
            );
        }
    }
}

#[test]
fn json_reports_each_assumption_in_exactly_this_form() {
    let m = root().join("models/ticket_lost_response.json");
    let out = retrylab(&[
        "run",
        m.to_str().unwrap(),
        "--seeds",
        "5",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"][0]["design"], "no_dedup");
    assert_eq!(v["results"][0]["assumptions"], json!([]));
    assert_eq!(v["results"][1]["design"], "same_key");
    assert_eq!(
        v["results"][1]["assumptions"],
        json!([
            { "name": "atomic_dedup", "holds": true,
              "why": "dedup by_key on the caller's key, atomicity atomic" },
            { "name": "one_key_scope", "holds": true,
              "why": "key_scope tenant, which does not depend on the region" },
            { "name": "in_flight_refused_or_held", "holds": true, "why": "in_flight reject" },
            { "name": "every_outcome_stored", "holds": true, "why": "stored_outcomes all" },
            { "name": "retention_covers_retries", "holds": true,
              "why": "provider.retention_ms absent: keys are kept forever" },
            { "name": "mismatch_refused_or_original", "holds": true, "why": "mismatch reject" },
            { "name": "durable_journal", "holds": true, "why": "workers.journal durable" },
            { "name": "authorization_survives", "holds": true,
              "why": "agent.authorization_loss 0" }
        ])
    );
    // Every entry has exactly these three fields.
    for r in v["results"].as_array().unwrap() {
        for a in r["assumptions"].as_array().unwrap() {
            let mut keys: Vec<&String> = a.as_object().unwrap().keys().collect();
            keys.sort();
            assert_eq!(keys, ["holds", "name", "why"]);
        }
    }
}

/// A lease shorter than the client timeout (and than the processing): the restarted worker
/// waits out its predecessor's 3 s lease and sends the key again while the first request
/// is still processing, and a provider that lets both commit creates two. The validator
/// accepts the model; the report says the lease design's guarantee does not apply.
fn short_lease(lease_ms: u64) -> Value {
    let v = set(base(), "designs", json!(["journal_reconcile_lease"]));
    let v = set(v, "name", json!("short_lease"));
    let v = set(v, "executor.lease_ms", json!(lease_ms));
    let v = set(
        v,
        "provider",
        json!({ "dedup": "by_key", "in_flight": "process_both", "processing_ms": 50 }),
    );
    faults(
        v,
        json!([
            { "crash_worker": { "attempt": 1, "point": "after_send" } },
            { "slow_processing": { "attempt": 1, "ms": 4_000 } }
        ]),
    )
}

#[test]
fn a_lease_shorter_than_the_client_timeout_is_reported_and_duplicates() {
    let d = "journal_reconcile_lease";
    expect(&short_lease(3_000), d, c(2, 1, 1, 0, 0, 0, 3));
    let failed: Vec<(String, String)> = judge(design(d), &model(&short_lease(3_000)))
        .into_iter()
        .filter(|a| !a.holds)
        .map(|a| (a.name, a.why))
        .collect();
    let failed: Vec<(&str, &str)> = failed
        .iter()
        .map(|(n, w)| (n.as_str(), w.as_str()))
        .collect();
    assert_eq!(
        failed,
        [
            (
                "lease_outlasts_request",
                "in_flight process_both: two requests with one key can both commit; executor.lease_ms 3000 < latency 10 + processing 4000"
            ),
            (
                "read_back_identifies_operation",
                "executor.reconcile by_key but provider.lookup none: every read is unsupported, and the design falls back to resending under its key"
            ),
            (
                "lease_covers_step",
                "executor.lease_ms 3000 < timeout_ms 5000 + latency 10"
            ),
        ]
    );
    // A lease that outlasts the step and the processing: one effect, every assumption holds.
    expect(&short_lease(6_000), d, c(1, 1, 0, 0, 0, 0, 3));
    let all = judge(design(d), &model(&short_lease(6_000)));
    assert!(all.iter().all(|a| a.holds), "{all:?}");
    let read_back = all
        .iter()
        .find(|a| a.name == "read_back_identifies_operation")
        .unwrap();
    assert_eq!(
        read_back.why,
        "not needed: the provider's key contract absorbs every resend"
    );

    // Through the binary: the verdict is marked, a footnote names the assumptions, stderr
    // warns, and the exit code is 0.
    let dir = Scratch::new("short_lease");
    let path = dir.model("short_lease.json", &short_lease(3_000));
    let out = retrylab(&["run", &path, "--seeds", "10"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(" 72.2-100    0-27.8"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("  harm: ") && l.ends_with("; no expectations *")),
        "{text}"
    );
    let notes = "\
* the design's guarantee does not apply: an assumption it rests on does not hold
  journal_reconcile_lease: lease_outlasts_request: in_flight process_both: two requests with one key
      can both commit; executor.lease_ms 3000 < latency 10 + processing 4000
  journal_reconcile_lease: read_back_identifies_operation: executor.reconcile by_key but
      provider.lookup none: every read is unsupported, and the design falls back to resending under
      its key
  journal_reconcile_lease: lease_covers_step: executor.lease_ms 3000 < timeout_ms 5000 + latency 10
";
    assert!(text.ends_with(notes), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert_eq!(
        stderr(&out),
        "\
warning: short_lease: journal_reconcile_lease: assumption lease_outlasts_request does not hold (in_flight process_both: two requests with one key can both commit; executor.lease_ms 3000 < latency 10 + processing 4000): the design's guarantee does not apply
warning: short_lease: journal_reconcile_lease: assumption read_back_identifies_operation does not hold (executor.reconcile by_key but provider.lookup none: every read is unsupported, and the design falls back to resending under its key): the design's guarantee does not apply
warning: short_lease: journal_reconcile_lease: assumption lease_covers_step does not hold (executor.lease_ms 3000 < timeout_ms 5000 + latency 10): the design's guarantee does not apply
"
    );
    // JSON carries the same judgement.
    let out = retrylab(&["run", &path, "--seeds", "10", "--format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let holds: Vec<(&str, bool)> = v["results"][0]["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["holds"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        holds,
        [
            ("atomic_dedup", true),
            ("one_key_scope", true),
            ("lease_outlasts_request", false),
            ("every_outcome_stored", true),
            ("retention_covers_retries", true),
            ("own_sends_spaced", true),
            ("durable_journal", true),
            ("authorization_survives", true),
            ("read_back_identifies_operation", false),
            ("visibility_bound_covers_lag", true),
            ("lease_covers_step", false),
        ]
    );
}

/// A search index that lags 8 s and a provider without keys: with a visibility bound of 0
/// the design trusts the first "not found" and creates again. The bundled window's bound of
/// 10 s covers the lag, and nothing is duplicated.
#[test]
fn a_visibility_bound_below_the_lag_is_reported_and_duplicates() {
    let text =
        std::fs::read_to_string(root().join("models/windows/delayed_visibility.json")).unwrap();
    let window: Value = serde_json::from_str(&text).unwrap();
    let zero = set(window.clone(), "executor.visibility_bound_ms", json!(0));
    let d = "journal_reconcile";
    expect(&zero, d, c(2, 1, 1, 0, 0, 0, 3));
    expect(&window, d, c(1, 1, 0, 0, 0, 0, 4));
    let bound = |v: &Value| {
        judge(design(d), &model(v))
            .into_iter()
            .find(|a| a.name == "visibility_bound_covers_lag")
            .map(|a| (a.holds, a.why))
            .unwrap()
    };
    assert_eq!(
        bound(&zero),
        (
            false,
            "executor.visibility_bound_ms 0 < 8070 (lag 8000 + processing 50 + latency 2 x 10)"
                .to_string()
        )
    );
    assert_eq!(
        bound(&window),
        (
            true,
            "executor.visibility_bound_ms 10000 >= 8070 (lag 8000 + processing 50 + latency 2 x 10)"
                .to_string()
        )
    );
    // Without keys, a search that proves absence is what carries the guarantee: the key
    // contract is not needed there.
    let dedup = judge(design(d), &model(&window))
        .into_iter()
        .find(|a| a.name == "atomic_dedup")
        .unwrap();
    assert!(
        dedup.holds && dedup.why.starts_with("not needed: "),
        "{dedup:?}"
    );
}

#[test]
fn a_scripted_fault_that_never_fires_is_warned_about_on_stderr_only() {
    let text = std::fs::read_to_string(root().join("models/ticket_lost_response.json")).unwrap();
    let plain: Value = serde_json::from_str(&text).unwrap();
    let mut never = plain.clone();
    never["faults"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "crash_worker": { "attempt": 7, "point": "after_send" } }));
    let dir = Scratch::new("never");
    let (a, b) = (
        dir.model("plain.json", &plain),
        dir.model("never.json", &never),
    );
    for format in ["table", "json"] {
        let quiet = retrylab(&["run", &a, "--seeds", "50", "--format", format]);
        let warned = retrylab(&["run", &b, "--seeds", "50", "--format", format]);
        assert_eq!(stderr(&quiet), "");
        assert_eq!(
            stderr(&warned),
            "\
warning: ticket_lost_response: fault crash_worker {attempt: 7, point: after_send} never fired in 50 seeds of design no_dedup
warning: ticket_lost_response: fault crash_worker {attempt: 7, point: after_send} never fired in 50 seeds of design same_key
warning: ticket_lost_response: fault crash_worker {attempt: 7, point: after_send} never fired in 50 seeds of design new_key_after_replan
"
        );
        // The same stdout bytes and exit code: the fault changed nothing, and the warning
        // is not part of the report.
        assert_eq!(quiet.stdout, warned.stdout, "{format}");
        assert_eq!(quiet.status.code(), warned.status.code());
    }
    // Under --fail-on the exit code is the property's, warnings or not.
    let quiet = retrylab(&["run", &a, "--seeds", "20", "--fail-on", "no_duplicate"]);
    let warned = retrylab(&["run", &b, "--seeds", "20", "--fail-on", "no_duplicate"]);
    assert_eq!(quiet.status.code(), Some(1));
    assert_eq!(warned.status.code(), Some(1));
    assert_eq!(quiet.stdout, warned.stdout);
    // A fault the run reaches is not reported: attempt 2 is each design's second create.
    let mut reached = plain.clone();
    reached["faults"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "drop_request": { "attempt": 2 } }));
    let c = dir.model("reached.json", &reached);
    let out = retrylab(&["run", &c, "--seeds", "20", "--design", "same_key"]);
    assert_eq!(stderr(&out), "");
    // check warns the same way, and still exits 0 when every expectation is met.
    let out = retrylab(&["check", &b, "--seeds", "30"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "warning: ticket_lost_response: fault crash_worker {attempt: 7, point: after_send} never fired in 30 seeds of design same_key\n"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("warning"));
}

#[test]
fn check_reports_whether_each_guarantee_applies() {
    let m = root().join("models/windows/lease_shorter_than_processing.json");
    let out = retrylab(&["check", m.to_str().unwrap(), "--seeds", "20"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for line in [
        "  *     same_key                 assumptions: 7 of 8 hold; the guarantee does not apply: in_flight_refused_or_held does not hold\n",
        "  *     journal_reconcile_lease  assumptions: 8 of 11 hold; the guarantee does not apply: lease_outlasts_request, own_sends_spaced, read_back_identifies_operation do not hold\n",
    ] {
        assert!(text.contains(line), "{text}");
    }
    assert!(!text.contains("FAIL"), "{text}");
    let warnings = stderr(&out);
    assert!(
        warnings.contains(
            "warning: lease_shorter_than_processing: journal_reconcile_lease: assumption lease_outlasts_request does not hold (in_flight process_both: two requests with one key can both commit; executor.lease_ms 10000 < latency 10 + processing 20000): the design's guarantee does not apply\n"
        ),
        "{warnings}"
    );
    // Where every assumption holds, check says so.
    let m = root().join("models/ticket_lost_response.json");
    let out = retrylab(&["check", m.to_str().unwrap(), "--seeds", "20"]);
    assert!(
        stdout(&out).contains("        same_key                 assumptions: all 8 hold\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(stderr(&out), "");
}

#[test]
fn an_assumed_retention_of_zero_is_refused() {
    let v = set(base(), "executor.assumed_retention_ms", json!(0));
    let e = retrylab::model::Model::from_json(&v.to_string(), "scenario.json").unwrap_err();
    let p = &e.problems[..];
    assert_eq!(p.len(), 1, "{e}");
    assert_eq!(p[0].path, "executor.assumed_retention_ms");
    assert_eq!(
        p[0].message,
        "must be at least 1; leave it out when keys are believed to be kept forever"
    );
}

/// The retention a journal design relies on is the one its operator assumes: its retry
/// horizon stops there. An assumption longer than the provider's retention does not hold;
/// `same_key`, which has no notion of a key's age, needs the agent's whole horizon covered.
#[test]
fn retention_is_judged_against_the_retry_horizon() {
    let stripe = |assumed: Option<u64>| {
        let v = set(base(), "provider", json!({ "preset": "stripe_v1" }));
        let v = set(v, "agent.think_ms", json!(90_000_000));
        match assumed {
            Some(ms) => set(v, "executor.assumed_retention_ms", json!(ms)),
            None => v,
        }
    };
    let retention = |d: &str, v: &Value| {
        judge(design(d), &model(v))
            .into_iter()
            .find(|a| a.name == "retention_covers_retries")
            .map(|a| (a.holds, a.why))
            .unwrap()
    };
    let s = |holds: bool, why: &str| (holds, why.to_string());
    assert_eq!(
        retention("journal", &stripe(Some(86_400_000))),
        s(
            true,
            "provider.retention_ms 86400000 >= the retry horizon 86395010 ms (bounded by executor.assumed_retention_ms)"
        )
    );
    assert_eq!(
        retention("journal", &stripe(Some(90_000_000))),
        s(
            false,
            "provider.retention_ms 86400000 < the retry horizon 89995010 ms (bounded by executor.assumed_retention_ms)"
        )
    );
    // No assumed retention: one replan 25 h after a 60 s tool timeout.
    assert_eq!(
        retention("journal", &stripe(None)),
        s(
            false,
            "provider.retention_ms 86400000 < the retry horizon 90065010 ms (bounded by agent calls, sends, restarts and pauses)"
        )
    );
    assert_eq!(
        retention("same_key", &stripe(Some(86_400_000))),
        s(
            false,
            "provider.retention_ms 86400000 < the retry horizon 90065010 ms (bounded by agent calls, sends, restarts and pauses)"
        )
    );
    // A deadline bounds the journal's horizon as well.
    let v = set(stripe(None), "executor.deadline_ms", json!(3_600_000));
    assert_eq!(
        retention("journal", &v),
        s(
            true,
            "provider.retention_ms 86400000 >= the retry horizon 3600010 ms (bounded by executor.deadline_ms)"
        )
    );
}

/// The lease keeps other workers out, not the holder's own retry (issue 20): on the bundled
/// window a 5 s timeout and a retry 1 s later resend while the first create may still be
/// processing (up to 20 s) at a provider that executes both, and 719 of seeds 0..999
/// duplicate. `own_sends_spaced` says so and does not hold (`lease_outlasts_request`, about
/// other workers, does). With the retry spaced past the longest request, every assumption
/// holds, and no seed duplicates.
#[test]
fn the_lease_holders_own_retry_is_judged_by_own_sends_spaced() {
    let path = root().join("models/windows/lease_own_retry_overlaps.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let d = design("journal_reconcile_lease");
    let lease = |v: &Value| {
        judge(d, &model(v))
            .into_iter()
            .find(|j| j.name == "own_sends_spaced")
            .unwrap()
    };
    let j = lease(&v);
    assert!(!j.holds);
    assert!(
        j.why.ends_with(
            "the holder sends again 6000 ms after its last send (executor.timeout_ms 5000 + backoff_ms 1000) < latency 10 + processing 20000"
        ),
        "{}",
        j.why
    );
    let m = run(&v, "journal_reconcile_lease", 1_000);
    assert_eq!((m.duplicate_effects, m.effects), (719, 1_719));

    // The retry 15.01 s after the timeout: sends 20.01 s apart, past the longest request.
    let spaced = set(v, "executor.backoff_ms", json!(15_010));
    assert!(lease(&spaced).holds, "{}", lease(&spaced).why);
    assert!(
        judge(d, &model(&spaced)).iter().all(|j| j.holds),
        "{:?}",
        judge(d, &model(&spaced))
    );
    let m = run(&spaced, "journal_reconcile_lease", 1_000);
    assert_eq!(m.duplicate_effects, 0);
}

/// The "Guarantee:" paragraph of a design's module documentation: its lines after the
/// marker, up to the first blank doc line.
fn guarantee_paragraph(source: &str) -> String {
    let mut lines = source
        .lines()
        .map_while(|l| l.strip_prefix("//!"))
        .skip_while(|l| !l.trim_start().starts_with("Guarantee:"));
    let mut text = String::new();
    for l in lines.by_ref() {
        if l.trim().is_empty() {
            break;
        }
        text.push_str(l.trim());
        text.push(' ');
    }
    text
}

/// The names in backquotes in `text`.
fn quoted(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Each design written in code documents its guarantee in prose: every assumption it
/// declares is named there (or in the paragraph of the design it says it extends, as
/// "`journal`'s"), and every assumption the paragraph names is one it declares. Prose that
/// drifts from `Design::assumptions` fails here.
#[test]
fn guarantee_paragraphs_name_the_declared_assumptions() {
    let files = [
        ("journal", "journal_design.rs"),
        ("journal_reconcile", "journal_reconcile.rs"),
        ("journal_reconcile_lease", "journal_reconcile_lease.rs"),
        ("durable_authorization", "durable_authorization.rs"),
    ];
    let every: Vec<&str> = retrylab::design::assumptions::NAMES.to_vec();
    let paragraph = |design: &str| {
        let (_, file) = files.iter().find(|(d, _)| *d == design).unwrap();
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("src/design")
            .join(file);
        let text = guarantee_paragraph(&std::fs::read_to_string(&path).unwrap());
        assert!(
            !text.is_empty(),
            "{}: no Guarantee: paragraph",
            path.display()
        );
        text
    };
    // The assumptions a paragraph names, with those of the paragraphs it extends.
    fn covered(design: &str, paragraph: &dyn Fn(&str) -> String, every: &[&str]) -> Vec<String> {
        let text = paragraph(design);
        let mut names: Vec<String> = quoted(&text)
            .into_iter()
            .filter(|q| every.contains(&q.as_str()))
            .collect();
        for q in quoted(&text) {
            if text.contains(&format!("`{q}`'s")) && q != design {
                names.extend(covered(&q, paragraph, every));
            }
        }
        names
    }
    for (design, _) in files {
        let d = retrylab::design::find(design).unwrap();
        let declared: Vec<&str> = d.assumptions().iter().map(|a| a.name).collect();
        let named = covered(design, &paragraph, &every);
        for a in &declared {
            assert!(
                named.iter().any(|n| n == a),
                "{design}: declares `{a}`, which its Guarantee paragraph does not name"
            );
        }
        for n in quoted(&paragraph(design)) {
            if every.contains(&n.as_str()) {
                assert!(
                    declared.contains(&n.as_str()),
                    "{design}: its Guarantee paragraph names `{n}`, which it does not declare"
                );
            }
        }
    }
}

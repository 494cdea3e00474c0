//! Every failure window from the seeds, as a bundled model (`models/windows/`), with the
//! exact counts per design. The models use constant timings, so every seed gives the same
//! counts; the test runs several seeds and divides.
//!
//! Each table is keyed by design name, with the counts per seed as named fields ([`Row`]);
//! a count a row leaves out is pinned at 0. A table checks the designs it lists: a design
//! registered but absent from a table is not checked by it, and a name that is not a
//! registered design fails the test.

use std::path::Path;

use retrylab::design::assumptions::judge;
use retrylab::design::{self, Design};
use retrylab::model::Model;
use retrylab::run::run_seeds;

/// The counts of one design in one window, per seed, named as the columns of
/// `retrylab run --wide`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Row {
    /// Effects in the ledger (ground truth).
    effects: u64,
    /// Intents told success whose effects exist.
    completed: u64,
    /// Duplicate effects: beyond one per intent and step.
    dup: u64,
    /// Effects with arguments the user did not ask for.
    drifted: u64,
    /// Intents told success with an effect missing.
    false_ok: u64,
    /// Intents told failure with an effect left behind.
    false_fail: u64,
    /// Genuine repeats told success with no effect of their own.
    merged: u64,
    /// Intents left unresolved.
    unresolved: u64,
    /// Remote calls: every attempt and lookup.
    calls: u64,
}

/// Every count 0: the rest of a row (`..ZERO`).
const ZERO: Row = Row {
    effects: 0,
    completed: 0,
    dup: 0,
    drifted: 0,
    false_ok: 0,
    false_fail: 0,
    merged: 0,
    unresolved: 0,
    calls: 0,
};

/// The registered design called `name`: a table naming another fails (a typo, a design
/// renamed or removed).
fn registered(name: &str) -> &'static dyn Design {
    design::find(name).unwrap_or_else(|| {
        panic!(
            "{name} is not a registered design; registered: {}",
            design::names().join(", ")
        )
    })
}

fn check(window: &str, expected: &[(&str, Row)]) {
    let model = window_model(window);
    let seeds = 4;
    for &(name, want) in expected {
        let d = registered(name);
        assert!(
            model.designs.iter().any(|n| n == name),
            "{window}: the model does not compare {name}"
        );
        let m = run_seeds(&model, d, 0..seeds);
        let intents = m.intents / seeds;
        let got = Row {
            effects: m.effects,
            completed: m.completed,
            dup: m.duplicate_effects,
            drifted: m.drifted_effects,
            false_ok: m.false_success,
            false_fail: m.false_failure,
            merged: m.merged_repeats,
            unresolved: m.unresolved,
            calls: m.remote_calls,
        };
        // Every seed gives exactly the pinned counts: the totals are `seeds` times them.
        let totals = Row {
            effects: want.effects * seeds,
            completed: want.completed * seeds,
            dup: want.dup * seeds,
            drifted: want.drifted * seeds,
            false_ok: want.false_ok * seeds,
            false_fail: want.false_fail * seeds,
            merged: want.merged * seeds,
            unresolved: want.unresolved * seeds,
            calls: want.calls * seeds,
        };
        assert_eq!(
            got, totals,
            "{window}: {name} (totals over {seeds} seeds, {intents} intent(s) each)"
        );
    }
}

/// A bundled window model.
fn window_model(name: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/windows")
        .join(format!("{name}.json"));
    Model::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The seeds' table, for every design: keys bound to the intent (or its arguments, or an
/// authorization) absorb the replan; per-call and per-send keys do not. layered_retries
/// reports the timeout as a failure and the agent gives up on a ticket that exists.
#[test]
fn reply_lost_after_commit() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("journal",                 Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("journal_reconcile",       Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("layered_retries",         Row { effects: 1, false_fail: 1, calls: 1, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
    ];
    check("reply_lost_after_commit", &expected);
}

/// The same lost reply, but the agent's replan starts a new session and the user authorizes
/// the action again. Every design bound to the authorization (`same_key`, the journal family,
/// `durable_authorization`) now opens a second operation under a new key and duplicates, like
/// `single_use_token`; the first operation stays unknown. Only the key bound to the arguments
/// absorbs the replan (and it merges genuine repeats, see `genuine_repeat`).
#[test]
fn identity_loss() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("journal",                 Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("journal_reconcile",       Row { effects: 2, completed: 1, dup: 1, calls: 3, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 2, completed: 1, dup: 1, calls: 3, ..ZERO }),
        ("layered_retries",         Row { effects: 1, false_fail: 1, calls: 1, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
    ];
    check("identity_loss", &expected);
}

/// Recovery from a durable journal keeps the recorded key; designs that mint a new key or
/// token per send (and the re-run job of layered_retries) create a second ticket.
#[test]
fn crash_after_success() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("journal",                 Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("journal_reconcile",       Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("layered_retries",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
    ];
    check("crash_after_success", &expected);
}

/// Changed arguments under the same intent are never applied by the designs bound to the
/// intent: the provider rejects them (same_key) or the journal refuses them before sending.
/// Neither tells the agent "failed": the original ticket exists, so the honest answer is
/// "unknown" and the user hears "unresolved". layered_retries turns the refusal into a
/// failure (a false one).
#[test]
fn changed_parameters() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 1, dup: 1, drifted: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 1, unresolved: 1, calls: 3, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 2, completed: 1, dup: 1, drifted: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 1, dup: 1, drifted: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 2, completed: 1, dup: 1, drifted: 1, calls: 2, ..ZERO }),
        ("journal",                 Row { effects: 1, unresolved: 1, calls: 1, ..ZERO }),
        ("journal_reconcile",       Row { effects: 1, unresolved: 1, calls: 2, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 1, unresolved: 1, calls: 2, ..ZERO }),
        ("layered_retries",         Row { effects: 1, false_fail: 1, calls: 1, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 1, dup: 1, drifted: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 1, unresolved: 1, calls: 1, ..ZERO }),
    ];
    check("changed_parameters", &expected);
}

/// A second identical intent must be created: only a key hashed from the arguments merges it.
#[test]
fn genuine_repeat() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 2, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 2, completed: 2, calls: 2, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 2, completed: 2, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 2, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 1, completed: 1, false_ok: 1, merged: 1, calls: 2, ..ZERO }),
        ("journal",                 Row { effects: 2, completed: 2, calls: 2, ..ZERO }),
        ("journal_reconcile",       Row { effects: 2, completed: 2, calls: 2, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 2, completed: 2, calls: 2, ..ZERO }),
        ("layered_retries",         Row { effects: 2, completed: 2, calls: 2, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 2, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 2, completed: 2, calls: 2, ..ZERO }),
    ];
    check("genuine_repeat", &expected);
}

/// After an 80 h freeze the key is gone (pruned between 24 h and 72 h): every key-only design
/// duplicates silently; the read-back by search finds the first ticket.
#[test]
fn retention_expired() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("journal",                 Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("journal_reconcile",       Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("layered_retries",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
    ];
    check("retention_expired", &expected);
}

/// A retry while the first attempt is still processing meets Stripe's 409 and retries later
/// with the same key; a new key per send or per issue processes it again.
#[test]
fn overlapping_attempts() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("journal",                 Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("journal_reconcile",       Row { effects: 1, completed: 1, calls: 5, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 1, completed: 1, calls: 5, ..ZERO }),
        ("layered_retries",         Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
    ];
    check("overlapping_attempts", &expected);
}

/// Nothing was committed, so every retry is safe; layered_retries tells the user it failed.
#[test]
fn request_never_reached() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("journal",                 Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("journal_reconcile",       Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("layered_retries",         Row { calls: 1, ..ZERO }),
        ("single_use_token",        Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
    ];
    check("request_never_reached", &expected);
}

/// No provider dedup: only the reconciling designs avoid the second ticket, by not trusting
/// "not found" until the visibility bound has passed.
#[test]
fn delayed_visibility() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("journal",                 Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("journal_reconcile",       Row { effects: 1, completed: 1, calls: 4, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 1, completed: 1, calls: 4, ..ZERO }),
        ("layered_retries",         Row { effects: 1, false_fail: 1, calls: 1, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
    ];
    check("delayed_visibility", &expected);
}

/// The restarted worker and the other worker's sweeper both take up the operation while its
/// first request is still processing; only the lease (30 s, longer than the 20 s of
/// processing) keeps it to one dispatch.
#[test]
fn two_workers_recovering() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("journal",                 Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("journal_reconcile",       Row { effects: 2, completed: 1, dup: 1, calls: 3, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("layered_retries",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
    ];
    check("two_workers_recovering", &expected);
}

/// The same two workers with a lease (10 s) shorter than the processing (20 s): when the
/// lease runs out, the restarted worker claims the operation and sends its key again while
/// the first request is still processing, and this provider lets both commit. The lease
/// design duplicates like every other, and the report says why: its assumption
/// `lease_outlasts_request` does not hold (`lease_covers_step` does: the lease outlasts a
/// send and its timeout).
#[test]
fn lease_shorter_than_processing() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("journal",                 Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("journal_reconcile",       Row { effects: 2, completed: 1, dup: 1, calls: 3, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 2, completed: 1, dup: 1, calls: 3, ..ZERO }),
        ("layered_retries",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
    ];
    check("lease_shorter_than_processing", &expected);
    let model = window_model("lease_shorter_than_processing");
    let lease = design::find("journal_reconcile_lease").unwrap();
    let report: Vec<(String, bool, String)> = judge(lease, &model)
        .into_iter()
        .map(|a| (a.name, a.holds, a.why))
        .collect();
    let at = |name: &str| report.iter().find(|a| a.0 == name).unwrap().clone();
    assert_eq!(
        at("lease_outlasts_request"),
        (
            "lease_outlasts_request".to_string(),
            false,
            "in_flight process_both: two requests with one key can both commit; executor.lease_ms 10000 < latency 10 + processing 20000".to_string()
        )
    );
    assert_eq!(
        at("lease_covers_step"),
        (
            "lease_covers_step".to_string(),
            true,
            "executor.lease_ms 10000 >= timeout_ms 5000 + latency 10".to_string()
        )
    );
    // With the bundled window's 30 s lease the same assumption holds, and the lease design
    // does not duplicate (see `two_workers_recovering`).
    let holds = judge(lease, &window_model("two_workers_recovering"))
        .into_iter()
        .find(|a| a.name == "lease_outlasts_request")
        .unwrap();
    assert!(holds.holds, "{}", holds.why);
}

/// A success after the client timeout: same-key retries meet 409 until the agent runs out of
/// calls (unresolved, honestly); read-back waits for the pending work and confirms it.
#[test]
fn delayed_success() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { effects: 1, unresolved: 1, calls: 3, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { effects: 1, unresolved: 1, calls: 3, ..ZERO }),
        ("journal",                 Row { effects: 1, unresolved: 1, calls: 3, ..ZERO }),
        ("journal_reconcile",       Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 1, completed: 1, calls: 3, ..ZERO }),
        ("layered_retries",         Row { effects: 1, false_fail: 1, calls: 1, ..ZERO }),
        ("single_use_token",        Row { effects: 2, completed: 1, dup: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { effects: 1, unresolved: 1, calls: 3, ..ZERO }),
    ];
    check("delayed_success", &expected);
}

/// The provider is down. Remote calls per intent: 3 (HTTP) x 2 (agent) for the single-loop
/// designs, double that when each retry is preceded by a read, 3 x 2 x 2 x 2 = 24 for
/// layered_retries.
#[test]
fn four_retry_layers() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { unresolved: 1, calls: 6, ..ZERO }),
        ("same_key",                Row { unresolved: 1, calls: 6, ..ZERO }),
        ("new_key_after_replan",    Row { unresolved: 1, calls: 6, ..ZERO }),
        ("key_per_attempt",         Row { unresolved: 1, calls: 6, ..ZERO }),
        ("payload_hash_key",        Row { unresolved: 1, calls: 6, ..ZERO }),
        ("journal",                 Row { unresolved: 1, calls: 6, ..ZERO }),
        ("journal_reconcile",       Row { unresolved: 1, calls: 12, ..ZERO }),
        ("journal_reconcile_lease", Row { unresolved: 1, calls: 12, ..ZERO }),
        ("layered_retries",         Row { calls: 24, ..ZERO }),
        ("single_use_token",        Row { unresolved: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { unresolved: 1, calls: 6, ..ZERO }),
    ];
    check("four_retry_layers", &expected);
}

/// A key-then-effect provider crashes between the key and the effect: its in-progress record
/// has no effect and answers 409 until it expires (30 s). Every design that keeps the key
/// (same_key, the payload hash, the journal family, durable_authorization) is refused on
/// each of the agent's three calls, all within 10 s: nothing is created and the intent is
/// left unresolved (honestly: none of them claims success or failure). A new key per call
/// or per send creates the ticket on the second call. layered_retries reports the first
/// timeout as a failure: the user is told "failed", truly, and the intent is lost.
#[test]
fn key_then_effect_crash() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("same_key",                Row { unresolved: 1, calls: 3, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("key_per_attempt",         Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("payload_hash_key",        Row { unresolved: 1, calls: 3, ..ZERO }),
        ("journal",                 Row { unresolved: 1, calls: 3, ..ZERO }),
        ("journal_reconcile",       Row { unresolved: 1, calls: 6, ..ZERO }),
        ("journal_reconcile_lease", Row { unresolved: 1, calls: 6, ..ZERO }),
        ("layered_retries",         Row { calls: 1, ..ZERO }),
        ("single_use_token",        Row { effects: 1, completed: 1, calls: 2, ..ZERO }),
        ("durable_authorization",   Row { unresolved: 1, calls: 3, ..ZERO }),
    ];
    check("key_then_effect_crash", &expected);
}

/// Stripe's retention floor (24 h) with its assumed maximum (72 h). Intent 0's same-key retry
/// 1 s before the floor is a replay; intent 1's, 1 s after the latest prune moment, is a new
/// request: a second charge for every design, whatever moment the seed drew (no lookup, so
/// the read-back designs send again). Designs with a fresh key per send or per issue
/// duplicate intent 0 as well.
#[test]
fn retention_floor() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 4, completed: 2, dup: 2, calls: 4, ..ZERO }),
        ("same_key",                Row { effects: 3, completed: 2, dup: 1, calls: 4, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 3, completed: 2, dup: 1, calls: 4, ..ZERO }),
        ("key_per_attempt",         Row { effects: 4, completed: 2, dup: 2, calls: 4, ..ZERO }),
        ("payload_hash_key",        Row { effects: 3, completed: 2, dup: 1, calls: 4, ..ZERO }),
        ("journal",                 Row { effects: 3, completed: 2, dup: 1, calls: 4, ..ZERO }),
        ("journal_reconcile",       Row { effects: 3, completed: 2, dup: 1, calls: 6, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 3, completed: 2, dup: 1, calls: 6, ..ZERO }),
        ("layered_retries",         Row { effects: 3, completed: 2, dup: 1, calls: 4, ..ZERO }),
        ("single_use_token",        Row { effects: 4, completed: 2, dup: 2, calls: 4, ..ZERO }),
        ("durable_authorization",   Row { effects: 3, completed: 2, dup: 1, calls: 4, ..ZERO }),
    ];
    check("retention_floor", &expected);
}

/// Two actions, two records. The notification's reply is lost and the agent replans the whole
/// workflow: designs bound to each action's authorization answer the ticket from the journal
/// (or the provider's replay) and resend the notification under its key; per-call and per-send
/// keys create a second ticket and a second notification.
#[test]
fn notification_fails() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 4, completed: 1, dup: 2, calls: 4, ..ZERO }),
        ("same_key",                Row { effects: 2, completed: 1, calls: 3, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 4, completed: 1, dup: 2, calls: 4, ..ZERO }),
        ("key_per_attempt",         Row { effects: 4, completed: 1, dup: 2, calls: 4, ..ZERO }),
        ("payload_hash_key",        Row { effects: 2, completed: 1, calls: 4, ..ZERO }),
        ("journal",                 Row { effects: 2, completed: 1, calls: 3, ..ZERO }),
        ("journal_reconcile",       Row { effects: 2, completed: 1, calls: 4, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 2, completed: 1, calls: 4, ..ZERO }),
        ("layered_retries",         Row { effects: 2, false_fail: 1, calls: 2, ..ZERO }),
        ("single_use_token",        Row { effects: 4, completed: 1, dup: 2, calls: 4, ..ZERO }),
        ("durable_authorization",   Row { effects: 2, completed: 1, calls: 3, ..ZERO }),
    ];
    check("notification_fails", &expected);
}

/// The notification is refused, so the ticket is cancelled: a new operation that can fail too.
/// Its lost reply and replan give a second cancellation under per-call keys. The counts' last
/// column but one (unresolved) stays 0: the user is told the workflow failed, and the ticket
/// is undone, so it is not a false failure.
#[test]
fn compensation() {
    #[rustfmt::skip]
    let expected = [
        ("no_dedup",                Row { effects: 1, dup: 1, calls: 4, ..ZERO }),
        ("same_key",                Row { effects: 1, calls: 4, ..ZERO }),
        ("new_key_after_replan",    Row { effects: 1, dup: 1, calls: 4, ..ZERO }),
        ("key_per_attempt",         Row { effects: 1, dup: 1, calls: 4, ..ZERO }),
        ("payload_hash_key",        Row { effects: 1, calls: 4, ..ZERO }),
        ("journal",                 Row { effects: 1, calls: 4, ..ZERO }),
        ("journal_reconcile",       Row { effects: 1, calls: 5, ..ZERO }),
        ("journal_reconcile_lease", Row { effects: 1, calls: 5, ..ZERO }),
        ("layered_retries",         Row { effects: 1, calls: 3, ..ZERO }),
        ("single_use_token",        Row { effects: 1, dup: 1, calls: 4, ..ZERO }),
        ("durable_authorization",   Row { effects: 1, calls: 4, ..ZERO }),
    ];
    check("compensation", &expected);
}

/// Cancellations per seed in the compensation window: one, or two when the cancellation's
/// replan carries a fresh key.
#[test]
fn compensation_counts_per_design() {
    let model = window_model("compensation");
    for (name, per_seed) in [
        ("no_dedup", 2),
        ("same_key", 1),
        ("new_key_after_replan", 2),
        ("key_per_attempt", 2),
        ("payload_hash_key", 1),
        ("journal", 1),
        ("journal_reconcile", 1),
        ("journal_reconcile_lease", 1),
        ("layered_retries", 1),
        ("single_use_token", 2),
        ("durable_authorization", 1),
    ] {
        let m = run_seeds(&model, registered(name), 0..2);
        assert_eq!(m.compensations, 2 * per_seed, "{name}");
    }
}

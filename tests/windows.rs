//! Every failure window from the seeds, as a bundled model (`models/windows/`), with the
//! exact counts per design. The models use constant timings, so every seed gives the same
//! counts; the test runs several seeds and divides.
//!
//! Columns: effects, completed, duplicate effects, drifted effects, false success,
//! false failure, merged repeats, unresolved, remote calls; per seed.

use std::path::Path;

use retrylab::design;
use retrylab::design::assumptions::judge;
use retrylab::model::Model;
use retrylab::run::run_seeds;

type Expected = [(&'static str, [u64; 9]); 11];

fn check(window: &str, expected: Expected) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/windows")
        .join(format!("{window}.json"));
    let model = Model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        model.designs.len(),
        expected.len(),
        "{window}: every design is listed"
    );
    let seeds = 4;
    for (name, want) in expected {
        let m = run_seeds(&model, design::find(name).unwrap(), 0..seeds);
        let intents = m.intents / seeds;
        let got = [
            m.effects,
            m.completed,
            m.duplicate_effects,
            m.drifted_effects,
            m.false_success,
            m.false_failure,
            m.merged_repeats,
            m.unresolved,
            m.remote_calls,
        ];
        // Every seed gives exactly the pinned counts: the totals are `seeds` times them.
        assert_eq!(
            got,
            want.map(|x| x * seeds),
            "{window}: {name} (totals over {seeds} seeds, {intents} intent(s) each)"
        );
    }
}

/// A bundled window model.
fn window(name: &str) -> Model {
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
    check(
        "reply_lost_after_commit",
        [
            ("no_dedup", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("same_key", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("new_key_after_replan", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("journal", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("journal_reconcile_lease", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("layered_retries", [1, 0, 0, 0, 0, 1, 0, 0, 1]),
            ("single_use_token", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
        ],
    );
}

/// The same lost reply, but the agent's replan starts a new session and the user authorizes
/// the action again. Every design bound to the authorization (`same_key`, the journal family,
/// `durable_authorization`) now opens a second operation under a new key and duplicates, like
/// `single_use_token`; the first operation stays unknown. Only the key bound to the arguments
/// absorbs the replan (and it merges genuine repeats, see `genuine_repeat`).
#[test]
fn identity_loss() {
    check(
        "identity_loss",
        [
            ("no_dedup", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("same_key", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("new_key_after_replan", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("journal", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile", [2, 1, 1, 0, 0, 0, 0, 0, 3]),
            ("journal_reconcile_lease", [2, 1, 1, 0, 0, 0, 0, 0, 3]),
            ("layered_retries", [1, 0, 0, 0, 0, 1, 0, 0, 1]),
            ("single_use_token", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
        ],
    );
}

/// Recovery from a durable journal keeps the recorded key; designs that mint a new key or
/// token per send (and the re-run job of layered_retries) create a second ticket.
#[test]
fn crash_after_success() {
    check(
        "crash_after_success",
        [
            ("no_dedup", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("same_key", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("new_key_after_replan", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("journal", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("journal_reconcile_lease", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("layered_retries", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("single_use_token", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
        ],
    );
}

/// Changed arguments under the same intent are never applied by the designs bound to the
/// intent: the provider rejects them (same_key) or the journal refuses them before sending.
/// Neither tells the agent "failed": the original ticket exists, so the honest answer is
/// "unknown" and the user hears "unresolved". layered_retries turns the refusal into a
/// failure (a false one).
#[test]
fn changed_parameters() {
    check(
        "changed_parameters",
        [
            ("no_dedup", [2, 1, 1, 1, 0, 0, 0, 0, 2]),
            ("same_key", [1, 0, 0, 0, 0, 0, 0, 1, 3]),
            ("new_key_after_replan", [2, 1, 1, 1, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [2, 1, 1, 1, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [2, 1, 1, 1, 0, 0, 0, 0, 2]),
            ("journal", [1, 0, 0, 0, 0, 0, 0, 1, 1]),
            ("journal_reconcile", [1, 0, 0, 0, 0, 0, 0, 1, 2]),
            ("journal_reconcile_lease", [1, 0, 0, 0, 0, 0, 0, 1, 2]),
            ("layered_retries", [1, 0, 0, 0, 0, 1, 0, 0, 1]),
            ("single_use_token", [2, 1, 1, 1, 0, 0, 0, 0, 2]),
            ("durable_authorization", [1, 0, 0, 0, 0, 0, 0, 1, 1]),
        ],
    );
}

/// A second identical intent must be created: only a key hashed from the arguments merges it.
#[test]
fn genuine_repeat() {
    check(
        "genuine_repeat",
        [
            ("no_dedup", [2, 2, 0, 0, 0, 0, 0, 0, 2]),
            ("same_key", [2, 2, 0, 0, 0, 0, 0, 0, 2]),
            ("new_key_after_replan", [2, 2, 0, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [2, 2, 0, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [1, 1, 0, 0, 1, 0, 1, 0, 2]),
            ("journal", [2, 2, 0, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile", [2, 2, 0, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile_lease", [2, 2, 0, 0, 0, 0, 0, 0, 2]),
            ("layered_retries", [2, 2, 0, 0, 0, 0, 0, 0, 2]),
            ("single_use_token", [2, 2, 0, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [2, 2, 0, 0, 0, 0, 0, 0, 2]),
        ],
    );
}

/// After an 80 h freeze the key is gone (pruned between 24 h and 72 h): every key-only design
/// duplicates silently; the read-back by search finds the first ticket.
#[test]
fn retention_expired() {
    check(
        "retention_expired",
        [
            ("no_dedup", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("same_key", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("new_key_after_replan", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("journal", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile_lease", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("layered_retries", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("single_use_token", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
        ],
    );
}

/// A retry while the first attempt is still processing meets Stripe's 409 and retries later
/// with the same key; a new key per send or per issue processes it again.
#[test]
fn overlapping_attempts() {
    check(
        "overlapping_attempts",
        [
            ("no_dedup", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("same_key", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("new_key_after_replan", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("key_per_attempt", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("journal", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("journal_reconcile", [1, 1, 0, 0, 0, 0, 0, 0, 5]),
            ("journal_reconcile_lease", [1, 1, 0, 0, 0, 0, 0, 0, 5]),
            ("layered_retries", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("single_use_token", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
        ],
    );
}

/// Nothing was committed, so every retry is safe; layered_retries tells the user it failed.
#[test]
fn request_never_reached() {
    check(
        "request_never_reached",
        [
            ("no_dedup", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("same_key", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("new_key_after_replan", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("journal", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("journal_reconcile_lease", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("layered_retries", [0, 0, 0, 0, 0, 0, 0, 0, 1]),
            ("single_use_token", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
        ],
    );
}

/// No provider dedup: only the reconciling designs avoid the second ticket, by not trusting
/// "not found" until the visibility bound has passed.
#[test]
fn delayed_visibility() {
    check(
        "delayed_visibility",
        [
            ("no_dedup", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("same_key", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("new_key_after_replan", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("journal", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile", [1, 1, 0, 0, 0, 0, 0, 0, 4]),
            ("journal_reconcile_lease", [1, 1, 0, 0, 0, 0, 0, 0, 4]),
            ("layered_retries", [1, 0, 0, 0, 0, 1, 0, 0, 1]),
            ("single_use_token", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
        ],
    );
}

/// The restarted worker and the other worker's sweeper both take up the operation while its
/// first request is still processing; only the lease (30 s, longer than the 20 s of
/// processing) keeps it to one dispatch.
#[test]
fn two_workers_recovering() {
    check(
        "two_workers_recovering",
        [
            ("no_dedup", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("same_key", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("new_key_after_replan", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("journal", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile", [2, 1, 1, 0, 0, 0, 0, 0, 3]),
            ("journal_reconcile_lease", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("layered_retries", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("single_use_token", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
        ],
    );
}

/// The same two workers with a lease (10 s) shorter than the processing (20 s): when the
/// lease runs out, the restarted worker claims the operation and sends its key again while
/// the first request is still processing, and this provider lets both commit. The lease
/// design duplicates like every other, and the report says why: its assumption
/// `lease_outlasts_request` does not hold (`lease_covers_step` does: the lease outlasts a
/// send and its timeout).
#[test]
fn lease_shorter_than_processing() {
    check(
        "lease_shorter_than_processing",
        [
            ("no_dedup", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("same_key", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("new_key_after_replan", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("journal", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("journal_reconcile", [2, 1, 1, 0, 0, 0, 0, 0, 3]),
            ("journal_reconcile_lease", [2, 1, 1, 0, 0, 0, 0, 0, 3]),
            ("layered_retries", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("single_use_token", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
        ],
    );
    let model = window("lease_shorter_than_processing");
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
    let holds = judge(lease, &window("two_workers_recovering"))
        .into_iter()
        .find(|a| a.name == "lease_outlasts_request")
        .unwrap();
    assert!(holds.holds, "{}", holds.why);
}

/// A success after the client timeout: same-key retries meet 409 until the agent runs out of
/// calls (unresolved, honestly); read-back waits for the pending work and confirms it.
#[test]
fn delayed_success() {
    check(
        "delayed_success",
        [
            ("no_dedup", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("same_key", [1, 0, 0, 0, 0, 0, 0, 1, 3]),
            ("new_key_after_replan", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [1, 0, 0, 0, 0, 0, 0, 1, 3]),
            ("journal", [1, 0, 0, 0, 0, 0, 0, 1, 3]),
            ("journal_reconcile", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("journal_reconcile_lease", [1, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("layered_retries", [1, 0, 0, 0, 0, 1, 0, 0, 1]),
            ("single_use_token", [2, 1, 1, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [1, 0, 0, 0, 0, 0, 0, 1, 3]),
        ],
    );
}

/// The provider is down. Remote calls per intent: 3 (HTTP) x 2 (agent) for the single-loop
/// designs, double that when each retry is preceded by a read, 3 x 2 x 2 x 2 = 24 for
/// layered_retries.
#[test]
fn four_retry_layers() {
    check(
        "four_retry_layers",
        [
            ("no_dedup", [0, 0, 0, 0, 0, 0, 0, 1, 6]),
            ("same_key", [0, 0, 0, 0, 0, 0, 0, 1, 6]),
            ("new_key_after_replan", [0, 0, 0, 0, 0, 0, 0, 1, 6]),
            ("key_per_attempt", [0, 0, 0, 0, 0, 0, 0, 1, 6]),
            ("payload_hash_key", [0, 0, 0, 0, 0, 0, 0, 1, 6]),
            ("journal", [0, 0, 0, 0, 0, 0, 0, 1, 6]),
            ("journal_reconcile", [0, 0, 0, 0, 0, 0, 0, 1, 12]),
            ("journal_reconcile_lease", [0, 0, 0, 0, 0, 0, 0, 1, 12]),
            ("layered_retries", [0, 0, 0, 0, 0, 0, 0, 0, 24]),
            ("single_use_token", [0, 0, 0, 0, 0, 0, 0, 1, 2]),
            ("durable_authorization", [0, 0, 0, 0, 0, 0, 0, 1, 6]),
        ],
    );
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
    check(
        "key_then_effect_crash",
        [
            ("no_dedup", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("same_key", [0, 0, 0, 0, 0, 0, 0, 1, 3]),
            ("new_key_after_replan", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("key_per_attempt", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("payload_hash_key", [0, 0, 0, 0, 0, 0, 0, 1, 3]),
            ("journal", [0, 0, 0, 0, 0, 0, 0, 1, 3]),
            ("journal_reconcile", [0, 0, 0, 0, 0, 0, 0, 1, 6]),
            ("journal_reconcile_lease", [0, 0, 0, 0, 0, 0, 0, 1, 6]),
            ("layered_retries", [0, 0, 0, 0, 0, 0, 0, 0, 1]),
            ("single_use_token", [1, 1, 0, 0, 0, 0, 0, 0, 2]),
            ("durable_authorization", [0, 0, 0, 0, 0, 0, 0, 1, 3]),
        ],
    );
}

/// Stripe's retention floor (24 h) with its assumed maximum (72 h). Intent 0's same-key retry
/// 1 s before the floor is a replay; intent 1's, 1 s after the latest prune moment, is a new
/// request: a second charge for every design, whatever moment the seed drew (no lookup, so
/// the read-back designs send again). Designs with a fresh key per send or per issue
/// duplicate intent 0 as well.
#[test]
fn retention_floor() {
    check(
        "retention_floor",
        [
            ("no_dedup", [4, 2, 2, 0, 0, 0, 0, 0, 4]),
            ("same_key", [3, 2, 1, 0, 0, 0, 0, 0, 4]),
            ("new_key_after_replan", [3, 2, 1, 0, 0, 0, 0, 0, 4]),
            ("key_per_attempt", [4, 2, 2, 0, 0, 0, 0, 0, 4]),
            ("payload_hash_key", [3, 2, 1, 0, 0, 0, 0, 0, 4]),
            ("journal", [3, 2, 1, 0, 0, 0, 0, 0, 4]),
            ("journal_reconcile", [3, 2, 1, 0, 0, 0, 0, 0, 6]),
            ("journal_reconcile_lease", [3, 2, 1, 0, 0, 0, 0, 0, 6]),
            ("layered_retries", [3, 2, 1, 0, 0, 0, 0, 0, 4]),
            ("single_use_token", [4, 2, 2, 0, 0, 0, 0, 0, 4]),
            ("durable_authorization", [3, 2, 1, 0, 0, 0, 0, 0, 4]),
        ],
    );
}

/// Two actions, two records. The notification's reply is lost and the agent replans the whole
/// workflow: designs bound to each action's authorization answer the ticket from the journal
/// (or the provider's replay) and resend the notification under its key; per-call and per-send
/// keys create a second ticket and a second notification.
#[test]
fn notification_fails() {
    check(
        "notification_fails",
        [
            ("no_dedup", [4, 1, 2, 0, 0, 0, 0, 0, 4]),
            ("same_key", [2, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("new_key_after_replan", [4, 1, 2, 0, 0, 0, 0, 0, 4]),
            ("key_per_attempt", [4, 1, 2, 0, 0, 0, 0, 0, 4]),
            ("payload_hash_key", [2, 1, 0, 0, 0, 0, 0, 0, 4]),
            ("journal", [2, 1, 0, 0, 0, 0, 0, 0, 3]),
            ("journal_reconcile", [2, 1, 0, 0, 0, 0, 0, 0, 4]),
            ("journal_reconcile_lease", [2, 1, 0, 0, 0, 0, 0, 0, 4]),
            ("layered_retries", [2, 0, 0, 0, 0, 1, 0, 0, 2]),
            ("single_use_token", [4, 1, 2, 0, 0, 0, 0, 0, 4]),
            ("durable_authorization", [2, 1, 0, 0, 0, 0, 0, 0, 3]),
        ],
    );
}

/// The notification is refused, so the ticket is cancelled: a new operation that can fail too.
/// Its lost reply and replan give a second cancellation under per-call keys. The counts' last
/// column but one (unresolved) stays 0: the user is told the workflow failed, and the ticket
/// is undone, so it is not a false failure.
#[test]
fn compensation() {
    check(
        "compensation",
        [
            ("no_dedup", [1, 0, 1, 0, 0, 0, 0, 0, 4]),
            ("same_key", [1, 0, 0, 0, 0, 0, 0, 0, 4]),
            ("new_key_after_replan", [1, 0, 1, 0, 0, 0, 0, 0, 4]),
            ("key_per_attempt", [1, 0, 1, 0, 0, 0, 0, 0, 4]),
            ("payload_hash_key", [1, 0, 0, 0, 0, 0, 0, 0, 4]),
            ("journal", [1, 0, 0, 0, 0, 0, 0, 0, 4]),
            ("journal_reconcile", [1, 0, 0, 0, 0, 0, 0, 0, 5]),
            ("journal_reconcile_lease", [1, 0, 0, 0, 0, 0, 0, 0, 5]),
            ("layered_retries", [1, 0, 0, 0, 0, 0, 0, 0, 3]),
            ("single_use_token", [1, 0, 1, 0, 0, 0, 0, 0, 4]),
            ("durable_authorization", [1, 0, 0, 0, 0, 0, 0, 0, 4]),
        ],
    );
}

#[test]
fn compensation_counts_per_design() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/windows/compensation.json");
    let model = Model::load(&path).unwrap();
    for d in design::all() {
        let m = run_seeds(&model, d, 0..2);
        // One cancellation, or two when its replan carries a fresh key.
        let fresh = [
            "no_dedup",
            "new_key_after_replan",
            "key_per_attempt",
            "single_use_token",
        ];
        let per_seed = if fresh.contains(&d.name()) { 2 } else { 1 };
        assert_eq!(m.compensations, 2 * per_seed, "{}", d.name());
    }
}

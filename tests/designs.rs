//! Exact behaviour of each executor design on small scenarios (timings of `common::base`:
//! 10 ms each way, 50 ms processing, 5 s client timeout).

use crate::common;
use crate::common::broken;

use common::*;
use serde_json::json;

fn lost_reply() -> serde_json::Value {
    faults(base(), json!([{ "drop_reply": { "attempt": 1 } }]))
}

#[test]
fn lost_reply_per_design() {
    let v = lost_reply();
    for (design, want) in [
        ("key_per_attempt", c(2, 1, 1, 0, 0, 0, 2)),
        ("payload_hash_key", c(1, 1, 0, 0, 0, 0, 2)),
        ("journal", c(1, 1, 0, 0, 0, 0, 2)),
        ("single_use_token", c(2, 1, 1, 0, 0, 0, 2)),
        ("durable_authorization", c(1, 1, 0, 0, 0, 0, 2)),
        // The wrapper turns the timeout into a failure; the agent gives up on a failure and
        // the user hears "failed" about a ticket that exists.
        ("layered_retries", c(1, 0, 0, 0, 1, 0, 1)),
    ] {
        expect(&v, design, want);
    }
    assert_eq!(
        trace(&v, "journal").metrics.reconciliation_ms.single(),
        Some(20)
    );
}

#[test]
fn reconcile_reads_back_before_any_retry() {
    // No lookup offered: one wasted read, then the same-key retry on the agent's next call.
    let t = expect(&lost_reply(), "journal_reconcile", c(1, 1, 0, 0, 0, 0, 3));
    for line in [
        "op 0: cannot read back: the provider says unsupported",
        "op 0: no read-back decided: same-key retry",
    ] {
        assert!(t.timeline.contains(line), "{}", t.timeline);
    }
    // A lookup by key finds the effect: no create is sent again at all.
    let v = set(lost_reply(), "provider.lookup", json!("by_key"));
    for d in ["journal_reconcile", "journal_reconcile_lease"] {
        let t = expect(&v, d, c(1, 1, 0, 0, 0, 0, 2));
        assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(5_020), "{d}");
        assert!(
            t.timeline.contains("lookup by key k1 -> 200 found r0"),
            "{}",
            t.timeline
        );
    }
}

#[test]
fn a_negative_read_from_a_lagging_index_does_not_authorize_a_create() {
    // The effect becomes visible at 8060 ms; reads at 6010 and 8030 miss it, the third at
    // 12050 finds it. Not-found is not trusted within 10 s of the send.
    let v = set(lost_reply(), "provider.lookup", json!("by_key"));
    let v = set(v, "provider.visibility_lag_ms", json!(8_000));
    let v = set(
        v,
        "executor",
        json!({ "backoff_ms": 1_000, "reads": 10, "visibility_bound_ms": 10_000 }),
    );
    let t = expect(&v, "journal_reconcile", c(1, 1, 0, 0, 0, 0, 4));
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(12_060));
    assert_eq!(
        t.timeline
            .matches("not found, but the index may lag")
            .count(),
        2,
        "{}",
        t.timeline
    );
}

#[test]
fn retry_layers_multiply() {
    let v = set(
        base(),
        "executor",
        json!({ "attempts": 3, "layers": { "tool": 2, "queue": 2 } }),
    );
    let v = set(v, "agent.on_failure", json!({ "replan": 1 }));
    // Every request fails before commit: 3 HTTP x 2 tool x 2 queue x 2 agent calls.
    let failing = set(v.clone(), "provider.error_before_commit", json!(1));
    let t = expect(&failing, "layered_retries", c(0, 0, 0, 0, 0, 0, 24));
    assert_eq!(t.metrics.remote_calls, 24);
    // Every reply is lost: HTTP retries reuse their key, every layer above mints a new one.
    // (The agent waits longer than the 60 s the layers take per call.)
    let lossy = set(v, "network.reply_loss", json!(1));
    let lossy = set(lossy, "agent.tool_timeout_ms", json!(200_000));
    expect(&lossy, "layered_retries", c(8, 0, 7, 0, 1, 0, 24));
}

#[test]
fn changed_arguments_are_refused_locally_by_the_journal() {
    let v = set(
        lost_reply(),
        "agent.on_unknown",
        json!({ "change_args": 1 }),
    );
    // The refusal is not a failure of the intent: the first call's effect may exist (here it
    // does), so the agent hears "unknown" and the user "unresolved", never "failed".
    // (journal_reconcile spends one call on a read the provider cannot answer.)
    for (d, calls) in [
        ("journal", 1),
        ("journal_reconcile", 2),
        ("durable_authorization", 1),
    ] {
        let t = expect(&v, d, c(1, 0, 0, 0, 0, 1, calls));
        assert!(
            t.timeline.contains("needs a new authorization"),
            "{d}: {}",
            t.timeline
        );
    }
    // same_key sends it and the provider rejects it (422: the key was first used with other
    // arguments, so that request did reach it): one more remote call, and "unknown".
    expect(&v, "same_key", c(1, 0, 0, 0, 0, 1, 2));
    // payload_hash_key sees new arguments as a new key: a second, wrong effect.
    expect(&v, "payload_hash_key", c(2, 1, 1, 0, 0, 0, 2));
}

#[test]
fn hashing_the_arguments_merges_genuine_repeats() {
    let v = set(
        base(),
        "workload",
        json!({ "intents": 2, "genuine_repeat": 1, "spacing_ms": 1_000 }),
    );
    let m = run(&v, "payload_hash_key", 1);
    assert_eq!(
        (m.effects, m.completed, m.merged_repeats, m.false_success),
        (1, 1, 1, 1)
    );
    for d in [
        "same_key",
        "journal",
        "durable_authorization",
        "single_use_token",
    ] {
        let m = run(&v, d, 1);
        assert_eq!((m.effects, m.completed, m.merged_repeats), (2, 2, 0), "{d}");
    }
}

#[test]
fn accepted_is_not_completed() {
    let v = set(base(), "provider.accept_async", json!(true));
    // Accepted work that then fails: the naive reading tells the user success.
    let failing = set(v.clone(), "provider.async_failure", json!(1));
    expect(&failing, "same_key", c(0, 0, 0, 1, 0, 0, 1));
    // The journal polls the status handle: failure is reported as failure.
    let t = expect(&failing, "journal", c(0, 0, 0, 0, 0, 0, 2));
    assert!(t.timeline.contains("accepted -> failed"), "{}", t.timeline);
    // Accepted work that succeeds: confirmed by the first poll, at 20 + 1000 + 20 ms.
    let t = expect(&v, "journal", c(1, 1, 0, 0, 0, 0, 2));
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(1_040));
}

#[test]
fn a_durable_authorization_outlives_a_volatile_journal() {
    let v = faults(
        base(),
        json!([{ "crash_worker": { "attempt": 1, "point": "after_reply" } }]),
    );
    let v = set(v, "workers.journal", json!("volatile"));
    // The journal forgets the operation; the agent's replan after its tool timeout is new.
    expect(&v, "journal", c(2, 1, 1, 0, 0, 0, 2));
    // The authorization ledger remembers the key it was spent on.
    let t = expect(&v, "durable_authorization", c(1, 1, 0, 0, 0, 0, 2));
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(60_020));
}

#[test]
fn the_deadline_escalates_instead_of_guessing() {
    let v = set(lost_reply(), "executor.deadline_ms", json!(3_000));
    let t = expect(&v, "journal", c(1, 0, 0, 0, 0, 1, 1));
    assert_eq!(t.metrics.unknown_ops, 1);
    assert!(
        t.timeline.contains("deadline passed, escalated"),
        "{}",
        t.timeline
    );
}

#[test]
fn journal_designs_recover_their_operations_after_a_restart() {
    let v = faults(
        base(),
        json!([{ "crash_worker": { "attempt": 1, "point": "after_send" } }]),
    );
    for d in ["journal", "durable_authorization"] {
        expect(&v, d, c(1, 1, 0, 0, 0, 0, 2));
    }
    // The reconciling designs read first; this provider offers no read, so then the key.
    // Under a lease the restarted worker (a new holder) waits for its predecessor's 30 s
    // lease to run out: the price of never acting twice.
    for (d, at) in [
        ("journal_reconcile", 1_040),
        ("journal_reconcile_lease", 30_040),
    ] {
        let t = expect(&v, d, c(1, 1, 0, 0, 0, 0, 3));
        assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(at), "{d}");
    }
}

#[test]
fn every_design_is_listed_and_runs_the_chaos_model() {
    let names = retrylab::design::names();
    // Distinct names, each a word a model file and the command line can use.
    for (i, name) in names.iter().enumerate() {
        assert!(!name.is_empty() && !name.contains([' ', ',']), "{name:?}");
        assert!(!names[..i].contains(name), "{name} is listed twice");
    }
    let model = retrylab::model::Model::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/ticket_chaos.json"
    )))
    .unwrap();
    for d in retrylab::design::all() {
        let m = retrylab::run::run_seeds(&model, d, 0..300);
        // Every design survives every random fault at once; what it does there is pinned
        // nowhere (the chaos model is for exploring), only that it runs and counts each
        // intent once.
        assert_eq!(m.intents, 1_500, "{}", d.name());
        assert_eq!(m.seeds, 300, "{}", d.name());
    }
}

/// Review finding: a sweeper on another worker took a leased operation's record before its
/// claim failed, and the holder then sent again while its first create was out.
#[test]
fn the_sweeper_never_takes_a_leased_operation() {
    let v = set(
        base(),
        "workers",
        json!({ "count": 2, "restart_delay_ms": 1_000 }),
    );
    let v = set(
        v,
        "executor",
        json!({ "timeout_ms": 15_000, "sweep_ms": 20_000, "lease_ms": 60_000, "reconcile": "by_resource_id" }),
    );
    let v = set(v, "agent.tool_timeout_ms", json!(4_000));
    let v = set(v, "agent.max_calls", json!(3));
    let v = set(
        v,
        "provider",
        json!({ "dedup": "by_key", "in_flight": "process_both", "lookup": "by_key" }),
    );
    let v = faults(
        v,
        json!([{ "slow_processing": { "attempt": 1, "ms": 10_000 } }]),
    );
    let m = run(&v, "journal_reconcile_lease", 200);
    assert_eq!((m.effects, m.duplicate_effects, m.completed), (200, 0, 200));
}

/// Review finding: a re-run of the same call reused its id, and the first issue's timeout
/// and results were credited to the re-run.
#[test]
fn each_issue_of_a_re_run_call_waits_for_its_own_result() {
    let v = set(
        base(),
        "agent",
        json!({ "tool_timeout_ms": 10_000, "max_calls": 3, "think_ms": 1_000,
        "on_failure": { "give_up": 1 }, "on_unknown": { "retry_same": 1 } }),
    );
    let v = faults(
        v,
        json!([
            { "drop_reply": { "attempt": 1 } }, { "drop_reply": { "attempt": 2 } }, { "drop_reply": { "attempt": 3 } }
        ]),
    );
    let t = expect(&v, "same_key", c(1, 0, 0, 0, 0, 1, 3));
    // Three issues, each timed out by the executor after 5 s, 1 s of thought between.
    assert!(
        t.timeline
            .contains("17000 ms  agent     intent 0: tells the user unresolved"),
        "{}",
        t.timeline
    );
    assert!(
        !t.timeline.contains("no result within the tool timeout"),
        "{}",
        t.timeline
    );
}

/// Review finding: a worker that did not own an operation sent it and crashed; nobody
/// recovered it. Whoever sends now owns it, so its restart recovers it.
#[test]
fn a_crashed_sender_recovers_what_it_sent() {
    let v = set(
        base(),
        "workers",
        json!({ "count": 2, "restart_delay_ms": 1_000 }),
    );
    let v = set(v, "agent.max_calls", json!(4));
    let v = faults(
        v,
        json!([
            { "drop_reply": { "attempt": 1 } },
            { "crash_worker": { "attempt": 2, "point": "after_send", "worker": 1 } }
        ]),
    );
    for d in ["same_key", "journal", "durable_authorization"] {
        let m = run(&v, d, 300);
        assert_eq!((m.effects, m.completed, m.unresolved), (300, 300, 0), "{d}");
    }
}

/// Review finding: a provider crash during accepted (202) work left its status "running"
/// forever and the journal polled until the horizon.
#[test]
fn a_crash_during_accepted_work_resolves_its_status() {
    let v = set(
        base(),
        "provider",
        json!({ "dedup": "by_key", "accept_async": true,
        "atomicity": "effect_then_key", "lookup": "by_key" }),
    );
    let v = set(v, "executor", json!({ "attempts": 2, "poll_ms": 500 }));
    let v = faults(v, json!([{ "crash_provider": { "attempt": 1 } }]));
    // The effect was committed before the crash: the first poll finds it.
    let t = expect(&v, "journal", c(1, 1, 0, 0, 0, 0, 2));
    assert_eq!(t.metrics.time_to_outcome_ms.single(), Some(540));
    // An atomic store rolled back: the status says failed, the agent gives up, nothing exists.
    let rolled_back = set(v, "provider.atomicity", json!("atomic"));
    expect(&rolled_back, "journal", c(0, 0, 0, 0, 0, 0, 2));
}

/// Fencing in the simulator: the worker holding the lease stalls (a long GC pause) past its
/// lease; the other worker's sweeper takes the operation over under a new fence; when the
/// stalled worker wakes up, its late result is refused.
#[test]
fn a_stalled_lease_holder_cannot_record_after_a_takeover() {
    let v = set(
        base(),
        "workers",
        json!({ "count": 2, "restart_delay_ms": 1_000 }),
    );
    let v = set(v, "agent.tool_timeout_ms", json!(100_000));
    let v = set(v, "agent.max_calls", json!(3));
    let v = set(
        v,
        "executor",
        json!({ "attempts": 3, "backoff_ms": 4_000, "lease_ms": 10_000, "sweep_ms": 12_000 }),
    );
    let v = faults(
        v,
        json!([
            { "slow_processing": { "attempt": 1, "ms": 20_000 } },
            { "pause": { "component": "executor", "worker": 0, "from_ms": 100, "duration_ms": 40_000 } }
        ]),
    );
    let model = model(&v);
    let mut fenced = 0;
    for seed in 0..8 {
        let t = retrylab::run::run_traced(
            &model,
            design("journal_reconcile_lease"),
            &mut retrylab::sim::RandomChooser::new(seed),
        );
        assert_eq!(
            (t.metrics.effects, t.metrics.duplicate_effects),
            (1, 0),
            "{}",
            t.timeline
        );
        let stalled_holder = t
            .timeline
            .contains("worker 0: op 0 authorized -> dispatched (fence 1)");
        let refused = t
            .timeline
            .contains("worker 0: op 0: lease lost (fence 1 is stale)");
        assert_eq!(stalled_holder, refused, "seed {seed}: {}", t.timeline);
        if refused {
            assert!(
                t.timeline
                    .contains("worker 1: op 0 unknown -> dispatched (fence 2)")
            );
            fenced += 1;
        }
    }
    assert!(fenced > 0, "the call should reach worker 0 on some seed");
}

/// What fencing prevents: the holder stalls with a definite refusal of its first send in
/// hand (a 400 that arrived before its timeout fell due; it wakes to both, in that order);
/// its lease runs out, the other worker takes the
/// operation over and sends again, and that send commits, slowly. When the stalled worker
/// wakes, the refusal is an answer under a stale fence to a send that is no longer the
/// newest. Fenced, it is discarded and the successor confirms; unfenced (the fixture), the
/// stale holder writes "failed" over the live operation: the user is told "failed" while
/// the effect exists, and the design's claim is false.
#[test]
fn fencing_keeps_a_stalled_holders_answer_from_settling_the_operation() {
    let v = set(
        base(),
        "workers",
        json!({ "count": 2, "restart_delay_ms": 1_000 }),
    );
    let v = set(v, "agent.tool_timeout_ms", json!(100_000));
    let v = set(
        v,
        "executor",
        json!({ "attempts": 3, "backoff_ms": 1_000, "lease_ms": 10_000, "sweep_ms": 12_000 }),
    );
    let v = faults(
        v,
        json!([
            { "reject": { "attempt": 1 } },
            { "slow_processing": { "attempt": 2, "ms": 30_000 } },
            { "pause": { "component": "executor", "worker": 0, "from_ms": 1, "duration_ms": 40_000 } }
        ]),
    );
    let model = model(&v);
    let mut reached = 0;
    for seed in 0..8 {
        let run = |d: &dyn retrylab::design::Design| {
            retrylab::run::run_traced(&model, d, &mut retrylab::sim::RandomChooser::new(seed))
        };
        let fenced = run(design("journal_reconcile_lease"));
        if !fenced
            .timeline
            .contains("worker 0: op 0 authorized -> dispatched (fence 1)")
        {
            continue;
        }
        reached += 1;
        let m = &fenced.metrics;
        assert_eq!(
            (m.effects, m.completed, m.false_failure, m.false_resolutions),
            (1, 1, 0, 0),
            "{}",
            fenced.timeline
        );
        assert!(fenced.timeline.contains("lease lost (fence 1 is stale)"));
        let unfenced = run(&broken::UNFENCED);
        let m = &unfenced.metrics;
        assert_eq!(
            (m.effects, m.completed, m.false_failure, m.false_resolutions),
            (1, 0, 1, 1),
            "{}",
            unfenced.timeline
        );
    }
    assert!(reached > 0, "the call should reach worker 0 on some seed");
}

/// Stripe keeps a key at least 24 h (pruned here exactly at the floor, the earliest moment
/// the documentation allows). The reply to the first create is lost and the agent comes
/// back 25 h later: a journal design that still trusts its key sends it again, the
/// provider has forgotten it, and the card is charged twice. Told the retention it can
/// count on (`executor.assumed_retention_ms`), the design escalates instead: unresolved,
/// never a second effect.
fn stripe_after_25_hours(assumed: bool) -> serde_json::Value {
    let v = set(
        lost_reply(),
        "provider",
        json!({ "preset": "stripe_v1", "retention_max_ms": 86_400_000 }),
    );
    let v = set(v, "agent.think_ms", json!(90_000_000));
    if assumed {
        set(v, "executor.assumed_retention_ms", json!(86_400_000))
    } else {
        v
    }
}

#[test]
fn a_key_past_the_assumed_retention_is_escalated_not_sent_again() {
    // (The reconciling designs spend a read on a provider that cannot answer it, 20 ms.)
    for (d, calls, age) in [
        ("journal", 1, 90_005_000),
        ("journal_reconcile", 2, 90_005_020),
        ("journal_reconcile_lease", 2, 90_005_020),
        ("durable_authorization", 1, 90_005_000),
    ] {
        expect(
            &stripe_after_25_hours(false),
            d,
            c(2, 1, 1, 0, 0, 0, calls + 1),
        );
        let t = expect(&stripe_after_25_hours(true), d, c(1, 0, 0, 0, 0, 1, calls));
        let line = format!(
            "op 0: key k1 is older than the assumed retention (first sent {age} ms ago; assumed 86400000 ms, less one timeout) and no read-back proved the effect absent: not sent again, escalated to a human"
        );
        assert!(t.timeline.contains(&line), "{d}: {}", t.timeline);
        assert_eq!(t.metrics.unknown_ops, 1, "{d}");
        assert_eq!(t.metrics.false_resolutions, 0, "{d}");
    }
    // Within the assumed retention the same-key retry still goes out, and is absorbed.
    let soon = set(
        stripe_after_25_hours(true),
        "agent.think_ms",
        json!(3_600_000),
    );
    for d in ["journal", "journal_reconcile", "durable_authorization"] {
        let calls = if d == "journal_reconcile" { 3 } else { 2 };
        expect(&soon, d, c(1, 1, 0, 0, 0, 0, calls));
    }
}

/// A key is not sent within one client timeout of the assumed retention: the request must
/// reach the provider while the key is still kept.
#[test]
fn the_age_of_a_key_leaves_one_timeout_for_the_request_to_arrive() {
    // The replan comes at 5 000 + 1 000 ms, the key's first send was at 0 ms.
    let v = set(lost_reply(), "agent.think_ms", json!(1_000));
    let just_enough = set(v.clone(), "executor.assumed_retention_ms", json!(11_001));
    expect(&just_enough, "journal", c(1, 1, 0, 0, 0, 0, 2));
    let too_short = set(v, "executor.assumed_retention_ms", json!(11_000));
    expect(&too_short, "journal", c(1, 0, 0, 0, 0, 1, 1));
}

/// `durable_authorization` with a volatile journal: the crash forgets the operation, the
/// authorization ledger remembers the key and when it was first sent, so the record rebuilt
/// 25 h later knows its key is too old to send again.
#[test]
fn a_rebuilt_operation_keeps_the_age_of_its_key() {
    let crash = |assumed: bool| {
        let v = faults(
            stripe_after_25_hours(assumed),
            json!([{ "crash_worker": { "attempt": 1, "point": "after_reply" } }]),
        );
        set(v, "workers.journal", json!("volatile"))
    };
    expect(
        &crash(false),
        "durable_authorization",
        c(2, 1, 1, 0, 0, 0, 2),
    );
    let t = expect(
        &crash(true),
        "durable_authorization",
        c(1, 0, 0, 0, 0, 1, 1),
    );
    assert!(
        t.timeline.contains(
            "op 1: key k1 is older than the assumed retention (first sent 90060000 ms ago"
        ),
        "{}",
        t.timeline
    );
}

/// A lookup by resource id cannot follow a lost reply: the id came with it. The trace says
/// so; the design then resends under its key while the key is young, and escalates once it
/// is older than the assumed retention.
#[test]
fn a_lookup_by_resource_id_cannot_read_back_a_lost_reply() {
    let by_id = |v: serde_json::Value| {
        let v = set(v, "provider.lookup", json!("by_resource_id"));
        set(v, "executor.reconcile", json!("by_resource_id"))
    };
    let why = "op 0: cannot read back: no receipt after a lost reply (a lookup by resource id needs the id the reply carried)";
    let t = expect(
        &by_id(lost_reply()),
        "journal_reconcile",
        c(1, 1, 0, 0, 0, 0, 2),
    );
    assert!(t.timeline.contains(why), "{}", t.timeline);
    assert!(
        t.timeline
            .contains("op 0: no read-back decided: same-key retry"),
        "{}",
        t.timeline
    );
    // Stripe with a lookup by id, 25 h later: the old code sent k1 again (a second charge).
    let late = by_id(stripe_after_25_hours(false));
    expect(&late, "journal_reconcile", c(2, 1, 1, 0, 0, 0, 2));
    let late = by_id(stripe_after_25_hours(true));
    let t = expect(&late, "journal_reconcile", c(1, 0, 0, 0, 0, 1, 1));
    assert!(t.timeline.contains(why), "{}", t.timeline);
    assert!(
        t.timeline.contains("not sent again, escalated to a human"),
        "{}",
        t.timeline
    );
}

/// "Not found" by a key older than the assumed retention proves nothing: the provider may
/// have forgotten the key while the effect exists. Here the first request never arrived (so
/// nothing exists), but the executor, frozen 25 h, cannot tell: it escalates. Within the
/// retention the same "not found" is proof, and the create goes out.
#[test]
fn a_not_found_by_an_old_key_proves_nothing() {
    let frozen = |hours: u64, assumed: bool| {
        let v = faults(
            base(),
            json!([
                { "drop_request": { "attempt": 1 } },
                { "pause": { "component": "executor", "from_ms": 1_000, "duration_ms": hours * 3_600_000 } }
            ]),
        );
        let v = set(
            v,
            "provider",
            json!({ "preset": "stripe_v1", "lookup": "by_key", "retention_max_ms": 86_400_000 }),
        );
        let v = set(v, "agent.tool_timeout_ms", json!(100_000_000));
        if assumed {
            set(v, "executor.assumed_retention_ms", json!(86_400_000))
        } else {
            v
        }
    };
    expect(
        &frozen(25, false),
        "journal_reconcile",
        c(1, 1, 0, 0, 0, 0, 3),
    );
    let t = expect(
        &frozen(25, true),
        "journal_reconcile",
        c(0, 0, 0, 0, 0, 1, 2),
    );
    assert!(
        t.timeline.contains(
            "op 0: cannot read back: key k1 is older than the assumed retention (first sent 90001020 ms ago; assumed 86400000 ms, less one timeout): \"not found\" proves nothing, the provider may have forgotten it"
        ),
        "{}",
        t.timeline
    );
    assert_eq!(t.metrics.false_resolutions, 0);
    let t = expect(
        &frozen(1, true),
        "journal_reconcile",
        c(1, 1, 0, 0, 0, 0, 3),
    );
    assert!(
        t.timeline
            .contains("op 0: not found past the visibility bound: may create"),
        "{}",
        t.timeline
    );
}

/// A redelivered job is a new run of the whole stack: its HTTP client waits `backoff_ms`
/// before its first retry, as a new client does, not a wait grown by the sends made before
/// the crash.
#[test]
fn a_redelivered_job_backs_off_from_the_start() {
    let v = set(
        base(),
        "executor",
        json!({ "attempts": 2, "backoff_ms": 1_000, "timeout_ms": 5_000 }),
    );
    let v = set(v, "workers", json!({ "restart_delay_ms": 100 }));
    let v = faults(
        v,
        json!([
            { "crash_worker": { "attempt": 1, "point": "after_send" } },
            { "drop_reply": { "attempt": 2 } }
        ]),
    );
    let t = trace(&v, "layered_retries");
    let sends: Vec<String> = t
        .timeline
        .lines()
        .filter(|l| l.contains(" sends attempt "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    // The redelivery is a new call of the client (a new key); the reply of its send is
    // lost, and its one retry waits the client timeout (5 s) and then backoff_ms (1 s):
    // not the 2 s a count of both sends would give.
    assert_eq!(
        sends,
        [
            "0 ms executor worker 0: op 0 sends attempt 1: create with params 1, key k1",
            "100 ms executor worker 0: op 0 sends attempt 2: create with params 1, key k2",
            "6100 ms executor worker 0: op 0 sends attempt 3: create with params 1, key k2",
        ]
    );
}

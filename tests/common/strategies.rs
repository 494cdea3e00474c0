//! proptest strategies for whole models: workloads, agent behaviour, faults and provider
//! contracts, as JSON values read through the normal model loader.
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::{Value, json};

fn ratio(max_den: u32) -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => Just(json!(0)),
        2 => (1..=max_den).prop_map(|d| json!(format!("1/{d}"))),
    ]
}

fn range(max: u64) -> impl Strategy<Value = Value> {
    (0..=max, 0..=max).prop_map(|(a, b)| json!({ "min": a.min(b), "max": a.max(b) }))
}

fn reaction() -> impl Strategy<Value = Value> {
    (0..3u32, 0..3u32, 0..2u32, 0..2u32, 0..2u32).prop_map(|(r, p, c, g, a)| {
        // At least one positive weight.
        let p = if r + p + c + g + a == 0 { 1 } else { p };
        json!({ "retry_same": r, "replan": p, "change_args": c, "give_up": g, "ask_user": a })
    })
}

fn fault() -> impl Strategy<Value = Value> {
    let attempt = 1..5u32;
    prop_oneof![
        attempt
            .clone()
            .prop_map(|a| json!({ "drop_reply": { "attempt": a } })),
        attempt
            .clone()
            .prop_map(|a| json!({ "drop_request": { "attempt": a } })),
        attempt
            .clone()
            .prop_map(|a| json!({ "crash_provider": { "attempt": a } })),
        (attempt.clone(), 100..8_000u64)
            .prop_map(|(a, ms)| json!({ "slow_processing": { "attempt": a, "ms": ms } })),
        (
            attempt,
            prop_oneof![
                Just("before_dispatch"),
                Just("after_send"),
                Just("after_reply")
            ]
        )
            .prop_map(|(a, p)| json!({ "crash_worker": { "attempt": a, "point": p } })),
    ]
}

/// The parts of a model that are not the provider's contract.
pub fn world() -> impl Strategy<Value = Value> {
    let workload = (1..4u32, ratio(2), 1..3u32, range(2_000), 1..3u32).prop_map(
        |(intents, repeat, tenants, spacing, steps)| {
            json!({ "intents": intents, "genuine_repeat": repeat, "tenants": tenants,
                    "spacing_ms": spacing, "steps": steps })
        },
    );
    let agent = (
        1..4u32,
        reaction(),
        reaction(),
        range(1_500),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(max_calls, on_failure, on_unknown, think, restart, compensate)| {
                json!({ "tool_timeout_ms": 20_000, "max_calls": max_calls, "think_ms": think,
                    "on_failure": on_failure, "on_unknown": on_unknown,
                    "on_step_failure": if restart { "restart_workflow" } else { "retry_step" },
                    "compensate": compensate })
            },
        );
    let executor = (
        (1..4u32, 0..500u64, 200..3_000u64, 1..3u32, 1..3u32),
        (any::<bool>(), 1..11u64, prop::option::of(1_000..60_000u64)),
    )
        .prop_map(|((attempts, backoff, timeout, tool, queue), (sweep, lease, deadline))| {
            let mut e = json!({ "attempts": attempts, "backoff_ms": backoff, "timeout_ms": timeout,
                                "reconcile": "by_key", "lease_ms": lease * timeout,
                                "layers": { "tool": tool, "queue": queue } });
            if sweep {
                e["sweep_ms"] = json!(3 * timeout);
            }
            if let Some(d) = deadline {
                e["deadline_ms"] = json!(d);
            }
            e
        });
    let workers =
        (1..3u32, ratio(8), ratio(8), ratio(8), 0..3u32).prop_map(|(count, a, b, c, max)| {
            json!({ "count": count, "restart_delay_ms": 700, "max_crashes": max,
                "crash": { "before_dispatch": a, "after_send": b, "after_reply": c } })
        });
    let network = (range(300), ratio(4), ratio(4), ratio(6)).prop_map(|(lat, rq, rp, dup)| {
        json!({ "latency_ms": lat, "request_loss": rq, "reply_loss": rp, "duplicate": dup })
    });
    (
        workload,
        agent,
        executor,
        workers,
        network,
        prop::collection::vec(fault(), 0..3),
    )
        .prop_map(|(workload, agent, executor, workers, network, faults)| {
            json!({ "name": "generated", "horizon_ms": 600_000,
                    "designs": ["same_key"],
                    "workload": workload, "agent": agent, "executor": executor,
                    "workers": workers, "network": network, "faults": faults,
                    "provider": { "dedup": "none" } })
        })
}

/// Any provider contract the model can express.
pub fn any_provider() -> impl Strategy<Value = Value> {
    let knobs = (
        prop_oneof![Just("none"), Just("by_key")],
        prop_oneof![Just("client"), Just("payload")],
        prop_oneof![Just("global"), Just("tenant"), Just("tenant_endpoint")],
        prop_oneof![
            Just("atomic"),
            Just("key_then_effect"),
            Just("effect_then_key")
        ],
        prop_oneof![Just("reject"), Just("wait"), Just("process_both")],
        prop_oneof![
            Just("reject"),
            Just("return_original"),
            Just("treat_as_new")
        ],
        prop_oneof![
            Just("all"),
            Just("success_only"),
            Just("success_and_client_errors"),
            Just("committed")
        ],
        prop_oneof![
            Just("stored_response"),
            Just("current_state"),
            Just("already_exists"),
            Just("reexecute_failed")
        ],
    );
    // Retention and what a lookup by key sees after it: where the window starts, the
    // latest prune moment past the floor (as extra time), the key's lifetime.
    let retention_knobs = (
        prop_oneof![
            Just("first_request"),
            Just("completion"),
            Just("client_first_sent")
        ],
        prop::option::of(0..100_000u64),
        prop_oneof![Just("record"), Just("resource")],
    );
    let more = (
        prop_oneof![Just("none"), Just("by_key"), Just("search")],
        range(3_000),
        range(3_000),
        ratio(6),
        ratio(6),
        ratio(10),
        prop::option::of(1_000..100_000u64),
        any::<bool>(),
    );
    (knobs, more, retention_knobs).prop_map(
        |(
            (dedup, source, scope, atomicity, in_flight, mismatch, stored, replay),
            (lookup, lag, processing, before, after, crash, retention, asynchronous),
            (from, prune_extra, lifetime),
        )| {
            let mut p = json!({ "dedup": dedup, "key_source": source, "key_scope": scope,
                "atomicity": atomicity, "in_flight": in_flight, "mismatch": mismatch,
                "stored_outcomes": stored, "replay": replay, "lookup": lookup,
                "visibility_lag_ms": lag, "processing_ms": processing,
                "error_before_commit": before, "error_after_commit": after,
                "crash_during_processing": crash, "accept_async": asynchronous,
                "retention_from": from, "key_lifetime": lifetime });
            if let Some(r) = retention {
                p["retention_ms"] = json!(r);
                if let Some(extra) = prune_extra {
                    p["retention_max_ms"] = json!(r + extra);
                }
            }
            p
        },
    )
}

/// Contracts a keyed design relies on: the provider deduplicates the caller's key
/// atomically, in one scope, for the whole run; a concurrent same-key request is refused or
/// waits; a changed request under the key is refused or answered as the original; every
/// outcome is stored, so a retry never executes committed work again.
pub fn keyed_atomic_provider() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just("global"), Just("tenant"), Just("tenant_endpoint")],
        prop_oneof![Just("reject"), Just("wait")],
        prop_oneof![Just("reject"), Just("return_original")],
        prop_oneof![
            Just("stored_response"),
            Just("current_state"),
            Just("already_exists"),
            Just("reexecute_failed")
        ],
        prop_oneof![Just("none"), Just("by_key")],
        range(3_000),
        range(3_000),
        (ratio(6), ratio(6), ratio(10), any::<bool>()),
    )
        .prop_map(
            |(
                scope,
                in_flight,
                mismatch,
                replay,
                lookup,
                lag,
                processing,
                (before, after, crash, asynchronous),
            )| {
                json!({ "dedup": "by_key", "key_source": "client", "key_scope": scope,
                "atomicity": "atomic", "in_flight": in_flight, "mismatch": mismatch,
                "stored_outcomes": "all", "replay": replay, "lookup": lookup,
                "visibility_lag_ms": lag, "processing_ms": processing,
                "error_before_commit": before, "error_after_commit": after,
                "crash_during_processing": crash, "accept_async": asynchronous })
            },
        )
}

/// The seed every property test draws from unless `RETRYLAB_PROPTEST_SEED` says otherwise.
pub const DEFAULT_SEED: u64 = 20;

/// The environment variable that changes the seed: a number, or `random` for a fresh one
/// per test (deeper local runs; a failure prints the seed to run it again).
pub const SEED_VAR: &str = "RETRYLAB_PROPTEST_SEED";

/// The seed of this test run: [`DEFAULT_SEED`], or what [`SEED_VAR`] says.
pub fn seed() -> u64 {
    match std::env::var(SEED_VAR).as_deref() {
        Err(_) => DEFAULT_SEED,
        // A fresh seed, only on request: the hasher's keys are random per process.
        Ok("random") => {
            use std::hash::BuildHasher;
            std::collections::hash_map::RandomState::new().hash_one(std::process::id())
        }
        Ok(n) => n
            .parse()
            .unwrap_or_else(|_| panic!("{SEED_VAR} must be a number or \"random\", not {n:?}")),
    }
}

/// The proptest settings of this crate: `cases` by default (`PROPTEST_CASES` overrides it for
/// deeper local runs), drawn from a fixed seed ([`seed`]: the same cases on every machine and
/// every run), and the failures committed in `regressions` (a file under
/// `proptest-regressions/`) re-run first. A new failure is never written there: it is
/// printed, with the line that keeps it as a regression case and the seed that finds it.
pub fn config(cases: u32, regressions: &'static str) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    let seed = seed();
    // Shown by `cargo test` only when the test fails.
    eprintln!("proptest: {SEED_VAR}={seed} PROPTEST_CASES={cases}");
    ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        failure_persistence: Some(Box::new(Committed(regressions))),
        ..ProptestConfig::default()
    }
}

/// Writes a generated model that made a property fail into
/// `target/tmp/proptest-failures/` (named by its content: never the source tree), and returns
/// the part of the failure message that names it: a file `retrylab run` takes as it is.
/// Called from a failure message only, so a passing case writes nothing; proptest's final
/// message is the shrunk case's.
pub fn failing_model(text: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("proptest-failures");
    let path = dir.join(format!(
        "model-{}.json",
        retrylab::sim::Fnv1a::hex(text.as_bytes())
    ));
    let pretty = serde_json::from_str::<Value>(text)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_else(|_| text.to_string());
    let written = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, pretty + "\n"));
    match written {
        Ok(()) => format!(
            "the generated model {} (replay: retrylab run {} --seeds 6; {SEED_VAR}={})",
            path.display(),
            path.display(),
            seed()
        ),
        Err(e) => format!("the generated model (not written: {e}) {text}"),
    }
}

/// Regression cases committed in a file: read, never written by a test run (a test must not
/// write into the source tree). A failure found is printed with the line to add.
#[derive(Clone, Debug, PartialEq)]
pub struct Committed(pub &'static str);

impl proptest::test_runner::FailurePersistence for Committed {
    fn load_persisted_failures2(
        &self,
        source_file: Option<&'static str>,
    ) -> Vec<proptest::test_runner::PersistedSeed> {
        proptest::test_runner::FileFailurePersistence::Direct(self.0)
            .load_persisted_failures2(source_file)
    }

    fn save_persisted_failure2(
        &mut self,
        _source_file: Option<&'static str>,
        seed: proptest::test_runner::PersistedSeed,
        shrunken_value: &dyn std::fmt::Debug,
    ) {
        eprintln!(
            "proptest: a new failure, not written anywhere; to keep it as a regression case, add this line to {}:\ncc {seed} # shrinks to {shrunken_value:?}",
            self.0
        );
    }

    fn box_clone(&self) -> Box<dyn proptest::test_runner::FailurePersistence> {
        Box::new(self.clone())
    }

    fn eq(&self, other: &dyn proptest::test_runner::FailurePersistence) -> bool {
        other
            .as_any()
            .downcast_ref::<Committed>()
            .is_some_and(|o| o == self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Contracts `journal_reconcile` relies on when keys expire: the provider deduplicates the
/// caller's key atomically but keeps it only briefly; a read-back by key sees every committed
/// effect within a lag, also once the key record is gone (`key_lifetime: resource`: with a
/// key that is a record of its own, the read-back after expiry finds nothing); returns the lag and processing bounds too, so that the executor's
/// visibility bound can be set above processing plus lag.
pub fn expiring_key_provider() -> impl Strategy<Value = (Value, u64)> {
    (
        prop_oneof![Just("reject"), Just("wait")],
        prop_oneof![Just("reject"), Just("return_original")],
        1..20_000u64,
        range(3_000),
        range(3_000),
        (ratio(6), ratio(6), ratio(10)),
    )
        .prop_map(
            |(in_flight, mismatch, retention, lag, processing, (before, after, crash))| {
                let bound = lag["max"].as_u64().unwrap() + processing["max"].as_u64().unwrap();
                let p = json!({ "dedup": "by_key", "key_source": "client", "key_scope": "tenant",
                "atomicity": "atomic", "in_flight": in_flight, "mismatch": mismatch,
                "stored_outcomes": "all", "replay": "stored_response", "lookup": "by_key",
                "key_lifetime": "resource", "retention_ms": retention, "visibility_lag_ms": lag, "processing_ms": processing,
                "error_before_commit": before, "error_after_commit": after,
                "crash_during_processing": crash });
                (p, bound)
            },
        )
}

/// Providers that race same-key requests: two requests under one key that are both in
/// flight both execute (`in_flight: process_both`, or an effect-then-key store that only
/// looks at the key on arrival). The key is kept for the run, outcomes are stored, a
/// read-back by key sees every committed effect after the lag; processing may take longer
/// than a client timeout. Returns the provider, the lag maximum and the processing maximum.
pub fn racing_provider() -> impl Strategy<Value = (Value, u64, u64)> {
    (
        prop_oneof![
            Just(("atomic", "process_both")),
            Just(("effect_then_key", "process_both")),
            Just(("effect_then_key", "reject")),
            Just(("key_then_effect", "process_both")),
        ],
        prop_oneof![Just("tenant"), Just("tenant_region")],
        range(2_000),
        range(8_000),
        (ratio(6), ratio(6)),
    )
        .prop_map(
            |((atomicity, in_flight), scope, lag, processing, (before, after))| {
                let (lag_max, processing_max) = (
                    lag["max"].as_u64().unwrap(),
                    processing["max"].as_u64().unwrap(),
                );
                let p = json!({ "dedup": "by_key", "key_source": "client", "key_scope": scope,
                    "atomicity": atomicity, "in_flight": in_flight, "mismatch": "reject",
                    "stored_outcomes": "all", "replay": "stored_response", "lookup": "by_key",
                    "visibility_lag_ms": lag, "processing_ms": processing,
                    "error_before_commit": before, "error_after_commit": after });
                (p, lag_max, processing_max)
            },
        )
}

/// A stall of one worker's executor (a GC pause, a frozen VM) long enough to outlive a
/// lease: its events wait, while the other workers go on.
pub fn executor_pause() -> impl Strategy<Value = Value> {
    (0..20_000u64, 1_000..60_000u64, 0..2u32).prop_map(|(from, duration, worker)| {
        json!({ "pause": { "component": "executor", "from_ms": from,
                           "duration_ms": duration, "worker": worker } })
    })
}

/// The contracts the keyed designs rely on (see `keyed_atomic_provider`), widened to every
/// key scope, region-scoped keys included (the region does not change in these runs), and
/// to key records that expire: `Some(retention)` comes back with the provider when they do,
/// so that a test can tell the design what the operator believes the retention is.
pub fn keyed_provider_wide() -> impl Strategy<Value = (Value, Option<u64>)> {
    (
        keyed_atomic_provider(),
        any::<bool>(),
        prop::option::of(1_000..100_000u64),
    )
        .prop_map(|(mut p, regional, retention)| {
            if regional {
                p["key_scope"] = json!("tenant_region");
            }
            if let Some(r) = retention {
                p["retention_ms"] = json!(r);
            }
            (p, retention)
        })
}

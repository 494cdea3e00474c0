//! A world reused over seeds resets its workers' executors ([`Executor::reset`]) instead of
//! building new ones: a reset executor must be indistinguishable from a fresh one, and a
//! design that does not implement `reset` must still get a fresh one every run.

use crate::common;
use crate::common::models;

use std::sync::atomic::{AtomicUsize, Ordering};

use retrylab::check::Metrics;
use retrylab::design::{self, Design, ExecCtx, Executor};
use retrylab::model::{ExecutorModel, Model};
use retrylab::run::run_seeds;
use retrylab::vocab::ids::{AttemptId, OpId};
use retrylab::vocab::protocol::{Response, ToolCall};
use retrylab::world::World;

/// Every fault on, two workers that crash and restart, a sweeper and leases: executors end
/// runs with requests out, loops half done and workers down. The horizon is short enough
/// that many runs stop with work in flight.
fn noisy(horizon_ms: u64) -> Model {
    let text = r#"{
        "name": "noisy", "horizon_ms": HORIZON,
        "designs": ["no_dedup"],
        "workload": { "intents": 4, "spacing_ms": { "min": 0, "max": 3000 }, "genuine_repeat": "1/4", "tenants": 2 },
        "agent": { "tool_timeout_ms": 20000, "max_calls": 3, "think_ms": { "min": 0, "max": 2000 },
                   "on_failure": { "replan": 2, "give_up": 1 },
                   "on_unknown": { "retry_same": 1, "replan": 2, "change_args": 1, "ask_user": 1 } },
        "executor": { "attempts": 3, "backoff_ms": 300, "timeout_ms": 2000, "sweep_ms": 2500,
                      "lease_ms": 3000, "poll_ms": 500, "reads": 2, "reconcile": "by_key", "deadline_ms": 40000,
                      "layers": { "tool": 2, "queue": 2 } },
        "workers": { "count": 2, "journal": "volatile", "max_crashes": 3, "restart_delay_ms": 800,
                     "crash": { "before_dispatch": "1/15", "after_send": "1/15", "after_reply": "1/15" } },
        "network": { "latency_ms": { "min": 1, "max": 900 }, "request_loss": "1/10", "reply_loss": "1/5", "duplicate": "1/10" },
        "provider": { "dedup": "by_key", "retention_ms": 4000, "atomicity": "key_then_effect", "in_flight": "wait",
                      "processing_ms": { "min": 5, "max": 2500 }, "error_before_commit": "1/20",
                      "error_after_commit": "1/20", "crash_during_processing": "1/30",
                      "accept_async": true, "lookup": "by_key", "visibility_lag_ms": { "min": 0, "max": 1500 } }
    }"#;
    Model::from_json(&text.replace("HORIZON", &horizon_ms.to_string()), "noisy")
        .unwrap_or_else(|e| panic!("{e}"))
}

/// What one run left: its metrics, the world's fingerprint (executor memory included) and
/// how it ended.
fn observe(world: &World<'_>) -> (Metrics, Option<u64>, u64, String) {
    let mut m = Metrics::default();
    m.add_outcome(&world.outcome());
    (
        m,
        world.fingerprint(),
        world.events(),
        format!("{:?}", world.end()),
    )
}

/// Runs `seeds` on one world, and each seed on a world of its own; every run must match.
fn reused_matches_fresh(model: &Model, design: &dyn Design, seeds: u64) {
    let mut reused = World::new(model, design, false);
    for seed in 0..seeds {
        reused.run(&mut model.chooser(seed));
        let mut fresh = World::new(model, design, false);
        fresh.run(&mut model.chooser(seed));
        assert_eq!(
            observe(&reused),
            observe(&fresh),
            "model {}, design {}, seed {seed}",
            model.name,
            design.name()
        );
    }
}

#[test]
fn reset_executors_run_as_fresh_ones_on_every_bundled_model() {
    for model in models::bundled() {
        for d in design::all() {
            reused_matches_fresh(&model, d, 40);
        }
    }
}

#[test]
fn reset_executors_run_as_fresh_ones_through_crashes_and_cut_runs() {
    for horizon in [5_000, 15_000, 3_600_000] {
        let model = noisy(horizon);
        for d in design::all() {
            reused_matches_fresh(&model, d, 300);
        }
    }
}

/// A design that counts the executors it builds.
struct Counting {
    inner: &'static dyn Design,
    built: AtomicUsize,
}

impl Design for Counting {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn summary(&self) -> &str {
        self.inner.summary()
    }
    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        self.built.fetch_add(1, Ordering::Relaxed);
        self.inner.executor(config)
    }
}

/// Two workers, no crash: executors are built only at the start of runs.
fn two_workers() -> Model {
    let v = common::set(common::base(), "workers.count", serde_json::json!(2));
    common::model(&v)
}

#[test]
fn built_in_executors_are_built_once_per_worker_not_once_per_seed() {
    let model = two_workers();
    for d in design::all() {
        let counting = Counting {
            inner: d,
            built: AtomicUsize::new(0),
        };
        let m = run_seeds(&model, &counting, 0..25);
        assert_eq!(m, run_seeds(&model, d, 0..25), "{}", d.name());
        assert_eq!(counting.built.into_inner(), 2, "{}", d.name());
    }
}

/// An executor that does nothing and keeps the default `reset`.
struct Inert;

impl Executor for Inert {
    fn on_call(&mut self, _: &mut ExecCtx<'_>, _: ToolCall) {}
    fn on_response(&mut self, _: &mut ExecCtx<'_>, _: OpId, _: AttemptId, _: Response) {}
    fn fingerprint(&self, _: &mut dyn std::hash::Hasher) -> bool {
        true
    }
}

/// A design of [`Inert`] executors, counting them.
struct InertDesign(AtomicUsize);

impl Design for InertDesign {
    fn name(&self) -> &str {
        "inert"
    }
    fn summary(&self) -> &str {
        "does nothing"
    }
    fn executor(&self, _: &ExecutorModel) -> Box<dyn Executor> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Box::new(Inert)
    }
}

#[test]
fn an_executor_without_reset_is_built_anew_every_run() {
    let model = two_workers();
    let d = InertDesign(AtomicUsize::new(0));
    run_seeds(&model, &d, 0..25);
    assert_eq!(d.0.into_inner(), 2 * 25);
}

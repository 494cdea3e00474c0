//! Deliberately broken variants of the safe designs, as test fixtures: each guarantee
//! property of `tests/prop_dangerous.rs` must fail on its broken variant, or the property
//! (or its generator) could not tell a safe design from an unsafe one.
//!
//! Each variant changes one thing and is built from the real design, so that what fails is
//! that one thing:
//! - `timeout_is_failure`: `same_key` that reports a timeout to the agent as a failure;
//! - `negative_read_at_once`: `journal_reconcile` that believes "not found" at once, however
//!   far the index lags (a visibility bound of zero);
//! - `lease_never_excludes`: `journal_reconcile_lease` whose lease runs out the moment it is
//!   taken, so a second worker always gets it;
//! - `key_per_call`: the built-in `new_key_after_replan`, which is `same_key` with the key
//!   minted per tool call instead of per authorization;
//! - `unfenced`: `journal_reconcile_lease` that acts on any answer to any send of an
//!   operation, whoever sent it and under whichever lease (`Policy::fencing` off).
#![allow(dead_code)]

use retrylab::design::{self, Design, ExecCtx, Executor};
use retrylab::design::{Journaled, Policy};
use retrylab::model::ExecutorModel;
use retrylab::vocab::ids::{AttemptId, OpId};
use retrylab::vocab::protocol::{Reply, Response, ToolCall};

/// A design built from a real one, with one change to its configuration or to what its
/// executor is told.
pub struct Variant {
    name: &'static str,
    base: &'static str,
    configure: fn(&ExecutorModel) -> ExecutorModel,
    timeout_is_failure: bool,
}

impl Design for Variant {
    fn name(&self) -> &str {
        self.name
    }

    fn summary(&self) -> &str {
        "a deliberately broken variant, for tests"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        let inner = design::find(self.base)
            .expect("a built-in design")
            .executor(&(self.configure)(config));
        Box::new(Wrapped {
            inner,
            timeout_is_failure: self.timeout_is_failure,
        })
    }
}

struct Wrapped {
    inner: Box<dyn Executor>,
    timeout_is_failure: bool,
}

impl Executor for Wrapped {
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        self.inner.on_call(ctx, call)
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        // The broken part: a timeout says nothing about the effect, but this variant hears
        // it as a refusal, which the design settles as failed and reports as a failure.
        let response = match response {
            Response::Timeout if self.timeout_is_failure => Response::Reply(Reply::Rejected),
            other => other,
        };
        self.inner.on_response(ctx, op, attempt, response)
    }

    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        self.inner.on_timer(ctx, tag)
    }

    fn on_start(&mut self, ctx: &mut ExecCtx<'_>) {
        self.inner.on_start(ctx)
    }

    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        self.inner.on_restart(ctx)
    }

    fn fingerprint(&self, h: &mut dyn std::hash::Hasher) -> bool {
        // `timeout_is_failure` is fixed for the variant: only the inner memory changes.
        self.inner.fingerprint(h)
    }
}

fn unchanged(config: &ExecutorModel) -> ExecutorModel {
    config.clone()
}

pub static TIMEOUT_IS_FAILURE: Variant = Variant {
    name: "broken_timeout_is_failure",
    base: "same_key",
    configure: unchanged,
    timeout_is_failure: true,
};

pub static NEGATIVE_READ_AT_ONCE: Variant = Variant {
    name: "broken_negative_read_at_once",
    base: "journal_reconcile",
    configure: |c| ExecutorModel {
        visibility_bound_ms: 0,
        ..c.clone()
    },
    timeout_is_failure: false,
};

pub static LEASE_NEVER_EXCLUDES: Variant = Variant {
    name: "broken_lease_never_excludes",
    base: "journal_reconcile_lease",
    configure: |c| ExecutorModel {
        lease_ms: 0,
        ..c.clone()
    },
    timeout_is_failure: false,
};

/// `same_key` with a key per tool call: the built-in design that does exactly this.
pub fn key_per_call() -> &'static dyn Design {
    design::find("new_key_after_replan").expect("built in")
}

/// `journal_reconcile_lease` without fencing.
pub struct Unfenced;

impl Design for Unfenced {
    fn name(&self) -> &str {
        "broken_unfenced"
    }

    fn summary(&self) -> &str {
        "journal_reconcile_lease acting on stale answers, for tests"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        let policy = Policy {
            reconcile: true,
            lease: true,
            auth_ledger: false,
            fencing: false,
        };
        Box::new(Journaled::new(policy, config))
    }
}

pub static UNFENCED: Unfenced = Unfenced;

/// A design exactly like the one it wraps, except that its executors do not say what they
/// remember: worlds running it cannot be fingerprinted, so a search cannot prune on them.
/// Not broken; for comparing a search with and without pruning.
pub struct Opaque(pub &'static dyn Design);

impl Design for Opaque {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn summary(&self) -> &str {
        self.0.summary()
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Blind(self.0.executor(config)))
    }
}

struct Blind(Box<dyn Executor>);

impl Executor for Blind {
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        self.0.on_call(ctx, call)
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        self.0.on_response(ctx, op, attempt, response)
    }

    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        self.0.on_timer(ctx, tag)
    }

    fn on_start(&mut self, ctx: &mut ExecCtx<'_>) {
        self.0.on_start(ctx)
    }

    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        self.0.on_restart(ctx)
    }
    /// What it is for: it does not say.
    fn fingerprint(&self, _: &mut dyn std::hash::Hasher) -> bool {
        false
    }
}

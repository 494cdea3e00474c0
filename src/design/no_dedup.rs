//! `no_dedup`: every tool call is a new operation, sent without a key.
//!
//! The baseline: whatever reaches the provider twice happens twice, unless the provider
//! deduplicates on its own (it cannot, without a key).

use super::context::ExecCtx;
use super::retrying::{Identity, Retrying};
use super::{Design, Executor};
use crate::model::ExecutorModel;
use crate::vocab::ids::OpId;
use crate::vocab::protocol::ToolCall;

pub struct NoDedup;

impl Design for NoDedup {
    fn parts(&self) -> crate::sim::Parts {
        crate::sim::Parts::EXECUTORS
    }
    fn symmetric(&self) -> bool {
        true
    }

    fn reads_settled_times(&self) -> bool {
        false
    }
    fn name(&self) -> &str {
        "no_dedup"
    }

    fn summary(&self) -> &str {
        "no key: every call and every retry is a fresh request"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Retrying::new(Fresh, config))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Fresh;

impl Identity for Fresh {
    /// Stateless: a copy is itself.
    fn copy(&self) -> Option<Self> {
        Some(*self)
    }

    /// Stateless: everything it knows is in the journal.
    fn fingerprint(&self, _h: &mut dyn std::hash::Hasher) -> bool {
        true
    }

    /// Stateless: nothing to forget.
    fn reset(&mut self) -> bool {
        true
    }

    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId {
        // A re-run of the same call id continues its operation (transport-level identity);
        // any new call is a new operation, and no operation ever carries a key.
        if let Some(op) = ctx.journal_ref().find_by_call(call.call) {
            return op;
        }
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal().create(call, None, worker, now)
    }
}

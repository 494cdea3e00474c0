//! `new_key_after_replan`: the key belongs to the tool call, not to the intent.
//!
//! Transport retries and re-runs of the same call reuse its key, but when the agent plans
//! again it proposes a new call, which mints a new key. The provider honours its contract;
//! the caller bypasses it by presenting one intent as two operations.

use super::context::ExecCtx;
use super::retrying::{Identity, Retrying};
use super::{Design, Executor};
use crate::model::ExecutorModel;
use crate::vocab::ids::OpId;
use crate::vocab::protocol::ToolCall;

pub struct NewKeyAfterReplan;

impl Design for NewKeyAfterReplan {
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
        "new_key_after_replan"
    }

    fn summary(&self) -> &str {
        "one key per tool call: retries reuse it, a replan mints a new one"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Retrying::new(PerCall, config))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct PerCall;

impl Identity for PerCall {
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
        if let Some(op) = ctx.journal_ref().find_by_call(call.call) {
            return op;
        }
        let key = Some(ctx.new_key());
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal().create(call, key, worker, now)
    }
}

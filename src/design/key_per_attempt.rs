//! `key_per_attempt`: a new key on every send.
//!
//! The pattern of a client library that generates an idempotency key per HTTP request
//! instead of per operation: the key never survives a retry, so it never deduplicates one.
//! Only the network's own duplicate deliveries of one send are absorbed.

use super::context::ExecCtx;
use super::retrying::{Identity, Retrying};
use super::{Design, Executor};
use crate::model::ExecutorModel;
use crate::vocab::ids::{Key, OpId};
use crate::vocab::protocol::ToolCall;

pub struct KeyPerAttempt;

impl Design for KeyPerAttempt {
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
        "key_per_attempt"
    }

    fn summary(&self) -> &str {
        "a fresh key on every send (a key generated per HTTP request)"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Retrying::new(PerSend, config))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct PerSend;

impl Identity for PerSend {
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
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal().create(call, None, worker, now)
    }

    fn send_key(&self, ctx: &mut ExecCtx<'_>, _op: OpId) -> Option<Key> {
        Some(ctx.new_key())
    }
}

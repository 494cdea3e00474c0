//! `thread_key`: one idempotency key per conversation, shared by every intent in it.
//!
//! A common misuse: the agent framework's thread or run id (LangGraph's `thread_id`, an
//! agents SDK's conversation id) passed as the idempotency key, because it is stable across
//! retries and replans. It is, and so a lost reply of one intent is replayed rather than
//! duplicated; but it is just as stable across *different* intents of the same conversation.
//! The second ticket a user asks for reaches the provider under the first one's key, and the
//! provider's contract decides what happens: a mismatch refusal (the key was used with other
//! arguments: the outcome is undecided), the first ticket replayed as the answer (a false
//! success with another intent's receipt), or, where the key is past its retention, a new
//! effect. With one intent per conversation it is `same_key`.
//!
//! The thread's key lives with the thread: the first operation of a tenant's conversation
//! mints it, and every later one finds it in the journal (a volatile journal forgets it with
//! the worker, and the restarted worker starts a new thread). It promises nothing, so it states
//! no assumption.

use super::context::ExecCtx;
use super::retrying::{Identity, Retrying};
use super::{Design, Executor};
use crate::model::ExecutorModel;
use crate::vocab::ids::OpId;
use crate::vocab::protocol::ToolCall;

pub struct ThreadKey;

impl Design for ThreadKey {
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
        "thread_key"
    }

    fn summary(&self) -> &str {
        "the conversation's id as the key: shared by every intent of the thread, not only its retries"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Retrying::new(PerThread, config))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct PerThread;

impl Identity for PerThread {
    /// Stateless: a copy is itself.
    fn copy(&self) -> Option<Self> {
        Some(*self)
    }

    /// Stateless: the thread's key is in the journal.
    fn fingerprint(&self, _h: &mut dyn std::hash::Hasher) -> bool {
        true
    }

    /// Stateless: nothing to forget.
    fn reset(&mut self) -> bool {
        true
    }

    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId {
        // Retries and replans of one authorization continue its operation, as `same_key`.
        if let Some(op) = ctx.journal_ref().find_by_auth(call.auth) {
            return op;
        }
        // A new intent of the conversation: the thread's key, if an operation of this
        // tenant already carries one.
        let thread = ctx
            .journal_ref()
            .iter()
            .filter(|o| o.call().tenant == call.tenant)
            .find_map(|o| o.key);
        let key = Some(thread.unwrap_or_else(|| ctx.new_key()));
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal().create(call, key, worker, now)
    }
}

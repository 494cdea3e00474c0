//! `single_use_token`: a fresh single-use token for every issue of the action.
//!
//! Each time the agent issues the action (a first call, a re-run, a replan) the executor
//! obtains a new single-use token for the user's authorization and sends it as the key. The
//! token cannot be spent twice, so a transport retry is impossible: the caller must reissue,
//! and the reissue carries a new token. Replay of one token is prevented; reissuance of the
//! same action is not, and after a lost reply it duplicates.

use super::context::ExecCtx;
use super::retrying::{Identity, Retrying};
use super::{Design, Executor};
use crate::model::ExecutorModel;
use crate::vocab::ids::{Key, OpId};
use crate::vocab::protocol::ToolCall;

pub struct SingleUseToken;

impl Design for SingleUseToken {
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
        "single_use_token"
    }

    fn summary(&self) -> &str {
        "a fresh single-use token per issue of the action: no retry, reissues duplicate"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        // A spent token cannot be sent again: one send per issue.
        let single = ExecutorModel {
            attempts: 1,
            ..config.clone()
        };
        Box::new(Retrying::new(PerIssue, &single))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct PerIssue;

impl Identity for PerIssue {
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
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal().create(call, None, worker, now)
    }

    /// Every send is an issue of the action (a restarted worker resuming it too), and a
    /// spent token cannot be sent again: each one gets a fresh token.
    fn send_key(&self, ctx: &mut ExecCtx<'_>, _op: OpId) -> Option<Key> {
        Some(ctx.new_key())
    }
}

//! What the core designs have in common: an [`Identity`] (which operation a tool call
//! belongs to and which key it carries) run by the loop of a retry stack
//! ([`super::stack`]): dispatch, bounded retries with exponential backoff, classification
//! of replies, and recovery after a crash.
//!
//! Classification is honest about uncertainty: a timeout, a 5xx and a 409 "in progress" leave
//! the operation *unknown*, and when the attempts run out a stack that gives up as unknown
//! (every preset but `layered_retries`) tells the agent `Unknown`, never `Failure`. What the
//! agent then does is the agent model's business.

use std::hash::Hasher;

use super::context::ExecCtx;
pub use super::stack::Stacked;
use crate::vocab::ids::{Key, OpId};
use crate::vocab::protocol::{Reply, Response, ToolCall, ToolResult};

/// How a design maps a tool call to an operation record.
pub trait Identity {
    /// The operation `call` belongs to: an existing one it continues, or a new one.
    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId;

    /// The key the next send of `op` carries: by default the operation's own key.
    fn send_key(&self, ctx: &mut ExecCtx<'_>, op: OpId) -> Option<Key> {
        ctx.journal_ref().get(op).and_then(|o| o.key)
    }

    /// Feeds whatever the identity keeps in memory into `h` (see
    /// [`Executor::fingerprint`](super::Executor::fingerprint)); false if it cannot say (the default). The built-in ones
    /// keep nothing: all they know is in the journal.
    fn fingerprint(&self, _h: &mut dyn Hasher) -> bool {
        false
    }

    /// Forgets what it keeps in memory, as [`Executor::reset`](super::Executor::reset) does for the executor; false
    /// if it cannot (the default: the executor is then built anew for each run). The
    /// built-in ones keep nothing and return true.
    fn reset(&mut self) -> bool {
        false
    }

    /// A copy of it as it is now, for a search that saves a world
    /// ([`Executor::snapshot`](super::Executor::snapshot)); `None` if it cannot be copied
    /// (the default: the search then re-runs every run from its start). The built-in ones
    /// keep nothing and are copied at once.
    fn copy(&self) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}

/// What a response means for the operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Done(ToolResult),
    Failed,
    /// The effect may or may not exist; retrying is allowed.
    Uncertain,
    /// The provider will not act on this request and will not say what became of the one
    /// that used its key first: a 422 mismatch (the key was first used with other
    /// arguments, so that request reached the provider) or a 412 (the key is past its
    /// window, so an earlier send may have committed). Sending it again gets the same
    /// answer; the outcome is unknown, not failed.
    Undecided,
}

/// Reads a response to a create.
pub fn classify(response: Response) -> Verdict {
    match response {
        Response::Reply(Reply::Created { resource, .. })
        | Response::Reply(Reply::Found { resource }) => Verdict::Done(ToolResult::Success {
            resource: Some(resource),
        }),
        // The key was used before: the effect exists, but no receipt came with the answer.
        // A 202 is read the way most wrappers read it, as done; it is not (the journal
        // designs poll), and the metrics show the difference as false successes.
        Response::Reply(Reply::AlreadyExists | Reply::Accepted { .. }) => {
            Verdict::Done(ToolResult::Success { resource: None })
        }
        Response::Reply(Reply::Mismatch | Reply::Expired) => Verdict::Undecided,
        Response::Reply(
            Reply::MissingKey | Reply::Unsupported | Reply::Rejected | Reply::OperationFailed,
        ) => Verdict::Failed,
        // A 429 or a 408 did nothing, but an earlier send of the operation may have: as
        // open as the operation was.
        Response::Reply(
            Reply::InProgress
            | Reply::ServerError { .. }
            | Reply::NotFound
            | Reply::Pending
            | Reply::Throttled { .. }
            | Reply::RequestTimeout,
        )
        | Response::Timeout
        | Response::Reset => Verdict::Uncertain,
    }
}

/// An executor made of an [`Identity`] and the transport loop of the model's `executor`
/// shorthand: a one-layer [`Stack`](super::stack::Stack) (see [`Stacked::new`]).
pub type Retrying<I> = Stacked<I>;

//! The transport loop shared by the core designs.
//!
//! The core designs differ only in *identity*: which operation a tool call belongs to and
//! which key it carries. Everything else is this loop: dispatch, bounded transport retries
//! with exponential backoff, classification of replies, and recovery after a crash.
//!
//! Classification is honest about uncertainty: a timeout, a 5xx and a 409 "in progress" leave
//! the operation *unknown*, and when the attempts run out the agent is told `Unknown`, never
//! `Failure`. What the agent then does is the agent model's business.

use std::hash::Hasher;

use super::Executor;
use super::context::ExecCtx;
use super::journal::OpState;
use crate::model::ExecutorModel;
use crate::vocab::ids::{AttemptId, Key, OpId};
use crate::vocab::protocol::{Reply, Request, Response, ToolCall, ToolResult};

/// How a design maps a tool call to an operation record.
pub trait Identity {
    /// The operation `call` belongs to: an existing one it continues, or a new one.
    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId;

    /// The key the next send of `op` carries: by default the operation's own key.
    fn send_key(&self, ctx: &mut ExecCtx<'_>, op: OpId) -> Option<Key> {
        ctx.journal_ref().get(op).and_then(|o| o.key)
    }

    /// Feeds whatever the identity keeps in memory into `h` (see
    /// [`Executor::fingerprint`]); false if it cannot say (the default). The built-in ones
    /// keep nothing: all they know is in the journal.
    fn fingerprint(&self, _h: &mut dyn Hasher) -> bool {
        false
    }

    /// Forgets what it keeps in memory, as [`Executor::reset`] does for the executor; false
    /// if it cannot (the default: the executor is then built anew for each run). The
    /// built-in ones keep nothing and return true.
    fn reset(&mut self) -> bool {
        false
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
        Response::Reply(
            Reply::InProgress | Reply::ServerError { .. } | Reply::NotFound | Reply::Pending,
        )
        | Response::Timeout => Verdict::Uncertain,
    }
}

/// An executor made of an [`Identity`] and the shared transport loop.
pub struct Retrying<I> {
    identity: I,
    config: ExecutorModel,
}

impl<I: Identity> Retrying<I> {
    pub fn new(identity: I, config: &ExecutorModel) -> Self {
        Self {
            identity,
            config: config.clone(),
        }
    }

    fn dispatch(&self, ctx: &mut ExecCtx<'_>, op: OpId) {
        let key = self.identity.send_key(ctx, op);
        let worker = ctx.worker();
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        // Whoever sends is responsible: a restart of this worker recovers it.
        o.owner = worker;
        s.attempts += 1;
        o.key = key;
        let request = Request::create(&o.call(), key);
        ctx.transition(op, OpState::Dispatched);
        let attempt = ctx.send(op, request);
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.last_attempt = Some(attempt);
        }
    }

    fn settle(&self, ctx: &mut ExecCtx<'_>, op: OpId, state: OpState, result: ToolResult) {
        // The receipt is written with the state: the claim the world records names it.
        if let ToolResult::Success { resource } = result
            && let Some(o) = ctx.journal().get_mut(op)
        {
            o.receipt = resource.or(o.receipt);
        }
        ctx.transition(op, state);
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        if s.owes_report {
            s.owes_report = false;
            let call = o.call();
            ctx.report(&call, result);
        }
    }
}

impl<I: Identity> Executor for Retrying<I> {
    /// Nothing of its own in memory (its configuration is the model's): the identity's.
    fn fingerprint(&self, h: &mut dyn Hasher) -> bool {
        self.identity.fingerprint(h)
    }

    /// Nothing of its own to forget (its configuration is the model's): the identity's.
    fn reset(&mut self) -> bool {
        self.identity.reset()
    }

    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        let op = self.identity.operation(ctx, &call);
        let journal = ctx.journal();
        journal.set_call(op, call);
        let Some((o, s)) = journal.parts_mut(op) else {
            return;
        };
        s.owes_report = true;
        match o.state() {
            OpState::Confirmed => {
                // Already done: answer from the journal without a remote call.
                let resource = o.receipt;
                self.settle(
                    ctx,
                    op,
                    OpState::Confirmed,
                    ToolResult::Success { resource },
                );
            }
            // A send is out; its answer will be reported to this call.
            OpState::Dispatched => {}
            _ => {
                s.attempts = 0;
                self.dispatch(ctx, op);
            }
        }
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        let Some((o, s)) = ctx.journal_ref().parts(op) else {
            return;
        };
        if o.state() != OpState::Dispatched || s.last_attempt != Some(attempt) {
            return;
        }
        let attempts_done = s.attempts;
        match classify(response) {
            Verdict::Done(result) => self.settle(ctx, op, OpState::Confirmed, result),
            Verdict::Failed => self.settle(ctx, op, OpState::Failed, ToolResult::Failure),
            Verdict::Undecided => {
                ctx.transition(op, OpState::Unknown);
                if let Some((o, s)) = ctx.journal().parts_mut(op)
                    && s.owes_report
                {
                    s.owes_report = false;
                    let call = o.call();
                    ctx.report(&call, ToolResult::Unknown);
                }
            }
            Verdict::Uncertain => {
                ctx.transition(op, OpState::Unknown);
                if attempts_done < self.config.attempts {
                    ctx.set_timer(self.config.backoff_before(attempts_done), u64::from(op.0));
                } else if let Some((o, s)) = ctx.journal().parts_mut(op)
                    && s.owes_report
                {
                    s.owes_report = false;
                    let call = o.call();
                    ctx.report(&call, ToolResult::Unknown);
                }
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        let op = OpId(tag as u32);
        if ctx.journal_ref().get(op).map(|o| o.state()) == Some(OpState::Unknown) {
            self.dispatch(ctx, op);
        }
    }

    /// Resumes every operation this worker still owed an answer for, with its recorded
    /// identity and key: at-least-once recovery, as a durable job queue does.
    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        let worker = ctx.worker();
        for op in ctx.journal_ref().open_ops(worker) {
            let Some(s) = ctx.journal().scratch_mut(op) else {
                continue;
            };
            if s.owes_report {
                s.attempts = 0;
                self.dispatch(ctx, op);
            }
        }
    }
}

//! A turn: the process's messages read until one ends it, each dispatched to the method of
//! its kind (docs/executor-protocol.md section 2 for the turn rules, section 4 for the
//! messages). A method says whether the turn reads on ([`Next::Read`]) or is over
//! ([`Next::End`]: the process blocks, waits, or broke the protocol).

use super::http::HttpRequest;
use super::kv::KvRequest;
use super::{External, Given, TurnOf, Wait};
use crate::design::OpState;
use crate::design::context::ExecCtx;
use crate::external::code::ErrorCode;
use crate::external::message::{FromExec, Outcome, StateName};
use crate::vocab::ids::{CallId, ResourceId};
use crate::vocab::protocol::{ToolCall, ToolResult};

/// What a turn does after a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// It reads the process's next message.
    Read,
    /// It is over.
    End,
}

/// A `result` message's fields.
struct Claim {
    call: String,
    issue: u32,
    outcome: Outcome,
    receipt: Option<String>,
    detail: Option<String>,
}

impl External {
    /// Reads the process's messages until its turn ends.
    pub(super) fn turn(&mut self, ctx: &mut ExecCtx<'_>, of: TurnOf) {
        while let Some(msg) = self.recv(ctx) {
            if self.dispatch(ctx, of, msg) == Next::End {
                return;
            }
        }
    }

    /// One message of a turn, handed to the method of its kind.
    fn dispatch(&mut self, ctx: &mut ExecCtx<'_>, of: TurnOf, msg: FromExec) -> Next {
        match msg {
            FromExec::Kv {
                msg_id,
                op,
                key,
                value,
                expect_version,
                prefix,
            } => {
                let req = KvRequest {
                    msg_id,
                    op,
                    key,
                    value,
                    expect_version,
                    prefix,
                };
                self.on_kv(ctx, req)
            }
            FromExec::Log { text } => self.on_log(ctx, &text),
            FromExec::State {
                call,
                state,
                receipt,
            } => self.on_state(ctx, &call, state, receipt),
            FromExec::Http {
                msg_id,
                call,
                method,
                url,
                headers,
                body,
                body_b64,
                timeout_ms,
            } => {
                let req = HttpRequest {
                    msg_id,
                    call,
                    method,
                    url,
                    headers,
                    body,
                    body_b64,
                    timeout_ms,
                };
                self.on_http(ctx, of, req)
            }
            FromExec::Sleep { msg_id, ms } => self.on_sleep(ctx, of, msg_id, ms),
            FromExec::Result {
                call,
                issue,
                outcome,
                receipt,
                detail,
            } => {
                let claim = Claim {
                    call,
                    issue,
                    outcome,
                    receipt,
                    detail,
                };
                self.on_result(ctx, claim)
            }
            FromExec::Commit { msg_id, file } => self.on_commit(ctx, msg_id, &file),
            FromExec::Ready {} if of == TurnOf::Start => Next::End,
            FromExec::Idle {} if of == TurnOf::Work && self.is_async() => Next::End,
            FromExec::Idle {} if !self.is_async() => self.turn_rule(
                ctx,
                "an idle message from a sync process (idle ends the turns of hello.mode \"async\"; a sync turn ends with http, sleep or result)".into(),
            ),
            m => self.turn_rule(
                ctx,
                format!("a {} message does not fit here (turn rules, docs/executor-protocol.md section 2)", m.kind()),
            ),
        }
    }

    /// A message that breaks the turn rules: the process is stopped.
    pub(super) fn turn_rule(&mut self, ctx: &ExecCtx<'_>, what: String) -> Next {
        self.fail(ctx, ErrorCode::TurnRule, what);
        Next::End
    }

    /// `kv`: answered inside the turn.
    fn on_kv(&mut self, ctx: &mut ExecCtx<'_>, req: KvRequest) -> Next {
        match self.kv(ctx, req) {
            Some(answer) => {
                if self.send(ctx, answer) {
                    Next::Read
                } else {
                    Next::End
                }
            }
            None => Next::End,
        }
    }

    /// `commit` (from the shim): a crash point. The process dies here (the world crashes the
    /// worker after the turn's earlier commands; what it wrote stays), or is told to go on.
    fn on_commit(&mut self, ctx: &mut ExecCtx<'_>, msg_id: u64, file: &str) -> Next {
        let (n, crashed) = ctx.commit();
        if crashed {
            let name = self.shared.name.clone();
            ctx.note_about(None, self.busy, || {
                format!("{name}: dies at storage commit {n} (an fsync of {file})")
            });
            // The world drops this executor (its process killed) when it carries out the crash.
            self.dead = true;
            return Next::End;
        }
        let answer = crate::external::to_exec::ToExec::Committed {
            in_reply_to: msg_id,
            now_ms: ctx.now(),
        };
        if self.send(ctx, answer) {
            Next::Read
        } else {
            Next::End
        }
    }

    /// `log`: a line of the trace.
    fn on_log(&mut self, ctx: &mut ExecCtx<'_>, text: &str) -> Next {
        let name = self.shared.name.clone();
        ctx.note_about(None, self.busy, || format!("{name}: {text}"));
        Next::Read
    }

    /// `state`: the operation serving the call moves to the state named.
    fn on_state(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        call: &str,
        state: StateName,
        receipt: Option<String>,
    ) -> Next {
        let Some(g) = self.given_of(ctx, call) else {
            return Next::End;
        };
        let Some(receipt) = self.receipt(ctx, receipt) else {
            return Next::End;
        };
        let state = match state {
            StateName::Confirmed => OpState::Confirmed,
            StateName::Failed => OpState::Failed,
            StateName::Escalated => OpState::Escalated,
        };
        if state == OpState::Confirmed
            && let Some(o) = ctx.journal().get_mut(g.op)
        {
            o.receipt = receipt;
        }
        ctx.transition(g.op, state);
        Next::Read
    }

    /// `sleep`: a timer, answered by `wake`; ends a sync turn.
    fn on_sleep(&mut self, ctx: &mut ExecCtx<'_>, of: TurnOf, msg_id: u64, ms: u64) -> Next {
        if of == TurnOf::Start || (self.busy.is_none() && self.running.is_empty()) {
            return self.turn_rule(ctx, "a sleep outside a call".into());
        }
        if !self.fresh_msg_id(ctx, msg_id) {
            return Next::End;
        }
        self.next_tag += 1;
        let tag = self.next_tag;
        let name = self.shared.name.clone();
        ctx.note_about(None, self.busy, || format!("{name}: sleeps {ms} ms"));
        ctx.set_timer(ms, tag);
        self.outstanding.insert(msg_id, Wait::Sleep { tag });
        if self.is_async() {
            Next::Read
        } else {
            Next::End
        }
    }

    /// `result`: the claim reported to the agent and recorded on the operation. A sync
    /// process is then free: it is handed its next queued call in the same turn.
    fn on_result(&mut self, ctx: &mut ExecCtx<'_>, claim: Claim) -> Next {
        let Some((g, receipt)) = self.result_checked(ctx, &claim) else {
            return Next::End;
        };
        let issue = claim.issue;
        self.busy = None;
        self.running.remove(&(g.call.call, issue));
        let (state, result) = match claim.outcome {
            Outcome::Ok => (
                OpState::Confirmed,
                ToolResult::Success { resource: receipt },
            ),
            Outcome::Failed => (OpState::Failed, ToolResult::Failure),
            Outcome::Unknown => (OpState::Unknown, ToolResult::Unknown),
        };
        if let Some(d) = claim.detail {
            let (name, call) = (self.shared.name.clone(), claim.call);
            ctx.note_about(Some(g.op), Some(g.call.call), || {
                format!("{name}: {call}: {d}")
            });
        }
        if state == OpState::Confirmed
            && let Some(o) = ctx.journal().get_mut(g.op)
        {
            o.receipt = receipt;
        }
        ctx.transition(g.op, state);
        if let Some(s) = ctx.journal().scratch_mut(g.op) {
            s.owes_report = false;
        }
        ctx.report(&ToolCall { issue, ..g.call }, result);
        if self.is_async() {
            return Next::Read;
        }
        // The process waits for its next call: deliver a queued one.
        let Some((next, redelivery)) = self.queue.pop_front() else {
            return Next::End;
        };
        if !self.deliver(ctx, next, redelivery) {
            self.drain_queue(ctx);
            return Next::End;
        }
        Next::Read
    }

    /// The call a `result` answers and its receipt, if the result may be given: for an
    /// issue the process works on, and was given; else a protocol error.
    fn result_checked(
        &mut self,
        ctx: &ExecCtx<'_>,
        claim: &Claim,
    ) -> Option<(Given, Option<ResourceId>)> {
        let (call, issue) = (&claim.call, claim.issue);
        let g = self.given_of(ctx, call)?;
        let working = if self.is_async() {
            issue == 0 || issue > g.call.issue || self.running.contains(&(g.call.call, issue))
        } else {
            self.busy == Some(g.call.call)
        };
        if !working {
            self.fail(
                ctx,
                ErrorCode::DuplicateResult,
                format!(
                    "a result for {call}, which the process is not working on (a second result?)"
                ),
            );
            return None;
        }
        if issue == 0 || issue > g.call.issue {
            self.fail(
                ctx,
                ErrorCode::UnknownCall,
                format!(
                    "a result for issue {issue} of {call}, which was given issue {} at most",
                    g.call.issue
                ),
            );
            return None;
        }
        let receipt = self.receipt(ctx, claim.receipt.clone())?;
        Some((g, receipt))
    }

    /// Whether `msg_id` names no request still outstanding (else a protocol error).
    pub(super) fn fresh_msg_id(&mut self, ctx: &ExecCtx<'_>, msg_id: u64) -> bool {
        if self.outstanding.contains_key(&msg_id) {
            self.fail(
                ctx,
                ErrorCode::TurnRule,
                format!("msg_id {msg_id} is already outstanding (message ids must not be reused)"),
            );
            return false;
        }
        true
    }

    /// The call named on the wire (`c1`), if this process was given it (else a protocol
    /// error).
    pub(super) fn given_of(&mut self, ctx: &ExecCtx<'_>, call: &str) -> Option<Given> {
        let g = call
            .strip_prefix('c')
            .and_then(|n| n.parse().ok())
            .and_then(|n| self.given.get(&CallId(n)).copied());
        if g.is_none() {
            self.fail(
                ctx,
                ErrorCode::UnknownCall,
                format!("{call:?} is not a call this process was given"),
            );
        }
        g
    }

    /// The receipt the process named (`Some(None)`: none); `None` after a protocol error.
    fn receipt(&mut self, ctx: &ExecCtx<'_>, text: Option<String>) -> Option<Option<ResourceId>> {
        match text {
            None => Some(None),
            Some(t) => match self.face.parse_resource_id(&t) {
                Some(r) => Some(Some(r)),
                None => {
                    self.fail(
                        ctx,
                        ErrorCode::BadReceipt,
                        format!("receipt {t:?} is not a resource id the provider returns (res_N)"),
                    );
                    None
                }
            },
        }
    }
}

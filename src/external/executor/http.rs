//! A process's HTTP requests (`http`, docs/executor-protocol.md sections 4 and 6): checked
//! against the turn rules, mapped by the provider's face, and either sent through the world
//! as an attempt of the call's operation or answered by the face itself.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use super::turn::Next;
use super::{External, Given, TurnOf, Wait, http_response};
use crate::design::OpState;
use crate::design::context::{ExecCtx, NO_TIMEOUT};
use crate::external::code::ErrorCode;
use crate::external::face::{self, Mapped};
use crate::external::message;
use crate::external::to_exec::ToExec;
use crate::sim::hash::StableHasher;
use crate::vocab::protocol::{LookupQuery, Reply, Request, RequestKind};

/// An `http` message's fields.
pub(super) struct HttpRequest {
    pub msg_id: u64,
    pub call: String,
    pub method: String,
    pub url: String,
    pub headers: BTreeMap<String, String>,
    pub body: Option<String>,
    pub body_b64: Option<String>,
    pub timeout_ms: serde_json::Value,
}

impl External {
    /// `http`: a request of a call the process works on; ends a sync turn once sent.
    pub(super) fn on_http(&mut self, ctx: &mut ExecCtx<'_>, of: TurnOf, req: HttpRequest) -> Next {
        let Some((g, timeout)) = self.http_checked(ctx, of, &req) else {
            return Next::End;
        };
        let mapped = self.face.map(
            ctx.now(),
            &g.call,
            &req.method,
            &req.url,
            &req.headers,
            req.body.as_deref(),
        );
        match mapped {
            Mapped::Refused(why) if !self.shared.lenient_unmapped() => {
                self.fail(
                    ctx,
                    ErrorCode::UnmappedRequest,
                    format!(
                        "{why}; the request cannot be served (--executor-unmapped warn answers \
                         it 404 and goes on)"
                    ),
                );
                Next::End
            }
            Mapped::Refused(why) => {
                let why = format!("{why} (--executor-unmapped warn: served as unmapped)");
                self.answer_unmapped(ctx, g, req.msg_id, why)
            }
            Mapped::Unmapped(why) => self.answer_unmapped(ctx, g, req.msg_id, why),
            Mapped::Local(reply) => {
                let status = self.face.answer(reply, None).status;
                let (name, method, url) = (self.shared.name.clone(), &req.method, &req.url);
                ctx.note_about(Some(g.op), Some(g.call.call), || {
                    format!("{name}: {method} {url}: refused by the provider's face: {status}")
                });
                self.answer_here(ctx, req.msg_id, Some(reply))
            }
            Mapped::Send {
                request,
                key,
                first_sent_ms,
            } => {
                let mut request = request;
                request.first_sent_ms = first_sent_ms;
                self.send_request(ctx, g, &req, request, key, timeout)
            }
        }
    }

    /// A request the face could not map (`why`): warned once, noted, answered 404.
    fn answer_unmapped(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        g: Given,
        msg_id: u64,
        why: String,
    ) -> Next {
        self.shared.warn_unmapped(&why);
        let name = self.shared.name.clone();
        ctx.note_about(Some(g.op), Some(g.call.call), || {
            format!("{name}: {why}: answered 404")
        });
        self.answer_here(ctx, msg_id, None)
    }

    /// The call a request serves and its timeout (`None`: the model's; [`NO_TIMEOUT`]:
    /// none), if the request may be sent now; else a protocol error.
    fn http_checked(
        &mut self,
        ctx: &ExecCtx<'_>,
        of: TurnOf,
        req: &HttpRequest,
    ) -> Option<(Given, Option<u64>)> {
        if of == TurnOf::Start || (self.busy.is_none() && self.running.is_empty()) {
            self.turn_rule(
                ctx,
                "an http request outside a call (version 1 sends only while handling an invoke)"
                    .into(),
            );
            return None;
        }
        if !self.fresh_msg_id(ctx, req.msg_id) {
            return None;
        }
        if req.body_b64.is_some() && req.body.is_some() {
            self.fail(
                ctx,
                ErrorCode::Malformed,
                "http: both body and body_b64".into(),
            );
            return None;
        }
        let g = self.given_of(ctx, &req.call)?;
        if self.is_async() && !self.runs(g.call.call) {
            let call = &req.call;
            self.turn_rule(
                ctx,
                format!("an http request for {call}, which is not running (its result was sent)"),
            );
            return None;
        }
        let t = &req.timeout_ms;
        let timeout = if message::is_absent(t) {
            None
        } else if t.is_null() {
            Some(NO_TIMEOUT)
        } else if let Some(ms) = t.as_u64() {
            Some(ms)
        } else {
            self.fail(
                ctx,
                ErrorCode::Malformed,
                format!("http.timeout_ms: expected milliseconds or null, got {t}"),
            );
            return None;
        };
        Some((g, timeout))
    }

    /// The face's own answer to request `msg_id` (`reply`; `None`: 404, unmapped): at once
    /// to a sync process, by a world event of its own to an async one (section 2).
    fn answer_here(&mut self, ctx: &mut ExecCtx<'_>, msg_id: u64, reply: Option<Reply>) -> Next {
        if self.is_async() {
            self.next_tag += 1;
            let tag = self.next_tag;
            ctx.set_timer(0, tag);
            self.outstanding.insert(msg_id, Wait::Local { tag, reply });
            return Next::Read;
        }
        if self.send(ctx, self.local_answer(msg_id, reply, ctx.now())) {
            Next::Read
        } else {
            Next::End
        }
    }

    /// Sends a mapped request as an attempt of the call's operation: a create claims the
    /// operation for this worker under its key and dispatches it.
    fn send_request(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        g: Given,
        req: &HttpRequest,
        mut request: Request,
        key: Option<String>,
        timeout: Option<u64>,
    ) -> Next {
        if let Some(k) = &key {
            self.sent_keys.insert(req.msg_id, k.clone());
            if matches!(request.kind, RequestKind::Create { .. }) {
                self.same_key_same_body(k, req.body.as_deref().unwrap_or(""));
            }
        }
        match request.kind {
            RequestKind::Lookup(LookupQuery::Key(_)) => {
                let k = ctx.key_named(key.as_deref().unwrap_or(""));
                request.kind = RequestKind::Lookup(LookupQuery::Key(k));
            }
            RequestKind::Create { .. } => {
                request.key = key.map(|t| ctx.key_named(&t));
                let worker = ctx.worker();
                if let Some(o) = ctx.journal().get_mut(g.op) {
                    o.owner = worker;
                    o.key = request.key;
                }
                let state = ctx.journal_ref().get(g.op).map(|o| o.state());
                if matches!(state, Some(OpState::Proposed | OpState::Unknown)) {
                    ctx.transition(g.op, OpState::Dispatched);
                }
            }
            RequestKind::Lookup(_) => {}
        }
        let (name, method) = (self.shared.name.clone(), &req.method);
        let path = req.url.strip_prefix(face::BASE_URL).unwrap_or(&req.url);
        ctx.note_about(Some(g.op), Some(g.call.call), || {
            format!("{name}: {method} {path}")
        });
        let attempt = ctx.send_with_timeout(g.op, request, timeout);
        self.outstanding.insert(req.msg_id, Wait::Http(attempt));
        if self.is_async() {
            Next::Read
        } else {
            Next::End
        }
    }

    /// Warns when a key comes back with another create body: the simulated provider
    /// compares only the request's reference under a key (docs/executor-protocol.md,
    /// section 6), where a real one compares every parameter and refuses the second.
    fn same_key_same_body(&mut self, key: &str, body: &str) {
        let mut h = StableHasher::new();
        body.replace(key, "").hash(&mut h);
        let digest = h.finish();
        match self.bodies.get(key) {
            Some(&d) if d != digest => self.shared.warn_once(
                "one key was sent with two different create bodies: the simulated provider compares only the request's reference under a key, where the real one compares every parameter and would refuse the second as a mismatch (docs/executor-protocol.md, section 6)",
            ),
            Some(_) => {}
            None => {
                self.bodies.insert(key.to_string(), digest);
            }
        }
    }

    /// The face's own answer to request `msg_id`: `reply`, or 404 for a request it could
    /// not map.
    pub(super) fn local_answer(&self, msg_id: u64, reply: Option<Reply>, now_ms: u64) -> ToExec {
        let r = match reply {
            Some(reply) => self.face.answer(reply, None),
            None => self.face.unmapped_answer(),
        };
        http_response(msg_id, r, now_ms)
    }
}

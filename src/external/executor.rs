//! The executor of one worker incarnation when the design is an external process: the
//! world's callbacks become protocol messages, the process's requests become the world's
//! commands (docs/executor-protocol.md).
//!
//! Sync mode: the process works on one call at a time; a call that arrives while it is busy
//! waits here and is delivered after the busy call's `result`. Each callback runs one or
//! more turns and returns when the process blocks (in an `http` or a `sleep`) or waits for
//! the next call.
//!
//! Async mode: every call is delivered at once, and any number of requests may be
//! outstanding, each answered by its `msg_id`; each callback starts one turn (two or more
//! for a restart's redeliveries), which the process ends with `idle`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::face::{self, Face, Mapped};
use super::message::{self, FromExec, KvOp, Mode, Outcome, StateName};
use super::process::{Process, RecvError};
use super::{Hello, Shared};
use crate::design::context::{ExecCtx, NO_TIMEOUT};
use crate::design::{Executor, OpState};
use crate::model::ExecutorModel;
use crate::sim::hash::StableHasher;
use crate::vocab::ids::{AttemptId, CallId, OpId, ResourceId};
use crate::vocab::protocol::{LookupQuery, Reply, RequestKind, Response, ToolCall, ToolResult};

/// The longest wait for a new process's `hello` (an interpreter importing its libraries).
pub(crate) const HELLO_TIMEOUT: Duration = Duration::from_secs(60);

/// What a sync process is blocked in (its one outstanding request): the shape its
/// fingerprint has always hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Pending {
    Nothing,
    Http { msg_id: u64, attempt: AttemptId },
    Sleep { msg_id: u64, tag: u64 },
}

/// What an outstanding request waits for: the world's answer to an attempt, or a timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Wait {
    Http(AttemptId),
    Sleep {
        tag: u64,
    },
    /// Async mode: a request the face answers itself (`reply`; `None`: it could not map
    /// it, 404), by a timer of 0 ms (an answer is an event of the world, never a line in
    /// the middle of a turn).
    Local {
        tag: u64,
        reply: Option<Reply>,
    },
}

/// A call this process was given: the latest issue, and the operation that serves it.
#[derive(Clone, Copy, Debug, Hash)]
struct Given {
    call: ToolCall,
    op: OpId,
}

/// How a turn may end.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TurnOf {
    Start,
    Work,
}

/// The external executor of one worker incarnation.
pub struct External {
    shared: Arc<Shared>,
    /// The provider's HTTP face, as the model's provider writes it.
    face: Face,
    /// The key text of each outstanding request that carried one, by `msg_id`, for a face
    /// that echoes it.
    sent_keys: BTreeMap<u64, String>,
    /// A digest of the first create body sent under each key (the key's own text left
    /// out), for the warning of [`Self::same_key_same_body`].
    bodies: BTreeMap<String, u64>,
    config: serde_json::Value,
    process: Option<Process>,
    hello: Option<Hello>,
    given: BTreeMap<CallId, Given>,
    queue: VecDeque<(ToolCall, bool)>,
    /// Sync mode: the call the process works on.
    busy: Option<CallId>,
    /// Async mode: the calls (and issues) delivered and not yet answered.
    running: BTreeSet<(CallId, u32)>,
    /// The requests the process waits on, by `msg_id` (at most one in sync mode).
    outstanding: BTreeMap<u64, Wait>,
    next_tag: u64,
    /// Hash of every message sent to the process since its `start`: with a deterministic
    /// process, its memory is a function of them.
    history: StableHasher,
    /// The last message sent, for error messages.
    last_sent: String,
    /// A protocol error stopped it: it does nothing more.
    dead: bool,
}

impl External {
    pub fn new(shared: Arc<Shared>, config: &ExecutorModel, face: Face) -> Self {
        let config = serde_json::to_value(config).unwrap_or(serde_json::Value::Null);
        Self {
            shared,
            face,
            sent_keys: BTreeMap::new(),
            bodies: BTreeMap::new(),
            config,
            process: None,
            hello: None,
            given: BTreeMap::new(),
            queue: VecDeque::new(),
            busy: None,
            running: BTreeSet::new(),
            outstanding: BTreeMap::new(),
            next_tag: 0,
            history: StableHasher::new(),
            last_sent: String::new(),
            dead: false,
        }
    }

    /// Whether the process declared async mode in its `hello`.
    fn is_async(&self) -> bool {
        self.hello.as_ref().is_some_and(|h| h.mode == Mode::Async)
    }

    /// The sync process's outstanding request, as its fingerprint hashes it.
    fn pending(&self) -> Pending {
        debug_assert!(self.outstanding.len() <= 1 || self.is_async());
        match self.outstanding.iter().next() {
            None => Pending::Nothing,
            Some((&msg_id, &Wait::Http(attempt))) => Pending::Http { msg_id, attempt },
            Some((&msg_id, &Wait::Sleep { tag })) => Pending::Sleep { msg_id, tag },
            // Only async processes wait for an unmapped answer (sync ones get it at once).
            Some((_, &Wait::Local { .. })) => Pending::Nothing,
        }
    }

    /// Whether the process may be handed a call now.
    fn free(&self) -> bool {
        self.is_async() || (self.busy.is_none() && self.outstanding.is_empty())
    }

    /// Whether an async process has an issue of `call` running.
    fn runs(&self, call: CallId) -> bool {
        self.running
            .range((call, 0)..=(call, u32::MAX))
            .next()
            .is_some()
    }

    /// Stops on a protocol error: records it (with where, the last message sent and the
    /// process's last output), tells the process, kills it.
    fn fail(&mut self, ctx: &ExecCtx<'_>, code: u32, what: String) {
        if self.dead {
            return;
        }
        self.dead = true;
        let mut text = format!(
            "executor {} ({}, incarnation {}, at {} ms): {what} [protocol error {code}]",
            self.shared.name,
            ctx.worker(),
            ctx.incarnation(),
            ctx.now()
        );
        if !self.last_sent.is_empty() {
            text.push_str(&format!("\n  last message sent to it: {}", self.last_sent));
        }
        if let Some(mut p) = self.process.take() {
            let _ = p.send(&json!({"type":"error","code":code,"text":what}).to_string());
            text.push('\n');
            text.push_str(&p.tail());
            p.kill();
        }
        self.shared.fail(text);
    }

    fn send(&mut self, ctx: &ExecCtx<'_>, msg: serde_json::Value) -> bool {
        let line = msg.to_string();
        if msg["type"] == "init" {
            // Once per process, before any run: a fresh and a reused process differ here.
        } else if msg["type"] != "start" {
            line.hash(&mut self.history);
            super::determinism::record(ctx.worker().0, true, &line);
        } else {
            // A fresh and a reused process differ in `reset` only.
            let mut same = msg.clone();
            if let Some(o) = same.as_object_mut() {
                o.remove("reset");
            }
            super::determinism::record(ctx.worker().0, true, &same.to_string());
        }
        let Some(p) = self.process.as_mut() else {
            return false;
        };
        match p.send(&line) {
            Ok(()) => {
                self.last_sent = line;
                true
            }
            Err(e) => {
                self.last_sent = line;
                self.fail(ctx, 13, e);
                false
            }
        }
    }

    fn recv(&mut self, ctx: &ExecCtx<'_>) -> Option<FromExec> {
        let watchdog = self.shared.turn_timeout;
        let p = self.process.as_mut()?;
        match p.recv(watchdog) {
            Ok(line) => match message::parse(&line) {
                Ok(m) => {
                    if m != (FromExec::InitOk {}) {
                        super::determinism::record(ctx.worker().0, false, &line);
                    }
                    Some(m)
                }
                Err((code, why)) => {
                    self.fail(ctx, code, format!("{why}\n  the line: {line}"));
                    None
                }
            },
            Err(RecvError::Closed(status)) => {
                self.fail(ctx, 13, format!("the process closed the channel: {status}"));
                None
            }
            Err(RecvError::Watchdog(d)) => {
                self.fail(
                    ctx,
                    31,
                    format!(
                        "the process did not end its turn within {} ms of real time: a busy loop, or real blocking I/O (a socket, a time.sleep not patched, a thread)? (--executor-turn-timeout-ms)",
                        d.as_millis()
                    ),
                );
                None
            }
            Err(RecvError::Io(e)) => {
                self.fail(ctx, 12, e);
                None
            }
        }
    }

    /// A process for this incarnation, its `hello` read and `init` exchanged.
    fn ensure_process(&mut self, ctx: &ExecCtx<'_>) -> bool {
        // Once one process of the design broke the protocol, no run of it means anything.
        if self.dead || self.shared.failed() {
            self.dead = true;
            return false;
        }
        let init = json!({
            "type": "init", "protocol": super::PROTOCOL, "executor": self.shared.name,
            "config": self.config, "params": self.shared.params, "provider": self.face.describe(),
            "tools": ["create", "compensate"],
        });
        let init_line = init.to_string();
        if self.process.is_none() {
            match self.shared.take_process(&init_line) {
                Ok(p) => self.process = Some(p),
                Err(e) => {
                    self.shared
                        .fail(format!("executor {}: {e}", self.shared.name));
                    self.dead = true;
                    return false;
                }
            }
        }
        if self.process.as_ref().is_some_and(|p| p.initialized) {
            if self.hello.is_none() {
                self.hello = self.shared.hello();
            }
            return true;
        }
        let greeted = self.process.as_ref().is_some_and(|p| p.greeted);
        if !greeted {
            let Some(p) = self.process.as_mut() else {
                return false;
            };
            match read_hello(&self.shared, p) {
                Ok(h) => self.hello = Some(h),
                Err(e) => {
                    self.shared.fail(e);
                    self.dead = true;
                    self.process = None;
                    return false;
                }
            }
        } else {
            self.hello = self.shared.hello();
        }
        if !self.send(ctx, init) {
            return false;
        }
        match self.recv(ctx) {
            Some(FromExec::InitOk {}) => {
                if let Some(p) = self.process.as_mut() {
                    p.initialized = true;
                    p.init = init_line;
                }
                true
            }
            Some(m) => {
                self.fail(
                    ctx,
                    14,
                    format!("expected init_ok after init, got {}", m.kind()),
                );
                false
            }
            None => false,
        }
    }

    /// Starts (or restarts) the worker's process life.
    fn start(&mut self, ctx: &mut ExecCtx<'_>) {
        if !self.ensure_process(ctx) {
            return;
        }
        let (w, inc) = (ctx.worker().0, ctx.incarnation());
        let seed = seed_of(w, inc);
        self.history = StableHasher::new();
        ("start", w, inc, seed, ctx.now()).hash(&mut self.history);
        let used = self.process.as_ref().is_some_and(|p| p.used);
        let msg = json!({"type":"start","worker":w,"incarnation":inc,"seed":seed,"reset":used,"now_ms":ctx.now()});
        if let Some(p) = self.process.as_mut() {
            p.used = true;
        }
        if self.send(ctx, msg) {
            self.turn(ctx, TurnOf::Start);
        }
    }

    /// Hands `call` to the process (or answers it here, for a tool it does not handle).
    /// Returns whether a turn started.
    fn deliver(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall, redelivery: bool) -> bool {
        let (tool, args) = self.face.invocation(&call);
        let handles = self
            .hello
            .as_ref()
            .is_some_and(|h| h.tools.iter().any(|t| t == tool));
        if !handles {
            let name = self.shared.name.clone();
            ctx.note(|| format!("{name} has no tool {tool:?}: the call fails"));
            self.shared.warn_unmapped(&format!(
                "tool {tool:?} is not among the tools of its hello; its calls fail at once"
            ));
            if let Some(g) = self.given.get(&call.call).copied() {
                ctx.transition(g.op, OpState::Failed);
                if let Some(s) = ctx.journal().scratch_mut(g.op) {
                    s.owes_report = false;
                }
            }
            ctx.report(&call, ToolResult::Failure);
            return false;
        }
        if self.is_async() {
            self.running.insert((call.call, call.issue));
        } else {
            self.busy = Some(call.call);
        }
        let msg = json!({"type":"invoke","call":wire_call(call.call),"issue":call.issue,"tool":tool,"args":args,"redelivery":redelivery,"now_ms":ctx.now()});
        self.send(ctx, msg)
    }

    /// Delivers queued calls while the process is free.
    fn drain_queue(&mut self, ctx: &mut ExecCtx<'_>) {
        while self.free() && !self.dead {
            let Some((call, redelivery)) = self.queue.pop_front() else {
                return;
            };
            if self.deliver(ctx, call, redelivery) {
                self.turn(ctx, TurnOf::Work);
            }
        }
    }

    /// Reads the process's messages until its turn ends.
    fn turn(&mut self, ctx: &mut ExecCtx<'_>, of: TurnOf) {
        loop {
            let Some(msg) = self.recv(ctx) else { return };
            match msg {
                FromExec::Kv {
                    msg_id,
                    op,
                    key,
                    value,
                    expect_version,
                    prefix,
                } => {
                    let Some(answer) = self.kv(ctx, msg_id, op, key, value, expect_version, prefix)
                    else {
                        return;
                    };
                    if !self.send(ctx, answer) {
                        return;
                    }
                }
                FromExec::Log { text } => {
                    let name = self.shared.name.clone();
                    ctx.note(|| format!("{name}: {text}"));
                }
                FromExec::State {
                    call,
                    state,
                    receipt,
                } => {
                    let Some(g) = self.given_of(ctx, &call) else {
                        return;
                    };
                    let Some(receipt) = self.receipt(ctx, receipt) else {
                        return;
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
                }
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
                    if of == TurnOf::Start || (self.busy.is_none() && self.running.is_empty()) {
                        self.fail(
                            ctx,
                            14,
                            "an http request outside a call (version 1 sends only while handling an invoke)".into(),
                        );
                        return;
                    }
                    if !self.fresh_msg_id(ctx, msg_id) {
                        return;
                    }
                    if body_b64.is_some() && body.is_some() {
                        self.fail(ctx, 12, "http: both body and body_b64".into());
                        return;
                    }
                    let Some(g) = self.given_of(ctx, &call) else {
                        return;
                    };
                    if self.is_async() && !self.runs(g.call.call) {
                        self.fail(
                            ctx,
                            14,
                            format!("an http request for {call}, which is not running (its result was sent)"),
                        );
                        return;
                    }
                    let timeout = if message::is_absent(&timeout_ms) {
                        None
                    } else if timeout_ms.is_null() {
                        Some(NO_TIMEOUT)
                    } else if let Some(t) = timeout_ms.as_u64() {
                        Some(t)
                    } else {
                        self.fail(
                            ctx,
                            12,
                            format!(
                                "http.timeout_ms: expected milliseconds or null, got {timeout_ms}"
                            ),
                        );
                        return;
                    };
                    let mapped =
                        self.face
                            .map(ctx.now(), &g.call, &method, &url, &headers, body.as_deref());
                    match mapped {
                        Mapped::Unmapped(why) => {
                            self.shared.warn_unmapped(&why);
                            let name = self.shared.name.clone();
                            ctx.note(|| format!("{name}: {why}: answered 404"));
                            if self.is_async() {
                                self.next_tag += 1;
                                let tag = self.next_tag;
                                ctx.set_timer(0, tag);
                                self.outstanding
                                    .insert(msg_id, Wait::Local { tag, reply: None });
                                continue;
                            }
                            if !self.send(ctx, self.local_answer(msg_id, None, ctx.now())) {
                                return;
                            }
                        }
                        Mapped::Local(reply) => {
                            let status = self.face.answer(reply, None).status;
                            let name = self.shared.name.clone();
                            ctx.note(|| {
                                format!(
                                    "{name}: {method} {url}: refused by the provider's face: {status}"
                                )
                            });
                            if self.is_async() {
                                self.next_tag += 1;
                                let tag = self.next_tag;
                                ctx.set_timer(0, tag);
                                self.outstanding.insert(
                                    msg_id,
                                    Wait::Local {
                                        tag,
                                        reply: Some(reply),
                                    },
                                );
                                continue;
                            }
                            if !self.send(ctx, self.local_answer(msg_id, Some(reply), ctx.now())) {
                                return;
                            }
                        }
                        Mapped::Send {
                            mut request,
                            key,
                            first_sent_ms,
                        } => {
                            if let Some(k) = &key {
                                self.sent_keys.insert(msg_id, k.clone());
                                if matches!(request.kind, RequestKind::Create { .. }) {
                                    self.same_key_same_body(k, body.as_deref().unwrap_or(""));
                                }
                            }
                            request.first_sent_ms = first_sent_ms;
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
                            let name = self.shared.name.clone();
                            let path = url.strip_prefix(face::BASE_URL).unwrap_or(&url);
                            ctx.note(|| format!("{name}: {method} {path}"));
                            let attempt = ctx.send_with_timeout(g.op, request, timeout);
                            self.outstanding.insert(msg_id, Wait::Http(attempt));
                            if !self.is_async() {
                                return;
                            }
                        }
                    }
                }
                FromExec::Sleep { msg_id, ms } => {
                    if of == TurnOf::Start || (self.busy.is_none() && self.running.is_empty()) {
                        self.fail(ctx, 14, "a sleep outside a call".into());
                        return;
                    }
                    if !self.fresh_msg_id(ctx, msg_id) {
                        return;
                    }
                    self.next_tag += 1;
                    let tag = self.next_tag;
                    let name = self.shared.name.clone();
                    ctx.note(|| format!("{name}: sleeps {ms} ms"));
                    ctx.set_timer(ms, tag);
                    self.outstanding.insert(msg_id, Wait::Sleep { tag });
                    if !self.is_async() {
                        return;
                    }
                }
                FromExec::Result {
                    call,
                    issue,
                    outcome,
                    receipt,
                    detail,
                } => {
                    let Some(g) = self.given_of(ctx, &call) else {
                        return;
                    };
                    let working = if self.is_async() {
                        issue == 0
                            || issue > g.call.issue
                            || self.running.contains(&(g.call.call, issue))
                    } else {
                        self.busy == Some(g.call.call)
                    };
                    if !working {
                        self.fail(
                            ctx,
                            21,
                            format!("a result for {call}, which the process is not working on (a second result?)"),
                        );
                        return;
                    }
                    if issue == 0 || issue > g.call.issue {
                        self.fail(
                            ctx,
                            20,
                            format!("a result for issue {issue} of {call}, which was given issue {} at most", g.call.issue),
                        );
                        return;
                    }
                    let Some(receipt) = self.receipt(ctx, receipt) else {
                        return;
                    };
                    self.busy = None;
                    self.running.remove(&(g.call.call, issue));
                    let (state, result) = match outcome {
                        Outcome::Ok => (
                            OpState::Confirmed,
                            ToolResult::Success { resource: receipt },
                        ),
                        Outcome::Failed => (OpState::Failed, ToolResult::Failure),
                        Outcome::Unknown => (OpState::Unknown, ToolResult::Unknown),
                    };
                    if let Some(d) = detail {
                        let name = self.shared.name.clone();
                        ctx.note(|| format!("{name}: {call}: {d}"));
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
                        continue;
                    }
                    // The process waits for its next call: deliver a queued one.
                    let Some((next, redelivery)) = self.queue.pop_front() else {
                        return;
                    };
                    if !self.deliver(ctx, next, redelivery) {
                        self.drain_queue(ctx);
                        return;
                    }
                }
                FromExec::Ready {} if of == TurnOf::Start => return,
                FromExec::Idle {} if of == TurnOf::Work && self.is_async() => return,
                FromExec::Idle {} if !self.is_async() => {
                    self.fail(
                        ctx,
                        14,
                        "an idle message from a sync process (idle ends the turns of hello.mode \"async\"; a sync turn ends with http, sleep or result)".into(),
                    );
                    return;
                }
                m => {
                    self.fail(
                        ctx,
                        14,
                        format!("a {} message does not fit here (turn rules, docs/executor-protocol.md section 2)", m.kind()),
                    );
                    return;
                }
            }
        }
    }

    /// Whether `msg_id` names no request still outstanding (else a protocol error).
    fn fresh_msg_id(&mut self, ctx: &ExecCtx<'_>, msg_id: u64) -> bool {
        if self.outstanding.contains_key(&msg_id) {
            self.fail(
                ctx,
                14,
                format!("msg_id {msg_id} is already outstanding (message ids must not be reused)"),
            );
            return false;
        }
        true
    }

    fn given_of(&mut self, ctx: &ExecCtx<'_>, call: &str) -> Option<Given> {
        let g = call
            .strip_prefix('c')
            .and_then(|n| n.parse().ok())
            .and_then(|n| self.given.get(&CallId(n)).copied());
        if g.is_none() {
            self.fail(
                ctx,
                20,
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
                        22,
                        format!("receipt {t:?} is not a resource id the provider returns (res_N)"),
                    );
                    None
                }
            },
        }
    }

    /// Carries out a store request; its answer, or `None` after a protocol error.
    #[allow(clippy::too_many_arguments)]
    fn kv(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        msg_id: u64,
        op: KvOp,
        key: Option<String>,
        value: Option<String>,
        expect_version: Option<u64>,
        prefix: Option<String>,
    ) -> Option<serde_json::Value> {
        let need = |this: &mut Self, ctx: &ExecCtx<'_>, what: &str, v: Option<String>| {
            if v.is_none() {
                this.fail(
                    ctx,
                    12,
                    format!("kv {op:?}: the field {what:?} is required"),
                );
            }
            v
        };
        let now = ctx.now();
        let worker = ctx.worker();
        let name = self.shared.name.clone();
        let mut reply = json!({"type":"kv_ok","in_reply_to":msg_id,"ok":true,"now_ms":now});
        match op {
            KvOp::Get => {
                let key = need(self, ctx, "key", key)?;
                let e = ctx.journal_ref().kv().get(&key);
                reply["value"] = e.map_or(serde_json::Value::Null, |e| json!(e.value));
                reply["version"] = json!(e.map_or(0, |e| e.version));
            }
            KvOp::Put => {
                let key = need(self, ctx, "key", key)?;
                let value = need(self, ctx, "value", value)?;
                let shown = value.clone();
                let v = ctx.journal().kv_mut().put(&key, value, worker);
                ctx.note(|| format!("{name}: store {key} = {shown} (version {v})"));
                reply["version"] = json!(v);
            }
            KvOp::Cas => {
                let key = need(self, ctx, "key", key)?;
                let value = need(self, ctx, "value", value)?;
                let Some(expect) = expect_version else {
                    self.fail(
                        ctx,
                        12,
                        "kv cas: the field \"expect_version\" is required".into(),
                    );
                    return None;
                };
                let shown = value.clone();
                let (ok, e) = ctx.journal().kv_mut().cas(&key, expect, value, worker);
                let (val, ver) = e.map_or((serde_json::Value::Null, 0), |e| {
                    (json!(e.value), e.version)
                });
                ctx.note(|| match ok {
                    true => format!(
                        "{name}: store {key} = {shown} if version {expect}: written (version {ver})"
                    ),
                    false => format!(
                        "{name}: store {key} = {shown} if version {expect}: refused (version {ver})"
                    ),
                });
                reply["ok"] = json!(ok);
                reply["value"] = val;
                reply["version"] = json!(ver);
            }
            KvOp::Delete => {
                let key = need(self, ctx, "key", key)?;
                let existed = ctx.journal().kv_mut().delete(&key);
                ctx.note(|| format!("{name}: store {key} deleted"));
                reply["ok"] = json!(existed);
            }
            KvOp::List => {
                let prefix = prefix.unwrap_or_default();
                let entries: Vec<serde_json::Value> = ctx
                    .journal_ref()
                    .kv()
                    .list(&prefix)
                    .map(|(k, e)| json!([k, e.value, e.version]))
                    .collect();
                reply["entries"] = json!(entries);
            }
        }
        Some(reply)
    }
}

/// The seed of a process life: a function of the worker and the incarnation, so that a
/// restarted process does not repeat what the crashed one drew (splitmix64, 32 bits).
fn seed_of(worker: u32, incarnation: u32) -> u32 {
    let mut z =
        (u64::from(worker) << 32 | u64::from(incarnation)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

/// A call id on the wire.
fn wire_call(call: CallId) -> String {
    format!("c{}", call.0)
}

/// Reads a new process's `hello` and checks it.
pub fn read_hello(shared: &Shared, p: &mut Process) -> Result<Hello, String> {
    let name = &shared.name;
    let line = match p.recv(HELLO_TIMEOUT.max(shared.turn_timeout)) {
        Ok(l) => l,
        Err(e) => {
            let why = match e {
                RecvError::Closed(s) => format!("it ended before its hello: {s}"),
                RecvError::Watchdog(d) => format!("no hello within {} s", d.as_secs()),
                RecvError::Io(e) => e,
            };
            return Err(format!(
                "executor {name}: `{}` does not speak the executor protocol: {why}\n{}",
                shared.command.join(" "),
                p.tail()
            ));
        }
    };
    p.greeted = true;
    let bad = |p: &mut Process, why: String| {
        Err(format!(
            "executor {name}: its hello: {why}\n  the line: {line}\n{}",
            p.tail()
        ))
    };
    match message::parse(&line) {
        Ok(FromExec::Hello {
            protocol,
            mode,
            client,
            tools,
            assumptions,
            guarantee,
            fork,
        }) => {
            if protocol != super::PROTOCOL {
                return bad(
                    p,
                    format!("protocol {protocol}; this retrylab speaks protocol 1 only [10]"),
                );
            }
            let Some(mode) = Mode::parse(&mode) else {
                return bad(
                    p,
                    format!("mode {mode:?}; protocol 1 runs \"sync\" and \"async\" executors [10]"),
                );
            };
            let mut props = Vec::new();
            for g in &guarantee {
                match crate::check::Property::PLAIN
                    .iter()
                    .find(|p| p.def().name == g)
                {
                    Some(prop) => props.push(*prop),
                    None => return bad(p, format!("guarantee: unknown property {g:?}")),
                }
            }
            if !props.is_empty() && assumptions.is_empty() {
                return bad(p, "a guarantee needs the assumptions it rests on".into());
            }
            Ok(Hello {
                mode,
                client,
                tools,
                assumptions,
                guarantee: props,
                fork,
            })
        }
        Ok(m) => bad(
            p,
            format!("the first message must be hello, not {}", m.kind()),
        ),
        Err((code, why)) => bad(p, format!("{why} [{code}]")),
    }
}

impl External {
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

    /// Whether the process has this issue of `call` in hand: running, or queued for it.
    fn works_on(&self, call: &ToolCall) -> bool {
        let queued = self
            .queue
            .iter()
            .any(|(c, _)| c.call == call.call && c.issue == call.issue);
        let running = if self.is_async() {
            self.running.contains(&(call.call, call.issue))
        } else {
            self.busy == Some(call.call)
                && self
                    .given
                    .get(&call.call)
                    .is_some_and(|g| g.call.issue == call.issue)
        };
        queued || running
    }

    /// The face's own answer to request `msg_id`: `reply`, or 404 for a request it could
    /// not map.
    fn local_answer(&self, msg_id: u64, reply: Option<Reply>, now_ms: u64) -> serde_json::Value {
        let r = match reply {
            Some(reply) => self.face.answer(reply, None),
            None => self.face.unmapped_answer(),
        };
        json!({"type":"http_response","in_reply_to":msg_id,"status":r.status,
            "headers":r.headers,"body":r.body,"now_ms":now_ms})
    }

    /// The `msg_id` of the outstanding request waiting for `what`.
    fn waiting_for(&self, what: Wait) -> Option<u64> {
        self.outstanding
            .iter()
            .find_map(|(&id, &w)| (w == what).then_some(id))
    }
}

impl Executor for External {
    fn on_start(&mut self, ctx: &mut ExecCtx<'_>) {
        self.start(ctx);
    }

    /// A new process (this executor is new: the crashed one's process was killed) starts
    /// with the store as the crash left it, and the calls its worker had not answered are
    /// delivered again.
    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        self.start(ctx);
        let worker = ctx.worker();
        for op in ctx.journal_ref().open_ops(worker) {
            let Some((o, s)) = ctx.journal_ref().parts(op) else {
                continue;
            };
            if s.owes_report {
                let call = o.call();
                self.given.insert(call.call, Given { call, op });
                self.queue.push_back((call, true));
            }
        }
        self.drain_queue(ctx);
    }

    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        if self.dead || self.shared.failed() {
            self.dead = true;
            return;
        }
        let found = ctx.journal_ref().find_by_call(call.call);
        // The same issue of a call again: a queue's redelivery (`workers.redelivery_ms`),
        // here or on another worker; a re-run by the agent is a new issue.
        let redelivery = found.is_some_and(|op| {
            ctx.journal_ref()
                .get(op)
                .is_some_and(|o| o.call().issue == call.issue)
        });
        if redelivery && self.works_on(&call) {
            let name = self.shared.name.clone();
            ctx.note(|| {
                format!(
                    "{name}: {} redelivered to the process already working on it: ignored",
                    wire_call(call.call)
                )
            });
            return;
        }
        let op = match found {
            Some(op) => op,
            None => {
                let (worker, now) = (ctx.worker(), ctx.now());
                ctx.journal().create(&call, None, worker, now)
            }
        };
        let journal = ctx.journal();
        journal.set_call(op, call);
        if let Some(s) = journal.scratch_mut(op) {
            s.owes_report = true;
        }
        self.given.insert(call.call, Given { call, op });
        self.queue.push_back((call, redelivery));
        self.drain_queue(ctx);
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        _op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        let Some(msg_id) = self.waiting_for(Wait::Http(attempt)) else {
            return;
        };
        if self.dead {
            return;
        }
        self.outstanding.remove(&msg_id);
        let echo = self.sent_keys.remove(&msg_id);
        let msg = match response {
            Response::Reply(reply) => {
                let r = self.face.answer(reply, echo.as_deref());
                json!({"type":"http_response","in_reply_to":msg_id,"status":r.status,"headers":r.headers,"body":r.body,"now_ms":ctx.now()})
            }
            Response::Timeout => {
                json!({"type":"http_error","in_reply_to":msg_id,"error":"read_timeout","now_ms":ctx.now()})
            }
            Response::Reset => {
                json!({"type":"http_error","in_reply_to":msg_id,"error":"reset","now_ms":ctx.now()})
            }
        };
        if self.send(ctx, msg) {
            self.turn(ctx, TurnOf::Work);
            self.drain_queue(ctx);
        }
    }

    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        let (msg_id, msg) = if let Some(msg_id) = self.waiting_for(Wait::Sleep { tag }) {
            (
                msg_id,
                json!({"type":"wake","in_reply_to":msg_id,"now_ms":ctx.now()}),
            )
        } else if let Some((msg_id, reply)) =
            self.outstanding.iter().find_map(|(&id, &w)| match w {
                Wait::Local { tag: t, reply } if t == tag => Some((id, reply)),
                _ => None,
            })
        {
            (msg_id, self.local_answer(msg_id, reply, ctx.now()))
        } else {
            return;
        };
        if self.dead {
            return;
        }
        self.outstanding.remove(&msg_id);
        if self.send(ctx, msg) {
            self.turn(ctx, TurnOf::Work);
            self.drain_queue(ctx);
        }
    }

    fn on_cancel(&mut self, ctx: &mut ExecCtx<'_>, call: CallId, issue: u32) {
        if self.dead || !self.given.contains_key(&call) {
            return;
        }
        let msg = json!({"type":"cancel","call":wire_call(call),"issue":issue,"now_ms":ctx.now()});
        // A notification to a sync process; an async one may run what the cancellation
        // makes runnable (a cancelled task's result), in a turn of its own.
        if self.send(ctx, msg) && self.is_async() {
            self.turn(ctx, TurnOf::Work);
        }
    }

    /// The process's memory is a function of the messages it was sent since its start
    /// (which the determinism check verifies); beside them, what this side keeps.
    fn fingerprint(&self, h: &mut dyn Hasher) -> bool {
        if self.dead {
            return false;
        }
        h.write_u64(self.history.finish());
        let mut own = StableHasher::new();
        if self.is_async() {
            (
                &self.given,
                &self.queue,
                &self.running,
                &self.outstanding,
                self.next_tag,
            )
                .hash(&mut own);
        } else {
            (
                &self.given,
                &self.queue,
                self.busy,
                self.pending(),
                self.next_tag,
            )
                .hash(&mut own);
        }
        h.write_u64(own.finish());
        true
    }

    /// Keeps the process: the next `start` tells it to reset. With fork restarts, gives it
    /// back (it is killed) instead: the next `start` runs in a new fork.
    fn reset(&mut self) -> bool {
        if self.dead || !self.process.as_ref().is_some_and(|p| p.initialized) {
            return false;
        }
        if self.shared.restarts == super::Restarts::Fork
            && let Some(p) = self.process.take()
        {
            self.shared.give_back(p);
        }
        self.given.clear();
        self.queue.clear();
        self.busy = None;
        self.running.clear();
        self.outstanding.clear();
        self.next_tag = 0;
        self.sent_keys.clear();
        self.bodies.clear();
        self.history = StableHasher::new();
        true
    }
}

impl Drop for External {
    /// The worker is gone (a crash, or the end of the worlds of a command): its process goes
    /// back to the design, which resets it for the next worker, or kills it.
    fn drop(&mut self) {
        if let Some(p) = self.process.take()
            && !self.dead
        {
            self.shared.give_back(p);
        }
    }
}

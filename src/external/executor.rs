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

use super::code::ErrorCode;
use super::face::{self, Face};
use super::message::{self, FromExec, Mode};
use super::process::{Process, RecvError};
use super::to_exec::{ToExec, TransportError};
use super::{Hello, Shared};
use crate::design::context::ExecCtx;
use crate::design::{Executor, OpState};
use crate::model::ExecutorModel;
use crate::sim::hash::StableHasher;
use crate::vocab::ids::{AttemptId, CallId, OpId};
use crate::vocab::protocol::{Reply, Response, ToolCall, ToolResult};

// A process's `http` requests (the face's mapping, the world's attempts).
mod http;
// Its `kv` requests (the run's store).
mod kv;
// Its start: a process taken, greeted and initialized.
mod setup;
// A turn: the messages read until one ends it, one method per kind.
mod turn;

pub(crate) use setup::read_hello;

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
    /// The run's workers (each has a directory of the run's storage).
    workers: u32,
    /// `workers.journal: volatile`: a restarted worker's directory is empty.
    volatile: bool,
    /// `workers.crash.machine_loss` above 0: a crash may lose what was not committed.
    machine_loss: bool,
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
            workers: 1,
            volatile: false,
            machine_loss: false,
        }
    }

    /// The run's `workers`, whether a crash loses a worker's directory (`volatile`), and
    /// whether it may lose what was not committed (`machine_loss`: the shim then keeps each
    /// file's committed bytes).
    pub fn with_storage(mut self, workers: u32, volatile: bool, machine_loss: bool) -> Self {
        self.workers = workers;
        self.volatile = volatile;
        self.machine_loss = machine_loss;
        self
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
    fn fail(&mut self, ctx: &ExecCtx<'_>, code: ErrorCode, what: String) {
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
            let _ = p.send(&ToExec::Error { code, text: what }.line());
            text.push('\n');
            text.push_str(&p.tail());
            p.kill();
        }
        self.shared.fail(text);
    }

    fn send(&mut self, ctx: &ExecCtx<'_>, msg: ToExec) -> bool {
        let line = msg.line();
        if let ToExec::Init { .. } = msg {
            // Once per process, before any run: a fresh and a reused process differ here.
        } else if !matches!(msg, ToExec::Start { .. }) {
            line.hash(&mut self.history);
            super::determinism::record(ctx.worker().0, true, &line);
        } else {
            // A fresh and a reused process differ in `reset` only.
            let mut same = msg.value();
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
                self.fail(ctx, ErrorCode::Crash, e);
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
                self.fail(
                    ctx,
                    ErrorCode::Crash,
                    format!("the process closed the channel: {status}"),
                );
                None
            }
            Err(RecvError::Watchdog(d)) => {
                self.fail(
                    ctx,
                    ErrorCode::Watchdog,
                    format!(
                        "the process did not end its turn within {} ms of real time: a busy loop, or real blocking I/O (a socket, a time.sleep not patched, a thread)? (--executor-turn-timeout-ms)",
                        d.as_millis()
                    ),
                );
                None
            }
            Err(RecvError::Io(e)) => {
                self.fail(ctx, ErrorCode::Malformed, e);
                None
            }
        }
    }

    /// Starts (or restarts) the worker's process life.
    fn start(&mut self, ctx: &mut ExecCtx<'_>, restart: bool) {
        if !self.ensure_process(ctx) {
            return;
        }
        let (w, inc) = (ctx.worker().0, ctx.incarnation());
        // The run's storage: empty at the run's start (worker 0 starts first), a volatile
        // worker's directory empty again after its crash; then the life's slot for the shim.
        let pid = self.process.as_ref().map_or(0, Process::pid);
        let storage = if !restart && w == 0 {
            super::storage::begin_run(self.workers)
        } else if restart && self.volatile {
            super::storage::lose_worker(w)
        } else if restart && ctx.machine_lost() {
            super::storage::lose_unsynced(w)
        } else {
            Ok(())
        }
        .and_then(|()| super::storage::enter(pid, self.machine_loss));
        if let Err(e) = storage {
            self.shared
                .fail(format!("executor {}: {e}", self.shared.name));
            self.dead = true;
            return;
        }
        let seed = seed_of(w, inc);
        self.history = StableHasher::new();
        ("start", w, inc, seed, ctx.now()).hash(&mut self.history);
        let used = self.process.as_ref().is_some_and(|p| p.used);
        let msg = ToExec::Start {
            worker: w,
            incarnation: inc,
            seed,
            reset: used,
            now_ms: ctx.now(),
        };
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
            ctx.note_about(None, Some(call.call), || {
                format!("{name} has no tool {tool:?}: the call fails")
            });
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
        let msg = ToExec::Invoke {
            call: wire_call(call.call),
            issue: call.issue,
            tool: tool.to_string(),
            args,
            redelivery,
            now_ms: ctx.now(),
        };
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

/// The `http_response` to request `msg_id`.
fn http_response(msg_id: u64, r: face::HttpReply, now_ms: u64) -> ToExec {
    ToExec::HttpResponse {
        in_reply_to: msg_id,
        status: r.status,
        headers: r.headers,
        body: r.body,
        now_ms,
    }
}

/// A call id on the wire.
fn wire_call(call: CallId) -> String {
    format!("c{}", call.0)
}

impl External {
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

    /// The `msg_id` of the outstanding request waiting for `what`.
    fn waiting_for(&self, what: Wait) -> Option<u64> {
        self.outstanding
            .iter()
            .find_map(|(&id, &w)| (w == what).then_some(id))
    }
}

impl Executor for External {
    fn on_start(&mut self, ctx: &mut ExecCtx<'_>) {
        self.start(ctx, false);
    }

    /// A new process (this executor is new: the crashed one's process was killed) starts
    /// with the store as the crash left it, and the calls its worker had not answered are
    /// delivered again.
    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        self.start(ctx, true);
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
            ctx.note_about(None, Some(call.call), || {
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
                http_response(msg_id, self.face.answer(reply, echo.as_deref()), ctx.now())
            }
            Response::Timeout => ToExec::HttpError {
                in_reply_to: msg_id,
                error: TransportError::ReadTimeout,
                now_ms: ctx.now(),
            },
            Response::Reset => ToExec::HttpError {
                in_reply_to: msg_id,
                error: TransportError::Reset,
                now_ms: ctx.now(),
            },
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
                ToExec::Wake {
                    in_reply_to: msg_id,
                    now_ms: ctx.now(),
                },
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
        let msg = ToExec::Cancel {
            call: wire_call(call),
            issue,
            now_ms: ctx.now(),
        };
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
        // The run's files: what a later life of any worker may read (storage.rs).
        if let Some(files) = super::storage::digest() {
            h.write_u64(files);
        }
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

    /// With `--executor-lives reuse`, keeps the process: the next `start` tells it to reset.
    /// Otherwise gives it back (it is killed): the next run's `start` runs in a new life.
    fn reset(&mut self) -> bool {
        if self.dead || !self.process.as_ref().is_some_and(|p| p.initialized) {
            return false;
        }
        // A new run's first life is a new life: only a reused process carries over.
        // The determinism check's reused runs hand every process to another worker.
        if (self.shared.lives != super::Lives::Reuse || super::determinism::rotating())
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
    /// back to the design, which resets it for the next worker, or it is killed, and waited
    /// for: the worker's next life may open the files it held locked.
    fn drop(&mut self) {
        if let Some(mut p) = self.process.take() {
            if self.dead || self.shared.lives != super::Lives::Reuse {
                p.kill_and_wait();
            } else {
                self.shared.give_back(p);
            }
        }
    }
}

//! What an executor may do: its window onto the world.
//!
//! An executor never touches the clock, the network or an RNG. It reacts to a tool call, a
//! response or a timer, reads and writes its journal, and pushes commands (send, set a timer,
//! report to the agent) that the world carries out after the handler returns. This is what
//! lets the same design code run under random simulation, replay and, later, search.

use super::journal::{Journal, OpState};
use crate::sim::Millis;
use crate::vocab::event::OpEvent;
use crate::vocab::ids::*;
use crate::vocab::protocol::{Request, RequestKind, ToolCall, ToolResult};
use crate::vocab::record::{CallClaim, ClaimKind};
use crate::vocab::trace::{Component, Trace};

/// A command from an executor to the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecCommand {
    Send {
        attempt: AttemptId,
        op: OpId,
        request: Request,
        /// The client's timeout of this send: `None` for the model's `executor.timeout_ms`,
        /// [`NO_TIMEOUT`] for a client that waits for as long as the run lasts.
        timeout_ms: Option<Millis>,
    },
    Timer {
        at_ms: Millis,
        tag: u64,
        /// Set with [`ExecCtx::set_periodic_timer`]: acts only on unresolved operations.
        periodic: bool,
        /// The timer is due anywhere from `at_ms` to this much later, as the world chooses
        /// (a timing choice: [`ExecCtx::set_timer_within`]).
        spread_ms: Millis,
    },
    Report {
        call: CallId,
        issue: u32,
        result: ToolResult,
    },
    /// An age the design compares against ([`ExecCtx::declare_threshold`]).
    Threshold { ms: Millis },
    /// The worker's process died at the run's storage commit `commit` (an external
    /// executor's `fsync`, `workers.crash.at_commit`): the world crashes the worker here, after
    /// the commands before it.
    CrashAtCommit { commit: u32 },
}

/// The timeout of a send whose client never gives up ([`ExecCtx::send_with_timeout`]).
pub const NO_TIMEOUT: Millis = Millis::MAX;

/// Counters that mint fresh identifiers across the whole run.
#[derive(Clone, Debug, Default, Hash)]
pub(crate) struct Minted {
    pub attempts: u32,
    pub keys: u64,
    /// The keys external executors named, by the text they sent ([`ExecCtx::key_named`]).
    pub named_keys: std::collections::BTreeMap<String, Key>,
}

/// The context handed to every executor callback.
pub struct ExecCtx<'a> {
    now: Millis,
    worker: WorkerId,
    incarnation: u32,
    journal: &'a mut Journal,
    out: &'a mut Vec<ExecCommand>,
    minted: &'a mut Minted,
    trace: &'a mut Trace,
    /// What the design claims about its operations, for the checkers (never read back by
    /// designs). A claim names the call the operation serves; the world tags it with the
    /// intent.
    claims: &'a mut Vec<CallClaim>,
    /// The should-retry header of the answer being handled (name, value), if it carries one.
    should_retry: Option<(&'a str, bool)>,
    /// What decides a crash at a storage commit.
    commits: Commits<'a>,
    /// The worker restarts after losing its machine (`workers.crash.machine_loss`).
    machine_lost: bool,
}

/// What the world lends a step for its storage commits (external executors): asked at each
/// commit, it numbers it in the run and says whether the worker crashes there.
pub(crate) type Commits<'a> = &'a mut dyn FnMut(WorkerId) -> (u32, bool);

/// What the world lends an executor for one step: where its commands, mints, trace lines and
/// claims go, and the journal.
pub(crate) struct Lent<'a> {
    pub journal: &'a mut Journal,
    pub out: &'a mut Vec<ExecCommand>,
    pub minted: &'a mut Minted,
    pub trace: &'a mut Trace,
    pub claims: &'a mut Vec<CallClaim>,
    pub commits: Commits<'a>,
}

impl<'a> ExecCtx<'a> {
    /// The context of one step of worker `worker` (incarnation `incarnation`) at `now`;
    /// `should_retry`: the should-retry header of the answer being handled.
    pub(crate) fn new(
        now: Millis,
        (worker, incarnation): (WorkerId, u32),
        lent: Lent<'a>,
        should_retry: Option<(&'a str, bool)>,
    ) -> Self {
        let Lent {
            journal,
            out,
            minted,
            trace,
            claims,
            commits,
        } = lent;
        ExecCtx {
            now,
            worker,
            incarnation,
            journal,
            out,
            minted,
            trace,
            claims,
            should_retry,
            commits,
            machine_lost: false,
        }
    }
}

impl ExecCtx<'_> {
    /// The step is the restart of a worker whose machine was lost with its process.
    pub(crate) fn with_machine_lost(mut self, lost: bool) -> Self {
        self.machine_lost = lost;
        self
    }

    /// Whether this step restarts a worker whose machine was lost: its files go back to
    /// what their commits made durable (external executors' storage).
    pub(crate) fn machine_lost(&self) -> bool {
        self.machine_lost
    }

    /// The worker's process commits a file of the run's storage: whether it dies there (a
    /// scripted `crash_at_commit`, or `workers.crash.at_commit` while the crash budget lasts).
    /// On a crash the world is told ([`ExecCommand::CrashAtCommit`]); the caller stops the
    /// process's turn. The commit's number in the run comes with the answer.
    pub(crate) fn commit(&mut self) -> (u32, bool) {
        let (n, crashed) = (self.commits)(self.worker);
        if crashed {
            self.out.push(ExecCommand::CrashAtCommit { commit: n });
        }
        (n, crashed)
    }

    /// Current virtual time.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// The worker running this executor.
    pub fn worker(&self) -> WorkerId {
        self.worker
    }

    /// The should-retry header (`provider.should_retry`) on the answer being handled: its
    /// name and value (`true` retry, `false` do not); `None` when the answer carries none
    /// (or nothing is being answered).
    pub fn should_retry_header(&self) -> Option<(&str, bool)> {
        self.should_retry
    }

    /// How many times this worker has restarted: a restarted worker is a new process.
    pub fn incarnation(&self) -> u32 {
        self.incarnation
    }

    /// The journal shared by all workers: the operation records and the executor's scratch
    /// state beside them (durable or volatile per the model), leases, and the authorization
    /// ledger.
    pub fn journal(&mut self) -> &mut Journal {
        self.journal
    }

    /// Read-only view of the journal.
    pub fn journal_ref(&self) -> &Journal {
        self.journal
    }

    /// Moves an operation to `state` and records the change. Entering `Confirmed` (with the
    /// operation's receipt as it stands), `Failed` or `Escalated` is a claim the checkers
    /// judge against the ledger.
    pub fn transition(&mut self, op: OpId, state: OpState) {
        let now = self.now;
        if let Some(before) = self.journal.transition(op, state, now)
            && before != state
        {
            self.claim(op, state);
            let w = self.worker;
            self.trace
                .log(now, Component::Executor, || OpEvent::Transition {
                    worker: w,
                    op,
                    from: before.name(),
                    to: state.name(),
                    fence: None,
                });
        }
    }

    /// Records `state` for `op` only while `fence` is its current claim; returns whether it
    /// did (a stale holder's result is dropped).
    pub fn record(&mut self, op: OpId, fence: u64, state: OpState) -> bool {
        let before = self.journal.get(op).map(|o| o.state());
        let wrote = self.journal.record(op, fence, state, self.now);
        if wrote && before != Some(state) {
            self.claim(op, state);
        }
        let (now, w) = (self.now, self.worker);
        match (wrote, before) {
            (true, Some(b)) if b != state => {
                self.trace
                    .log(now, Component::Executor, || OpEvent::Transition {
                        worker: w,
                        op,
                        from: b.name(),
                        to: state.name(),
                        fence: Some(fence),
                    })
            }
            (false, _) => self
                .trace
                .log(now, Component::Executor, || OpEvent::StaleFence {
                    worker: w,
                    op,
                    fence,
                }),
            _ => {}
        }
        wrote
    }

    /// Gives up on `op` as `state` without learning its outcome: a wrapper that turns an
    /// unknown into a reported failure. It is a claim all the same, judged against the ledger
    /// like any other.
    pub fn abandon(&mut self, op: OpId, state: OpState) {
        let now = self.now;
        if self.journal.transition(op, state, now).is_some() {
            self.claim(op, state);
        }
        let w = self.worker;
        self.trace
            .log(now, Component::Executor, || OpEvent::Abandons {
                worker: w,
                op,
                state: state.name(),
            });
    }

    /// Records what entering `state` claims about `op`, if anything.
    fn claim(&mut self, op: OpId, state: OpState) {
        let Some(o) = self.journal.get(op) else {
            return;
        };
        let kind = match state {
            OpState::Confirmed => ClaimKind::Confirmed(o.receipt),
            OpState::Failed => ClaimKind::Failed,
            OpState::Escalated => ClaimKind::Escalated,
            _ => return,
        };
        self.claims.push(CallClaim {
            op,
            call: o.call().call,
            at_ms: self.now,
            kind,
        });
    }

    /// A key never used before in this run.
    pub fn new_key(&mut self) -> Key {
        self.minted.keys += 1;
        Key(self.minted.keys)
    }

    /// Sends `request` for operation `op`. The response (a reply or a timeout) comes back
    /// through `on_response` with the returned attempt id. `op` must be recorded in the
    /// journal: the world counts an effect the send commits for the call `op` serves there.
    ///
    /// A keyed create carries the time `op` was first sent under that key (stamped here and
    /// kept in the journal with the operation), as a client sends `Repeatability-First-Sent`.
    pub fn send(&mut self, op: OpId, request: Request) -> AttemptId {
        self.send_with_timeout(op, request, None)
    }

    /// The key an external executor sends as `text` (an `Idempotency-Key` header): the same
    /// key for the same text anywhere in the run (any worker, any incarnation), a key never
    /// used before for a text not seen before.
    pub fn key_named(&mut self, text: &str) -> Key {
        if let Some(k) = self.minted.named_keys.get(text) {
            return *k;
        }
        let k = self.new_key();
        self.minted.named_keys.insert(text.to_string(), k);
        k
    }

    /// Like [`send`](Self::send), with the client's own timeout (`None`: the model's
    /// `executor.timeout_ms`; [`NO_TIMEOUT`]: none).
    pub fn send_with_timeout(
        &mut self,
        op: OpId,
        mut request: Request,
        timeout_ms: Option<Millis>,
    ) -> AttemptId {
        // A first-sent time the request already names (an external executor's header)
        // is the client's, kept as sent.
        if let (RequestKind::Create { .. }, Some(key), None) =
            (request.kind, request.key, request.first_sent_ms)
        {
            let now = self.now;
            let first = self
                .journal
                .get_mut(op)
                .map(|o| o.stamp_first_sent(key, now));
            request.first_sent_ms = Some(first.unwrap_or(now));
        }
        self.minted.attempts += 1;
        let attempt = AttemptId(self.minted.attempts);
        self.out.push(ExecCommand::Send {
            attempt,
            op,
            request,
            timeout_ms,
        });
        attempt
    }

    /// Calls `on_timer(tag)` after `delay_ms`, unless this worker crashes first. The tag is
    /// the design's own and opaque to the world, as a `sleep`'s `msg_id` is in the external
    /// executor protocol; a design that means several things by its timers gives them a
    /// type and one encoding of it (the journal family's `Wake`, a stack's `Retry`).
    pub fn set_timer(&mut self, delay_ms: Millis, tag: u64) {
        self.set_timer_within(delay_ms, delay_ms, tag);
    }

    /// Calls `on_timer(tag)` after a delay from `min_ms` to `max_ms` that the world chooses
    /// (a backoff's jitter): a timing choice like a latency, drawn by random simulation,
    /// enumerated at its ends and around thresholds by a search, repeated by a replay.
    pub fn set_timer_within(&mut self, min_ms: Millis, max_ms: Millis, tag: u64) {
        debug_assert!(min_ms <= max_ms);
        self.out.push(ExecCommand::Timer {
            at_ms: self.now.saturating_add(min_ms),
            tag,
            periodic: false,
            spread_ms: max_ms.saturating_sub(min_ms),
        });
    }

    /// Like [`set_timer`](Self::set_timer), for a timer that recurs (a recovery sweeper) and
    /// acts only on operations that are not settled (confirmed, failed, compensated) or
    /// escalated. The world ends a run once nothing but such timers is pending and every
    /// operation is settled or escalated: from then on they could change nothing.
    pub fn set_periodic_timer(&mut self, delay_ms: Millis, tag: u64) {
        self.out.push(ExecCommand::Timer {
            at_ms: self.now.saturating_add(delay_ms),
            tag,
            periodic: true,
            spread_ms: 0,
        });
    }

    /// Tells the agent the result of tool call `call` (this issue of it: the agent ignores
    /// a result meant for an earlier issue of a call it has re-run).
    pub fn report(&mut self, call: &ToolCall, result: ToolResult) {
        self.out.push(ExecCommand::Report {
            call: call.call,
            issue: call.issue,
            result,
        });
    }

    /// Declares a time threshold the design compares an age against (`ctx.now()` minus a
    /// time it recorded: "an identical call within 2 s is answered from the cache", "a key
    /// older than a day is read back first"), before the choices it bears on. An explorer
    /// offers the values just below and just above it in the menus of the timing choices
    /// that follow (as it does for the delay of every timer the design sets, and for the
    /// model's knobs); without it a search may certify a model only because no menu value
    /// lands on the far side of the design's own constant. A design whose constants are
    /// known when it is built declares them once with [`super::Design::time_thresholds`]
    /// instead. Random simulation and replay ignore it.
    pub fn declare_threshold(&mut self, ms: Millis) {
        self.out.push(ExecCommand::Threshold { ms });
    }

    /// Adds a line to the trace (free when tracing is off), about no operation or call in
    /// particular: `trace --intent` keeps it with the lines about no intent.
    pub fn note(&mut self, text: impl FnOnce() -> String) {
        self.note_about(None, None, text);
    }

    /// Adds a line to the trace about `op` (free when tracing is off): `trace --intent`
    /// shows it with the lines of the intent `op` serves.
    pub fn note_on(&mut self, op: OpId, text: impl FnOnce() -> String) {
        self.note_about(Some(op), None, text);
    }

    /// Adds a line to the trace about `op` and/or `call`, the identifiers the line's
    /// readers (`trace --intent`, the diagram) take it to be about; none: about no intent.
    pub fn note_about(
        &mut self,
        op: Option<OpId>,
        call: Option<CallId>,
        text: impl FnOnce() -> String,
    ) {
        let (now, worker) = (self.now, self.worker);
        self.trace.log(now, Component::Executor, || OpEvent::Note {
            worker,
            op,
            call,
            text: text(),
        });
    }
}

//! The engine of the journal family: one durable operation per authorized intent, driven
//! step by step through the journal.
//!
//! What every design of the family does:
//! - the operation is recorded (`authorized`) before anything is sent, bound to the user's
//!   authorization, with one key for its whole life: transport retries, re-runs and agent
//!   replans all go through that record;
//! - a call for the same authorization with *other* arguments is refused locally, never sent
//!   under the old key: a changed action needs a new authorization;
//! - a timeout, a 5xx, a 409 or a 412 leaves the operation *unknown*; a 202 is *accepted*,
//!   not done, and is polled until the work succeeds or fails;
//! - after `deadline_ms` from creation the operation stops acting and is *escalated*: the
//!   agent hears "unknown" from then on;
//! - a restarted worker resumes its unfinished operations; with a sweeper, any worker takes
//!   over operations that have not moved for `sweep_ms`;
//! - a key is not sent again once it is as old as `assumed_retention_ms` (counted from its
//!   first send, less one client timeout for the request to arrive), unless a read-back has
//!   just proved the effect absent: the operation is escalated instead. Absent, keys are
//!   believed to be kept forever.
//!
//! What the [`Policy`] adds: read-back before any retry (reconcile), an exclusive lease with
//! fencing (lease), and a durable authorization ledger that outlives a volatile journal.

use std::collections::BTreeMap;

use super::Executor;
use super::assumptions::{self as a, Assumption, Resender};
use super::context::ExecCtx;
use super::journal::{Holder, OpState};
use crate::model::{ExecutorModel, Lookup};
use crate::sim::Millis;
use crate::vocab::ids::{AttemptId, Key, OpId, ResourceId};
use crate::vocab::protocol::{LookupQuery, Reply, Request, Response, ToolCall, ToolResult};

/// The switches that tell the designs of the family apart.
#[derive(Clone, Copy, Debug, Hash)]
pub struct Policy {
    /// On an unknown outcome, read the outcome back before any new create; a negative read
    /// counts only once `visibility_bound_ms` has passed since the last send.
    pub reconcile: bool,
    /// Act on an operation only under an exclusive lease, and record results only under the
    /// current fencing token.
    pub lease: bool,
    /// Bind calls to the authorization ledger, which survives a volatile journal.
    pub auth_ledger: bool,
    /// Act on an answer only if it is to the operation's newest send and, under a lease,
    /// was sent under the current fencing token. Every design of the family keeps it on;
    /// it is a switch so that a test fixture can show what it prevents.
    pub fencing: bool,
}

impl Policy {
    /// The contract assumptions the family's guarantee rests on under this policy.
    pub fn assumptions(self) -> Vec<Assumption> {
        let who = Resender::Journal {
            reads: self.reconcile,
            lease: self.lease,
        };
        // Every send again under the key needs the provider's key contract to absorb it...
        let mut list = a::key_contract(who);
        if self.reconcile {
            // ...unless a search has proved the effect absent before every such send.
            list = list
                .into_iter()
                .map(|x| x.unless(a::search_decides))
                .collect();
        }
        if !self.auth_ledger {
            list.push(a::durable_journal());
        }
        list.push(a::authorization_survives());
        if self.reconcile {
            // The read-back carries the guarantee where the key contract does not.
            list.push(a::read_back_identifies_operation().unless(a::key_contract_absorbs(who)));
            list.push(a::visibility_bound_covers_lag().unless(a::key_contract_absorbs(who)));
        }
        if self.lease {
            list.push(a::lease_covers_step());
        }
        list
    }
}

/// What every journal design promises where its assumptions hold: no duplicate effect, no
/// changed argument applied (it refuses the change before sending), no merged repeat, and no
/// success reported for an effect that does not exist (a 202 is polled, not believed).
pub const GUARANTEE: [crate::check::Property; 6] = [
    crate::check::Property::NoDuplicate,
    crate::check::Property::NoDrift,
    crate::check::Property::NoMergedRepeat,
    crate::check::Property::NoFalseSuccess,
    crate::check::Property::NoWrongReceipt,
    crate::check::Property::NoWrongCompensation,
];

/// What an outstanding request was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Step {
    Create,
    Read,
    Poll,
}

/// What one of its timers wakes the executor for: the timer's tag is this, encoded by
/// [`Wake::tag`] and read back by [`Wake::of`] (the one place that knows the bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wake {
    /// The sweeper's period: recover what is unfinished.
    Sweep,
    /// Try again to claim an operation whose lease has run out.
    LeaseWait(OpId),
    /// The operation's wait (a backoff, the read-back's delay) is over: its next step.
    Next(OpId),
}

impl Wake {
    /// The sweeper's tag: every bit set.
    const SWEEP: u64 = u64::MAX;
    /// The bit of a lease wait, above the 32 bits of the operation.
    const LEASE_WAIT: u64 = 1 << 40;

    fn tag(self) -> u64 {
        match self {
            Wake::Sweep => Wake::SWEEP,
            Wake::LeaseWait(op) => Wake::LEASE_WAIT | u64::from(op.0),
            Wake::Next(op) => u64::from(op.0),
        }
    }

    fn of(tag: u64) -> Wake {
        match tag {
            Wake::SWEEP => Wake::Sweep,
            t if t & Wake::LEASE_WAIT != 0 => Wake::LeaseWait(OpId(t as u32)),
            t => Wake::Next(OpId(t as u32)),
        }
    }
}

#[derive(Clone)]
pub struct Journaled {
    policy: Policy,
    config: ExecutorModel,
    /// Requests this incarnation has out: what each is for and under which fence.
    pending: BTreeMap<AttemptId, (Step, Option<u64>)>,
    /// While a response is handled: the fence it was sent under.
    fence: Option<u64>,
}

impl Journaled {
    pub fn new(policy: Policy, config: &ExecutorModel) -> Self {
        Self {
            policy,
            config: config.clone(),
            pending: BTreeMap::new(),
            fence: None,
        }
    }

    fn holder(ctx: &ExecCtx<'_>) -> Holder {
        Holder {
            worker: ctx.worker(),
            incarnation: ctx.incarnation(),
        }
    }

    /// The operation for `call`: the one its authorization is bound to, or a new one.
    fn bind(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> Result<OpId, &'static str> {
        let ledger = self
            .policy
            .auth_ledger
            .then(|| ctx.journal_ref().auth_ledger().consumed(call.auth))
            .flatten();
        if let Some(spent) = ledger
            && spent.params != call.params
        {
            return Err("its authorization was spent on other arguments");
        }
        if let Some(op) = ctx.journal_ref().find_by_auth(call.auth) {
            let o = ctx.journal_ref().get(op).expect("found");
            if o.fingerprint != call.params {
                return Err("the operation was authorized with other arguments");
            }
            return Ok(op);
        }
        // A new record; under the ledger it keeps the key its authorization was spent on.
        let key = match ledger {
            Some(spent) => spent.key,
            None => ctx.new_key(),
        };
        if self.policy.auth_ledger {
            ctx.journal()
                .auth_ledger_mut()
                .consume(call.auth, key, call.params);
        }
        let (worker, now) = (ctx.worker(), ctx.now());
        let op = ctx.journal().create(call, Some(key), worker, now);
        if let Some(o) = ctx.journal().get_mut(op) {
            // A key taken back from the ledger is as old as its first send.
            o.key_sent_ms = ledger.and_then(|spent| spent.first_sent_ms);
        }
        ctx.transition(op, OpState::Authorized);
        Ok(op)
    }

    /// Takes the next step of `op`, which has nothing under way.
    fn act(&mut self, ctx: &mut ExecCtx<'_>, op: OpId) {
        let Some((o, s)) = ctx.journal_ref().parts(op) else {
            return;
        };
        // What the operation had done when this step began: the decisions below go by
        // these, read before the lease is taken.
        let (state, attempts, reads) = (o.state(), s.attempts, s.reads);
        let (cleared, proved) = (s.cleared_to_send, s.absence_proved);
        let created = o.created_ms();
        let key_sent = o.key_sent_ms.is_some();
        if state.is_settled() || state == OpState::Escalated {
            return;
        }
        let Some(fence) = self.lease(ctx, op) else {
            return;
        };
        if ctx.journal_ref().scratch(op).is_some_and(|s| s.busy) {
            return;
        }
        if self
            .config
            .deadline_ms
            .is_some_and(|d| ctx.now() >= created.saturating_add(d))
        {
            return self.escalate(ctx, op, || "deadline passed".to_string());
        }
        match state {
            OpState::Accepted if reads < self.config.reads => self.send(ctx, op, Step::Poll, fence),
            // Polled as often as this agent call allows: still accepted, not done.
            OpState::Accepted => self.report(ctx, op, ToolResult::Unknown),
            // A first send. (A record rebuilt from the authorization ledger has sent its key
            // before: it is a resend, below.)
            OpState::Proposed | OpState::Authorized if !key_sent => {
                self.send(ctx, op, Step::Create, fence)
            }
            _ => self.after_first_send(ctx, op, fence, (attempts, reads), (cleared, proved)),
        }
    }

    /// The fence of this worker's lease on `op` (`Some(None)` for a design that does not
    /// lease), or `None` while another worker holds it: then a timer wakes this one when
    /// that lease ends.
    fn lease(&mut self, ctx: &mut ExecCtx<'_>, op: OpId) -> Option<Option<u64>> {
        if !self.policy.lease {
            return Some(None);
        }
        let holder = Self::holder(ctx);
        let now = ctx.now();
        // The journal's own acquire (the operation loom checks): claim or renew, and on a
        // takeover void what the previous holder had under way.
        match ctx.journal().acquire(op, holder, now, self.config.lease_ms) {
            Ok(f) => Some(Some(f)),
            Err(held) => {
                if let Some(l) = held {
                    ctx.note_on(op, || {
                        format!(
                            "{op} is leased by worker {} until {} ms: waiting for it",
                            l.holder.worker.0, l.until_ms
                        )
                    });
                    ctx.set_timer(l.until_ms - now, Wake::LeaseWait(op).tag());
                }
                None
            }
        }
    }

    /// The next step of `op` once its key has gone out: read back first where the design
    /// reconciles and the read can say something, refuse a key older than the provider
    /// keeps unless a read proved the effect absent, else resend with the same key while
    /// attempts remain, and give the call back as unknown when none do.
    fn after_first_send(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        fence: Option<u64>,
        (attempts, reads): (u32, u32),
        (cleared, proved): (bool, bool),
    ) {
        let wants_read = self.policy.reconcile && !cleared;
        let unreadable = wants_read.then(|| self.unreadable(ctx, op)).flatten();
        if wants_read && unreadable.is_none() {
            return if reads < self.config.reads {
                self.send(ctx, op, Step::Read, fence)
            } else {
                self.give_back(ctx, op)
            };
        }
        if let Some(why) = unreadable {
            ctx.note_on(op, || format!("{op}: cannot read back: {why}"));
        }
        // Only a read that proved the effect absent lets an old key go out again.
        if !proved && let Some((key, age)) = self.key_too_old(ctx, op) {
            let assumed = self.config.assumed_retention_ms.unwrap_or(0);
            return self.escalate(ctx, op, || {
                format!(
                    "key {key} is older than the assumed retention (first sent {age} ms ago; assumed {assumed} ms, less one timeout) and no read-back proved the effect absent: not sent again"
                )
            });
        }
        if attempts < self.config.attempts {
            if self.policy.reconcile && !proved {
                ctx.note_on(op, || format!("{op}: no read-back decided: same-key retry"));
            }
            self.send(ctx, op, Step::Create, fence)
        } else {
            self.give_back(ctx, op)
        }
    }

    /// Why the configured read-back cannot say anything about `op`, if it cannot.
    fn unreadable(&self, ctx: &ExecCtx<'_>, op: OpId) -> Option<&'static str> {
        let o = ctx.journal_ref().get(op).expect("exists");
        match self.config.reconcile {
            // Without the reply, the resource id is known nowhere.
            Lookup::ByResourceId if o.receipt.is_none() => Some(
                "no receipt after a lost reply (a lookup by resource id needs the id the reply carried)",
            ),
            Lookup::ByKey if o.key.is_none() => Some("no key to look up"),
            Lookup::None => Some("no lookup configured (executor.reconcile)"),
            _ => None,
        }
    }

    /// The key of `op` and its age, when a create sent now might reach the provider after
    /// the assumed retention: the age is counted from the key's first send, and the request
    /// is given one client timeout to arrive.
    fn key_too_old(&self, ctx: &ExecCtx<'_>, op: OpId) -> Option<(Key, Millis)> {
        let assumed = self.config.assumed_retention_ms?;
        let o = ctx.journal_ref().get(op)?;
        let (key, first) = (o.key?, o.key_sent_ms?);
        let age = ctx.now().saturating_sub(first);
        (age.saturating_add(self.config.timeout_ms) >= assumed).then_some((key, age))
    }

    /// Whether a "not found" by key read back now proves nothing: the key is as old as a
    /// key that is not sent again ([`Self::key_too_old`]), so the provider may have
    /// forgotten it while the effect exists (and a create under it would not be absorbed).
    fn forgotten_key(&self, ctx: &ExecCtx<'_>, op: OpId) -> Option<(Key, Millis)> {
        if self.config.reconcile != Lookup::ByKey {
            return None;
        }
        self.key_too_old(ctx, op)
    }

    fn send(&mut self, ctx: &mut ExecCtx<'_>, op: OpId, step: Step, fence: Option<u64>) {
        let now = ctx.now();
        let worker = ctx.worker();
        let (o, s) = ctx.journal().parts_mut(op).expect("exists");
        s.busy = true;
        // Whoever sends is responsible: a restart of this worker recovers it.
        o.owner = worker;
        s.last_action_ms = Some(now);
        let request = match step {
            Step::Create => {
                s.attempts += 1;
                s.last_send_ms = Some(now);
                s.cleared_to_send = false;
                s.absence_proved = false;
                o.key_sent_ms.get_or_insert(now);
                Request::create(&o.call(), o.key)
            }
            Step::Read => {
                s.reads += 1;
                let query = match self.config.reconcile {
                    Lookup::ByResourceId => LookupQuery::Resource(o.receipt.expect("checked")),
                    Lookup::Search => LookupQuery::Search {
                        params: o.fingerprint,
                    },
                    _ => LookupQuery::Key(o.key.expect("checked")),
                };
                Request::lookup(&o.call(), query)
            }
            Step::Poll => {
                s.reads += 1;
                Request::lookup(&o.call(), LookupQuery::Operation(o.handle.unwrap_or(0)))
            }
        };
        if step == Step::Create && self.policy.auth_ledger {
            let auth = ctx.journal_ref().get(op).expect("exists").auth();
            ctx.journal().auth_ledger_mut().sent(auth, now);
        }
        if step == Step::Create {
            match fence {
                // Under a lease, even "dispatched" is written only under a current fence.
                Some(f) => {
                    ctx.record(op, f, OpState::Dispatched);
                }
                None => ctx.transition(op, OpState::Dispatched),
            }
        }
        let attempt = ctx.send(op, request);
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.last_attempt = Some(attempt);
        }
        self.pending.insert(attempt, (step, fence));
    }

    /// Waits `delay_ms`, then acts again.
    fn later(&self, ctx: &mut ExecCtx<'_>, op: OpId, delay_ms: u64) {
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.busy = true;
        }
        ctx.set_timer(delay_ms, Wake::Next(op).tag());
    }

    fn settle(&self, ctx: &mut ExecCtx<'_>, op: OpId, state: OpState, result: ToolResult) {
        // Under a lease, the outcome is written only while this worker's fence is current.
        let stale = self
            .fence
            .is_some_and(|f| !ctx.journal_ref().leases().holds(op, f));
        // The receipt is written with the state: the claim the world records names it.
        if !stale
            && let ToolResult::Success { resource } = result
            && let Some(o) = ctx.journal().get_mut(op)
        {
            o.receipt = resource.or(o.receipt);
        }
        match self.fence {
            Some(f) => {
                if !ctx.record(op, f, state) {
                    return;
                }
            }
            None => ctx.transition(op, state),
        }
        // A confirmed compensation marks the operation it undid.
        let undone = ctx
            .journal_ref()
            .get(op)
            .and_then(|o| o.call().compensates());
        if state == OpState::Confirmed
            && let Some(resource) = undone
        {
            let target = ctx
                .journal_ref()
                .iter()
                .find(|o| o.receipt == Some(resource) && o.state() == OpState::Confirmed)
                .map(|o| o.id());
            if let Some(target) = target {
                ctx.transition(target, OpState::Compensated);
            }
        }
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.busy = false;
        }
        self.report(ctx, op, result);
    }

    /// The effect exists, and this is its resource.
    fn confirm(&self, ctx: &mut ExecCtx<'_>, op: OpId, resource: ResourceId) {
        let result = ToolResult::Success {
            resource: Some(resource),
        };
        self.settle(ctx, op, OpState::Confirmed, result)
    }

    fn report(&self, ctx: &mut ExecCtx<'_>, op: OpId, result: ToolResult) {
        if let Some((o, s)) = ctx.journal().parts_mut(op)
            && s.owes_report
        {
            s.owes_report = false;
            let call = o.call();
            ctx.report(&call, result);
        }
    }

    /// This agent call's budget is spent: the outcome stays unknown; a new call resumes.
    fn give_back(&self, ctx: &mut ExecCtx<'_>, op: OpId) {
        ctx.transition(op, OpState::Unknown);
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.busy = false;
        }
        self.report(ctx, op, ToolResult::Unknown);
    }

    /// Stops acting on `op` and hands it to a human: the agent hears "unknown" from now on.
    fn escalate(&self, ctx: &mut ExecCtx<'_>, op: OpId, why: impl FnOnce() -> String) {
        ctx.note_on(op, || format!("{op}: {}, escalated to a human", why()));
        ctx.transition(op, OpState::Escalated);
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.busy = false;
        }
        self.report(ctx, op, ToolResult::Unknown);
    }

    fn uncertain(&self, ctx: &mut ExecCtx<'_>, op: OpId) {
        ctx.transition(op, OpState::Unknown);
        let n = ctx
            .journal_ref()
            .scratch(op)
            .map_or(1, |s| s.attempts + s.reads);
        self.later(ctx, op, self.config.backoff_before(n));
    }

    fn on_create_reply(&self, ctx: &mut ExecCtx<'_>, op: OpId, response: Response) {
        match response {
            Response::Reply(Reply::Created { resource, .. }) => self.confirm(ctx, op, resource),
            Response::Reply(Reply::AlreadyExists) => self.settle(
                ctx,
                op,
                OpState::Confirmed,
                ToolResult::Success { resource: None },
            ),
            Response::Reply(Reply::Accepted { handle }) => {
                if let Some(o) = ctx.journal().get_mut(op) {
                    o.handle = Some(handle);
                }
                ctx.transition(op, OpState::Accepted);
                self.later(ctx, op, self.config.poll_ms);
            }
            Response::Reply(
                Reply::Mismatch | Reply::MissingKey | Reply::Rejected | Reply::OperationFailed,
            ) => self.settle(ctx, op, OpState::Failed, ToolResult::Failure),
            // A timeout, a 5xx, a 409 in progress, a 412 outside the key's window: the effect
            // may exist.
            _ => self.uncertain(ctx, op),
        }
    }

    fn on_read_reply(&mut self, ctx: &mut ExecCtx<'_>, op: OpId, response: Response) {
        match response {
            Response::Reply(Reply::Found { resource }) => self.confirm(ctx, op, resource),
            Response::Reply(Reply::NotFound) => {
                let (last, now) = (
                    ctx.journal_ref().scratch(op).and_then(|s| s.last_send_ms),
                    ctx.now(),
                );
                let bound = self.config.visibility_bound_ms;
                if let Some((key, age)) = self.forgotten_key(ctx, op) {
                    let assumed = self.config.assumed_retention_ms.unwrap_or(0);
                    ctx.note_on(op, || {
                        format!(
                            "{op}: cannot read back: key {key} is older than the assumed retention (first sent {age} ms ago; assumed {assumed} ms, less one timeout): \"not found\" proves nothing, the provider may have forgotten it"
                        )
                    });
                    self.escalate(ctx, op, || "no read-back can decide".to_string());
                } else if last.is_none_or(|t| now >= t.saturating_add(bound)) {
                    ctx.note_on(op, || {
                        format!("{op}: not found past the visibility bound: may create")
                    });
                    if let Some(s) = ctx.journal().scratch_mut(op) {
                        s.cleared_to_send = true;
                        s.absence_proved = true;
                        s.busy = false;
                    }
                    // The read proved nothing was committed: a create now is not a retry of
                    // this call's budget.
                    if let Some(s) = ctx.journal().scratch_mut(op) {
                        s.attempts = s.attempts.min(self.config.attempts.saturating_sub(1));
                    }
                    self.next(ctx, op);
                } else {
                    ctx.note_on(op, || {
                        format!("{op}: not found, but the index may lag: reading again")
                    });
                    self.uncertain(ctx, op);
                }
            }
            Response::Reply(Reply::Unsupported) => {
                // No read-back: the documented same-key retry is the remaining route, while
                // the key is young enough (`act` decides).
                ctx.note_on(op, || {
                    format!("{op}: cannot read back: the provider says unsupported")
                });
                if let Some(s) = ctx.journal().scratch_mut(op) {
                    s.cleared_to_send = true;
                }
                self.next(ctx, op);
            }
            _ => self.uncertain(ctx, op),
        }
    }

    fn on_poll_reply(&self, ctx: &mut ExecCtx<'_>, op: OpId, response: Response) {
        match response {
            Response::Reply(Reply::Found { resource }) => self.confirm(ctx, op, resource),
            Response::Reply(Reply::OperationFailed) => {
                self.settle(ctx, op, OpState::Failed, ToolResult::Failure)
            }
            _ => self.later(ctx, op, self.config.poll_ms),
        }
    }

    /// Marks `op` idle and acts on it again.
    fn next(&mut self, ctx: &mut ExecCtx<'_>, op: OpId) {
        let me = Self::holder(ctx);
        let journal = ctx.journal();
        let Some(o) = journal.get(op) else {
            return;
        };
        // A timer of a worker that another has since taken the operation from: not ours.
        let taken = match (self.policy.lease, journal.leases().get(op)) {
            (true, Some(l)) => l.holder != me,
            _ => o.owner != me.worker,
        };
        if taken {
            return;
        }
        if let Some(s) = journal.scratch_mut(op) {
            s.busy = false;
        }
        self.act(ctx, op);
    }

    /// Resumes operations: this worker's own after a restart (the process that was working
    /// on them died), or, for the sweeper, anyone's that have not moved for `stale_ms`.
    fn recover(&mut self, ctx: &mut ExecCtx<'_>, restarted: bool, stale_ms: u64) {
        let (me, now) = (Self::holder(ctx), ctx.now());
        let leased = self.policy.lease;
        let journal = ctx.journal_ref();
        let ops: Vec<OpId> = journal
            .unresolved()
            .filter(|o| {
                if restarted {
                    return o.owner == me.worker;
                }
                let Some(s) = journal.scratch(o.id()) else {
                    return false;
                };
                let moved = o.updated_ms().max(s.last_action_ms.unwrap_or(0));
                let lease = journal.leases().get(o.id());
                let live_lease = lease.is_some_and(|l| l.holder != me && now < l.until_ms);
                let working_on_it = o.owner == me.worker && s.busy;
                let held_by_another = leased && live_lease;
                !working_on_it && !held_by_another && now >= moved.saturating_add(stale_ms)
            })
            .map(|o| o.id())
            .collect();
        for op in ops {
            ctx.note_on(op, || format!("recovers {op}"));
            if !leased && let Some((o, s)) = ctx.journal().parts_mut(op) {
                // Whatever was under way died with its worker, or is presumed stalled. (Under
                // a lease, `act` clears it only once its claim takes the operation over.)
                s.busy = false;
                o.owner = me.worker;
            }
            if restarted && let Some(s) = ctx.journal().scratch_mut(op) {
                // The restarted worker re-runs the job with a fresh budget.
                s.attempts = 0;
                s.reads = 0;
            }
            self.act(ctx, op);
        }
    }
}

impl Journaled {
    /// Without fencing: any answer to any send of the operation is acted on, whoever sent
    /// it and under whichever lease, and results are written without a fence.
    fn on_unfenced_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        step: Step,
        response: Response,
    ) {
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        if o.state().is_settled() {
            return;
        }
        s.busy = false;
        self.fence = None;
        match step {
            Step::Create => self.on_create_reply(ctx, op, response),
            Step::Read => self.on_read_reply(ctx, op, response),
            Step::Poll => self.on_poll_reply(ctx, op, response),
        }
    }
}

impl Executor for Journaled {
    fn snapshot(&self) -> Option<Box<dyn Executor>> {
        Some(Box::new(self.clone()))
    }
    /// The requests this incarnation has out (what each is for, under which fence), the
    /// fence of the response under way (none between events) and the policy. The
    /// configuration is the model's.
    fn fingerprint(&self, mut h: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        let Journaled {
            policy,
            config: _,
            pending,
            fence,
        } = self;
        policy.hash(&mut h);
        pending.hash(&mut h);
        fence.hash(&mut h);
        true
    }

    /// Forgets the requests out and the fence; policy and configuration stay (they are
    /// the design's and the model's).
    fn reset(&mut self) -> bool {
        let Journaled {
            policy: _,
            config: _,
            pending,
            fence,
        } = self;
        pending.clear();
        *fence = None;
        true
    }

    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        let op = match self.bind(ctx, &call) {
            Ok(op) => op,
            Err(why) => {
                ctx.note_about(None, Some(call.call), || {
                    format!(
                        "{} refused: {why}; a changed action needs a new authorization",
                        call.call
                    )
                });
                // Nothing was done for this call, but an earlier one of the same
                // authorization may have acted: "failed" only if the operation it is bound
                // to failed (or none exists), otherwise the intent's outcome is unknown.
                let result = match ctx.journal_ref().find_by_auth(call.auth) {
                    Some(op) => match ctx.journal_ref().get(op).map(|o| o.state()) {
                        Some(OpState::Failed) => ToolResult::Failure,
                        _ => ToolResult::Unknown,
                    },
                    // Spent in the ledger on an operation this journal no longer holds.
                    None if self.policy.auth_ledger => ToolResult::Unknown,
                    None => ToolResult::Failure,
                };
                ctx.report(&call, result);
                return;
            }
        };
        let journal = ctx.journal();
        journal.set_call(op, call);
        let (o, s) = journal.parts_mut(op).expect("bound");
        s.owes_report = true;
        s.attempts = 0;
        s.reads = 0;
        match o.state() {
            OpState::Confirmed => {
                let resource = o.receipt;
                self.report(ctx, op, ToolResult::Success { resource });
            }
            OpState::Failed => self.report(ctx, op, ToolResult::Failure),
            OpState::Escalated => self.report(ctx, op, ToolResult::Unknown),
            _ => self.act(ctx, op),
        }
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        let Some((step, fence)) = self.pending.remove(&attempt) else {
            return;
        };
        if !self.policy.fencing {
            return self.on_unfenced_response(ctx, op, step, response);
        }
        if let Some(f) = fence
            && !ctx.journal_ref().leases().holds(op, f)
        {
            ctx.note_on(op, || {
                format!("{op}: lease lost (fence {f} is stale): result not recorded")
            });
            return;
        }
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        if s.last_attempt != Some(attempt) || o.state().is_settled() {
            return;
        }
        s.busy = false;
        self.fence = fence;
        match step {
            Step::Create => self.on_create_reply(ctx, op, response),
            Step::Read => self.on_read_reply(ctx, op, response),
            Step::Poll => self.on_poll_reply(ctx, op, response),
        }
        self.fence = None;
    }

    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        match Wake::of(tag) {
            Wake::Sweep => {
                let every = self.config.sweep_ms.unwrap_or(u64::MAX);
                self.recover(ctx, false, every);
                ctx.set_periodic_timer(every, Wake::Sweep.tag());
            }
            Wake::LeaseWait(op) => self.act(ctx, op),
            Wake::Next(op) => self.next(ctx, op),
        }
    }

    fn on_start(&mut self, ctx: &mut ExecCtx<'_>) {
        if let Some(every) = self.config.sweep_ms {
            ctx.set_periodic_timer(every, Wake::Sweep.tag());
        }
    }

    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        self.on_start(ctx);
        self.recover(ctx, true, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::hash::StableHasher;
    use std::hash::Hasher;

    #[test]
    fn a_wake_reads_back_from_its_tag() {
        for op in [OpId(0), OpId(7), OpId(u32::MAX)] {
            for wake in [Wake::Sweep, Wake::LeaseWait(op), Wake::Next(op)] {
                assert_eq!(Wake::of(wake.tag()), wake);
            }
        }
        // The bits as they were before the type: the tags are in traces and fingerprints.
        assert_eq!(Wake::LeaseWait(OpId(3)).tag(), (1 << 40) | 3);
        assert_eq!(Wake::Next(OpId(3)).tag(), 3);
    }

    const POLICY: Policy = Policy {
        reconcile: true,
        lease: true,
        auth_ledger: false,
        fencing: true,
    };

    fn fp(e: &Journaled) -> u64 {
        let mut h = StableHasher::new();
        assert!(e.fingerprint(&mut h));
        h.finish()
    }

    /// A fresh executor of the policy, after `change`.
    fn with(policy: Policy, change: impl FnOnce(&mut Journaled)) -> u64 {
        let mut e = Journaled::new(policy, &ExecutorModel::default());
        change(&mut e);
        fp(&e)
    }

    #[test]
    fn the_requests_out_their_fences_and_the_policy_are_in_the_fingerprint() {
        let fresh = with(POLICY, |_| {});
        assert_eq!(fresh, with(POLICY, |_| {}));
        let out = |step, fence| {
            with(POLICY, move |e| {
                e.pending.insert(AttemptId(1), (step, fence));
            })
        };
        assert_ne!(fresh, out(Step::Create, Some(1)));
        assert_ne!(out(Step::Create, Some(1)), out(Step::Read, Some(1)));
        assert_ne!(out(Step::Create, Some(1)), out(Step::Create, Some(2)));
        assert_ne!(out(Step::Create, Some(1)), out(Step::Create, None));
        assert_ne!(fresh, with(POLICY, |e| e.fence = Some(1)));
        let other = Policy {
            fencing: false,
            ..POLICY
        };
        assert_ne!(fresh, with(other, |_| {}));
    }
}

//! The executor's journal: one durable record per operation.
//!
//! An operation is the executor's record of an intent: its identity, the call it serves, the
//! provider key, the parameter fingerprint, its state and its receipt. A durable journal
//! survives a worker crash; a volatile one loses the crashed worker's operations. State
//! changes go through [`ExecCtx::transition`](super::ExecCtx::transition), which also measures how long each operation
//! stayed unknown before it was resolved (the reconciliation time).

use std::collections::BTreeMap;

use crate::model::Durability;
use crate::sim::Millis;
use crate::sync::{Mutex, MutexGuard, get_mut, lock};
use crate::vocab::ids::*;
use crate::vocab::protocol::ToolCall;

/// Lifecycle of an operation. `Unknown` is first-class: a transport error never becomes
/// `Failed` by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpState {
    /// Recorded, not yet approved to run.
    Proposed,
    /// Approved; may be dispatched.
    Authorized,
    /// A request is out.
    Dispatched,
    /// The provider answered 202: accepted, not completed; the work may still fail.
    Accepted,
    /// The effect exists, with evidence.
    Confirmed,
    /// Definitely not done.
    Failed,
    /// The executor does not know whether the effect exists.
    Unknown,
    /// Handed to a human; the executor stopped trying.
    Escalated,
    /// Undone by a separate compensating operation.
    Compensated,
}

impl OpState {
    /// Whether the outcome is known and final.
    pub fn is_settled(self) -> bool {
        matches!(
            self,
            OpState::Confirmed | OpState::Failed | OpState::Compensated
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            OpState::Proposed => "proposed",
            OpState::Authorized => "authorized",
            OpState::Dispatched => "dispatched",
            OpState::Accepted => "accepted",
            OpState::Confirmed => "confirmed",
            OpState::Failed => "failed",
            OpState::Unknown => "unknown",
            OpState::Escalated => "escalated",
            OpState::Compensated => "compensated",
        }
    }
}

/// One operation record.
#[derive(Clone, Debug)]
pub struct Operation {
    pub id: OpId,
    pub auth: AuthId,
    /// The latest tool call this operation serves; results are reported to it.
    pub call: ToolCall,
    /// The provider key, if the design uses one.
    pub key: Option<Key>,
    /// Parameters the operation was created with.
    pub fingerprint: Params,
    /// The worker that runs it.
    pub owner: WorkerId,
    /// Sends since the last agent call.
    pub attempts: u32,
    /// The attempt whose response is awaited.
    pub last_attempt: Option<AttemptId>,
    /// The resource, once known.
    pub receipt: Option<ResourceId>,
    /// Whether the agent is still owed a result for `call`.
    pub owes_report: bool,
    /// An action (a send, a read, a poll or a wait before one) is under way.
    pub busy: bool,
    /// When a create was last sent.
    pub last_send_ms: Option<Millis>,
    /// When any request (create, read, poll) was last sent for it.
    pub last_action_ms: Option<Millis>,
    /// Reads since the last agent call.
    pub reads: u32,
    /// A negative read-back, trusted, allows the next create.
    pub cleared_to_send: bool,
    /// Status handle of accepted (202) work.
    pub handle: Option<u32>,
    /// The current claim on the operation, if any.
    pub lease: Option<Lease>,
    state: OpState,
    created_ms: Millis,
    updated_ms: Millis,
    unknown_since_ms: Option<Millis>,
}

/// Who holds a lease: one incarnation of one worker (a restarted worker is a new holder).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holder {
    pub worker: WorkerId,
    pub incarnation: u32,
}

/// An exclusive, expiring claim on an operation. Every new claim gets a larger fencing
/// token; a result is recorded only under the token that is current, so a holder whose
/// lease ran out while it was stalled cannot overwrite its successor's work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    pub holder: Holder,
    pub fence: u64,
    pub until_ms: Millis,
}

/// An authorization consumed by an operation: what it was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Consumed {
    pub key: Key,
    pub params: Params,
}

impl Operation {
    pub fn state(&self) -> OpState {
        self.state
    }

    pub fn created_ms(&self) -> Millis {
        self.created_ms
    }

    /// Whether the executor does not know this operation's outcome: it entered `Unknown`
    /// without being resolved since, or a request is still out (dispatched, accepted), or
    /// it was escalated.
    pub fn outcome_unknown(&self) -> bool {
        self.unknown_since_ms.is_some()
            || matches!(
                self.state,
                OpState::Dispatched | OpState::Accepted | OpState::Unknown | OpState::Escalated
            )
    }

    /// When the state last changed.
    pub fn updated_ms(&self) -> Millis {
        self.updated_ms
    }

    /// When the operation first became unknown, if it has not been resolved since.
    pub fn unknown_since_ms(&self) -> Option<Millis> {
        self.unknown_since_ms
    }
}

/// All operation records of a run, shared by the workers.
#[derive(Debug)]
pub struct Journal {
    durability: Durability,
    ops: BTreeMap<OpId, Operation>,
    next_id: u32,
    /// Time each resolved operation spent unknown (observer data, survives crashes).
    reconciliation_ms: Vec<Millis>,
    next_fence: u64,
    /// Operations a volatile journal forgot while their outcome was unknown (observer data).
    forgotten_unknown: u64,
    /// The authorization ledger: durable whatever the journal's durability (it models a
    /// separate authorization service that records each authorization once it is spent).
    consumed: BTreeMap<AuthId, Consumed>,
}

impl Journal {
    pub fn new(durability: Durability) -> Self {
        Self {
            durability,
            ops: BTreeMap::new(),
            next_id: 0,
            reconciliation_ms: Vec::new(),
            next_fence: 0,
            forgotten_unknown: 0,
            consumed: BTreeMap::new(),
        }
    }

    pub(crate) fn reset(&mut self) {
        self.ops.clear();
        self.next_id = 0;
        self.reconciliation_ms.clear();
        self.next_fence = 0;
        self.forgotten_unknown = 0;
        self.consumed.clear();
    }

    /// Records a new operation for `call` in state `Proposed`.
    pub fn create(
        &mut self,
        call: &ToolCall,
        key: Option<Key>,
        owner: WorkerId,
        now: Millis,
    ) -> OpId {
        let id = OpId(self.next_id);
        self.next_id += 1;
        self.ops.insert(
            id,
            Operation {
                id,
                auth: call.auth,
                call: *call,
                key,
                fingerprint: call.params,
                owner,
                attempts: 0,
                last_attempt: None,
                receipt: None,
                owes_report: true,
                busy: false,
                last_send_ms: None,
                last_action_ms: None,
                reads: 0,
                cleared_to_send: false,
                handle: None,
                lease: None,
                state: OpState::Proposed,
                created_ms: now,
                updated_ms: now,
                unknown_since_ms: None,
            },
        );
        id
    }

    pub fn get(&self, id: OpId) -> Option<&Operation> {
        self.ops.get(&id)
    }

    /// Mutable access to every field but the state (see [`ExecCtx::transition`](super::ExecCtx::transition)).
    pub fn get_mut(&mut self, id: OpId) -> Option<&mut Operation> {
        self.ops.get_mut(&id)
    }

    /// The newest operation bound to `auth`.
    pub fn find_by_auth(&self, auth: AuthId) -> Option<OpId> {
        self.ops
            .values()
            .rev()
            .find(|o| o.auth == auth)
            .map(|o| o.id)
    }

    /// The newest operation serving tool call `call`.
    pub fn find_by_call(&self, call: CallId) -> Option<OpId> {
        self.ops
            .values()
            .rev()
            .find(|o| o.call.call == call)
            .map(|o| o.id)
    }

    /// Operations owned by `owner` that are not settled, oldest first.
    pub fn open_ops(&self, owner: WorkerId) -> Vec<OpId> {
        self.ops
            .values()
            .filter(|o| o.owner == owner && !o.state.is_settled())
            .map(|o| o.id)
            .collect()
    }

    /// Every operation, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Operation> {
        self.ops.values()
    }

    /// Moves `id` to `state` at `now`. Entering `Unknown` starts its unknown period; settling
    /// ends it and records the reconciliation time. Returns the previous state.
    pub fn transition(&mut self, id: OpId, state: OpState, now: Millis) -> Option<OpState> {
        let op = self.ops.get_mut(&id)?;
        let before = op.state;
        op.state = state;
        op.updated_ms = now;
        if state == OpState::Unknown && op.unknown_since_ms.is_none() {
            op.unknown_since_ms = Some(now);
        }
        if state.is_settled()
            && let Some(since) = op.unknown_since_ms.take()
        {
            self.reconciliation_ms.push(now - since);
        }
        Some(before)
    }

    /// Claims `id` for `holder` until `now + lease_ms`, or renews its own claim. Fails with
    /// the current lease while another holder's claim has not expired.
    pub fn claim(
        &mut self,
        id: OpId,
        holder: Holder,
        now: Millis,
        lease_ms: Millis,
    ) -> Result<u64, Option<Lease>> {
        let Some(op) = self.ops.get_mut(&id) else {
            return Err(None);
        };
        match op.lease {
            Some(l) if l.holder != holder && now < l.until_ms => Err(Some(l)),
            Some(l) if l.holder == holder => {
                op.lease = Some(Lease {
                    until_ms: now.saturating_add(lease_ms),
                    ..l
                });
                Ok(l.fence)
            }
            _ => {
                self.next_fence += 1;
                op.lease = Some(Lease {
                    holder,
                    fence: self.next_fence,
                    until_ms: now.saturating_add(lease_ms),
                });
                op.owner = holder.worker;
                Ok(self.next_fence)
            }
        }
    }

    /// Takes `id` for `holder`, as a leased executor does before acting on it: claims (or
    /// renews) the lease and, when the claim takes the operation over from another holder,
    /// voids whatever that holder had under way (its results are fenced off). Returns the
    /// fence to record results under.
    pub fn acquire(
        &mut self,
        id: OpId,
        holder: Holder,
        now: Millis,
        lease_ms: Millis,
    ) -> Result<u64, Option<Lease>> {
        let previous = self.ops.get(&id).and_then(|o| o.lease).map(|l| l.fence);
        let fence = self.claim(id, holder, now, lease_ms)?;
        if Some(fence) != previous
            && let Some(o) = self.ops.get_mut(&id)
        {
            o.busy = false;
        }
        Ok(fence)
    }

    /// Moves `id` to `state` only while `fence` is its current claim: the check and the write
    /// are one step, so a holder whose lease was taken over cannot record. Returns whether it
    /// wrote.
    pub fn record(&mut self, id: OpId, fence: u64, state: OpState, now: Millis) -> bool {
        if !self.holds(id, fence) {
            return false;
        }
        self.transition(id, state, now);
        true
    }

    /// Whether `fence` is still the current claim on `id`.
    pub fn holds(&self, id: OpId, fence: u64) -> bool {
        self.ops
            .get(&id)
            .and_then(|o| o.lease)
            .is_some_and(|l| l.fence == fence)
    }

    /// Spends `auth` on `key` and `params`, once: later calls return what it was spent on.
    pub fn consume(&mut self, auth: AuthId, key: Key, params: Params) -> Consumed {
        *self
            .consumed
            .entry(auth)
            .or_insert(Consumed { key, params })
    }

    /// What `auth` was spent on, if it was.
    pub fn consumed(&self, auth: AuthId) -> Option<Consumed> {
        self.consumed.get(&auth).copied()
    }

    /// A worker crashed: a volatile journal forgets the operations it owned.
    pub(crate) fn crash(&mut self, owner: WorkerId) {
        if self.durability == Durability::Volatile {
            let lost = self
                .ops
                .values()
                .filter(|o| o.owner == owner && o.outcome_unknown())
                .count() as u64;
            self.forgotten_unknown += lost;
            self.ops.retain(|_, o| o.owner != owner);
        }
    }

    pub fn reconciliation_ms(&self) -> &[Millis] {
        &self.reconciliation_ms
    }

    /// Operations whose outcome the executor does not know: sent (or found unknown) and
    /// never resolved, including those a volatile journal forgot.
    pub fn unknown_count(&self) -> u64 {
        self.ops.values().filter(|o| o.outcome_unknown()).count() as u64 + self.forgotten_unknown
    }

    /// Ends `id`'s attempts as `state` without resolving its outcome: a wrapper that turns an
    /// unknown into a reported failure has not learned anything, so the operation stays
    /// counted as unknown and no reconciliation time is recorded.
    pub fn abandon(&mut self, id: OpId, state: OpState, now: Millis) {
        if let Some(op) = self.ops.get_mut(&id) {
            op.unknown_since_ms.get_or_insert(now);
            op.state = state;
            op.updated_ms = now;
        }
    }
}

/// The journal shared between threads (workers of one executor fleet): every operation of
/// [`Journal`] under one lock. The simulator owns its journal and uses [`SharedJournal::get_mut`];
/// the loom tests drive the same operations from several threads.
#[derive(Debug)]
pub struct SharedJournal(Mutex<Journal>);

impl SharedJournal {
    pub fn new(durability: Durability) -> Self {
        Self(Mutex::new(Journal::new(durability)))
    }

    /// The journal itself, for its single owner.
    pub fn get_mut(&mut self) -> &mut Journal {
        get_mut(&mut self.0)
    }

    /// The journal, locked, for reading it whole.
    pub fn lock(&self) -> MutexGuard<'_, Journal> {
        lock(&self.0)
    }

    pub fn create(&self, call: &ToolCall, key: Option<Key>, owner: WorkerId, now: Millis) -> OpId {
        lock(&self.0).create(call, key, owner, now)
    }

    pub fn record(&self, id: OpId, fence: u64, state: OpState, now: Millis) -> bool {
        lock(&self.0).record(id, fence, state, now)
    }

    pub fn acquire(
        &self,
        id: OpId,
        holder: Holder,
        now: Millis,
        lease_ms: Millis,
    ) -> Result<u64, Option<Lease>> {
        lock(&self.0).acquire(id, holder, now, lease_ms)
    }

    pub fn holds(&self, id: OpId, fence: u64) -> bool {
        lock(&self.0).holds(id, fence)
    }

    pub fn state(&self, id: OpId) -> Option<OpState> {
        lock(&self.0).get(id).map(|o| o.state())
    }

    pub fn transition(&self, id: OpId, state: OpState, now: Millis) -> Option<OpState> {
        lock(&self.0).transition(id, state, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> ToolCall {
        ToolCall {
            call: CallId(1),
            issue: 1,
            auth: AuthId(0),
            tenant: Tenant(0),
            endpoint: Endpoint(0),
            params: Params(1),
            tag: IntentTag(IntentId(0), 0),
        }
    }

    #[test]
    fn reconciliation_time_runs_from_first_unknown_to_settlement() {
        let mut j = Journal::new(Durability::Durable);
        let op = j.create(&call(), None, WorkerId(0), 0);
        j.transition(op, OpState::Dispatched, 10);
        j.transition(op, OpState::Unknown, 100);
        j.transition(op, OpState::Dispatched, 150);
        j.transition(op, OpState::Unknown, 300);
        assert_eq!(j.unknown_count(), 1);
        j.transition(op, OpState::Confirmed, 1_100);
        assert_eq!(j.reconciliation_ms(), &[1_000]);
        assert_eq!(j.unknown_count(), 0);
    }

    #[test]
    fn volatile_journal_forgets_crashed_workers_ops() {
        for (durability, left) in [(Durability::Durable, 2), (Durability::Volatile, 1)] {
            let mut j = Journal::new(durability);
            j.create(&call(), None, WorkerId(0), 0);
            j.create(&call(), None, WorkerId(1), 0);
            j.crash(WorkerId(0));
            assert_eq!(j.iter().count(), left);
        }
    }

    #[test]
    fn finds_newest_by_auth_and_call() {
        let mut j = Journal::new(Durability::Durable);
        let a = j.create(&call(), None, WorkerId(0), 0);
        let b = j.create(&call(), None, WorkerId(0), 0);
        assert_eq!(j.find_by_auth(AuthId(0)), Some(b));
        assert_eq!(j.find_by_call(CallId(1)), Some(b));
        assert_ne!(a, b);
        assert_eq!(j.find_by_auth(AuthId(9)), None);
    }
}

//! The executor's journal: one durable record per operation.
//!
//! [`Journal`] holds four parts, one file each: the durable [`Operation`] records; beside
//! each record, the executor loop's working state ([`Scratch`]) and the current claim on it
//! ([`Leases`]); and the authorization ledger ([`AuthLedger`]), which models a separate
//! service and so survives a volatile journal's crash. Lookups by authorization and by call
//! go through an index (`index.rs`).
//!
//! An operation is the executor's record of an intent: its identity, the call it serves, the
//! provider key, the parameter fingerprint, its state and its receipt. A durable journal
//! survives a worker crash; a volatile one loses the crashed worker's operations. State
//! changes go through [`ExecCtx::transition`](super::ExecCtx::transition), which also measures how long each operation
//! stayed unknown before it was resolved (the reconciliation time).

mod authorization;
mod dense;
mod index;
pub(crate) mod kv;
mod lease;
mod operation;
mod scratch;

pub use authorization::{AuthLedger, Consumed};
pub use kv::{Entry, Store};
pub use lease::{Holder, Lease, Leases};
pub use operation::Operation;
pub use scratch::Scratch;

use dense::{Dense, IdSet};
use index::Newest;
use lease::Claim;

use crate::model::Durability;
use crate::sim::Millis;
use crate::sync::{Mutex, MutexGuard, get_mut, lock};
use crate::vocab::ids::*;
use crate::vocab::protocol::ToolCall;

crate::sim::named_enum! {
    /// Lifecycle of an operation. `Unknown` is first-class: a transport error never becomes
    /// `Failed` by itself.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[non_exhaustive]
    pub enum OpState {
        /// Recorded, not yet approved to run.
        Proposed => "proposed",
        /// Approved; may be dispatched.
        Authorized => "authorized",
        /// A request is out.
        Dispatched => "dispatched",
        /// The provider answered 202: accepted, not completed; the work may still fail.
        Accepted => "accepted",
        /// The effect exists, with evidence.
        Confirmed => "confirmed",
        /// Definitely not done.
        Failed => "failed",
        /// The executor does not know whether the effect exists.
        Unknown => "unknown",
        /// Handed to a human; the executor stopped trying.
        Escalated => "escalated",
        /// Undone by a separate compensating operation.
        Compensated => "compensated",
    }
}

impl OpState {
    /// Whether the outcome is known and final.
    pub fn is_settled(self) -> bool {
        matches!(
            self,
            OpState::Confirmed | OpState::Failed | OpState::Compensated
        )
    }
}

// The state accessors sit here, beside `transition`, which writes the state.
impl Operation {
    pub fn state(&self) -> OpState {
        self.state
    }

    pub fn created_ms(&self) -> Millis {
        self.created_ms
    }

    /// When the state last changed.
    pub fn updated_ms(&self) -> Millis {
        self.updated_ms
    }
}

/// All operation records of a run, shared by the workers, with the executor's scratch state
/// and leases on them and the authorization ledger.
#[derive(Clone, Debug)]
pub struct Journal {
    durability: Durability,
    ops: Dense<Operation>,
    next_id: u32,
    /// The working state of each operation in `ops` (same keys).
    scratch: Dense<Scratch>,
    /// The operations in `ops` that are neither settled nor escalated: what a recovery
    /// sweeper looks at, without scanning every record of the run.
    unresolved: IdSet,
    /// `ops` by authorization and by the tool call each currently serves.
    by_auth: Newest<AuthId>,
    by_call: Newest<CallId>,
    leases: Leases,
    /// The authorization ledger: durable whatever the journal's durability (it models a
    /// separate authorization service that records each authorization once it is spent).
    auth_ledger: AuthLedger,
    /// The key-value store of external executors, as durable as the records.
    kv: kv::Store,
}

impl Journal {
    pub fn new(durability: Durability) -> Self {
        Self {
            durability,
            ops: Dense::default(),
            next_id: 0,
            scratch: Dense::default(),
            unresolved: IdSet::default(),
            by_auth: Newest::new(),
            by_call: Newest::new(),
            leases: Leases::new(),
            auth_ledger: AuthLedger::new(),
            kv: kv::Store::default(),
        }
    }

    /// Makes room for about `ops` operations, so that the first run of a sweep does not
    /// grow (and copy) its vectors as it goes.
    pub(crate) fn reserve(&mut self, ops: usize) {
        self.ops.reserve(ops);
        self.scratch.reserve(ops);
        self.by_auth.reserve(ops);
        self.by_call.reserve(ops);
    }

    pub(crate) fn reset(&mut self) {
        self.ops.clear();
        self.next_id = 0;
        self.scratch.clear();
        self.unresolved.clear();
        self.by_auth.clear();
        self.by_call.clear();
        self.leases.clear();
        self.auth_ledger.clear();
        self.kv.clear();
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
        self.ops
            .insert(id, Operation::new(id, call, key, owner, now));
        self.scratch.insert(id, Scratch::new());
        self.unresolved.insert(id);
        self.by_auth.insert(call.auth, id);
        self.by_call.insert(call.call, id);
        id
    }

    pub fn get(&self, id: OpId) -> Option<&Operation> {
        self.ops.get(&id)
    }

    /// Mutable access to the record's fields but its identity (see [`Journal::set_call`])
    /// and its state (see [`ExecCtx::transition`](super::ExecCtx::transition)).
    pub fn get_mut(&mut self, id: OpId) -> Option<&mut Operation> {
        self.ops.get_mut(&id)
    }

    /// The executor's working state for `id`.
    pub fn scratch(&self, id: OpId) -> Option<&Scratch> {
        self.scratch.get(&id)
    }

    pub fn scratch_mut(&mut self, id: OpId) -> Option<&mut Scratch> {
        self.scratch.get_mut(&id)
    }

    /// The record and the working state of `id` together.
    pub fn parts(&self, id: OpId) -> Option<(&Operation, &Scratch)> {
        Some((self.ops.get(&id)?, self.scratch.get(&id)?))
    }

    /// The record and the working state of `id` together, for a step that updates both.
    pub fn parts_mut(&mut self, id: OpId) -> Option<(&mut Operation, &mut Scratch)> {
        Some((self.ops.get_mut(&id)?, self.scratch.get_mut(&id)?))
    }

    /// Makes `id` serve tool call `call`: its results are reported to `call` from now on, and
    /// [`Journal::find_by_call`] finds it by `call`.
    pub fn set_call(&mut self, id: OpId, call: ToolCall) {
        if let Some(o) = self.ops.get_mut(&id) {
            self.by_call.remove(o.call.call, id);
            self.by_call.insert(call.call, id);
            o.call = call;
        }
    }

    /// The newest operation bound to `auth`.
    pub fn find_by_auth(&self, auth: AuthId) -> Option<OpId> {
        self.by_auth.get(auth)
    }

    /// The newest operation serving tool call `call`.
    pub fn find_by_call(&self, call: CallId) -> Option<OpId> {
        self.by_call.get(call)
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

    /// How many operations are neither settled nor escalated.
    pub fn unresolved_count(&self) -> usize {
        self.unresolved.len()
    }

    /// The operations that are neither settled nor escalated, oldest first.
    pub fn unresolved(&self) -> impl Iterator<Item = &Operation> {
        self.unresolved.iter().filter_map(|id| self.ops.get(&id))
    }

    /// Moves `id` to `state` at `now`; returns the previous state. Crate-private: a design
    /// changes a state only through [`ExecCtx::transition`](super::ExecCtx::transition) (or
    /// `record`, `abandon`), which records what the change claims for the checkers to judge
    /// against the ledger, so that no design can move an operation without its claim.
    pub(crate) fn transition(&mut self, id: OpId, state: OpState, now: Millis) -> Option<OpState> {
        let op = self.ops.get_mut(&id)?;
        let before = op.state;
        op.state = state;
        op.updated_ms = now;
        if state.is_settled() || state == OpState::Escalated {
            self.unresolved.remove(id);
        } else {
            self.unresolved.insert(id);
        }
        Some(before)
    }

    /// Claims `id` for `holder` until `now + lease_ms`, or renews its own claim; a new claim
    /// makes `holder` the operation's owner. Fails with the current lease while another
    /// holder's claim has not expired (with `None` if there is no such operation).
    pub fn claim(
        &mut self,
        id: OpId,
        holder: Holder,
        now: Millis,
        lease_ms: Millis,
    ) -> Result<u64, Option<Lease>> {
        self.take(id, holder, now, lease_ms).map(Claim::fence)
    }

    fn take(
        &mut self,
        id: OpId,
        holder: Holder,
        now: Millis,
        lease_ms: Millis,
    ) -> Result<Claim, Option<Lease>> {
        let Some(op) = self.ops.get_mut(&id) else {
            return Err(None);
        };
        let claim = self.leases.claim(id, holder, now, lease_ms).map_err(Some)?;
        if let Claim::Taken(_) = claim {
            op.owner = holder.worker;
        }
        Ok(claim)
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
        let claim = self.take(id, holder, now, lease_ms)?;
        if let Claim::Taken(_) = claim
            && let Some(s) = self.scratch.get_mut(&id)
        {
            s.busy = false;
        }
        Ok(claim.fence())
    }

    /// Moves `id` to `state` only while `fence` is its current claim: the check and the write
    /// are one step, so a holder whose lease was taken over cannot record. Returns whether it
    /// wrote. Crate-private like [`Journal::transition`]: designs record through
    /// [`ExecCtx::record`](super::ExecCtx::record).
    pub(crate) fn record(&mut self, id: OpId, fence: u64, state: OpState, now: Millis) -> bool {
        if !self.leases.holds(id, fence) {
            return false;
        }
        self.transition(id, state, now);
        true
    }

    /// The claims on operations (taken through [`Journal::claim`] and [`Journal::acquire`]).
    pub fn leases(&self) -> &Leases {
        &self.leases
    }

    /// The key-value store of external executors.
    pub fn kv(&self) -> &kv::Store {
        &self.kv
    }

    pub fn kv_mut(&mut self) -> &mut kv::Store {
        &mut self.kv
    }

    /// The authorization ledger, which a crash of a volatile journal does not touch.
    pub fn auth_ledger(&self) -> &AuthLedger {
        &self.auth_ledger
    }

    pub fn auth_ledger_mut(&mut self) -> &mut AuthLedger {
        &mut self.auth_ledger
    }

    /// Forgets the scratch state, index entries and leases of operations no longer recorded
    /// (a pass over each part, like the crash's own pass over the records).
    fn forget_missing(&mut self) {
        let ops = &self.ops;
        self.scratch.retain(|id, _| ops.contains_key(&id));
        self.unresolved.retain(|id| ops.contains_key(&id));
        self.by_auth.retain(|id| ops.contains_key(&id));
        self.by_call.retain(|id| ops.contains_key(&id));
        self.leases.retain(|id| ops.contains_key(&id));
    }

    /// Hashes everything in the journal (its durability is the model's): the records, their
    /// scratch state, the unresolved set, both indexes, the leases with the next fence, the
    /// authorization ledger and the next operation id. A record forgotten by a crash is
    /// hashed as absent, whatever is left of its slot.
    pub(crate) fn fingerprint<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        let Journal {
            durability: _,
            ops,
            next_id,
            scratch,
            unresolved,
            by_auth,
            by_call,
            leases,
            auth_ledger,
            kv,
        } = self;
        ops.hash(h);
        next_id.hash(h);
        // The scratch state, as its `Dense` would hash (ids, then the count), with its times
        // hashed as those of its operation are.
        let mut n = 0u64;
        for (id, s) in scratch.iter() {
            h.write_u64(u64::from(id.0));
            let settled = ops.get(&id).is_some_and(|o| o.state.is_settled());
            s.fingerprint(h, crate::sim::moments::journal_exact() || !settled);
            n += 1;
        }
        h.write_u64(n);
        unresolved.hash(h);
        by_auth.hash(h);
        by_call.hash(h);
        leases.hash(h);
        auth_ledger.hash(h);
        kv.fingerprint(h);
    }

    /// A worker crashed: a volatile journal forgets the operations it owned.
    pub(crate) fn crash(&mut self, owner: WorkerId) {
        if self.durability == Durability::Volatile {
            self.ops.retain(|_, o| o.owner != owner);
            self.forget_missing();
            self.kv.forget_writer(owner);
        }
    }
}

/// The journal shared between threads (workers of one executor fleet): every operation of
/// [`Journal`] under one lock. The simulator owns its journal and uses [`SharedJournal::get_mut`];
/// the loom tests drive the same operations from several threads.
#[derive(Debug)]
pub struct SharedJournal(Mutex<Journal>);

impl Clone for SharedJournal {
    /// A copy of the journal as it is now, under a lock of its own (a search's snapshot).
    fn clone(&self) -> Self {
        Self(Mutex::new(self.lock().clone()))
    }
}

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
        lock(&self.0).leases().holds(id, fence)
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
        }
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

    #[test]
    fn a_volatile_crash_forgets_records_scratch_and_leases_but_not_authorizations() {
        let holder = Holder {
            worker: WorkerId(0),
            incarnation: 0,
        };
        for (durability, kept) in [(Durability::Durable, true), (Durability::Volatile, false)] {
            let mut j = Journal::new(durability);
            let op = j.create(&call(), Some(Key(3)), WorkerId(0), 0);
            j.scratch_mut(op).unwrap().attempts = 2;
            let fence = j.acquire(op, holder, 0, 50).unwrap();
            j.auth_ledger_mut().consume(AuthId(0), Key(3), Params(1));
            j.crash(WorkerId(0));
            assert_eq!(j.get(op).is_some(), kept);
            assert_eq!(j.scratch(op).map(|s| s.attempts), kept.then_some(2));
            assert_eq!(j.leases().holds(op, fence), kept);
            assert_eq!(j.find_by_auth(AuthId(0)), kept.then_some(op));
            assert_eq!(
                j.auth_ledger().consumed(AuthId(0)).map(|c| c.key),
                Some(Key(3))
            );
        }
    }
}

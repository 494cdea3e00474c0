//! The lease manager: exclusive, expiring claims on operations, with fencing tokens.
//!
//! Every new claim gets a larger fencing token; a result is recorded only under the token
//! that is current, so a holder whose lease ran out while it was stalled cannot overwrite its
//! successor's work. The table here decides claims; [`Journal`](super::Journal) applies them to
//! the records ([`claim`](super::Journal::claim), [`acquire`](super::Journal::acquire),
//! [`record`](super::Journal::record)) under one lock in [`SharedJournal`](super::SharedJournal).

use super::dense::Dense;

use crate::sim::Millis;
use crate::vocab::ids::{OpId, WorkerId};

/// Who holds a lease: one incarnation of one worker (a restarted worker is a new holder).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Holder {
    pub worker: WorkerId,
    pub incarnation: u32,
}

/// An exclusive, expiring claim on an operation, under fencing token `fence`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    pub holder: Holder,
    pub fence: u64,
    pub until_ms: Millis,
}

/// Its expiry, for a design that declares how it reads the journal, is compared only with
/// the clock (`sim::moments::lease_until`).
impl std::hash::Hash for Lease {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Lease {
            holder,
            fence,
            until_ms,
        } = self;
        holder.hash(h);
        fence.hash(h);
        crate::sim::moments::lease_until(h, *until_ms);
    }
}

/// How a claim succeeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Claim {
    /// The holder already had the lease; it now runs longer, under the same fence.
    Renewed(u64),
    /// A new lease under a new fence: there was none, or the previous one had expired.
    Taken(u64),
}

impl Claim {
    /// The fence to record results under.
    pub(super) fn fence(self) -> u64 {
        match self {
            Claim::Renewed(f) | Claim::Taken(f) => f,
        }
    }
}

/// The current claim on each operation, and the fencing tokens handed out so far.
#[derive(Clone, Debug, Default, Hash)]
pub struct Leases {
    leases: Dense<Lease>,
    next_fence: u64,
}

impl Leases {
    pub fn new() -> Self {
        Self::default()
    }

    pub(super) fn clear(&mut self) {
        self.leases.clear();
        self.next_fence = 0;
    }

    /// The current claim on `id`, expired or not.
    pub fn get(&self, id: OpId) -> Option<Lease> {
        self.leases.get(&id).copied()
    }

    /// Whether `fence` is still the current claim on `id`.
    pub fn holds(&self, id: OpId, fence: u64) -> bool {
        self.get(id).is_some_and(|l| l.fence == fence)
    }

    /// Claims `id` for `holder` until `now + lease_ms`, or renews its own claim. Fails with
    /// the current lease while another holder's claim has not expired.
    pub(super) fn claim(
        &mut self,
        id: OpId,
        holder: Holder,
        now: Millis,
        lease_ms: Millis,
    ) -> Result<Claim, Lease> {
        let until_ms = now.saturating_add(lease_ms);
        match self.get(id) {
            Some(l) if l.holder != holder && now < l.until_ms => Err(l),
            Some(l) if l.holder == holder => {
                self.leases.insert(id, Lease { until_ms, ..l });
                Ok(Claim::Renewed(l.fence))
            }
            _ => {
                self.next_fence += 1;
                let fence = self.next_fence;
                self.leases.insert(
                    id,
                    Lease {
                        holder,
                        fence,
                        until_ms,
                    },
                );
                Ok(Claim::Taken(fence))
            }
        }
    }

    /// Keeps only the claims on operations for which `keep` holds (the journal forgot the
    /// others). Fences are never reused.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(OpId) -> bool) {
        self.leases.retain(|id, _| keep(id));
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Journal, OpState};
    use super::*;
    use crate::model::Durability;
    use crate::vocab::protocol::ToolCall;

    #[test]
    fn a_takeover_gets_a_new_fence_and_the_owner_and_voids_the_work_under_way() {
        let (a, b) = (WorkerId(0), WorkerId(1));
        let holder = |worker| Holder {
            worker,
            incarnation: 0,
        };
        let mut j = Journal::new(Durability::Durable);
        let op = j.create(&ToolCall::for_tests(0), None, a, 0);
        let first = j.acquire(op, holder(a), 0, 50).unwrap();
        j.scratch_mut(op).unwrap().busy = true;
        // Renewing keeps the fence and the work under way; another holder must wait.
        assert_eq!(j.acquire(op, holder(a), 10, 50), Ok(first));
        assert!(j.scratch(op).unwrap().busy);
        assert_eq!(
            j.acquire(op, holder(b), 20, 50)
                .map_err(|l| l.map(|l| l.until_ms)),
            Err(Some(60))
        );
        // Once the lease ran out, the other holder takes over.
        let second = j.acquire(op, holder(b), 60, 50).unwrap();
        assert!(second > first);
        assert_eq!(j.get(op).unwrap().owner, b);
        assert!(!j.scratch(op).unwrap().busy);
        assert!(!j.record(op, first, OpState::Failed, 61));
        assert!(j.record(op, second, OpState::Confirmed, 62));
        assert_eq!(j.get(op).unwrap().state(), OpState::Confirmed);
    }
}

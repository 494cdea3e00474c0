//! `journal_reconcile`: the journal, plus read-back before any retry.
//!
//! On an unknown outcome the operation is read back (by key, resource id or search, as
//! `executor.reconcile` says) before anything is sent again. A hit confirms it; "pending"
//! waits; "not found" counts only after `executor.visibility_bound_ms` since the last send,
//! because a lagging index says nothing earlier; only then may the same key be sent again.
//! When nothing decides by the deadline, the operation is escalated: unresolved, not guessed.
//!
//! Guarantee: no duplicate as long as the read-back sees every committed effect within the
//! visibility bound, which must also exceed the provider's processing time (a read cannot
//! see work still in flight), identifies the operation (a key or id; a search by attributes
//! can mistake a genuine repeat for this one), and no copy of an old request arrives after
//! its key expired (a late network duplicate executes again). Under those, it holds even
//! when the provider's key has expired. Without a lease, two workers recovering one
//! operation may both act on it. (`tests/prop_guarantees.rs` checks exactly this, with keys that
//! expire between retries.)

use super::journaled::{Journaled, Policy};
use super::{Assumption, Design, Executor};
use crate::model::ExecutorModel;

pub struct JournalReconcile;

const POLICY: Policy = Policy {
    reconcile: true,
    lease: false,
    auth_ledger: false,
};

impl Design for JournalReconcile {
    fn name(&self) -> &str {
        "journal_reconcile"
    }

    fn summary(&self) -> &str {
        "journal, and read back before any retry; escalate what it cannot decide"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Journaled::new(POLICY, config))
    }

    fn assumptions(&self) -> Vec<Assumption> {
        POLICY.assumptions()
    }
}

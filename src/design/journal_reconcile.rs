//! `journal_reconcile`: the journal, plus read-back before any retry.
//!
//! On an unknown outcome the operation is read back (by key, resource id or search, as
//! `executor.reconcile` says) before anything is sent again. A hit confirms it; "pending"
//! waits; "not found" counts only after `executor.visibility_bound_ms` since the last send,
//! because a lagging index says nothing earlier; only then may the same key be sent again.
//! A read-back is not always possible, and the trace says why: a lookup by resource id after
//! a lost reply (the id came with it), no lookup configured, a provider that answers
//! "unsupported". The design then sends again under its key, as `journal` does, while the
//! key is younger than `executor.assumed_retention_ms` (less one client timeout), and
//! escalates once it is not. A "not found" by a key that old proves nothing either (the
//! provider may have forgotten the key while the effect exists): escalated. When nothing
//! decides by the deadline, the operation is escalated: unresolved, not guessed.
//!
//! Guarantee: no duplicate effect, no changed argument applied, no merged repeat, no
//! success reported for an effect that does not exist, provided that every send again is
//! either absorbed by the provider's key contract (`journal`'s assumptions: `atomic_dedup`,
//! `one_key_scope`, `in_flight_refused_or_held`, `every_outcome_stored`,
//! `retention_covers_retries`) or preceded by a read that proves the effect absent (a
//! search by attributes past the visibility bound, no genuine repeats, no network
//! duplicates); that the journal is durable (`durable_journal`); and, where the key
//! contract does not absorb every send, that the read-back identifies the operation after a
//! lost reply (`read_back_identifies_operation`: a lookup by key the provider answers, or a
//! search when no two intents share arguments) and that "not found" is trusted only once
//! it is true (`visibility_bound_covers_lag`: the bound covers the network both ways, the
//! processing and the lag). A lookup by key finds nothing once the provider has forgotten
//! the key (`key_lifetime: record`, the default; a key that lives with its resource,
//! `key_lifetime: resource`, is found as long as the resource exists), so under a key that
//! expires before the design stops retrying, reading back by key does not save it: the
//! assumed retention does, by escalating. Every call of the intent must carry the same
//! authorization (`authorization_survives`): a replan that comes back re-authorized is a
//! new operation under a new key. Without a lease, two
//! workers recovering one operation may both act on it (`in_flight_refused_or_held` is
//! what absorbs that). The assumptions are data ([`Policy::assumptions`]).

use super::journaled::{Journaled, Policy};
use super::{Assumption, Design, Executor};
use crate::model::ExecutorModel;

pub struct JournalReconcile;

const POLICY: Policy = Policy {
    reconcile: true,
    lease: false,
    auth_ledger: false,
    fencing: true,
};

impl Design for JournalReconcile {
    fn parts(&self) -> crate::sim::Parts {
        crate::sim::Parts::EXECUTORS
    }
    fn symmetric(&self) -> bool {
        true
    }

    fn reads_settled_times(&self) -> bool {
        false
    }
    fn name(&self) -> &str {
        "journal_reconcile"
    }

    fn summary(&self) -> &str {
        "journal, read back before any retry; an old key no read decides is escalated"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Journaled::new(POLICY, config))
    }

    fn guarantee(&self) -> Vec<crate::check::Property> {
        super::journaled::GUARANTEE.to_vec()
    }

    fn assumptions(&self) -> Vec<Assumption> {
        POLICY.assumptions()
    }
}

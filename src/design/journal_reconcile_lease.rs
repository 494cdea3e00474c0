//! `journal_reconcile_lease`: read-back, plus an exclusive lease with fencing.
//!
//! Before acting on an operation a worker claims it for `executor.lease_ms`; a worker that
//! finds another's live claim leaves the operation alone, so two workers recovering the same
//! operation never both dispatch it. Every claim gets a larger fencing token, and a result is
//! recorded only under the current one: a worker that stalled past its lease cannot overwrite
//! its successor's record. Read-back, escalation and the assumed retention are
//! `journal_reconcile`'s.
//!
//! Guarantee: `journal_reconcile`'s, under the same assumptions except that a concurrent
//! same-key request need not be refused or held by the provider when the lease outlasts a
//! request's life at the provider (`lease_outlasts_request`: the longest latency plus the
//! longest processing, with no network duplicates); and no concurrent dispatch of one
//! operation as long as a lease outlasts one step (`lease_covers_step`: the client timeout
//! plus the longest latency). The lease keeps other workers out, not its holder's own
//! retry: the holder's sends of one operation must not overlap at the provider
//! (`own_sends_spaced`: spaced past the longest latency plus processing, unless the
//! read-back decides before every resend). A lease shorter than the processing lets the next holder send
//! while the first request is still processing (`models/windows/lease_shorter_than_processing.json`),
//! and a stalled holder's late request can still reach the provider, where the key must
//! absorb it. The lease and fencing are proved under loom (`tests/loom_journal.rs`).

use super::journaled::{Journaled, Policy};
use super::{Assumption, Design, Executor};
use crate::model::ExecutorModel;

pub struct JournalReconcileLease;

const POLICY: Policy = Policy {
    reconcile: true,
    lease: true,
    auth_ledger: false,
    fencing: true,
};

impl Design for JournalReconcileLease {
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
        "journal_reconcile_lease"
    }

    fn summary(&self) -> &str {
        "journal_reconcile under an exclusive lease with fencing tokens"
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

//! `journal`: a durable operation record before dispatch, and every retry through it.
//!
//! One operation and one key per authorized intent, written (`authorized`) before the first
//! send. Transport retries, re-runs and agent replans of the intent all go through that
//! record and present its key; a call with changed arguments is refused locally. Attempts are
//! bounded per agent call with backoff, the whole operation by `executor.deadline_ms`, after
//! which it is escalated. 202 Accepted work is polled, not taken for done. A restarted worker
//! resumes its unfinished operations under their recorded key. It never reads back: a key
//! that is as old as `executor.assumed_retention_ms` (less one client timeout, for the
//! request to arrive), counted from its first send, is not sent again; the operation is
//! escalated instead.
//!
//! Guarantee: no duplicate effect, no changed argument applied, no merged repeat, and no
//! success reported for an effect that does not exist, provided that the provider
//! deduplicates the caller's key atomically (`atomic_dedup`), within one scope
//! (`one_key_scope`); a concurrent same-key request is refused (409) or waits
//! (`in_flight_refused_or_held`); every outcome (5xx included) is stored
//! (`every_outcome_stored`); the key is kept as long as the design may send it again
//! (`retention_covers_retries`: the assumed retention when it is set, else the retry
//! horizon the model allows); the journal is durable (`durable_journal`); and every call
//! of the intent carries the same authorization (`authorization_survives`: a replan that
//! comes back re-authorized is a new intent to the journal). The
//! assumptions are data ([`Policy::assumptions`]), judged against every model `run` and
//! `check` see. An assumed retention longer than the provider's, or a non-atomic provider,
//! can still duplicate.

use super::journaled::{Journaled, Policy};
use super::{Assumption, Design, Executor};
use crate::model::ExecutorModel;

pub struct JournalDesign;

const POLICY: Policy = Policy {
    reconcile: false,
    lease: false,
    auth_ledger: false,
    fencing: true,
};

impl Design for JournalDesign {
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
        "journal"
    }

    fn summary(&self) -> &str {
        "durable record, one key for all retries; escalates at the deadline or on an old key"
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

//! `journal`: a durable operation record before dispatch, and every retry through it.
//!
//! One operation and one key per authorized intent, written (`authorized`) before the first
//! send. Transport retries, re-runs and agent replans of the intent all go through that
//! record and present its key; a call with changed arguments is refused locally. Attempts are
//! bounded per agent call with backoff, the whole operation by `executor.deadline_ms`, after
//! which it is escalated. 202 Accepted work is polled, not taken for done. A restarted worker
//! resumes its unfinished operations under their recorded key.
//!
//! Guarantee: no duplicate effect, no changed argument applied, no merged repeat, and no
//! success reported for an effect that does not exist, provided that the provider deduplicates the caller's key atomically, within one scope, for the whole
//! run; a concurrent same-key request is refused (409) or waits; a changed request under the
//! key is refused or answered as the original; every outcome (5xx included) is stored; and
//! the journal is durable. (`tests/prop_guarantees.rs` checks exactly this.) It never reads
//! back, so an expired key or a non-atomic provider can still duplicate.

use super::journaled::{Journaled, Policy};
use super::{Assumption, Design, Executor};
use crate::model::ExecutorModel;

pub struct JournalDesign;

const POLICY: Policy = Policy {
    reconcile: false,
    lease: false,
    auth_ledger: false,
};

impl Design for JournalDesign {
    fn name(&self) -> &str {
        "journal"
    }

    fn summary(&self) -> &str {
        "durable record before dispatch; one key for every retry and replan; deadline"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Journaled::new(POLICY, config))
    }

    fn assumptions(&self) -> Vec<Assumption> {
        POLICY.assumptions()
    }
}

//! `durable_authorization`: the user's authorization is consumed once, in a durable ledger.
//!
//! The first dispatch spends the authorization on one key and one set of arguments, in a
//! ledger that outlives the executor's journal, and records when that key was first sent.
//! Any reissue of the action for that authorization, by a replan, a restarted worker or a
//! lost journal, is bound back to the same key; other arguments are refused. A key as old as
//! `executor.assumed_retention_ms` (less one client timeout) is not sent again, even from a
//! record rebuilt after the journal lost it: the operation is escalated. Contrast
//! `single_use_token`, where each reissue gets a fresh token and so a fresh identity.
//!
//! Guarantee: `journal`'s, with or without a durable journal, provided that the provider
//! deduplicates the caller's key atomically (`atomic_dedup`), within one scope
//! (`one_key_scope`); a concurrent same-key request is refused (409) or waits
//! (`in_flight_refused_or_held`); every outcome (5xx included) is stored
//! (`every_outcome_stored`); the key is kept as long as the design may send it again
//! (`retention_covers_retries`); and every call of the intent carries the same user
//! authorization (`authorization_survives`: a replan that comes back with a new one is a new
//! operation under a new key). Exactly-once effects still need the provider to deduplicate:
//! sink idempotency.

use super::journaled::{Journaled, Policy};
use super::{Assumption, Design, Executor};
use crate::model::ExecutorModel;

pub struct DurableAuthorization;

const POLICY: Policy = Policy {
    reconcile: false,
    lease: false,
    auth_ledger: true,
    fencing: true,
};

impl Design for DurableAuthorization {
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
        "durable_authorization"
    }

    fn summary(&self) -> &str {
        "authorization spent once, durably: every reissue reuses its key; old keys escalated"
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

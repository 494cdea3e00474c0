//! `durable_authorization`: the user's authorization is consumed once, in a durable ledger.
//!
//! The first dispatch spends the authorization on one key and one set of arguments, in a
//! ledger that outlives the executor's journal. Any reissue of the action for that
//! authorization, by a replan, a restarted worker or a lost journal, is bound back to the same
//! key; other arguments are refused. Contrast `single_use_token`, where each reissue gets a
//! fresh token and so a fresh identity.
//!
//! Guarantee: `journal`'s, with or without a durable journal, provided that the provider deduplicates the caller's key atomically, within one scope, for the whole
//! run; a concurrent same-key request is refused (409) or waits; a changed request under the
//! key is refused or answered as the original; every outcome (5xx included) is stored
//! (exactly-once effects still need the provider to deduplicate: sink idempotency).

use super::journaled::{Journaled, Policy};
use super::{Assumption, Design, Executor};
use crate::model::ExecutorModel;

pub struct DurableAuthorization;

const POLICY: Policy = Policy {
    reconcile: false,
    lease: false,
    auth_ledger: true,
};

impl Design for DurableAuthorization {
    fn name(&self) -> &str {
        "durable_authorization"
    }

    fn summary(&self) -> &str {
        "authorization consumed once in a durable ledger: every reissue reuses its key"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Journaled::new(POLICY, config))
    }

    fn assumptions(&self) -> Vec<Assumption> {
        POLICY.assumptions()
    }
}

//! The authorization ledger: each user authorization is spent once, on one key and one set of
//! arguments.
//!
//! It models a separate authorization service, not the executor's database: it is durable
//! whatever the journal's durability, so a volatile journal that forgets an operation does not
//! forget what its authorization was spent on.

use std::collections::BTreeMap;

use crate::sim::Millis;
use crate::vocab::ids::{AuthId, Key, Params};

/// An authorization consumed by an operation: what it was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Consumed {
    pub key: Key,
    pub params: Params,
    /// When a create first left under `key`: an operation rebuilt from the ledger (after a
    /// volatile journal lost its record) counts the key's age from it.
    pub first_sent_ms: Option<Millis>,
}

/// Every authorization spent in a run.
#[derive(Clone, Debug, Default, Hash)]
pub struct AuthLedger {
    consumed: BTreeMap<AuthId, Consumed>,
}

impl AuthLedger {
    pub fn new() -> Self {
        Self::default()
    }

    pub(super) fn clear(&mut self) {
        self.consumed.clear();
    }

    /// Spends `auth` on `key` and `params`, once: later calls return what it was spent on.
    pub fn consume(&mut self, auth: AuthId, key: Key, params: Params) -> Consumed {
        *self.consumed.entry(auth).or_insert(Consumed {
            key,
            params,
            first_sent_ms: None,
        })
    }

    /// Records that a create under `auth`'s key left at `now`; only the first counts.
    pub fn sent(&mut self, auth: AuthId, now: Millis) {
        if let Some(c) = self.consumed.get_mut(&auth) {
            c.first_sent_ms.get_or_insert(now);
        }
    }

    /// What `auth` was spent on, if it was.
    pub fn consumed(&self, auth: AuthId) -> Option<Consumed> {
        self.consumed.get(&auth).copied()
    }
}

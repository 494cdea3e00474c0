//! Ground truth: every committed effect, tagged with the intent that caused it.
//!
//! The provider reports what it committed ([`Committed`]); the world tags it with the intent
//! and step of the send that caused it, from its own records (the call the sending operation
//! served, and which intent and step the agent made that call for), and writes the
//! [`Effect`]. Read only by checkers and metrics. No design can reach it.

use crate::sim::Millis;
use crate::vocab::ids::*;
use crate::vocab::record::Effect;

/// A mutation the provider committed, as the provider knows it: which send, what, when. Not
/// which intent: no request says that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Committed {
    pub resource: ResourceId,
    /// The send that committed it.
    pub attempt: AttemptId,
    pub tenant: Tenant,
    pub endpoint: Endpoint,
    pub params: Params,
    pub key: Option<Key>,
    pub at_ms: Millis,
}

#[derive(Clone, Debug, Default)]
pub struct Ledger {
    effects: Vec<Effect>,
}

impl Effect {
    /// `committed`, caused by step `step` of `intent`.
    pub fn tagged(committed: Committed, intent: IntentId, step: u32) -> Effect {
        let Committed {
            resource,
            attempt,
            tenant,
            endpoint,
            params,
            key,
            at_ms,
        } = committed;
        Effect {
            resource,
            attempt,
            intent,
            step,
            tenant,
            endpoint,
            params,
            key,
            at_ms,
        }
    }
}

impl Ledger {
    pub(crate) fn clear(&mut self) {
        self.effects.clear();
    }

    pub(crate) fn reserve(&mut self, n: usize) {
        self.effects.reserve(n);
    }

    pub(crate) fn commit(&mut self, effect: Effect) {
        self.effects.push(effect);
    }

    /// Hashes every effect, in commit order.
    pub(crate) fn fingerprint<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        let Ledger { effects } = self;
        effects.hash(h);
    }

    pub fn effects(&self) -> &[Effect] {
        &self.effects
    }
}

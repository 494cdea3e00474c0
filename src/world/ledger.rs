//! Ground truth: every committed effect, tagged with the intent that caused it.
//!
//! Written by the provider as it commits; read only by checkers and metrics. No design can
//! reach it.

use crate::sim::Millis;
use crate::vocab::ids::*;
pub use crate::vocab::protocol::COMPENSATION;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effect {
    pub resource: ResourceId,
    /// The send that committed it (the world maps it to the operation that sent it).
    pub attempt: AttemptId,
    pub intent: IntentId,
    /// The workflow step: 0, 1, ... for the intent's actions, [`COMPENSATION`] + k for the
    /// compensation of step k.
    pub step: u32,
    pub tenant: Tenant,
    pub endpoint: Endpoint,
    pub params: Params,
    pub key: Option<Key>,
    pub at_ms: Millis,
}

#[derive(Debug, Default)]
pub struct Ledger {
    effects: Vec<Effect>,
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

    pub fn effects(&self) -> &[Effect] {
        &self.effects
    }

    pub fn count_for(&self, intent: IntentId) -> usize {
        self.effects
            .iter()
            .filter(|e| e.intent == intent && e.step < COMPENSATION)
            .count()
    }
}

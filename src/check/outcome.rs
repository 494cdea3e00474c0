//! The outcome of one run: everything a checker may read, and nothing else.
//!
//! An [`Outcome`] is a view of what the run left behind, filled by the world as it goes:
//! - the ground truth: the ledger's effects, each tagged with the intent and the send that
//!   committed it;
//! - what the user was told about each intent, and when ([`Heard`]);
//! - each operation as the *transport* saw it: its intent, when its outcome first became
//!   unknown (a timeout, a 5xx, a 409, a 412, or its worker crashing with a create in flight)
//!   ([`OpRecord`]);
//! - what the design *claimed* about each operation (confirmed with receipt R, failed,
//!   escalated) ([`Claim`]).
//!
//! Nothing here comes from the design's own journal: a claim is checked against the ledger,
//! never believed. A design that never records a transition has made no claim, so its
//! unknown operations stay unresolved; one that confirms on wrong evidence is caught.

use crate::sim::Millis;
use crate::vocab::ids::{AttemptId, OpId};
use crate::vocab::record::Effect;
use crate::vocab::record::Intent;
pub use crate::vocab::record::{Claim, ClaimKind, End, Heard, OpRecord, Told};

/// The outcome of one run.
#[derive(Clone, Copy, Debug)]
pub struct Outcome<'a> {
    /// The intents the user expressed, in id order.
    pub intents: &'a [Intent],
    /// What the user heard, per intent (same order).
    pub heard: &'a [Heard],
    /// Every committed effect (ground truth).
    pub effects: &'a [Effect],
    /// Per operation id, as the transport saw it.
    pub ops: &'a [OpRecord],
    /// The operation each send belonged to, by attempt number (attempt `n` at `n - 1`).
    pub attempt_ops: &'a [OpId],
    /// Every claim of the design, in the order made.
    pub claims: &'a [Claim],
    /// The properties the run's design brings, judged on this outcome.
    pub properties: &'static [crate::check::properties::PropertyDef],
    /// Requests sent to the provider (creates, reads, polls).
    pub remote_calls: u64,
    /// When the run stopped.
    pub end_ms: Millis,
    pub end: End,
}

impl<'a> Outcome<'a> {
    /// The operation that sent `attempt`.
    pub fn op_of(&self, attempt: AttemptId) -> Option<OpId> {
        self.attempt_ops
            .get((attempt.0 as usize).checked_sub(1)?)
            .copied()
    }

    /// Whether the ledger agrees with `claim`.
    pub fn claim_is_true(&self, claim: &Claim) -> bool {
        let (intent, step) = claim.intent;
        let of_intent = |e: &&Effect| e.intent == intent && e.step == step;
        match claim.kind {
            ClaimKind::Confirmed(Some(r)) => self
                .effects
                .iter()
                .filter(of_intent)
                .any(|e| e.resource == r),
            ClaimKind::Confirmed(None) => self.effects.iter().any(|e| of_intent(&e)),
            ClaimKind::Failed => !self
                .effects
                .iter()
                .any(|e| self.op_of(e.attempt) == Some(claim.op)),
            ClaimKind::Escalated => true,
        }
    }
}

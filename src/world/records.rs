//! What the world records of a run for the checkers, beside the ledger: each operation as
//! the transport saw it, the operation of each send, the design's claims, and how the run
//! ended. None of it is read by a design.

use std::hash::{Hash, Hasher};

use crate::sim::Millis;
use crate::vocab::ids::OpId;
use crate::vocab::record::{CallClaim, Claim, End, OpRecord};

#[derive(Clone, Debug)]
pub(super) struct Records {
    /// Each operation as the transport saw it (by operation id).
    pub(super) op_records: Vec<OpRecord>,
    /// The operation of each send (attempt `n` at index `n - 1`).
    pub(super) attempt_ops: Vec<OpId>,
    /// The design's claims, tagged with the intent and step they are about.
    pub(super) claims: Vec<Claim>,
    /// The claims of the executor callback under way, as its context records them (by
    /// call); tagged and moved to `claims` when the callback returns.
    pub(super) call_claims: Vec<CallClaim>,
    /// How the run ended, and when.
    pub(super) end: (End, Millis),
}

impl Default for Records {
    fn default() -> Self {
        Self {
            op_records: Vec::new(),
            attempt_ops: Vec::new(),
            claims: Vec::new(),
            call_claims: Vec::new(),
            end: (End::Quiescent, 0),
        }
    }
}

impl Records {
    /// As at the start of a run, keeping the memory.
    pub(super) fn clear(&mut self) {
        let Records {
            op_records,
            attempt_ops,
            claims,
            call_claims,
            end,
        } = self;
        op_records.clear();
        attempt_ops.clear();
        claims.clear();
        call_claims.clear();
        *end = (End::Quiescent, 0);
    }

    pub(super) fn reserve(&mut self, n: usize) {
        self.op_records.reserve(n);
        self.attempt_ops.reserve(n);
        self.claims.reserve(n);
    }

    /// Hashes the records: what the checkers will judge is part of the state.
    pub(super) fn fingerprint<H: Hasher>(&self, h: &mut H) {
        let Records {
            op_records,
            attempt_ops,
            claims,
            call_claims,
            end,
        } = self;
        debug_assert!(call_claims.is_empty(), "tagged when the callback returned");
        op_records.hash(h);
        attempt_ops.hash(h);
        claims.hash(h);
        end.hash(h);
    }
}

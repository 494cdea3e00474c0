//! `payload_hash_key`: the key is a hash of the arguments.
//!
//! Replans with the same arguments reuse the key, so the lost-reply duplicate disappears; but
//! identical arguments do not mean the same intent. A user who really wants two identical
//! tickets gets one (a merged repeat, told success twice), and a replan that drifts the
//! arguments gets a new key and a second effect.

use super::context::ExecCtx;
use super::retrying::{Identity, Retrying};
use super::{Design, Executor};
use crate::model::ExecutorModel;
use crate::vocab::ids::{Key, OpId};
use crate::vocab::protocol::ToolCall;

pub struct PayloadHashKey;

impl Design for PayloadHashKey {
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
        "payload_hash_key"
    }

    fn summary(&self) -> &str {
        "key = hash of tenant, action and arguments: merges genuine repeats"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Retrying::new(ArgumentHash, config))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct ArgumentHash;

/// A fixed, platform-independent hash (FNV-1a over the fields), never a randomly keyed one:
/// the same arguments give the same key in every run.
pub fn argument_key(call: &ToolCall) -> Key {
    key_of(&[
        u64::from(call.tenant.0),
        u64::from(call.endpoint.0),
        call.params.0,
    ])
}

/// The key hashed from `words` (FNV-1a over their little-endian bytes).
pub fn key_of(words: &[u64]) -> Key {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for word in words {
        for byte in word.to_le_bytes() {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    Key(h)
}

impl Identity for ArgumentHash {
    /// Stateless: a copy is itself.
    fn copy(&self) -> Option<Self> {
        Some(*self)
    }

    /// Stateless: everything it knows is in the journal.
    fn fingerprint(&self, _h: &mut dyn std::hash::Hasher) -> bool {
        true
    }

    /// Stateless: nothing to forget.
    fn reset(&mut self) -> bool {
        true
    }

    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId {
        if let Some(op) = ctx.journal_ref().find_by_call(call.call) {
            return op;
        }
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal()
            .create(call, Some(argument_key(call)), worker, now)
    }
}

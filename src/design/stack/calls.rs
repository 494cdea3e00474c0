//! What a stack keeps in memory per operation, and the tag of a layer's retry timer.

use crate::sim::Millis;
use crate::vocab::ids::{Key, OpId};

/// A layer's retry timer: the operation, its call generation (so that a retry timer of an
/// earlier call of the stack is recognised as stale) and the retrying layer. Its tag is
/// written by [`Retry::tag`] and read by [`Retry::of`], the one place that knows the bits:
/// the operation in the high half, then 24 bits of generation, then 8 of layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Retry {
    pub(super) op: OpId,
    pub(super) generation: u32,
    pub(super) layer: u8,
}

const LAYER_BITS: u32 = 8;
pub(super) const GENERATION_BITS: u32 = 24;

impl Retry {
    pub(super) fn tag(self) -> u64 {
        u64::from(self.op.0) << 32
            | u64::from(self.generation) << LAYER_BITS
            | u64::from(self.layer)
    }

    pub(super) fn of(tag: u64) -> Retry {
        Retry {
            op: OpId((tag >> 32) as u32),
            generation: ((tag >> LAYER_BITS) & ((1 << GENERATION_BITS) - 1)) as u32,
            layer: tag as u8,
        }
    }
}

/// What a stack keeps in memory for one operation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Calls {
    /// The calls each layer but the innermost has made of the layer below in its current
    /// call. The innermost layer's sends are the journal's `attempts`.
    pub(super) counts: Vec<u32>,
    /// The key each [`KeyMode::PerCall`](super::KeyMode::PerCall) layer minted for its
    /// current call.
    pub(super) keys: Vec<Option<Key>>,
    /// When each layer's current call began; kept only by a stack with a deadline.
    pub(super) started: Vec<Millis>,
    /// A retry timer is set for the current call of the stack.
    pub(super) armed: bool,
    /// Which call of the stack a retry timer belongs to: a new call of the whole stack
    /// while one is set makes it stale (it then does nothing). Counted only then, so that
    /// states that differ in nothing else hash alike.
    pub(super) generation: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_reads_back_from_its_tag() {
        let layer = u8::try_from(crate::model::stack::MAX_LAYERS - 1).unwrap();
        for op in [OpId(0), OpId(9), OpId(u32::MAX)] {
            for generation in [0, 1, (1 << GENERATION_BITS) - 1] {
                for layer in [0, 1, layer] {
                    let retry = Retry {
                        op,
                        generation,
                        layer,
                    };
                    assert_eq!(Retry::of(retry.tag()), retry);
                }
            }
        }
    }
}

//! The journal's lookup index: the newest operation per authorization and per tool call.
//!
//! Designs look an operation up on every agent call; a scan of every operation made that
//! quadratic in the number of intents. The index is kept in step with the records: on
//! create, when an operation is pointed at another call, and when a volatile journal forgets
//! a crashed worker's operations.

use std::collections::BTreeSet;

use crate::vocab::ids::OpId;

/// An index from `K` to the operations that currently carry it, so that "the newest operation
/// with this authorization (or call)" is a range lookup instead of a scan of every operation.
/// Pairs are ordered by key, then by operation id, and ids grow with creation: the newest
/// operation of a key is the last pair of its range.
#[derive(Debug)]
pub(super) struct Newest<K> {
    pairs: BTreeSet<(K, OpId)>,
}

impl<K: Ord + Copy> Newest<K> {
    pub(super) fn new() -> Self {
        Self {
            pairs: BTreeSet::new(),
        }
    }

    pub(super) fn clear(&mut self) {
        self.pairs.clear();
    }

    pub(super) fn insert(&mut self, key: K, id: OpId) {
        self.pairs.insert((key, id));
    }

    pub(super) fn remove(&mut self, key: K, id: OpId) {
        self.pairs.remove(&(key, id));
    }

    /// Keeps only the operations for which `keep` holds.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(OpId) -> bool) {
        self.pairs.retain(|&(_, id)| keep(id));
    }

    /// The newest operation carrying `key`.
    pub(super) fn get(&self, key: K) -> Option<OpId> {
        self.pairs
            .range((key, OpId(0))..=(key, OpId(u32::MAX)))
            .next_back()
            .map(|&(_, id)| id)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Journal;
    use crate::model::Durability;
    use crate::vocab::ids::*;
    use crate::vocab::protocol::ToolCall;

    fn call(auth: AuthId, call: CallId) -> ToolCall {
        ToolCall {
            call,
            auth,
            ..ToolCall::for_tests(0)
        }
    }

    /// The lookups as they were before the index: a scan, newest first.
    fn scan(j: &Journal, auth: AuthId, call: CallId) -> (Option<OpId>, Option<OpId>) {
        let ops = || j.ops.values().rev();
        (
            ops().find(|o| o.auth == auth).map(|o| o.id),
            ops().find(|o| o.call.call == call).map(|o| o.id),
        )
    }

    #[test]
    fn indexed_lookups_match_a_scan_through_calls_and_crashes() {
        let mut j = Journal::new(Durability::Volatile);
        // A fixed sequence of creates, re-bound calls and crashes over few ids, so that the
        // newest operation of an authorization or call is often forgotten or re-bound.
        let mut x: u32 = 7;
        for step in 0..400 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let (auth, c, worker) = (
                AuthId(x >> 8 & 3),
                CallId(x >> 12 & 7),
                WorkerId(x >> 16 & 1),
            );
            let tc = call(auth, c);
            match x >> 20 & 3 {
                0 | 1 => {
                    j.create(&tc, None, worker, step);
                }
                2 => {
                    if let Some(op) = j.find_by_auth(auth) {
                        j.set_call(op, tc);
                    }
                }
                _ if step % 5 == 0 => j.crash(worker),
                _ => {}
            }
            for (a, c) in (0..4).flat_map(|a| (0..8).map(move |c| (AuthId(a), CallId(c)))) {
                assert_eq!(
                    (j.find_by_auth(a), j.find_by_call(c)),
                    scan(&j, a, c),
                    "step {step}"
                );
            }
        }
        assert!(j.iter().count() > 0);
    }
}

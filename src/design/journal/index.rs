//! The journal's lookup index: the newest operation per authorization and per tool call.
//!
//! Designs look an operation up on every agent call; a scan of every operation made that
//! quadratic in the number of intents. The index is kept in step with the records: on
//! create, when an operation is pointed at another call, and when a volatile journal forgets
//! a crashed worker's operations.

use crate::vocab::ids::OpId;

/// An index from `K` to the operations that currently carry it, so that "the newest operation
/// with this authorization (or call)" is a binary search instead of a scan of every
/// operation. Pairs are kept sorted by key, then by operation id, and ids grow with creation:
/// the newest operation of a key is the last pair of its run. A sorted vector rather than a
/// tree: new keys mostly come last (calls and intents are numbered in order), so an insert is
/// usually a push, and clearing keeps the memory for the next run.
#[derive(Clone, Debug, Hash)]
pub(super) struct Newest<K> {
    pairs: Vec<(K, OpId)>,
}

impl<K: Ord + Copy> Newest<K> {
    pub(super) fn new() -> Self {
        Self { pairs: Vec::new() }
    }

    pub(super) fn clear(&mut self) {
        self.pairs.clear();
    }

    pub(super) fn reserve(&mut self, n: usize) {
        self.pairs.reserve(n);
    }

    pub(super) fn insert(&mut self, key: K, id: OpId) {
        if self.pairs.last().is_none_or(|&last| last < (key, id)) {
            self.pairs.push((key, id));
        } else if let Err(at) = self.search(&(key, id)) {
            self.pairs.insert(at, (key, id));
        }
    }

    pub(super) fn remove(&mut self, key: K, id: OpId) {
        if let Ok(at) = self.search(&(key, id)) {
            self.pairs.remove(at);
        }
    }

    /// The first index whose pair is not below `pair`, as `binary_search` reports it, found
    /// by galloping back from the end: the pairs looked up are mostly the newest (the call
    /// just made, the intent just served), so the search stays in the last cache lines
    /// instead of touching the whole vector.
    fn search(&self, pair: &(K, OpId)) -> Result<usize, usize> {
        let lo = self.gallop(|p| p < pair);
        self.pairs[lo..]
            .binary_search(pair)
            .map(|i| lo + i)
            .map_err(|i| lo + i)
    }

    /// For a `below` that holds for a prefix of the pairs (they are sorted): an index `lo`
    /// with every pair before it below, so that the prefix's end lies in `lo..=len`. Found by
    /// doubling steps back from the end.
    fn gallop(&self, below: impl Fn(&(K, OpId)) -> bool) -> usize {
        let n = self.pairs.len();
        let mut lo = n.saturating_sub(1);
        let mut step = 1;
        while lo > 0 && !below(&self.pairs[lo]) {
            lo = lo.saturating_sub(step);
            step *= 2;
        }
        lo
    }

    /// Keeps only the operations for which `keep` holds.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(OpId) -> bool) {
        self.pairs.retain(|&(_, id)| keep(id));
    }

    /// The newest operation carrying `key`.
    pub(super) fn get(&self, key: K) -> Option<OpId> {
        // The first pair after every pair of `key`; the one before it, if of `key`.
        let lo = self.gallop(|&(k, _)| k <= key);
        let end = lo + self.pairs[lo..].partition_point(|&(k, _)| k <= key);
        let &(k, id) = self.pairs[..end].last()?;
        (k == key).then_some(id)
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

    /// The galloping search agrees with a plain model whatever the order of the pairs.
    #[test]
    fn newest_matches_a_plain_model_for_any_insertion_order() {
        use super::Newest;
        let mut index = Newest::new();
        let mut plain: Vec<(u32, OpId)> = Vec::new();
        // A fixed pseudo-random sequence of inserts and removes over 40 keys.
        let mut x: u64 = 7;
        for step in 0..3_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = ((x >> 33) % 40) as u32;
            let id = OpId(((x >> 45) % 500) as u32);
            if step % 3 == 2 {
                index.remove(key, id);
                plain.retain(|&p| p != (key, id));
            } else {
                index.insert(key, id);
                if !plain.contains(&(key, id)) {
                    plain.push((key, id));
                }
            }
            let probe = ((x >> 20) % 42) as u32;
            let want = plain.iter().filter(|p| p.0 == probe).map(|p| p.1).max();
            assert_eq!(index.get(probe), want, "step {step}, key {probe}");
        }
    }
}

//! Fingerprints of world states: a stable 64-bit hash of everything that decides the rest of
//! a run and its outcome, so that an explorer can tell a state it has seen before (a visited
//! set, as stateright keeps one) and prune the branch.
//!
//! Stable means: the same state gives the same hash in every run, process and platform. The
//! hasher has a fixed key, integers are hashed as little-endian 64-bit words, nothing hashes a
//! pointer, and the two hash maps of the world (the provider's key store and its resources by
//! key) are folded in whatever order they iterate: each entry is hashed on its own and the
//! entry hashes are added up, which no order changes.
//!
//! What is hashed is listed in [`World::fingerprint`]. Each component hashes its own fields
//! next to their definition, and destructures itself to do so: a field added later does not
//! compile until someone says whether it is part of the state.

use std::hash::{Hash, Hasher};

use super::World;

/// A fixed-key, platform-independent 64-bit hasher for fingerprints.
///
/// Each word goes through the splitmix64 finaliser chained with the state: for a fixed state,
/// two different words always lead to different states (each step is a bijection), and
/// structured inputs (small ids, times) are spread over all 64 bits. Never a randomly keyed
/// `std` hasher: its hashes change from one process to the next.
#[derive(Clone, Copy, Debug)]
pub struct StableHasher {
    state: u64,
}

/// The initial state (the fractional digits of pi).
const SEED: u64 = 0x243F_6A88_85A3_08D3;
/// Added after each word, so that the all-zero state is not a fixed point of zero words.
const STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// The splitmix64 finaliser: a bijection of `u64` with full avalanche.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl StableHasher {
    pub fn new() -> Self {
        Self { state: SEED }
    }
}

impl Default for StableHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl Hasher for StableHasher {
    fn write_u64(&mut self, word: u64) {
        self.state = mix(self.state ^ word).wrapping_add(STEP);
    }

    /// Bytes in little-endian words of eight, then their count (so that a trailing zero byte
    /// is not lost in the padding).
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
        self.write_u64(bytes.len() as u64);
    }

    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.write_u64(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    fn write_u128(&mut self, i: u128) {
        self.write_u64(i as u64);
        self.write_u64((i >> 64) as u64);
    }

    /// As 64 bits on every platform.
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    fn write_i8(&mut self, i: i8) {
        self.write_u64(i as u64);
    }

    fn write_i16(&mut self, i: i16) {
        self.write_u64(i as u64);
    }

    fn write_i32(&mut self, i: i32) {
        self.write_u64(i as u64);
    }

    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }

    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }

    /// Enum discriminants come through here: as 64 bits on every platform.
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as u64);
    }

    fn finish(&self) -> u64 {
        self.state
    }
}

/// Hashes `items` into `h` whatever order they come in: each on its own, the hashes added up,
/// then the count and the sum. For hash maps, whose iteration order is not part of the state.
pub(crate) fn unordered<H: Hasher, T: Hash>(h: &mut H, items: impl Iterator<Item = T>) {
    let (mut n, mut sum) = (0u64, 0u64);
    for item in items {
        let mut one = StableHasher::new();
        item.hash(&mut one);
        n += 1;
        sum = sum.wrapping_add(one.finish());
    }
    h.write_u64(n);
    h.write_u64(sum);
}

impl World<'_> {
    /// A stable 64-bit hash of everything that decides the rest of the run and its outcome;
    /// `None` if an executor cannot be fingerprinted ([`crate::design::Executor::fingerprint`]
    /// returns false, the default for a design that does not say what its memory is).
    ///
    /// Two worlds that can still reach exactly the same futures with the same outcomes have
    /// the same fingerprint; anything else differs (up to hash collisions, about one in 2^64
    /// per pair of states). Hashed, in this order:
    /// - each worker: up or down, its incarnation, the calls waiting in its inbox, and its
    ///   executor's memory (by the executor itself);
    /// - the clock (absolute: deadlines, retention and lease expiry are measured from it), the
    ///   event being handled when called from [`World::run_observed`], and every queued
    ///   event with its due time, in pop order, each marked if it is held by a pause (events
    ///   held later to the same moment queue after it, but before those pushed for it);
    /// - the intents so far; the agent (per intent: step, arguments, calls, authorizations,
    ///   the call under way, receipts; the call → intent map, issues, and what the user was
    ///   told and when); the provider (jobs with their waiters and outcomes, resources with
    ///   their visibility moments, every key record with its times and pruning moment, the
    ///   resources by key); the ledger; the journal (records, scratch state, unresolved set,
    ///   indexes, leases and the next fence, the authorization ledger, the next operation id);
    /// - the transport's record of each send (worker, operation, open, create, what it
    ///   serves), the ids minted (attempts, keys), remote calls so far, random crashes so far,
    ///   each attempt's create number and the creates counted (they decide which scripted
    ///   faults hit later sends);
    /// - the observer records the metrics read: each operation's intent and first unknown
    ///   moment, the operation of each send, the claims with their times, and how the run
    ///   ended.
    ///
    /// Left out: the model and the design (fixed for a world), the trace (text only), which
    /// scripted faults fired (a warning for sweeps, accumulated across runs; a fault hits by
    /// create number, never once only), and the command buffers, which are empty between
    /// events. Nothing is reduced by symmetry: ids are hashed as they are, since they name
    /// keys, calls and resources that later events refer to.
    pub fn fingerprint(&self) -> Option<u64> {
        let World {
            model: _,
            design: _,
            queue,
            aperiodic,
            now,
            faults,
            workload,
            agent,
            network: _,
            provider,
            ledger,
            journal,
            workers,
            random_crashes,
            attempts,
            minted,
            remote_calls,
            op_records,
            attempt_ops,
            claims,
            call_claims,
            current,
            end,
            trace: _,
            exec_out,
            provider_out,
        } = self;
        debug_assert!(call_claims.is_empty() && exec_out.is_empty() && provider_out.is_empty());
        let mut h = StableHasher::new();
        h.write_usize(workers.len());
        for w in workers {
            if !w.fingerprint(&mut h) {
                return None;
            }
        }
        now.hash(&mut h);
        aperiodic.hash(&mut h);
        current.hash(&mut h);
        h.write_usize(queue.len());
        for (at_ms, held, event) in queue.in_pop_order() {
            at_ms.hash(&mut h);
            held.hash(&mut h);
            event.hash(&mut h);
        }
        workload.fingerprint(&mut h);
        agent.fingerprint(&mut h);
        provider.fingerprint(&mut h);
        ledger.fingerprint(&mut h);
        journal.lock().fingerprint(&mut h);
        attempts.hash(&mut h);
        minted.hash(&mut h);
        remote_calls.hash(&mut h);
        random_crashes.hash(&mut h);
        faults.fingerprint(&mut h);
        op_records.hash(&mut h);
        attempt_ops.hash(&mut h);
        claims.hash(&mut h);
        end.hash(&mut h);
        Some(h.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(x: impl Hash) -> u64 {
        let mut h = StableHasher::new();
        x.hash(&mut h);
        h.finish()
    }

    #[test]
    fn hashes_are_fixed_and_tell_small_inputs_apart() {
        // Pinned: a change of the hasher changes every fingerprint an explorer stored.
        assert_eq!(hash((1u64, 2u32)), 7_499_904_109_793_811_640);
        let small: Vec<u64> = (0..1000u64).map(hash).collect();
        let mut sorted = small.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 1000);
        // Same words, other grouping: a vector's length is part of its hash.
        assert_ne!(hash((vec![1u32], vec![2u32])), hash((vec![1u32, 2], Vec::<u32>::new())));
        // Integers hash by value whatever their width or sign.
        assert_eq!(hash(7u32), hash(7u64));
        assert_eq!(hash(7usize), hash(7u64));
        // Bytes: a trailing zero counts.
        assert_ne!(hash([1u8].as_slice()), hash([1u8, 0].as_slice()));
    }

    #[test]
    fn unordered_ignores_order_but_not_content() {
        let of = |items: &[(u32, u32)]| {
            let mut h = StableHasher::new();
            unordered(&mut h, items.iter());
            h.finish()
        };
        assert_eq!(of(&[(1, 2), (3, 4)]), of(&[(3, 4), (1, 2)]));
        assert_ne!(of(&[(1, 2), (3, 4)]), of(&[(1, 2), (3, 5)]));
        assert_ne!(of(&[(1, 2)]), of(&[(1, 2), (0, 0)]));
        assert_ne!(of(&[(1, 2), (3, 4)]), of(&[(1, 4), (3, 2)]));
    }
}

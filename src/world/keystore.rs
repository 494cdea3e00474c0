//! The provider's idempotency-key store: one record per scoped key.
//!
//! The contract (scope, retention, in-flight and mismatch rules, atomicity) lives in
//! `world::provider`, which decides when records are written, replayed, orphaned or
//! forgotten; what has to be atomic about it (check-and-claim, write-if-still-ours) is here,
//! each as one operation, so that the same code runs in the simulator and under loom.
//!
//! The one internal module of the world that stays public: the loom models and property
//! tests (`tests/loom_keystore.rs`, `tests/prop_keystore.rs`) drive the store from outside
//! the crate, as the provider's request threads would; each loom model is a test binary of
//! its own, built with `--cfg loom` in the loom profile, without the library's unit tests.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use crate::model::Atomicity;
use crate::sim::Millis;
use crate::sync::{Mutex, get_mut, lock};
use crate::vocab::ids::*;
use crate::vocab::protocol::Reply;

/// A key within the scope the provider checks it in: per account, per account and endpoint,
/// or global.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ScopedKey {
    pub tenant: Option<Tenant>,
    pub endpoint: Option<Endpoint>,
    pub region: Option<Region>,
    pub key: Key,
}

/// Where the request that wrote a record got to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// Still processing, by this provider job.
    InFlight { job: u32 },
    /// The provider crashed after writing the key and before the effect: a key without an
    /// effect that looks in progress until it expires.
    Orphaned,
    /// Finished; this is the stored result.
    Done {
        reply: Reply,
        resource: Option<ResourceId>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Parameters of the first request under this key.
    pub fingerprint: Params,
    /// Endpoint of the first request: part of what a reuse of the key must match where the
    /// scope does not already separate endpoints.
    pub endpoint: Endpoint,
    pub first_request_ms: Millis,
    /// When the client says it first sent the request that wrote the record, if it says.
    pub first_sent_ms: Option<Millis>,
    pub completed_ms: Option<Millis>,
    /// The moment the record is pruned, once drawn (a retention floor with a maximum);
    /// `None`: at the floor, or not drawn yet.
    pub pruned_at_ms: Option<Millis>,
    pub slot: Slot,
}

/// Its moments are compared only with the clock, against the retention and the in-progress
/// expiry (`sim::moments::of_keys`); the pruning moment only with the clock.
impl Hash for Record {
    fn hash<H: Hasher>(&self, h: &mut H) {
        use crate::sim::moments;
        let Record {
            fingerprint,
            endpoint,
            first_request_ms,
            first_sent_ms,
            completed_ms,
            pruned_at_ms,
            slot,
        } = self;
        fingerprint.hash(h);
        endpoint.hash(h);
        moments::of_keys(h, *first_request_ms);
        moments::of_keys_opt(h, *first_sent_ms);
        moments::of_keys_opt(h, *completed_ms);
        moments::against_opt(h, *pruned_at_ms, &[0]);
        slot.hash(h);
    }
}

/// The outcome of [`KeyStore::claim`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claimed {
    /// The caller now owns the key; `replaced` is the stale record it displaced, if any.
    Fresh { replaced: Option<Record> },
    /// A live record already holds the key.
    Existing(Record),
}

/// Who may write a key's final record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// The job whose in-flight marker holds the key (atomic and key-then-effect stores).
    Marker(u32),
    /// Whoever finishes first while the key is still free (effect-then-key stores).
    FirstWriter,
}

/// The records, with every operation that must be atomic done as one call. The simulator
/// calls these directly on the store it owns; threads go through [`SharedKeyStore`], which
/// runs the same methods under a lock.
///
/// A hash map with a fixed-key hasher ([`SeqHasher`]): a lookup costs the same with ten keys
/// or a million, and since the store is only ever read by key, never iterated, its order cannot
/// leak into a run.
#[derive(Clone, Debug, Default)]
pub struct KeyStore {
    records: HashMap<ScopedKey, Record, BuildHasherDefault<SeqHasher>>,
}

impl KeyStore {
    pub(crate) fn clear(&mut self) {
        self.records.clear();
    }

    pub(crate) fn reserve(&mut self, n: usize) {
        self.records.reserve(n);
    }

    pub fn get(&self, key: &ScopedKey) -> Option<&Record> {
        self.records.get(key)
    }

    /// Check and claim in one step: if `key` has no record, or one that `stale` says no
    /// longer counts, writes `marker` and hands the key to the caller.
    pub fn claim(
        &mut self,
        key: ScopedKey,
        marker: Record,
        stale: impl Fn(&Record) -> bool,
    ) -> Claimed {
        match self.records.get(&key) {
            Some(r) if !stale(r) => Claimed::Existing(*r),
            _ => Claimed::Fresh {
                replaced: self.records.insert(key, marker),
            },
        }
    }

    /// Reads `key` without claiming it, first dropping a record that `stale` says no longer
    /// counts (an effect-then-key store writes nothing before the effect).
    pub fn peek(&mut self, key: &ScopedKey, stale: impl Fn(&Record) -> bool) -> Option<Record> {
        match self.records.get(key) {
            Some(r) if stale(r) => {
                self.records.remove(key);
                None
            }
            other => other.copied(),
        }
    }

    /// Writes the final record (`Some`) or forgets the key (`None`), if `writer` may: the
    /// marker's job still holds it, or, first writer wins, nobody does. Returns whether it
    /// wrote.
    pub fn finish(&mut self, key: ScopedKey, writer: Writer, record: Option<Record>) -> bool {
        let ours = match (writer, self.records.get(&key)) {
            (Writer::Marker(job), Some(r)) => r.slot == Slot::InFlight { job },
            (Writer::FirstWriter, existing) => existing.is_none(),
            (Writer::Marker(_), None) => false,
        };
        if ours {
            match record {
                Some(r) => {
                    self.records.insert(key, r);
                }
                None => {
                    self.records.remove(&key);
                }
            }
        }
        ours
    }

    /// An atomic store's transaction aborted (crash): the marker goes, nothing stays.
    pub fn release(&mut self, key: &ScopedKey, job: u32) -> bool {
        let ours = matches!(self.records.get(key), Some(r) if r.slot == Slot::InFlight { job });
        if ours {
            self.records.remove(key);
        }
        ours
    }

    /// A key-then-effect store crashed after the key: the record stays, with no effect.
    pub fn orphan(&mut self, key: &ScopedKey, job: u32) -> bool {
        match self.records.get_mut(key) {
            Some(r) if r.slot == (Slot::InFlight { job }) => {
                r.slot = Slot::Orphaned;
                true
            }
            _ => false,
        }
    }

    /// Fixes the moment `key`'s record is pruned, unless one is fixed already (the first
    /// draw wins); returns the moment in force, or `None` if there is no record.
    pub fn prune_at(&mut self, key: &ScopedKey, at_ms: Millis) -> Option<Millis> {
        let r = self.records.get_mut(key)?;
        Some(*r.pruned_at_ms.get_or_insert(at_ms))
    }

    /// Takes the record of failed work back in flight under `job`, only if it is still
    /// exactly `failed` (compare and set): two retries of the same failed work cannot both
    /// re-execute it.
    pub fn reclaim(&mut self, key: &ScopedKey, failed: Record, job: u32) -> bool {
        match self.records.get_mut(key) {
            Some(r) if *r == failed => {
                r.slot = Slot::InFlight { job };
                true
            }
            _ => false,
        }
    }

    /// Begins a create of `job` under `key`, as a store of `atomicity` does: an atomic or
    /// key-then-effect store claims the key with an in-flight marker; an effect-then-key
    /// store writes nothing yet and only looks. `stale` says which records no longer count.
    pub fn begin(
        &mut self,
        atomicity: Atomicity,
        key: ScopedKey,
        marker: Record,
        stale: impl Fn(&Record) -> bool,
    ) -> Claimed {
        match atomicity {
            Atomicity::Atomic | Atomicity::KeyThenEffect => self.claim(key, marker, stale),
            Atomicity::EffectThenKey => match self.records.get(&key) {
                Some(r) if !stale(r) => Claimed::Existing(*r),
                _ => Claimed::Fresh {
                    replaced: self.records.remove(&key),
                },
            },
        }
    }

    /// Ends `job`'s create: writes its final record (`Some`) or forgets the key (`None`) if
    /// the store lets `job` write: its marker still holds the key or, in an effect-then-key
    /// store, nobody has written it yet. A re-executed record keeps its first request's times.
    pub fn complete(
        &mut self,
        atomicity: Atomicity,
        key: ScopedKey,
        job: u32,
        record: Option<Record>,
    ) -> bool {
        // What `finish` decides, in one lookup: `job` writes when its marker holds the key,
        // or, in an effect-then-key store, when nobody has written the key yet.
        match self.records.entry(key) {
            Entry::Occupied(mut e) => {
                let existing = e.get();
                if existing.slot != (Slot::InFlight { job }) {
                    return false;
                }
                match record {
                    Some(r) => {
                        let kept = Record {
                            first_request_ms: existing.first_request_ms,
                            first_sent_ms: existing.first_sent_ms,
                            ..r
                        };
                        e.insert(kept);
                    }
                    None => {
                        e.remove();
                    }
                }
                true
            }
            Entry::Vacant(e) => {
                if atomicity != Atomicity::EffectThenKey {
                    return false;
                }
                if let Some(r) = record {
                    e.insert(r);
                }
                true
            }
        }
    }

    /// The provider died inside `job`'s create, between its key and its effect: an atomic
    /// store's transaction aborts (nothing stays), a key-then-effect store keeps the key
    /// without its effect, an effect-then-key store had written no key.
    pub fn crash(&mut self, atomicity: Atomicity, key: &ScopedKey, job: u32) {
        match atomicity {
            Atomicity::Atomic => {
                self.release(key, job);
            }
            Atomicity::KeyThenEffect => {
                self.orphan(key, job);
            }
            Atomicity::EffectThenKey => {}
        }
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Hashes every record with its key, in no particular order (see
    /// [`crate::sim::hash::unordered`]): the map's order is not part of the state.
    pub(crate) fn fingerprint<H: Hasher>(&self, h: &mut H) {
        crate::sim::hash::unordered(h, self.records.iter());
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// The key store shared between threads: every operation of [`KeyStore`] under one lock.
#[derive(Debug, Default)]
pub struct SharedKeyStore(Mutex<KeyStore>);

impl Clone for SharedKeyStore {
    /// A copy of the store as it is now, under a lock of its own (a search's snapshot).
    fn clone(&self) -> Self {
        Self(Mutex::new(lock(&self.0).clone()))
    }
}

impl SharedKeyStore {
    pub fn claim(
        &self,
        key: ScopedKey,
        marker: Record,
        stale: impl Fn(&Record) -> bool,
    ) -> Claimed {
        lock(&self.0).claim(key, marker, stale)
    }

    pub fn peek(&self, key: &ScopedKey, stale: impl Fn(&Record) -> bool) -> Option<Record> {
        lock(&self.0).peek(key, stale)
    }

    pub fn finish(&self, key: ScopedKey, writer: Writer, record: Option<Record>) -> bool {
        lock(&self.0).finish(key, writer, record)
    }

    pub fn release(&self, key: &ScopedKey, job: u32) -> bool {
        lock(&self.0).release(key, job)
    }

    pub fn orphan(&self, key: &ScopedKey, job: u32) -> bool {
        lock(&self.0).orphan(key, job)
    }

    pub fn get(&self, key: &ScopedKey) -> Option<Record> {
        lock(&self.0).get(key).copied()
    }

    pub fn reclaim(&self, key: &ScopedKey, failed: Record, job: u32) -> bool {
        lock(&self.0).reclaim(key, failed, job)
    }

    pub fn prune_at(&self, key: &ScopedKey, at_ms: Millis) -> Option<Millis> {
        lock(&self.0).prune_at(key, at_ms)
    }

    pub fn begin(
        &self,
        atomicity: Atomicity,
        key: ScopedKey,
        marker: Record,
        stale: impl Fn(&Record) -> bool,
    ) -> Claimed {
        lock(&self.0).begin(atomicity, key, marker, stale)
    }

    pub fn complete(
        &self,
        atomicity: Atomicity,
        key: ScopedKey,
        job: u32,
        record: Option<Record>,
    ) -> bool {
        lock(&self.0).complete(atomicity, key, job, record)
    }

    pub fn crash(&self, atomicity: Atomicity, key: &ScopedKey, job: u32) {
        lock(&self.0).crash(atomicity, key, job)
    }

    /// The store itself, for its single owner.
    pub fn get_mut(&mut self) -> &mut KeyStore {
        get_mut(&mut self.0)
    }

    /// Hashes the store (see [`KeyStore::fingerprint`]), under the lock.
    pub(crate) fn fingerprint<H: Hasher>(&self, h: &mut H) {
        lock(&self.0).fingerprint(h)
    }
}

/// A fixed-key hasher that keeps keys minted in sequence next to each other: the low bits of
/// the hash (which pick the bucket) follow the last word hashed, the key number, so the
/// records of a run's recent keys share cache lines; the top bits (the bucket's tag) are
/// mixed, so that a probe rarely compares keys that merely sit side by side.
#[derive(Clone, Default)]
pub struct SeqHasher(u64);

impl Hasher for SeqHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = self.0.wrapping_mul(31).wrapping_add(word);
    }

    fn write_u32(&mut self, word: u32) {
        self.write_u64(u64::from(word));
    }

    fn write_isize(&mut self, word: isize) {
        self.write_u64(word as u64);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn finish(&self) -> u64 {
        const TAG: u64 = 0xFE00_0000_0000_0000;
        let mixed = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (self.0 & !TAG) | (mixed & TAG)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::hash::StableHasher;

    fn record(first_ms: Millis) -> Record {
        Record {
            fingerprint: Params(first_ms),
            endpoint: Endpoint(0),
            first_request_ms: first_ms,
            first_sent_ms: None,
            completed_ms: None,
            pruned_at_ms: None,
            slot: Slot::InFlight { job: 0 },
        }
    }

    fn scoped(key: u64) -> ScopedKey {
        ScopedKey {
            tenant: Some(Tenant((key % 3) as u32)),
            endpoint: None,
            region: None,
            key: Key(key),
        }
    }

    /// `complete` in one lookup decides what it decided as a read, then `finish`: every
    /// record the key may hold (none, this job's marker, another job's, an orphan, a final
    /// one), every atomicity, with and without a final record.
    #[test]
    fn complete_writes_what_a_read_then_finish_wrote() {
        let reference = |s: &mut KeyStore, atomicity, key, job, record: Option<Record>| {
            let existing = s.get(&key).copied();
            let writer = match existing {
                Some(r) if r.slot == (Slot::InFlight { job }) => Writer::Marker(job),
                _ if atomicity == Atomicity::EffectThenKey => Writer::FirstWriter,
                _ => Writer::Marker(job),
            };
            let record = record.map(|r| Record {
                first_request_ms: existing.map_or(r.first_request_ms, |e| e.first_request_ms),
                first_sent_ms: existing.map_or(r.first_sent_ms, |e| e.first_sent_ms),
                ..r
            });
            s.finish(key, writer, record)
        };
        let held = [
            None,
            Some(Slot::InFlight { job: 3 }),
            Some(Slot::InFlight { job: 4 }),
            Some(Slot::Orphaned),
            Some(Slot::Done {
                reply: Reply::Created {
                    resource: ResourceId(9),
                    replayed: false,
                },
                resource: Some(ResourceId(9)),
            }),
        ];
        let done = Record {
            first_request_ms: 50,
            first_sent_ms: Some(45),
            completed_ms: Some(60),
            slot: Slot::Done {
                reply: Reply::Created {
                    resource: ResourceId(1),
                    replayed: false,
                },
                resource: Some(ResourceId(1)),
            },
            ..record(50)
        };
        for atomicity in [
            Atomicity::Atomic,
            Atomicity::KeyThenEffect,
            Atomicity::EffectThenKey,
        ] {
            for slot in held {
                for final_record in [Some(done), None] {
                    let mut a = KeyStore::default();
                    if let Some(slot) = slot {
                        let first = Record {
                            first_sent_ms: Some(7),
                            slot,
                            ..record(10)
                        };
                        a.records.insert(scoped(1), first);
                    }
                    let mut b = KeyStore {
                        records: a.records.clone(),
                    };
                    let wrote = a.complete(atomicity, scoped(1), 3, final_record);
                    let expected = reference(&mut b, atomicity, scoped(1), 3, final_record);
                    let what = format!("{atomicity:?}, {slot:?}, {}", final_record.is_some());
                    assert_eq!(wrote, expected, "{what}");
                    assert_eq!(a.get(&scoped(1)), b.get(&scoped(1)), "{what}");
                }
            }
        }
    }

    /// The same records, written in opposite orders: the map iterates them in another order
    /// (so the test means something), the fingerprint does not see it.
    #[test]
    fn the_fingerprint_does_not_see_the_maps_order() {
        let store = |keys: &mut dyn Iterator<Item = u64>| {
            let mut s = KeyStore::default();
            for k in keys {
                s.claim(scoped(k), record(k * 7), |_| false);
            }
            s
        };
        let (a, b) = (store(&mut (0..500)), store(&mut (0..500).rev()));
        let order = |s: &KeyStore| s.records.keys().map(|k| k.key).collect::<Vec<_>>();
        assert_ne!(order(&a), order(&b));
        let fp = |s: &KeyStore| {
            let mut h = StableHasher::new();
            s.fingerprint(&mut h);
            h.finish()
        };
        assert_eq!(fp(&a), fp(&b));
        let mut c = store(&mut (0..500));
        c.prune_at(&scoped(250), 9);
        assert_ne!(fp(&a), fp(&c));
    }
}

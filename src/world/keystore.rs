//! The provider's idempotency-key store: one record per scoped key.
//!
//! This is storage only; the contract (scope, retention, in-flight and mismatch rules,
//! atomicity) lives in [`super::provider`], which decides when records are written, replayed,
//! orphaned or forgotten.

use std::collections::BTreeMap;

use super::ids::*;
use super::protocol::Reply;
use crate::sim::Millis;

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    pub first_request_ms: Millis,
    pub completed_ms: Option<Millis>,
    pub slot: Slot,
}

#[derive(Debug, Default)]
pub struct KeyStore {
    records: BTreeMap<ScopedKey, Record>,
}

impl KeyStore {
    pub(crate) fn clear(&mut self) {
        self.records.clear();
    }

    pub fn get(&self, key: &ScopedKey) -> Option<&Record> {
        self.records.get(key)
    }

    pub(crate) fn get_mut(&mut self, key: &ScopedKey) -> Option<&mut Record> {
        self.records.get_mut(key)
    }

    pub(crate) fn insert(&mut self, key: ScopedKey, record: Record) {
        self.records.insert(key, record);
    }

    pub(crate) fn remove(&mut self, key: &ScopedKey) -> Option<Record> {
        self.records.remove(key)
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

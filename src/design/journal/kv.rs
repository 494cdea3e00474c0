//! The key-value store of external executors (docs/executor-protocol.md, `kv`): string keys
//! and values with a version per write, shared by the workers of a run, exactly as durable as
//! the journal it lives in.
//!
//! Every write takes the next version of the run (from 1, never reused), so a version is a
//! fencing token: a compare-and-set on it is how workers coordinate. With a volatile journal a
//! crash loses the entries the crashed worker wrote last, as it loses the operations it owned.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use crate::vocab::ids::WorkerId;

/// One entry: its value, the version of its last write, and the worker that wrote it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    pub value: String,
    pub version: u64,
    pub writer: WorkerId,
}

/// The store of one run.
#[derive(Clone, Debug, Default)]
pub struct Store {
    entries: BTreeMap<String, Entry>,
    /// The version of the last write of the run.
    last_version: u64,
}

impl Store {
    /// The entry at `key`.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// Writes `value` at `key` for `writer`; returns the write's version.
    pub fn put(&mut self, key: &str, value: String, writer: WorkerId) -> u64 {
        self.last_version += 1;
        let version = self.last_version;
        self.entries.insert(
            key.to_string(),
            Entry {
                value,
                version,
                writer,
            },
        );
        version
    }

    /// Writes `value` at `key` only if the entry's version is `expect` (0: absent). Returns
    /// whether it wrote, and the entry as it stands after.
    pub fn cas(
        &mut self,
        key: &str,
        expect: u64,
        value: String,
        writer: WorkerId,
    ) -> (bool, Option<&Entry>) {
        let current = self.entries.get(key).map_or(0, |e| e.version);
        if current != expect {
            return (false, self.entries.get(key));
        }
        self.put(key, value, writer);
        (true, self.entries.get(key))
    }

    /// Removes `key`; returns whether it was there.
    pub fn delete(&mut self, key: &str) -> bool {
        self.entries.remove(key).is_some()
    }

    /// The entries whose key starts with `prefix`, in key order.
    pub fn list<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a String, &'a Entry)> {
        self.entries
            .range(prefix.to_string()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.last_version = 0;
    }

    /// A volatile store's crash of `worker`: the entries it wrote last are gone.
    pub(crate) fn forget_writer(&mut self, worker: WorkerId) {
        self.entries.retain(|_, e| e.writer != worker);
    }

    /// Hashes the entries and the version counter; nothing at all while the store was never
    /// written (a run of a built-in design), so that their fingerprints do not change.
    pub(crate) fn fingerprint<H: Hasher>(&self, h: &mut H) {
        if self.last_version == 0 {
            return;
        }
        self.entries.hash(h);
        self.last_version.hash(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_fence_and_cas_needs_the_current_one() {
        let mut s = Store::default();
        let w = WorkerId(0);
        assert_eq!(s.put("a", "1".into(), w), 1);
        assert_eq!(s.put("b", "2".into(), w), 2);
        let (ok, e) = s.cas("a", 2, "x".into(), w);
        assert!(!ok);
        assert_eq!(e.map(|e| e.version), Some(1));
        let (ok, e) = s.cas("a", 1, "x".into(), w);
        assert!(ok);
        assert_eq!(e.map(|e| (e.value.as_str(), e.version)), Some(("x", 3)));
        let (ok, _) = s.cas("c", 0, "new".into(), WorkerId(1));
        assert!(ok);
        let listed: Vec<_> = s.list("").map(|(k, e)| (k.as_str(), e.version)).collect();
        assert_eq!(listed, [("a", 3), ("b", 2), ("c", 4)]);
        assert!(s.delete("b"));
        assert!(!s.delete("b"));
        s.forget_writer(WorkerId(1));
        assert_eq!(s.list("").count(), 1);
        // A version is never reused within a run, even after a delete.
        assert_eq!(s.put("b", "again".into(), w), 5);
    }

    #[test]
    fn list_takes_the_prefix_only() {
        let mut s = Store::default();
        let w = WorkerId(0);
        for k in ["op:1", "op:2", "oq", "lease:1", "op"] {
            s.put(k, k.into(), w);
        }
        let keys: Vec<_> = s.list("op:").map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["op:1", "op:2"]);
    }
}

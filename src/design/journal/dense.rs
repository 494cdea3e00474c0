//! Storage by operation id. Operation ids are dense (0, 1, 2... in creation order within a
//! run), so the journal's parts are vectors indexed by id rather than trees: lookups are an
//! index, iteration is in id order (oldest first), and clearing keeps the memory, so a sweep
//! of many seeds allocates nothing per run.

use std::hash::{Hash, Hasher};

use crate::vocab::ids::OpId;

/// A value per operation id, or none (not created yet, or forgotten).
#[derive(Debug, Clone)]
pub(super) struct Dense<T> {
    slots: Vec<Option<T>>,
}

impl<T> Default for Dense<T> {
    fn default() -> Self {
        Self { slots: Vec::new() }
    }
}

impl<T> Dense<T> {
    pub(super) fn clear(&mut self) {
        self.slots.clear();
    }

    pub(super) fn reserve(&mut self, n: usize) {
        self.slots.reserve(n);
    }

    pub(super) fn insert(&mut self, id: OpId, value: T) {
        let i = id.0 as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i] = Some(value);
    }

    pub(super) fn get(&self, id: &OpId) -> Option<&T> {
        self.slots.get(id.0 as usize)?.as_ref()
    }

    pub(super) fn get_mut(&mut self, id: &OpId) -> Option<&mut T> {
        self.slots.get_mut(id.0 as usize)?.as_mut()
    }

    pub(super) fn contains_key(&self, id: &OpId) -> bool {
        self.get(id).is_some()
    }

    /// The values, in id order.
    /// The values with their ids, in id order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (OpId, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (OpId(i as u32), v)))
    }

    pub(super) fn values(&self) -> impl DoubleEndedIterator<Item = &T> {
        self.slots.iter().filter_map(Option::as_ref)
    }

    /// Keeps only the values for which `keep` holds.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(OpId, &T) -> bool) {
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if slot.as_ref().is_some_and(|v| !keep(OpId(i as u32), v)) {
                *slot = None;
            }
        }
    }
}

/// The values with their ids, then their count: empty slots (ids not created yet, or
/// forgotten) are not part of the hash, so neither is how far the vector grew.
impl<T: Hash> Hash for Dense<T> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let mut n = 0u64;
        for (i, value) in self.slots.iter().enumerate() {
            if let Some(v) = value {
                h.write_u64(i as u64);
                v.hash(h);
                n += 1;
            }
        }
        h.write_u64(n);
    }
}

/// The ids in the set, then their count (not the words they sit in).
impl Hash for IdSet {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let mut n = 0u64;
        for id in self.iter() {
            h.write_u32(id.0);
            n += 1;
        }
        h.write_u64(n);
    }
}

/// A set of operation ids, one bit each.
#[derive(Debug, Clone, Default)]
pub(super) struct IdSet {
    words: Vec<u64>,
    /// How many ids are in the set (what the bits say; not hashed separately).
    len: usize,
}

impl IdSet {
    pub(super) fn clear(&mut self) {
        self.words.clear();
        self.len = 0;
    }

    pub(super) fn insert(&mut self, id: OpId) {
        let (w, b) = (id.0 as usize / 64, id.0 % 64);
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.len += usize::from(self.words[w] & (1 << b) == 0);
        self.words[w] |= 1 << b;
    }

    pub(super) fn remove(&mut self, id: OpId) {
        let (w, b) = (id.0 as usize / 64, id.0 % 64);
        if let Some(word) = self.words.get_mut(w) {
            self.len -= usize::from(*word & (1 << b) != 0);
            *word &= !(1 << b);
        }
    }

    /// How many ids are in the set.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The ids in the set, ascending.
    pub(super) fn iter(&self) -> impl Iterator<Item = OpId> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                Some(OpId(w as u32 * 64 + b))
            })
        })
    }

    /// Keeps only the ids for which `keep` holds.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(OpId) -> bool) {
        let gone: Vec<OpId> = self.iter().filter(|&id| !keep(id)).collect();
        for id in gone {
            self.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_keeps_id_order_and_forgets() {
        let mut d = Dense::default();
        d.insert(OpId(3), 'c');
        d.insert(OpId(0), 'a');
        d.insert(OpId(1), 'b');
        assert_eq!(d.values().collect::<String>(), "abc");
        d.retain(|id, _| id != OpId(1));
        assert_eq!(d.values().collect::<String>(), "ac");
        assert!(!d.contains_key(&OpId(1)) && d.contains_key(&OpId(3)));
        assert_eq!(d.get(&OpId(9)), None);
    }

    #[test]
    fn id_set_iterates_ascending_across_words() {
        let mut s = IdSet::default();
        for id in [130, 3, 64, 63, 0] {
            s.insert(OpId(id));
        }
        s.remove(OpId(63));
        assert_eq!(s.iter().map(|i| i.0).collect::<Vec<_>>(), [0, 3, 64, 130]);
        assert_eq!(s.len(), 4);
        s.insert(OpId(3));
        s.remove(OpId(63));
        assert_eq!(s.len(), 4);
        s.retain(|id| id.0 % 2 == 0);
        assert_eq!(s.iter().map(|i| i.0).collect::<Vec<_>>(), [0, 64, 130]);
        assert_eq!(s.len(), 3);
    }
}

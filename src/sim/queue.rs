//! A min-heap of timed events with a fully determined order.
//!
//! Two events at the same virtual time pop in the order they were pushed (a sequence number
//! breaks the tie), so a run never depends on heap internals.
//!
//! The heap holds only small keys (time, sequence, slot); the events themselves wait in a
//! slab of slots. Sifting moves 24-byte keys instead of whole events (a request or an intent
//! is several times that), and the slab, like the heap, keeps its memory across runs.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Millis;

/// Time and sequence number packed into one integer (time in the high half), so that
/// ordering two keys is one comparison.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    when: u128,
    slot: u32,
}

impl Key {
    fn new(at_ms: Millis, seq: u64, slot: u32) -> Self {
        Key {
            when: u128::from(at_ms) << 64 | u128::from(seq),
            slot,
        }
    }

    fn at_ms(self) -> Millis {
        (self.when >> 64) as Millis
    }

    fn seq(self) -> u64 {
        self.when as u64
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest, then the first pushed.
    /// (Time and sequence are unique together; the slot never decides.)
    fn cmp(&self, other: &Self) -> Ordering {
        other.when.cmp(&self.when)
    }
}

/// The discrete-event queue of one run.
pub struct EventQueue<E> {
    heap: BinaryHeap<Key>,
    slots: Vec<Option<E>>,
    free: Vec<u32>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `event` at virtual time `at_ms`.
    pub fn push(&mut self, at_ms: Millis, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.defer(at_ms, seq, event);
    }

    /// Removes the earliest event (first pushed among equals).
    pub fn pop(&mut self) -> Option<(Millis, E)> {
        self.pop_entry().map(|(at, _, e)| (at, e))
    }

    /// Removes the earliest event with its sequence number, so that it can be deferred.
    pub fn pop_entry(&mut self) -> Option<(Millis, u64, E)> {
        let key = self.heap.pop()?;
        let event = self.slots[key.slot as usize]
            .take()
            .expect("a queued key has its event");
        self.free.push(key.slot);
        Some((key.at_ms(), key.seq(), event))
    }

    /// Puts a popped event back at a later time, keeping its place among events of that time
    /// by its original sequence number (a paused component's events keep their order).
    pub fn defer(&mut self, at_ms: Millis, seq: u64, event: E) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(event);
                slot
            }
            None => {
                self.slots.push(Some(event));
                (self.slots.len() - 1) as u32
            }
        };
        self.heap.push(Key::new(at_ms, seq, slot));
    }

    /// Empties the queue and restarts the sequence, keeping the allocation for the next run.
    pub fn clear(&mut self) {
        self.heap.clear();
        self.slots.clear();
        self.free.clear();
        self.next_seq = 0;
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_push_order() {
        let mut q = EventQueue::default();
        q.push(5, "c");
        q.push(1, "a");
        q.push(5, "d");
        q.push(1, "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(1, "a"), (1, "b"), (5, "c"), (5, "d")]);
    }

    #[test]
    fn a_deferred_event_keeps_its_original_order() {
        let mut q = EventQueue::default();
        q.push(1, "early");
        q.push(5, "due at 5");
        let (_, seq, e) = q.pop_entry().unwrap();
        q.defer(5, seq, e);
        assert_eq!(q.pop(), Some((5, "early")));
        assert_eq!(q.pop(), Some((5, "due at 5")));
    }
}

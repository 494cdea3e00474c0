//! A min-heap of timed events with a fully determined order.
//!
//! Two events at the same virtual time pop in the order they were pushed (a sequence number
//! breaks the tie), so a run never depends on heap internals.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Millis;

struct Entry<E> {
    at_ms: Millis,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at_ms == other.at_ms && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest, then the first pushed.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at_ms, other.seq).cmp(&(self.at_ms, self.seq))
    }
}

/// The discrete-event queue of one run.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `event` at virtual time `at_ms`.
    pub fn push(&mut self, at_ms: Millis, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at_ms, seq, event });
    }

    /// Removes the earliest event (first pushed among equals).
    pub fn pop(&mut self) -> Option<(Millis, E)> {
        self.heap.pop().map(|e| (e.at_ms, e.event))
    }

    /// Removes the earliest event with its sequence number, so that it can be deferred.
    pub fn pop_entry(&mut self) -> Option<(Millis, u64, E)> {
        self.heap.pop().map(|e| (e.at_ms, e.seq, e.event))
    }

    /// Puts a popped event back at a later time, keeping its place among events of that time
    /// by its original sequence number (a paused component's events keep their order).
    pub fn defer(&mut self, at_ms: Millis, seq: u64, event: E) {
        self.heap.push(Entry { at_ms, seq, event });
    }

    /// Empties the queue and restarts the sequence, keeping the allocation for the next run.
    pub fn clear(&mut self) {
        self.heap.clear();
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

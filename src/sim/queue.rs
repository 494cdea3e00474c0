//! A min-heap of timed events with a fully determined order.
//!
//! Two events at the same virtual time pop in the order they were pushed (a sequence number
//! breaks the tie), so a run never depends on heap internals. Events held back by a pause
//! come back, at the pause's end, in the order they fell due and before anything due at
//! that very moment: a process that wakes finds what happened while it was frozen in the
//! order it happened.
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
    next_deferred: u64,
}

/// Sequence numbers of pushed events start here; deferred events count up from 0, so that
/// at one instant every deferred event comes before every pushed one.
const FIRST_PUSHED: u64 = 1 << 63;

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: FIRST_PUSHED,
            next_deferred: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `event` at virtual time `at_ms`.
    pub fn push(&mut self, at_ms: Millis, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(at_ms, seq, event);
    }

    /// Removes the earliest event (first pushed among equals).
    pub fn pop(&mut self) -> Option<(Millis, E)> {
        let key = self.heap.pop()?;
        let event = self.slots[key.slot as usize]
            .take()
            .expect("a queued key has its event");
        self.free.push(key.slot);
        Some((key.at_ms(), event))
    }

    /// Puts a popped event back at a later time `at_ms` (the end of a pause). Events are
    /// popped in the order they fall due, so deferring each as it is popped keeps that
    /// order among them; they all come before events pushed for `at_ms` itself.
    pub fn defer(&mut self, at_ms: Millis, event: E) {
        let seq = self.next_deferred;
        self.next_deferred += 1;
        self.insert(at_ms, seq, event);
    }

    fn insert(&mut self, at_ms: Millis, seq: u64, event: E) {
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
        self.next_seq = FIRST_PUSHED;
        self.next_deferred = 0;
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// The queued events in the order they would pop, each with its time and whether it is
    /// held (put back by [`EventQueue::defer`]: an event deferred later to the same time
    /// queues after it but before every pushed one). Read-only; it sorts a copy of the keys,
    /// so it is for fingerprints of the state, not for the event loop.
    pub fn in_pop_order(&self) -> impl Iterator<Item = (Millis, bool, &E)> {
        let mut keys: Vec<Key> = self.heap.iter().copied().collect();
        keys.sort_unstable_by_key(|k| k.when);
        keys.into_iter().map(move |k| {
            let held = (k.when as u64) < FIRST_PUSHED;
            let event = self.slots[k.slot as usize]
                .as_ref()
                .expect("a queued key has its event");
            (k.at_ms(), held, event)
        })
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
    fn deferred_events_come_back_in_the_order_they_fell_due() {
        let mut q = EventQueue::default();
        // A timer set first, due late; a reply that arrives early; something due when the
        // pause ends.
        q.push(60, "timer");
        q.push(20, "reply");
        q.push(100, "due at the end");
        let (at, e) = q.pop().unwrap();
        assert_eq!((at, e), (20, "reply"));
        q.defer(100, e);
        let (at, e) = q.pop().unwrap();
        assert_eq!((at, e), (60, "timer"));
        q.defer(100, e);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(100, "reply"), (100, "timer"), (100, "due at the end")]
        );
    }

    #[test]
    fn in_pop_order_lists_what_pop_would_return_and_marks_held_events() {
        let mut q = EventQueue::default();
        q.push(60, "timer");
        q.push(20, "reply");
        q.push(100, "due at the end");
        q.push(5, "first");
        let (at, e) = q.pop().unwrap();
        assert_eq!((at, e), (5, "first"));
        let (_, e) = q.pop().unwrap();
        q.defer(100, e);
        q.push(100, "pushed last");
        let listed: Vec<_> = q.in_pop_order().map(|(t, h, &e)| (t, h, e)).collect();
        assert_eq!(
            listed,
            vec![
                (60, false, "timer"),
                (100, true, "reply"),
                (100, false, "due at the end"),
                (100, false, "pushed last"),
            ]
        );
        let popped: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let listed: Vec<_> = listed.into_iter().map(|(t, _, e)| (t, e)).collect();
        assert_eq!(popped, listed);
    }
}

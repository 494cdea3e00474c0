//! A min-heap of timed events with a fully determined order.
//!
//! Two events at the same virtual time pop in the order they were pushed (a sequence number
//! breaks the tie), so a run never depends on heap internals. Events held back by a pause
//! come back, at the pause's end, in the order they fell due and before anything due at
//! that very moment: a process that wakes finds what happened while it was frozen in the
//! order it happened.
//!
//! Which of several events due at the same instant runs first can also be chosen: the queue
//! sets them aside ([`EventQueue::open_tie`]), the caller reads them and takes one
//! ([`EventQueue::close_tie`]), and the others go back in their places, keeping their order.
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
    /// The keys of an open tie, in pop order; empty between events.
    tie: Vec<Key>,
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
            tie: Vec::new(),
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
        debug_assert!(self.tie.is_empty(), "pop while a tie is open");
        let key = self.heap.pop()?;
        Some(self.take(key))
    }

    fn take(&mut self, key: Key) -> (Millis, E) {
        let event = self.slots[key.slot as usize]
            .take()
            .expect("a queued key has its event");
        self.free.push(key.slot);
        (key.at_ms(), event)
    }

    /// Sets aside every event due at the earliest time, in the order [`pop`](Self::pop)
    /// would return them, and returns how many there are (0 when the queue is empty). Read
    /// them with [`tie`](Self::tie), then take one with [`close_tie`](Self::close_tie).
    pub fn open_tie(&mut self) -> usize {
        debug_assert!(self.tie.is_empty(), "a tie is already open");
        let Some(first) = self.heap.pop() else {
            return 0;
        };
        let at = first.at_ms();
        self.tie.push(first);
        while self.heap.peek().is_some_and(|k| k.at_ms() == at) {
            let key = self.heap.pop().expect("peeked");
            self.tie.push(key);
        }
        self.tie.len()
    }

    /// Event `i` of the open tie (0 is the first queued), and when it is due.
    pub fn tie(&self, i: usize) -> (Millis, &E) {
        let key = self.tie[i];
        let event = self.slots[key.slot as usize]
            .as_ref()
            .expect("a tied key has its event");
        (key.at_ms(), event)
    }

    /// Removes event `i` of the open tie and puts the others back where they were: the
    /// order among them, and with everything else, is unchanged.
    pub fn close_tie(&mut self, i: usize) -> (Millis, E) {
        let key = self.tie.remove(i);
        for k in self.tie.drain(..) {
            self.heap.push(k);
        }
        self.take(key)
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
        self.tie.clear();
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// The queued events in the order they would pop, each with its time and whether it is
    /// held (put back by [`EventQueue::defer`]: an event deferred later to the same time
    /// queues after it but before every pushed one). Read-only; it sorts a copy of the keys,
    /// so it is for fingerprints of the state, not for the event loop.
    pub fn in_pop_order(&self) -> impl Iterator<Item = (Millis, bool, &E)> {
        debug_assert!(
            self.tie.is_empty(),
            "a tie is open: its events are off the heap"
        );
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
    fn a_tie_gives_any_of_the_events_due_first_and_keeps_the_others_in_order() {
        let mut q = EventQueue::default();
        q.push(5, "later");
        q.push(1, "a");
        q.push(1, "b");
        q.push(1, "c");
        assert_eq!(q.open_tie(), 3);
        assert_eq!(q.tie(0), (1, &"a"));
        assert_eq!(q.tie(2), (1, &"c"));
        assert_eq!(q.close_tie(1), (1, "b"));
        q.push(1, "pushed after");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(1, "a"), (1, "c"), (1, "pushed after"), (5, "later")]
        );
        // A single due event is a tie of one; an empty queue has none.
        q.push(9, "x");
        assert_eq!(q.open_tie(), 1);
        assert_eq!(q.close_tie(0), (9, "x"));
        assert_eq!(q.open_tie(), 0);
        assert!(q.is_empty());
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

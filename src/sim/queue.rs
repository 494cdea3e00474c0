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
//! A queued event can be cancelled through the [`Handle`] its push returned (a timer whose
//! reason is gone): it never pops, and [`EventQueue::len`] no longer counts it, so a run whose
//! only pending events are cancelled timers is over without popping them.
//!
//! The heap holds only 16-byte keys (time, sequence and slot packed in one integer, so that
//! ordering two keys is one comparison); the events themselves wait in a slab of slots.
//! Sifting moves keys instead of whole events, and the slab, like the heap, keeps its memory
//! across runs.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Millis;

/// Time, sequence number and slot packed into one integer: time in the high 64 bits, then
/// the sequence number in 32 bits, then the slot. Time and sequence are unique together, so
/// the slot never decides an order.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key(u128);

/// Sequence numbers of pushed events start here; deferred events count up from 0, so that
/// at one instant every deferred event comes before every pushed one. A run pushes at most a
/// few times [`crate::world::MAX_EVENTS`] events, far below 2³¹.
const FIRST_PUSHED: u32 = 1 << 31;

impl Key {
    fn new(at_ms: Millis, seq: u32, slot: u32) -> Self {
        Key(u128::from(at_ms) << 64 | u128::from(seq) << 32 | u128::from(slot))
    }

    fn at_ms(self) -> Millis {
        (self.0 >> 64) as Millis
    }

    fn seq(self) -> u32 {
        (self.0 >> 32) as u32
    }

    fn slot(self) -> usize {
        self.0 as u32 as usize
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest, then the first pushed.
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.cmp(&self.0)
    }
}

/// Names one queued event, for [`EventQueue::cancel`]. A handle outlives its event harmlessly:
/// once the event has popped or been cancelled, cancelling it again does nothing, even if its
/// slot holds another event by then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    slot: u32,
    generation: u32,
}

/// Where an event waits. `event` is `None` while the slot is free (it is then on the free
/// list) or once its event is cancelled (its key is still in the heap; the slot is freed when
/// that key comes up).
struct Slot<E> {
    generation: u32,
    event: Option<E>,
}

/// The discrete-event queue of one run.
pub struct EventQueue<E> {
    heap: BinaryHeap<Key>,
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
    next_seq: u32,
    next_deferred: u32,
    /// Queued events not cancelled.
    live: usize,
    /// The keys of an open tie, in pop order; empty between events.
    tie: Vec<Key>,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: FIRST_PUSHED,
            next_deferred: 0,
            live: 0,
            tie: Vec::new(),
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `event` at virtual time `at_ms`.
    pub fn push(&mut self, at_ms: Millis, event: E) -> Handle {
        let seq = self.next_seq;
        self.next_seq = seq
            .checked_add(1)
            .expect("fewer than 2^31 events pushed in a run");
        self.insert(at_ms, seq, event)
    }

    /// Removes the earliest event (first pushed among equals).
    pub fn pop(&mut self) -> Option<(Millis, E)> {
        debug_assert!(self.tie.is_empty(), "pop while a tie is open");
        loop {
            let key = self.heap.pop()?;
            if let Some(taken) = self.take(key) {
                return Some(taken);
            }
        }
    }

    /// Cancels the event `handle` names, if it is still queued: it will not pop. Returns
    /// whether it was.
    pub fn cancel(&mut self, handle: Handle) -> bool {
        let slot = &mut self.slots[handle.slot as usize];
        if slot.generation != handle.generation || slot.event.is_none() {
            return false;
        }
        slot.event = None;
        self.live -= 1;
        true
    }

    /// The event of `key`, which just left the heap, and its time; `None` if it was
    /// cancelled. Either way its slot is free again.
    fn take(&mut self, key: Key) -> Option<(Millis, E)> {
        let slot = &mut self.slots[key.slot()];
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(key.slot() as u32);
        let event = slot.event.take()?;
        self.live -= 1;
        Some((key.at_ms(), event))
    }

    /// Whether the event of `key` was cancelled.
    fn cancelled(&self, key: Key) -> bool {
        self.slots[key.slot()].event.is_none()
    }

    /// Sets aside every event due at the earliest time, in the order [`pop`](Self::pop)
    /// would return them, and returns how many there are (0 when the queue is empty). Read
    /// them with [`tie`](Self::tie), then take one with [`close_tie`](Self::close_tie).
    pub fn open_tie(&mut self) -> usize {
        debug_assert!(self.tie.is_empty(), "a tie is already open");
        let first = loop {
            let key = self.heap.pop();
            match key {
                None => return 0,
                Some(k) if self.cancelled(k) => {
                    self.take(k);
                }
                Some(k) => break k,
            }
        };
        let at = first.at_ms();
        self.tie.push(first);
        while let Some(&key) = self.heap.peek().filter(|k| k.at_ms() == at) {
            self.heap.pop();
            if self.cancelled(key) {
                self.take(key);
            } else {
                self.tie.push(key);
            }
        }
        self.tie.len()
    }

    /// Event `i` of the open tie (0 is the first queued), and when it is due.
    pub fn tie(&self, i: usize) -> (Millis, &E) {
        let key = self.tie[i];
        let event = self.slots[key.slot()]
            .event
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
        self.take(key).expect("a tied key has its event")
    }

    /// Puts a popped event back at a later time `at_ms` (the end of a pause). Events are
    /// popped in the order they fall due, so deferring each as it is popped keeps that
    /// order among them; they all come before events pushed for `at_ms` itself. The event
    /// gets a new handle.
    pub fn defer(&mut self, at_ms: Millis, event: E) -> Handle {
        let seq = self.next_deferred;
        self.next_deferred += 1;
        debug_assert!(self.next_deferred < FIRST_PUSHED);
        self.insert(at_ms, seq, event)
    }

    fn insert(&mut self, at_ms: Millis, seq: u32, event: E) -> Handle {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize].event = Some(event);
                slot
            }
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    event: Some(event),
                });
                (self.slots.len() - 1) as u32
            }
        };
        self.live += 1;
        self.heap.push(Key::new(at_ms, seq, slot));
        Handle {
            slot,
            generation: self.slots[slot as usize].generation,
        }
    }

    /// Empties the queue and restarts the sequence, keeping the allocation for the next run.
    pub fn clear(&mut self) {
        self.heap.clear();
        self.slots.clear();
        self.free.clear();
        self.next_seq = FIRST_PUSHED;
        self.next_deferred = 0;
        self.live = 0;
        self.tie.clear();
    }

    /// Queued events, cancelled ones not counted.
    pub fn len(&self) -> usize {
        self.live
    }

    /// The queued events in the order they would pop, each with its time and whether it is
    /// held (put back by [`EventQueue::defer`]: an event deferred later to the same time
    /// queues after it but before every pushed one). Cancelled events are not listed.
    /// Read-only; it sorts a copy of the keys, so it is for fingerprints of the state, not
    /// for the event loop.
    pub fn in_pop_order(&self) -> impl Iterator<Item = (Millis, bool, &E)> {
        debug_assert!(
            self.tie.is_empty(),
            "a tie is open: its events are off the heap"
        );
        let mut keys: Vec<Key> = self.heap.iter().copied().collect();
        keys.sort_unstable_by_key(|k| k.0);
        keys.into_iter().filter_map(move |k| {
            let held = k.seq() < FIRST_PUSHED;
            let event = self.slots[k.slot()].event.as_ref()?;
            Some((k.at_ms(), held, event))
        })
    }

    /// When the earliest queued event is due, cancelled ones included (so it may be earlier
    /// than the next to pop); `None` when nothing is queued.
    pub fn earliest_at(&self) -> Option<Millis> {
        debug_assert!(self.tie.is_empty(), "a tie is open");
        self.heap.peek().map(|k| k.at_ms())
    }

    /// No event is queued but cancelled ones.
    pub fn is_empty(&self) -> bool {
        self.live == 0
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

    #[test]
    fn a_cancelled_event_never_pops_and_is_not_counted() {
        let mut q = EventQueue::default();
        let a = q.push(1, "a");
        let b = q.push(2, "b");
        q.push(3, "c");
        assert_eq!(q.len(), 3);
        assert!(q.cancel(b));
        assert!(!q.cancel(b), "a second cancel does nothing");
        assert_eq!(q.len(), 2);
        let listed: Vec<_> = q.in_pop_order().map(|(t, _, &e)| (t, e)).collect();
        assert_eq!(listed, vec![(1, "a"), (3, "c")]);
        assert_eq!(q.pop(), Some((1, "a")));
        assert!(!q.cancel(a), "a popped event cannot be cancelled");
        // The slot of "a" is reused; its old handle does not reach the new event.
        let d = q.push(4, "d");
        assert!(!q.cancel(a));
        assert_eq!(q.pop(), Some((3, "c")));
        assert_eq!(q.len(), 1);
        assert!(q.cancel(d));
        assert!(q.is_empty());
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_tie_leaves_out_cancelled_events() {
        let mut q = EventQueue::default();
        let x = q.push(1, "x");
        q.push(1, "a");
        let y = q.push(1, "y");
        q.push(1, "b");
        q.push(2, "later");
        q.cancel(x);
        q.cancel(y);
        assert_eq!(q.open_tie(), 2);
        assert_eq!(q.tie(0), (1, &"a"));
        assert_eq!(q.tie(1), (1, &"b"));
        assert_eq!(q.close_tie(1), (1, "b"));
        assert_eq!(q.pop(), Some((1, "a")));
        let only_cancelled = q.push(3, "z");
        q.cancel(only_cancelled);
        assert_eq!(q.open_tie(), 1);
        assert_eq!(q.close_tie(0), (2, "later"));
        assert_eq!(q.open_tie(), 0);
    }
}

//! A priority queue of timed events with a fully determined order.
//!
//! Two events at the same virtual time pop in the order they were pushed (a sequence number
//! breaks the tie), so a run never depends on the queue's internals. Events held back by a
//! pause come back, at the pause's end, in the order they fell due and before anything due at
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
//! The order lives in 16-byte keys (time, sequence and slot packed in one integer, so that
//! ordering two keys is one comparison); the events themselves wait in a slab of slots, written
//! once when pushed and read once when popped. A run rarely has more than a few events queued,
//! so the keys sit in a short sorted array ([`Keys`]) and only a crowded queue pays for a heap.
//! The slab and the heap keep their memory across runs.

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

/// How many keys [`Keys`] holds in its sorted array; one more turns them into a heap.
const SMALL: usize = 16;

/// [`Keys::n`] once the keys are in the heap.
const LARGE: usize = usize::MAX;

/// The keys of the queued events, the earliest out first.
///
/// Up to [`SMALL`] keys sit in an array sorted latest first: a pop takes the last, and a
/// push moves up one place only the keys due before the new one (most pushes are for later
/// than most of what is queued). An insertion costs a move per earlier key, so a queue that
/// grows past [`SMALL`] keys turns into a binary heap, and stays one until
/// [`Keys::clear`]. Keys are unique, so the two pop the same keys in the same order.
struct Keys {
    /// How many keys `small` holds, or [`LARGE`] once they are in `heap`.
    n: usize,
    small: [Key; SMALL],
    heap: BinaryHeap<Key>,
}

impl Default for Keys {
    fn default() -> Self {
        Self {
            n: 0,
            small: [Key(0); SMALL],
            heap: BinaryHeap::new(),
        }
    }
}

impl Keys {
    #[inline]
    fn push(&mut self, key: Key) {
        let n = self.n;
        if n >= SMALL {
            return self.push_large(key);
        }
        let mut i = n;
        while i > 0 && self.small[i - 1].0 < key.0 {
            self.small[i] = self.small[i - 1];
            i -= 1;
        }
        self.small[i] = key;
        self.n = n + 1;
    }

    /// [`Keys::push`] into a full array (which becomes a heap) or into the heap; out of
    /// line, so that the common push stays short.
    #[cold]
    #[inline(never)]
    fn push_large(&mut self, key: Key) {
        if self.n != LARGE {
            self.heap.extend(self.small);
            self.n = LARGE;
        }
        self.heap.push(key);
    }

    /// Takes the earliest key.
    #[inline]
    fn pop(&mut self) -> Option<Key> {
        match self.n {
            0 => None,
            LARGE => self.pop_large(),
            n => {
                self.n = n - 1;
                Some(self.small[n - 1])
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn pop_large(&mut self) -> Option<Key> {
        self.heap.pop()
    }

    /// The earliest key.
    fn peek(&self) -> Option<Key> {
        match self.n {
            0 => None,
            LARGE => self.heap.peek().copied(),
            n => Some(self.small[n - 1]),
        }
    }

    /// The keys, earliest first.
    fn sorted(&self) -> Vec<Key> {
        if self.n == LARGE {
            let mut keys: Vec<Key> = self.heap.iter().copied().collect();
            keys.sort_unstable_by_key(|k| k.0);
            keys
        } else {
            self.small[..self.n].iter().rev().copied().collect()
        }
    }

    /// Empties the keys and goes back to the sorted array; the heap keeps its memory.
    fn clear(&mut self) {
        self.heap.clear();
        self.n = 0;
    }
}

/// Names one queued event, for [`EventQueue::cancel`]. A handle outlives its event harmlessly:
/// once the event has popped or been cancelled, cancelling it again does nothing, even if its
/// slot holds another event by then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    slot: u32,
    /// The sequence number of the push: unique in a run, so it tells the event from a later
    /// one in the same slot.
    seq: u32,
}

/// Where an event waits. `event` is `None` while the slot is free (it is then on the free
/// list) or once its event is cancelled (its key is still queued; the slot is freed when
/// that key comes up).
struct Slot<E> {
    /// The sequence number of the event the slot holds or last held.
    seq: u32,
    /// The next free slot while this one is free ([`NO_SLOT`] at the end of the list).
    next_free: u32,
    event: Option<E>,
}

/// The end of the free list.
const NO_SLOT: u32 = u32::MAX;

/// The discrete-event queue of one run.
pub struct EventQueue<E> {
    keys: Keys,
    slots: Vec<Slot<E>>,
    /// The free slots, last freed first (a pop followed by a push, the common pattern,
    /// reuses the slot the pop freed, still in cache).
    free: u32,
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
            keys: Keys::default(),
            slots: Vec::new(),
            free: NO_SLOT,
            next_seq: FIRST_PUSHED,
            next_deferred: 0,
            live: 0,
            tie: Vec::new(),
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `event` at virtual time `at_ms`.
    #[inline]
    pub fn push(&mut self, at_ms: Millis, event: E) -> Handle {
        let seq = self.next_seq;
        self.next_seq = seq
            .checked_add(1)
            .expect("fewer than 2^31 events pushed in a run");
        self.insert(at_ms, seq, event)
    }

    /// Removes the earliest event (first pushed among equals).
    #[inline]
    pub fn pop(&mut self) -> Option<(Millis, E)> {
        debug_assert!(self.tie.is_empty(), "pop while a tie is open");
        loop {
            let key = self.keys.pop()?;
            if let Some(taken) = self.take(key) {
                return Some(taken);
            }
        }
    }

    /// Cancels the event `handle` names, if it is still queued: it will not pop. Returns
    /// whether it was.
    pub fn cancel(&mut self, handle: Handle) -> bool {
        let slot = &mut self.slots[handle.slot as usize];
        if slot.seq != handle.seq || slot.event.is_none() {
            return false;
        }
        slot.event = None;
        self.live -= 1;
        true
    }

    /// The event of `key`, which just left the queue, and its time; `None` if it was
    /// cancelled. Either way its slot is free again.
    #[inline]
    fn take(&mut self, key: Key) -> Option<(Millis, E)> {
        let slot = &mut self.slots[key.slot()];
        slot.next_free = self.free;
        self.free = key.slot() as u32;
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
            let key = self.keys.pop();
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
        while let Some(key) = self.keys.peek().filter(|k| k.at_ms() == at) {
            self.keys.pop();
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
        // Latest first: each then goes in at the end of the sorted array, moving no key.
        for k in self.tie.drain(..).rev() {
            self.keys.push(k);
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

    #[inline]
    fn insert(&mut self, at_ms: Millis, seq: u32, event: E) -> Handle {
        if self.free == NO_SLOT {
            self.grow();
        }
        let slot = self.free;
        let s = &mut self.slots[slot as usize];
        self.free = s.next_free;
        s.seq = seq;
        s.event = Some(event);
        self.live += 1;
        self.keys.push(Key::new(at_ms, seq, slot));
        Handle { slot, seq }
    }

    /// Adds a free slot, for a push that finds none.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.free = u32::try_from(self.slots.len()).expect("fewer than 2^32 events queued");
        self.slots.push(Slot {
            seq: 0,
            next_free: NO_SLOT,
            event: None,
        });
    }

    /// Empties the queue and restarts the sequence, keeping the allocation for the next run.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.slots.clear();
        self.free = NO_SLOT;
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
    /// Read-only; it copies the keys, so it is for fingerprints of the state, not for the
    /// event loop.
    pub fn in_pop_order(&self) -> impl Iterator<Item = (Millis, bool, &E)> {
        debug_assert!(
            self.tie.is_empty(),
            "a tie is open: its events are out of the queue"
        );
        self.keys.sorted().into_iter().filter_map(move |k| {
            let held = k.seq() < FIRST_PUSHED;
            let event = self.slots[k.slot()].event.as_ref()?;
            Some((k.at_ms(), held, event))
        })
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

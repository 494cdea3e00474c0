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
//! Most events are hops of a message between components, due at the present instant with
//! nothing else due by then (the agent taking up an intent, a call's delivery to its worker,
//! the executor's report). With the lane on ([`EventQueue::use_lane`]), [`EventQueue::schedule`]
//! puts such an event in a FIFO beside the keys, which [`EventQueue::pop`] empties first: the
//! order is exactly the keys' (a pushed event pops after everything due by its time), without
//! a key or a slot. The lane is for runs whose order is neither chosen nor observed: a tie
//! and the listings of the queued events see only the keys, so they require it empty.
//!
//! The order lives in 16-byte keys (time, sequence and slot packed in one integer, so that
//! ordering two keys is one comparison); the events themselves wait in a slab of slots, written
//! once when pushed and read once when popped. A run rarely has more than a few events queued,
//! so the earliest 64 keys sit in a sorted array, and only keys later than all of those wait
//! in a heap. The slab and the heap keep their memory across runs. Push, pop and what they
//! call are `#[inline(always)]`: left to the compiler's heuristics, whether they were inlined
//! changed with unrelated edits of this file (0.4 % of the instructions per seed of
//! `ticket_lost_response` at the last change).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

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

/// How many of the earliest keys [`Keys`] holds in its sorted array. The bundled models
/// rarely queue more than 12 keys (`ticket_chaos` peaks at 22). Measured in instructions per
/// seed: with 16, `ticket_chaos` at 12 or 20 intents cost 10 % more than with 64; with 128
/// or 256, queues of hundreds of keys paid more for moving keys than the heap costs.
const SMALL: usize = 64;

/// The keys of the queued events, the earliest out first.
///
/// The earliest keys, up to [`SMALL`], sit in an array sorted latest first: a pop takes the
/// last, and a push moves up one place only the keys due before the new one. Keys later than
/// all of those wait in a binary heap: a key goes there when it is later than the heap's
/// earliest, or when the array is full and it is the latest (a full array hands its latest
/// key over to make room for an earlier one). Every key of the array is due before every key
/// of the heap, so a pop takes from the array while it has keys, and from the heap only when
/// it is empty. A short queue never touches the heap; a long one (hundreds of pending
/// timeouts) sends through it only the keys that are later than the heap's earliest, while
/// the stream of events due soon stays in the array. Keys are unique, so the order is the
/// same wherever they are kept.
#[derive(Clone)]
struct Keys {
    /// How many keys `small` holds.
    n: usize,
    /// [`SMALL`] while the heap is empty, 0 otherwise: the one comparison by which
    /// [`Keys::push`] knows it can insert into the array without looking at the heap.
    limit: usize,
    small: [Key; SMALL],
    /// The keys later than every key of `small`.
    heap: BinaryHeap<Key>,
}

impl Default for Keys {
    fn default() -> Self {
        Self {
            n: 0,
            limit: SMALL,
            small: [Key(0); SMALL],
            heap: BinaryHeap::new(),
        }
    }
}

impl Keys {
    /// Queues `key`.
    #[inline(always)]
    fn push(&mut self, key: Key) {
        let n = self.n;
        if n >= self.limit {
            return self.push_large(key);
        }
        self.insert_small(n, key);
    }

    /// Inserts `key` into the array, which holds `n` < [`SMALL`] keys, all of them due before
    /// every key of the heap, as `key` is.
    #[inline(always)]
    fn insert_small(&mut self, n: usize, key: Key) {
        // One bounds check here, none in the loop.
        let s = &mut self.small[..=n];
        let mut i = n;
        while i > 0 && s[i - 1].0 < key.0 {
            s[i] = s[i - 1];
            i -= 1;
        }
        s[i] = key;
        self.n = n + 1;
    }

    /// [`Keys::push`] into a full array or while the heap holds keys; out of line, so that
    /// the common push stays short.
    #[cold]
    #[inline(never)]
    fn push_large(&mut self, key: Key) {
        let later_than_heap = self.heap.peek().is_some_and(|min| key.0 > min.0);
        if later_than_heap || (self.n == SMALL && key.0 > self.small[0].0) {
            self.heap.push(key);
        } else if self.n == SMALL {
            // The array's latest key goes to the heap (it is due before all the heap holds);
            // the keys due after `key` move down one place, and `key` takes the place freed.
            self.heap.push(self.small[0]);
            let mut i = 0;
            while i + 1 < SMALL && self.small[i + 1].0 > key.0 {
                self.small[i] = self.small[i + 1];
                i += 1;
            }
            self.small[i] = key;
        } else {
            self.insert_small(self.n, key);
        }
        self.limit = 0;
    }

    /// Takes the earliest key.
    #[inline(always)]
    fn pop(&mut self) -> Option<Key> {
        // One comparison for both "the array is empty" (n - 1 wraps) and the bounds.
        let i = self.n.wrapping_sub(1);
        if i < SMALL {
            self.n = i;
            return Some(self.small[i]);
        }
        self.pop_large()
    }

    /// [`Keys::pop`] with an empty array: the heap's earliest, if any.
    #[cold]
    #[inline(never)]
    fn pop_large(&mut self) -> Option<Key> {
        let key = self.heap.pop();
        if self.heap.is_empty() {
            self.limit = SMALL;
        }
        key
    }

    /// The earliest key.
    fn peek(&self) -> Option<Key> {
        match self.n {
            0 => self.heap.peek().copied(),
            n => Some(self.small[n - 1]),
        }
    }

    /// The keys, earliest first: the array's, read in place, then the heap's, copied and
    /// sorted.
    fn sorted(&self) -> impl Iterator<Item = Key> + '_ {
        let mut large: Vec<Key> = self.heap.iter().copied().collect();
        large.sort_unstable_by_key(|k| k.0);
        self.small[..self.n].iter().rev().copied().chain(large)
    }

    /// Empties the keys; the heap keeps its memory.
    fn clear(&mut self) {
        self.heap.clear();
        self.n = 0;
        self.limit = SMALL;
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
#[derive(Clone)]
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
#[derive(Clone)]
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
    /// Events due at `now`, before every key (see the module's documentation).
    lane: VecDeque<E>,
    /// Whether [`EventQueue::schedule`] may use the lane.
    lane_on: bool,
    /// When the event taken last was due (0 before the first): the present instant.
    now: Millis,
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
            lane: VecDeque::new(),
            lane_on: false,
            now: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `event` at virtual time `at_ms`.
    #[inline(always)]
    pub fn push(&mut self, at_ms: Millis, event: E) -> Handle {
        let seq = self.next_seq;
        self.next_seq = seq
            .checked_add(1)
            .expect("fewer than 2^31 events pushed in a run");
        self.insert(at_ms, seq, event)
    }

    /// Schedules `event` at `at_ms` for good (it has no handle: nothing cancels it): on the
    /// lane when the lane is on, `at_ms` is the present instant and no key is due by then;
    /// as a key otherwise. Either way it pops where [`push`](Self::push) would have put it.
    #[inline(always)]
    pub fn schedule(&mut self, at_ms: Millis, event: E) {
        debug_assert!(at_ms >= self.now, "an event scheduled in the past");
        if self.lane_on && at_ms == self.now && self.keys.peek().is_none_or(|k| k.at_ms() > at_ms) {
            self.lane.push_back(event);
        } else {
            self.push(at_ms, event);
        }
    }

    /// Turns the lane on or off for the events scheduled from now on. Off, every event is a
    /// key, as a search that orders ties or looks at the queue needs; the lane must be empty.
    pub fn use_lane(&mut self, on: bool) {
        debug_assert!(self.lane.is_empty(), "the lane still holds events");
        self.lane_on = on;
    }

    /// Removes the earliest event (first pushed among equals, the lane's first).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Millis, E)> {
        debug_assert!(self.tie.is_empty(), "pop while a tie is open");
        if let Some(event) = self.lane.pop_front() {
            return Some((self.now, event));
        }
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
    #[inline(always)]
    fn take(&mut self, key: Key) -> Option<(Millis, E)> {
        let slot = &mut self.slots[key.slot()];
        slot.next_free = self.free;
        self.free = key.slot() as u32;
        let event = slot.event.take()?;
        self.live -= 1;
        self.now = key.at_ms();
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
        debug_assert!(self.lane.is_empty(), "a tie with events on the lane");
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

    /// The push number of event `i` of the open tie: it names the event for as long as
    /// it waits (a deferred event gets a new one).
    pub fn tie_id(&self, i: usize) -> u32 {
        self.tie[i].seq()
    }

    /// Removes event `i` of the open tie and puts the others back where they were: the
    /// order among them, and with everything else, is unchanged.
    pub fn close_tie(&mut self, i: usize) -> (Millis, E) {
        let key = self.tie[i];
        // Latest first: each then goes in at the end of the sorted array, moving no key.
        for (j, &k) in self.tie.iter().enumerate().rev() {
            if j != i {
                self.keys.push(k);
            }
        }
        self.tie.clear();
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

    #[inline(always)]
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
        self.lane.clear();
        self.now = 0;
    }

    /// Queued events, cancelled ones not counted.
    pub fn len(&self) -> usize {
        self.live + self.lane.len()
    }

    /// The queued events in the order they would pop, each with its time and whether it is
    /// held (put back by [`EventQueue::defer`]: an event deferred later to the same time
    /// queues after it but before every pushed one). Cancelled events are not listed.
    /// Read-only; past the small array it copies and sorts the keys, so it is for
    /// fingerprints of the state, not for the event loop.
    pub fn in_pop_order(&self) -> impl Iterator<Item = (Millis, bool, &E)> {
        debug_assert!(
            self.tie.is_empty() && self.lane.is_empty(),
            "a tie is open, or the lane holds events: they are out of the keys"
        );
        self.keys.sorted().filter_map(move |k| {
            let held = k.seq() < FIRST_PUSHED;
            let event = self.slots[k.slot()].event.as_ref()?;
            Some((k.at_ms(), held, event))
        })
    }

    /// The position in pop order (cancelled events not counted) of each queued event named
    /// by `ids` ([`EventQueue::tie_id`]), for those still queued, in pop order. Read-only
    /// and not for the event loop, like [`EventQueue::in_pop_order`].
    pub fn positions_of(&self, ids: &[u32]) -> Vec<usize> {
        debug_assert!(self.tie.is_empty() && self.lane.is_empty(), "a tie is open");
        self.keys
            .sorted()
            .filter(|k| self.slots[k.slot()].event.is_some())
            .enumerate()
            .filter(|(_, k)| ids.contains(&k.seq()))
            .map(|(i, _)| i)
            .collect()
    }

    /// No event is queued but cancelled ones.
    pub fn is_empty(&self) -> bool {
        self.live == 0 && self.lane.is_empty()
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

    /// Pushes `n` events at `at_ms` each, numbered from `first`.
    fn push_all(q: &mut EventQueue<u32>, at_ms: Millis, first: u32, n: u32) -> Vec<Handle> {
        (first..first + n).map(|e| q.push(at_ms, e)).collect()
    }

    #[test]
    fn a_queue_past_the_array_pops_in_the_same_order_and_starts_empty_again() {
        let mut q = EventQueue::default();
        for round in 0..2 {
            // Times in a scrambled order, two events per time: past SMALL keys the heap fills.
            let times: Vec<Millis> = (0..SMALL as u64).map(|i| (i * 7) % SMALL as u64).collect();
            for (e, &t) in times.iter().enumerate() {
                q.push(t, e as u32);
                q.push(t, 1000 + e as u32);
            }
            assert!(!q.keys.heap.is_empty(), "round {round}");
            assert_eq!(q.len(), 2 * SMALL);
            let listed: Vec<_> = q.in_pop_order().map(|(t, _, &e)| (t, e)).collect();
            let popped: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
            let mut expected: Vec<_> = times
                .iter()
                .enumerate()
                .flat_map(|(e, &t)| [(t, e as u32), (t, 1000 + e as u32)])
                .collect();
            expected.sort_by_key(|&(t, _)| t);
            assert_eq!(popped, expected, "round {round}");
            assert_eq!(listed, expected, "round {round}");
            assert!(q.is_empty());
            q.clear();
            assert_eq!(
                (q.keys.n, q.keys.limit),
                (0, SMALL),
                "a new run starts empty"
            );
        }
    }

    #[test]
    fn a_full_array_hands_its_latest_key_to_the_heap() {
        let mut q = EventQueue::default();
        push_all(&mut q, 10, 0, SMALL as u32);
        assert_eq!(q.keys.n, SMALL);
        assert!(q.keys.heap.is_empty());
        q.push(1, 999);
        assert_eq!(q.keys.heap.len(), 1, "the array's latest went to the heap");
        assert_eq!(q.pop(), Some((1, 999)));
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest, (0..SMALL as u32).map(|e| (10, e)).collect::<Vec<_>>());
    }

    #[test]
    fn events_due_soon_stay_out_of_a_heap_of_later_timers() {
        let mut q = EventQueue::default();
        // More pending timeouts than the array holds, then a stream of events due soon. The
        // first two push two timeouts out of the array to make room; after that the stream
        // stays in the array.
        push_all(&mut q, 1_000_000, 0, 2 * SMALL as u32);
        assert_eq!(q.keys.heap.len(), SMALL);
        for now in 0..1000 {
            q.push(now + 5, 10_000 + now as u32);
            q.push(now + 7, 20_000 + now as u32);
            assert_eq!(q.pop(), Some((now + 5, 10_000 + now as u32)));
            assert_eq!(q.pop(), Some((now + 7, 20_000 + now as u32)));
            assert_eq!(q.keys.heap.len(), SMALL + 2, "at {now}");
        }
        let timers: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            timers,
            (0..2 * SMALL as u32)
                .map(|e| (1_000_000, e))
                .collect::<Vec<_>>()
        );
        assert_eq!(
            q.keys.limit, SMALL,
            "an empty heap lets pushes take the short path again"
        );
    }

    #[test]
    fn events_due_together_keep_their_push_order_across_the_array_and_the_heap() {
        let mut q = EventQueue::default();
        // Half an array due at 5, one later, as many again at 5 (the array overflows and the
        // latest keys go to the heap), one deferred to 5 (it comes first).
        let half = SMALL as u32 / 2 + 1;
        push_all(&mut q, 5, 0, half);
        q.push(9, 1000);
        push_all(&mut q, 5, half, half);
        assert!(!q.keys.heap.is_empty());
        q.defer(5, 999);
        let tied = 2 * half as usize + 1;
        assert_eq!(q.open_tie(), tied);
        assert_eq!(q.tie(0), (5, &999));
        assert_eq!(q.tie(tied - 1), (5, &(2 * half - 1)));
        assert_eq!(q.close_tie(half as usize + 1), (5, half));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        let mut expected = vec![999];
        expected.extend((0..2 * half).filter(|&e| e != half));
        expected.push(1000);
        assert_eq!(order, expected);
    }

    #[test]
    fn a_cancelled_earliest_event_is_skipped_in_the_array_and_in_the_heap() {
        for n in [3, SMALL as u32 + 4] {
            let mut q = EventQueue::default();
            push_all(&mut q, 10, 0, n);
            let first = q.push(1, 1000);
            let second = q.push(2, 1001);
            assert!(q.cancel(first));
            assert!(q.cancel(second));
            assert_eq!(q.len(), n as usize);
            assert_eq!(q.pop(), Some((10, 0)), "{n} queued");
            // The same at the head of a tie: the cancelled key is dropped, not tied.
            let third = q.push(3, 1002);
            q.push(3, 1003);
            assert!(q.cancel(third));
            assert_eq!(q.open_tie(), 1, "{n} queued");
            assert_eq!(q.close_tie(0), (3, 1003));
            assert!(!q.cancel(third), "its slot is free again");
            assert_eq!(q.len(), n as usize - 1);
        }
    }

    /// A queue as the module documents it: a list searched for the earliest event each time.
    #[derive(Default)]
    struct Reference {
        /// (time, deferred first, order of push or defer, event id, cancelled)
        events: Vec<(Millis, bool, u64, u32, bool)>,
        order: u64,
    }

    impl Reference {
        fn add(&mut self, at_ms: Millis, deferred: bool, id: u32) {
            self.order += 1;
            self.events.push((at_ms, deferred, self.order, id, false));
        }

        fn sorted(&self) -> Vec<(Millis, bool, u32)> {
            let mut live: Vec<_> = self.events.iter().filter(|e| !e.4).collect();
            live.sort_by_key(|&&(t, deferred, order, _, _)| (t, !deferred, order));
            live.into_iter()
                .map(|&(t, d, _, id, _)| (t, d, id))
                .collect()
        }

        fn remove(&mut self, id: u32) {
            self.events.retain(|e| e.3 != id);
        }

        fn cancel(&mut self, id: u32) -> bool {
            match self.events.iter_mut().find(|e| e.3 == id && !e.4) {
                Some(e) => {
                    e.4 = true;
                    true
                }
                None => false,
            }
        }
    }

    /// Random pushes, defers, pops, cancels (of live and of stale handles) and ties, with the
    /// queue growing past the small array and shrinking back many times: every result is
    /// what the reference gives.
    #[test]
    fn random_operations_match_a_reference_queue_with_keys_in_the_array_and_the_heap() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % n
        };
        let mut q = EventQueue::default();
        let mut reference = Reference::default();
        let mut handles: Vec<(Handle, u32)> = Vec::new();
        let (mut now, mut id, mut large_seen) = (0, 0, 0);
        for step in 0..40_000 {
            // Phases: grow past the array (mostly pushes), then drain (mostly pops and ties).
            let (push, cancel, tie) = if (step / 400) % 2 == 0 {
                (60, 70, 85)
            } else {
                (10, 25, 60)
            };
            let op = next(100);
            if op < push && q.len() < SMALL + 40 {
                id += 1;
                let at = now + next(6) * next(3);
                let deferred = next(5) == 0;
                let h = if deferred {
                    q.defer(at, id)
                } else {
                    q.push(at, id)
                };
                reference.add(at, deferred, id);
                handles.push((h, id));
            } else if (push..cancel).contains(&op) && !handles.is_empty() {
                // Mostly recent handles (often still queued), some long stale.
                let recent = handles.len().min(100) as u64;
                let (h, hid) = handles[handles.len() - 1 - next(recent) as usize];
                assert_eq!(q.cancel(h), reference.cancel(hid), "step {step}");
            } else if (cancel..tie).contains(&op) {
                let expected = reference.sorted();
                let n = q.open_tie();
                let tied: Vec<_> = expected
                    .iter()
                    .take_while(|e| e.0 == expected[0].0)
                    .collect();
                assert_eq!(n, tied.len(), "step {step}");
                if n > 0 {
                    for (i, e) in tied.iter().enumerate() {
                        assert_eq!(q.tie(i), (e.0, &e.2), "step {step}");
                    }
                    let pick = next(n as u64) as usize;
                    assert_eq!(q.close_tie(pick), (tied[pick].0, tied[pick].2));
                    now = tied[pick].0;
                    reference.remove(tied[pick].2);
                }
            } else {
                let expected = reference.sorted().first().map(|e| (e.0, e.2));
                assert_eq!(q.pop(), expected, "step {step}");
                if let Some((t, e)) = expected {
                    now = t;
                    reference.remove(e);
                }
            }
            // Now and then a new run, on the same queue.
            if next(1000) == 0 {
                q.clear();
                reference = Reference::default();
                handles.clear();
                now = 0;
            }
            large_seen += usize::from(!q.keys.heap.is_empty());
            let listed: Vec<_> = q.in_pop_order().map(|(t, d, &e)| (t, d, e)).collect();
            assert_eq!(listed, reference.sorted(), "step {step}");
            assert_eq!(q.len(), listed.len(), "step {step}");
            assert_eq!(q.is_empty(), listed.is_empty(), "step {step}");
        }
        assert!(large_seen > 1000, "the heap was used: {large_seen} steps");
    }
}

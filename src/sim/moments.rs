//! How a fingerprint hashes the moments a world keeps: exactly, or only as far as they can
//! still change the rest of the run and its verdict ([`Moments`]).
//!
//! A search cuts a run at a state it has explored before. Two states reached at the same
//! moment by histories that differ only in *when* things happened (a reply 5 or 80 ms after
//! its request) are the same state for every future, if no past moment they keep is read
//! again in a way that tells them apart. Most are not: when the user was told something,
//! when a claim was made or an effect committed are read only by metrics; a key record's
//! first request only against a retention the provider may not have; a settled
//! operation's times by nothing. Hashing such moments exactly makes the search tell apart
//! states that have the same futures, and the timing menus multiply them.
//!
//! The rules, each sound on its own (the clock itself stays in the fingerprint, exactly):
//! - an *observer* moment (a claim's, a told-at, a first unknown moment, an intent's
//!   arrival, an effect's) is hashed only if a property checked reads times
//!   (`resolved_within`, or a design's own property, which may read anything);
//! - a moment compared only with the clock, as `now >= t + c` for each constant `c` of its
//!   reach, is hashed exactly while one of those comparisons can still change between now
//!   and the horizon; otherwise only what each comparison already says (true for ever, or
//!   false until the end of the run), which is all any future reads of it;
//! - the journal's moments, for a design that declares how it reads them
//!   ([`crate::design::Design::reads_settled_times`] false): a settled operation's times
//!   are left out, and a lease's expiry is compared only with the clock.
//!
//! The context is set for the length of one fingerprint (a thread-local, because the
//! moments sit deep in derived hashes that take no argument); outside one, every moment is
//! hashed exactly.

use std::cell::Cell;
use std::hash::Hasher;

use crate::sim::Millis;

/// How one fingerprint hashes moments; `None` (the default): exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moments {
    /// The world's clock when the fingerprint is taken.
    pub now: Millis,
    /// The model's horizon: no comparison is made after it.
    pub horizon: Millis,
    /// Hash the observer's moments: a property checked reads times.
    pub observer: bool,
    /// Hash the journal's moments exactly: the design may read them in any way.
    pub journal: bool,
    /// The constants the provider compares its key records' moments with (the retention's
    /// floor and maximum, the in-progress expiry), those it has; `0` for none.
    pub key_reach: [Millis; 3],
}

thread_local! {
    static CURRENT: Cell<Option<Moments>> = const { Cell::new(None) };
}

/// Runs `f` with `moments` as the context of the moments hashed in it, then restores the
/// context before.
pub(crate) fn with<R>(moments: Option<Moments>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Moments>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(moments)));
    f()
}

fn current() -> Option<Moments> {
    CURRENT.with(Cell::get)
}

/// Hashes a moment only an observer reads.
pub(crate) fn observed<H: Hasher + ?Sized>(h: &mut H, t: Millis) {
    if current().is_none_or(|m| m.observer) {
        h.write_u64(t);
    }
}

/// [`observed`], for an optional moment: whether there is one is always hashed.
pub(crate) fn observed_opt<H: Hasher + ?Sized>(h: &mut H, t: Option<Millis>) {
    h.write_u8(u8::from(t.is_some()));
    if let Some(t) = t {
        observed(h, t);
    }
}

/// Hashes a moment `t` that is only ever compared with the clock, as `now >= t + c` for each
/// `c` of `reach` (an empty reach: never compared).
pub(crate) fn against<H: Hasher + ?Sized>(h: &mut H, t: Millis, reach: &[Millis]) {
    let Some(m) = current() else {
        h.write_u64(t);
        return;
    };
    let live = reach.iter().any(|&c| {
        let due = t.saturating_add(c);
        m.now < due && due <= m.horizon
    });
    if live {
        h.write_u8(2);
        h.write_u64(t);
        return;
    }
    // Every comparison is decided for the rest of the run: what each says is all there is.
    h.write_u8(3);
    for &c in reach {
        h.write_u8(u8::from(t.saturating_add(c) <= m.now));
    }
}

/// [`against`], for an optional moment: whether there is one is always hashed.
pub(crate) fn against_opt<H: Hasher + ?Sized>(h: &mut H, t: Option<Millis>, reach: &[Millis]) {
    h.write_u8(u8::from(t.is_some()));
    if let Some(t) = t {
        against(h, t, reach);
    }
}

/// Hashes a moment of the provider's key records and requests: [`against`] the constants
/// of [`Moments::key_reach`] the provider has. A retention with a maximum counts as every
/// constant between its floor and its maximum: the moment a record is pruned is drawn in
/// that span and added to the moment, so the moment is exact while any of the span can
/// still fall between now and the horizon.
pub(crate) fn of_keys<H: Hasher + ?Sized>(h: &mut H, t: Millis) {
    let Some(m) = current() else {
        h.write_u64(t);
        return;
    };
    let [floor, max, expiry] = m.key_reach;
    if floor > 0 && max > floor {
        let (from, to) = (t.saturating_add(floor), t.saturating_add(max));
        if from <= m.horizon && to > m.now {
            h.write_u8(2);
            h.write_u64(t);
            return;
        }
    }
    let n = m.key_reach.iter().filter(|&&c| c > 0).count();
    let mut nonzero = [0; 3];
    for (i, c) in [floor, max, expiry]
        .into_iter()
        .filter(|&c| c > 0)
        .enumerate()
    {
        nonzero[i] = c;
    }
    against(h, t, &nonzero[..n]);
}

/// [`of_keys`], for an optional moment: whether there is one is always hashed.
pub(crate) fn of_keys_opt<H: Hasher + ?Sized>(h: &mut H, t: Option<Millis>) {
    h.write_u8(u8::from(t.is_some()));
    if let Some(t) = t {
        of_keys(h, t);
    }
}

/// Whether the journal's moments are hashed exactly.
pub(crate) fn journal_exact() -> bool {
    current().is_none_or(|m| m.journal)
}

/// Hashes a lease's expiry `until`: compared only as `now < until` by a design that
/// declares how it reads the journal ([`against`] with a reach of 0), else exactly.
pub(crate) fn lease_until<H: Hasher + ?Sized>(h: &mut H, until: Millis) {
    if journal_exact() {
        h.write_u64(until);
    } else {
        against(h, until, &[0]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::hash::StableHasher;

    fn hash(moments: Option<Moments>, f: impl FnOnce(&mut StableHasher)) -> u64 {
        with(moments, || {
            let mut h = StableHasher::new();
            f(&mut h);
            h.finish()
        })
    }

    const AT_1000: Moments = Moments {
        now: 1_000,
        horizon: 600_000,
        observer: false,
        journal: true,
        key_reach: [0; 3],
    };

    #[test]
    fn exact_outside_a_context_and_abstract_inside() {
        let a = |t| hash(None, |h| observed(h, t));
        assert_ne!(a(5), a(6));
        let b = |t| hash(Some(AT_1000), |h| observed(h, t));
        assert_eq!(b(5), b(6));
        let c = |t| {
            hash(
                Some(Moments {
                    observer: true,
                    ..AT_1000
                }),
                |h| observed(h, t),
            )
        };
        assert_ne!(c(5), c(6));
        // The context is gone after `with`.
        assert_ne!(a(5), a(6));
    }

    #[test]
    fn a_moment_is_exact_while_a_comparison_can_still_change() {
        let at = |t, reach: &[Millis]| hash(Some(AT_1000), |h| against(h, t, reach));
        // 900 + 500 = 1 400 is still ahead: exact.
        assert_ne!(at(900, &[500]), at(901, &[500]));
        // 400 + 500 and 450 + 500 are both past: alike.
        assert_eq!(at(400, &[500]), at(450, &[500]));
        // Past against future: different.
        assert_ne!(at(400, &[500]), at(900, &[500]));
        // Beyond the horizon for every constant: alike, and unlike a past one.
        assert_eq!(at(900, &[700_000]), at(950, &[700_000]));
        assert_ne!(at(900, &[700_000]), at(900, &[500]));
        // Never compared: alike.
        assert_eq!(at(1, &[]), at(999, &[]));
        // Exactly at the horizon still counts (events at the horizon run).
        assert_ne!(at(900, &[599_100]), at(901, &[599_100]));
    }

    #[test]
    fn a_retention_span_keeps_a_key_moment_while_a_pruning_moment_can_land_ahead() {
        // Floor 500, maximum 700 000: the floor has passed for both, the maximum is beyond
        // the horizon for both, but a pruning moment drawn in between can land anywhere
        // from now to the horizon: exact.
        let spanned = Moments {
            key_reach: [500, 700_000, 0],
            ..AT_1000
        };
        let at = |m, t| hash(Some(m), |h| of_keys(h, t));
        assert_ne!(at(spanned, 100), at(spanned, 140));
        // With the floor only, both are past it for good: alike.
        let floor = Moments {
            key_reach: [500, 0, 0],
            ..AT_1000
        };
        assert_eq!(at(floor, 100), at(floor, 140));
        // The whole span past: alike.
        let short = Moments {
            key_reach: [500, 600, 0],
            ..AT_1000
        };
        assert_eq!(at(short, 100), at(short, 140));
    }
}

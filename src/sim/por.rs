//! What a search needs to know about events to explore one order of independent ones
//! (partial-order reduction): which parts of the world each event reads or writes.
//!
//! The world is made of parts that own their state: the workload, the agent, the
//! executors (every worker's memory, the journal they share, the transport's records of
//! their sends and the ids they mint), and the provider (its key store, resources, jobs,
//! and the ledger of effects it commits). An event is handled by the part it is for, and a
//! part reaches another only by queueing an event for it. Two events whose parts are
//! disjoint therefore commute: handled in either order they leave the same state, each
//! makes the same choices, and neither enables, disables or cancels the other. That is the
//! independence relation a sleep set needs ([`crate::explore::search`]); each part says
//! which parts its events touch where it is defined, and a design's executors declare
//! theirs ([`crate::design::Design::parts`]).

use super::Millis;

/// A set of the world's parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parts(u8);

impl Parts {
    pub const NONE: Parts = Parts(0);
    /// The arrivals of intents: the workload's next intent and when it comes.
    pub const WORKLOAD: Parts = Parts(1);
    /// The agent: every intent's progress, its calls and their ids, what the user was told.
    pub const AGENT: Parts = Parts(1 << 1);
    /// The executors: every worker's memory and incarnation, the journal, the records of
    /// sends and attempts, the ids executors mint, the claims they make, the crash count.
    pub const EXECUTORS: Parts = Parts(1 << 2);
    /// The provider: key records, resources, jobs, and the ledger of committed effects.
    pub const PROVIDER: Parts = Parts(1 << 3);
    /// Everything: what an event of a part that declares nothing touches.
    pub const ALL: Parts = Parts(0b1111);

    pub const fn union(self, other: Parts) -> Parts {
        Parts(self.0 | other.0)
    }

    /// No part in common: events touching `self` and `other` commute.
    pub const fn disjoint(self, other: Parts) -> bool {
        self.0 & other.0 == 0
    }
}

/// One of the events due at the same instant, as a search sees it: an identity that
/// stays the same while the event waits (its push number in the run), when it is due,
/// and the parts it touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TieEvent {
    pub id: u32,
    pub at_ms: Millis,
    pub parts: Parts,
    /// Events of the same non-zero class are interchangeable (symmetry): taking one or
    /// another first leads to states that differ only in the names of things nothing
    /// else refers to yet (two identical intents arriving together, taken up in either
    /// order). 0: no twin.
    pub class: u32,
    /// Within a part whose state is a collection of independent entries (the provider's
    /// key records and resources), the entries the event reads or writes, as non-zero
    /// names; `[0, 0]` for the whole part. Two events of such a part with entries and none
    /// in common commute, up to the names the part hands out in the order of its events
    /// (resource ids, job numbers): states alike but for those names have the same futures
    /// up to the names, and no property depends on a name beyond its identity.
    pub entities: [u64; 2],
}

impl TieEvent {
    /// Handled in either order, `self` and `other` give the same state.
    pub fn independent(&self, other: &TieEvent) -> bool {
        if self.id == other.id {
            return false;
        }
        if self.parts.disjoint(other.parts) {
            return true;
        }
        let named = |e: &[u64; 2]| e.iter().any(|&x| x != 0);
        self.parts == Parts::PROVIDER
            && other.parts == Parts::PROVIDER
            && named(&self.entities)
            && named(&other.entities)
            && !self
                .entities
                .iter()
                .any(|&x| x != 0 && other.entities.contains(&x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_independent_only_when_disjoint() {
        let e = |id, parts| TieEvent {
            id,
            at_ms: 5,
            parts,
            class: 0,
            entities: [0, 0],
        };
        let agent = e(1, Parts::AGENT);
        let provider = e(2, Parts::PROVIDER);
        let timeout = e(3, Parts::AGENT.union(Parts::EXECUTORS));
        let executors = e(4, Parts::EXECUTORS);
        assert!(agent.independent(&provider));
        assert!(provider.independent(&timeout));
        assert!(!agent.independent(&timeout));
        assert!(!timeout.independent(&executors));
        assert!(
            !agent.independent(&agent),
            "an event is not independent of itself"
        );
        assert!(!e(5, Parts::ALL).independent(&provider));
        assert!(Parts::NONE.disjoint(Parts::ALL));
        // Provider events: independent when they name entries and share none.
        let p = |id, entities| TieEvent {
            entities,
            ..e(id, Parts::PROVIDER)
        };
        assert!(p(1, [7, 8]).independent(&p(2, [9, 0])));
        assert!(!p(1, [7, 8]).independent(&p(2, [8, 0])));
        assert!(
            !p(1, [7, 8]).independent(&p(2, [0, 0])),
            "the whole provider"
        );
        assert!(!p(1, [0, 0]).independent(&p(2, [0, 0])));
        assert!(!e(1, Parts::EXECUTORS).independent(&e(2, Parts::EXECUTORS)));
    }
}

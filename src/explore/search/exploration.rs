//! What a search did and found: its levels (one per fault budget), the violations, and
//! whether it certifies the bound.

use super::{Bound, Strategy, TimingScope};
use crate::check::Property;

/// A run that violates a property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub property: Property,
    /// Non-default fault choices in the run.
    pub faults: u32,
    /// The run's choice values, in order (ties ordered by choice).
    pub values: Vec<u64>,
    /// Runs made before this one was found, this one included.
    pub after_runs: u64,
}

/// Figures of one fault budget of `dfs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Level {
    pub max_faults: u32,
    pub runs: u64,
    /// Runs cut at a state already explored.
    pub pruned: u64,
    pub distinct_states: u64,
    /// Longest choice vector of the level.
    pub max_depth: usize,
    /// Every sequence within this budget was run or cut at an explored state.
    pub complete: bool,
    /// No run of this level met a fault choice its budget forbade: every larger budget
    /// explores exactly the same runs, so this level covers them all.
    pub saturated: bool,
    /// The search stopped in this level because a run violated a property.
    pub found: bool,
    /// The most deviations (choices other than faults taking another option than their
    /// first) any run of the level's last pass took.
    pub max_deviations: u32,
    /// States fingerprinted and remembered, summed over the level's passes (each pass starts
    /// with an empty visited set): the work, where `distinct_states` is the space.
    pub states_visited: u64,
    /// The deviation budget of the level's last pass (`u32::MAX`: unbounded).
    pub deviation_budget: u32,
    /// Runs of a shard ([`super::explore_shard`]) cut at their split point, their subtree
    /// another shard's: neither judged nor pruned. Always 0 unsharded.
    pub split_cut: u64,
}

/// What a search did and found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exploration {
    pub strategy: Strategy,
    pub bound: Bound,
    /// Per fault budget searched (`dfs`; one level for the sampling strategies).
    pub levels: Vec<Level>,
    /// Whether states could be fingerprinted (every executor of the design can say what it
    /// holds); without it nothing is pruned.
    pub pruning: bool,
    /// Whether the visited set reached `max_states`.
    pub visited_full: bool,
    /// The first violating run per property, in the order found.
    pub violations: Vec<Violation>,
    /// Runs cut by the events budget ([`MAX_EVENTS`](crate::world::MAX_EVENTS)) before their
    /// horizon. The search stops at the first: an unfinished run shows nothing, so nothing
    /// is certified, and the runs after it would likely be as long.
    pub budget_runs: u64,
    /// The timing values the search offered: what a certificate covers.
    pub scope: TimingScope,
}

impl Exploration {
    pub fn runs(&self) -> u64 {
        self.levels.iter().map(|l| l.runs).sum()
    }

    /// Every sequence within the whole bound was explored and none violates a property.
    pub fn certified(&self) -> bool {
        let covered = self.levels.len() == self.bound.max_faults as usize + 1
            || self.levels.last().is_some_and(|l| l.saturated);
        self.violations.is_empty()
            && self.budget_runs == 0
            && self.strategy == Strategy::Dfs
            && covered
            && self.levels.iter().all(|l| l.complete)
    }
}

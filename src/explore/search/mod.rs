//! Bounded exhaustive search over the simulator's own choice points.
//!
//! A run is a sequence of choices; every sequence the model allows is a run the simulator
//! can make. `dfs` enumerates them depth first by re-execution (each run replays a prefix of
//! choices, then takes the first option of every new choice point), within a bound:
//! - at most `K` non-default *fault* choices per run (a lost reply, a crash...), by
//!   iterative deepening on K, so that the first violation found has the fewest faults;
//! - every *agent* and *schedule* choice (a reaction, which worker, the order of events due
//!   at the same instant) is explored;
//! - a *timing* range offers its menu (its ends and the values around every threshold of
//!   the model it straddles: [`super::menu`]) instead of every millisecond.
//!
//! Within a fault budget the search runs in passes of growing *deviation* budget: at most
//! `d` choices other than faults may take an option other than their first (the shortest
//! delay, the first reaction, the first worker, first-in-first-out), `d` = 0, 1, 2... until
//! no run of a pass met a choice the budget forbade: then the fault budget is covered. A
//! violation a few deviations away is met after a few runs, wherever its choices are in the
//! run (plain depth-first order changes an early choice only after everything after it);
//! the price is that a complete search repeats the runs of its smaller passes.
//!
//! A run whose world, at an event, is in a state an earlier run of the same depth has
//! already been in with at least as many faults left to spend is cut there: everything
//! that can follow was explored from the earlier visit (the fingerprint covers everything
//! that decides the rest of the run and its outcome; see [`World::fingerprint`]). The
//! search is *complete* when every sequence within the bound was run or cut this way; then
//! no property violation within the bound exists, up to fingerprint collisions (64 bits).
//!
//! `swarm` and `random` sample seeds instead: plain random simulation, and swarm testing,
//! where each seed first decides which fault purposes are on at all and how likely
//! (the model's probability times 1, 4 or 16, at most one half), and which timing purposes
//! draw only the ends of their range, so that rare combinations of faults and extreme
//! delays show up. What a swarm seed decided is its choice vector, which replays like any
//! other.
//!
//! The search's rooms, one concern each, behind this entry:
//! - [`bound`]: the bound and the reductions a search may use;
//! - [`exploration`], [`scope`]: what a search did and found, and what its certificate covers;
//! - [`dfs`]: the exhaustive search, fault budgets and deviation passes, a pass carved into
//!   its steps (start a run, run it, judge it, move the path);
//! - [`path`]: the path of choice points and the chooser that walks it;
//! - [`por`]: sleep sets and symmetry, the reductions of the order of schedule choices;
//! - [`memo`]: the states a pass visited and the subtrees closed across passes;
//! - [`snapshot`]: worlds saved along the path, so a run restores rather than replays;
//! - [`shard`]: one shard's share of the tree, and the key of each run;
//! - [`merge`]: the shards' searches added up to the one-machine search's verdict;
//! - [`sample`]: random and swarm sampling of seeds.

mod bound;
mod dfs;
mod exploration;
mod memo;
mod merge;
mod path;
mod por;
mod sample;
mod scope;
mod shard;
mod snapshot;

pub use bound::{Bound, Reductions};
pub use exploration::{Exploration, Level, Violation};
pub use merge::{MergeError, MergedShards, check_levels, merge_shards};
pub use scope::TimingScope;
pub use shard::{Shard, explore_shard};

use crate::check::{Property, RunSummary};
use crate::design::Design;
use crate::model::Model;

crate::sim::named_enum! {
    /// How the schedule space is searched.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Strategy {
        /// Every choice sequence within the fault budget, depth first, fewest faults first.
        Dfs => "dfs",
        /// Random seeds, each with its own mix of enabled faults.
        Swarm => "swarm",
        /// Plain random seeds, as `run` draws them.
        Random => "random",
    }
}

/// Searches `model` with `design` for runs violating one of `properties`.
pub fn explore(
    model: &Model,
    design: &dyn Design,
    properties: &[Property],
    strategy: Strategy,
    bound: Bound,
) -> Exploration {
    explore_reporting(model, design, properties, strategy, bound, &|_| {})
}

/// [`explore`], calling `progress(n)` as every `PROGRESS_EVERY` (1 024) more runs are done.
pub fn explore_reporting(
    model: &Model,
    design: &dyn Design,
    properties: &[Property],
    strategy: Strategy,
    bound: Bound,
    progress: &dyn Fn(u64),
) -> Exploration {
    match strategy {
        Strategy::Dfs => dfs::dfs(model, design, properties, bound, None, progress),
        Strategy::Swarm | Strategy::Random => {
            sample::sample(model, design, properties, strategy, bound, progress)
        }
    }
}

/// Runs between two calls of a search's progress callback.
pub const PROGRESS_EVERY: u64 = 1024;

/// The properties `summary` violates, among `properties`.
fn violated(properties: &[Property], summary: &RunSummary) -> impl Iterator<Item = Property> {
    properties
        .iter()
        .copied()
        .filter(move |p| !p.holds(summary))
        .collect::<Vec<_>>()
        .into_iter()
}

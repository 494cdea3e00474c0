//! Search drivers above the world: sweeps over seeds (parallel, paired, deterministic),
//! shrinking of failing choice vectors, checking a model's expectations, the determinism
//! self-check, and the finite menus of timing choices a search offers.

pub mod check;
pub mod determinism;
pub mod explained;
pub(crate) mod menu;
pub(crate) mod paired;
pub(crate) mod result;
pub(crate) mod search;
pub(crate) mod shrink;
pub mod suite;
pub(crate) mod sweep;

pub use menu::Threshold;
pub use paired::{Difference, Mean, Paired, paired};
pub use result::{DesignResult, ReplayCommand, Report, replay_key, shell_word};
pub use result::{JudgementData, ResultData};
pub use search::{
    Bound, Exploration, Level, MergeError, MergedShards, Reductions, Shard, Strategy, TimingScope,
    Violation, check_levels, explore, explore_reporting, explore_shard, merge_shards,
};
pub use shrink::{Shrunk, shrink_seed, shrink_values};
pub use sweep::{Comparison, Spec, Sweep, compare, sweep};

/// Where a long computation says how far it is: what it is working on, and how many of its
/// units (seeds, runs) are done. Nothing it is told reaches the results. `()` ignores all of
/// it; the command line's progress bar shows it.
pub trait Progress: Sync {
    /// What is running now (a design, the guarantee matrix).
    fn message(&self, _what: &str) {}
    /// `n` more units are done.
    fn advance(&self, _n: u64) {}
}

impl Progress for () {}

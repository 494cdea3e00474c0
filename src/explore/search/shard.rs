//! Sharding a `dfs` search: which runs of a pass are one shard's, by the key of each run
//! (its path up to its split point), keys dealt round robin in depth-first order.

use std::cell::Cell;

#[cfg(doc)]
use super::Reductions;
use super::{Bound, Exploration, dfs};
use crate::check::Property;
use crate::design::Design;
use crate::model::Model;

/// One shard of a sharded `dfs` search: shard `index` (from 0) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

/// The share of shard `shard` of the `dfs` search
/// [`explore_reporting`](super::explore_reporting) makes: with the other shards' (every
/// index `0..count`, each searched by the same call on any machine),
/// it covers the search exactly once, so that their results merged give the one-machine
/// verdict and certificate. `bound.max_runs` bounds this shard's runs alone.
///
/// Every shard runs the same levels and passes over the same tree. A run's *split point*
/// is the first choice point at which the product of the option counts of the choice
/// points so far that offer more than one option reaches `64 · count` (64 keys per shard,
/// `KEYS_PER_SHARD`); its *key* is the path up to there (a run that ends before has the
/// whole run as its key). The keys of a pass are numbered in depth-first order, and key `j`
/// is shard `j mod count`'s: a shard runs each key it owns to every leaf, and cuts a run at
/// the split point of a key it does not own, without judging it or counting it as pruned.
/// Every leaf has one owner.
///
/// Round robin over the keys in depth-first order, not a hash of the key: sibling subtrees
/// are often alike in size, and round robin deals them out evenly, where a hash gives each
/// shard a binomial share of them. Measured on a two-intent, two-worker model (128 390
/// runs unsharded), the busiest of 4 shards ran 1.05 times the mean share with round
/// robin at 64 keys per shard, and with a hash 2.07 at 32 keys per shard, 1.31 at 128.
/// It numbers the keys consistently
/// because everything above the split points is the same in every shard: no state there
/// is remembered or prunes (below), the sleep sets ([`Reductions::por`]) are a function of
/// the path, and a cut at the split point ends the run before anything below it.
///
/// The numbering depends neither on the fault budget nor the deviation budget as such,
/// only on the tree above the split points. That is what lets each shard stop its passes
/// and levels on its own, as the one-machine search does: a pass whose runs met no choice
/// its deviation budget refused met none above the split points either, so its tree there
/// is the unbounded pass's, and with it the keys and their owners; likewise a level whose
/// runs met no fault choice the budget refused is the tree of every larger fault budget.
/// A level is complete when every shard's share of it is, saturated when every shard's is.
pub fn explore_shard(
    model: &Model,
    design: &dyn Design,
    properties: &[Property],
    bound: Bound,
    shard: Shard,
    progress: &dyn Fn(u64),
) -> Exploration {
    debug_assert!(shard.index < shard.count);
    dfs::dfs(model, design, properties, bound, Some(shard), progress)
}

/// The split point of a sharded search ([`explore_shard`]) is where a run's option counts
/// multiply to this many per shard: the fewer keys, the more a few large subtrees decide a
/// shard's share. Measured on a two-intent, two-worker model (1 fault, 50 470 and 128 390
/// runs unsharded, two designs; 2, 3, 4 and 8 shards), the busiest shard ran at most 1.08
/// times the mean share at 64, and up to 2.0 times at 8, 16 or 32, where a few large keys
/// came in a period the shard count divides and fell to the same shards. Each shard pays
/// one short run per key it does not own: 2 to 4 % more runs in all at 4 shards.
const KEYS_PER_SHARD: u64 = 64;

/// Which runs of a pass are this shard's ([`explore_shard`]): the split point of the
/// current run, and the key the path is in.
pub(super) struct Split {
    shard: Shard,
    /// A run's split point is where the product of its option counts reaches this.
    need: u64,
    /// Keys met so far in the pass: the next key's number.
    keys: Cell<u64>,
    /// The key the path is in: its split point and whether this shard owns it. It lasts
    /// while the path keeps that choice point and the ones before it.
    key: Cell<Option<(usize, bool)>>,
    /// This run: the product of the option counts of its choice points with more than one
    /// option, so far.
    product: Cell<u64>,
    /// This run passed its split point.
    past: Cell<bool>,
    /// This run's key is another shard's.
    foreign: Cell<bool>,
}

impl Split {
    pub(super) fn new(shard: Shard) -> Self {
        Split {
            shard,
            need: shard.count.saturating_mul(KEYS_PER_SHARD),
            keys: Cell::new(0),
            key: Cell::new(None),
            product: Cell::new(1),
            past: Cell::new(false),
            foreign: Cell::new(false),
        }
    }

    pub(super) fn start_run(&self) {
        self.product.set(1);
        self.past.set(false);
        self.foreign.set(false);
    }

    /// This run's state so far: what a saved world keeps of it ([`Reductions::snapshots`]).
    pub(super) fn run_state(&self) -> (u64, bool, bool) {
        (self.product.get(), self.past.get(), self.foreign.get())
    }

    /// A run restored from a saved world takes up the saved run's state there: it made the
    /// same choices. The key it is in is unchanged, since the choices before the saved
    /// position are the path's (see `moved`).
    pub(super) fn resume(&self, (product, past, foreign): (u64, bool, bool)) {
        self.product.set(product);
        self.past.set(past);
        self.foreign.set(foreign);
    }

    /// This run passed its split point: every continuation of a state from here on is in
    /// its key.
    pub(super) fn past(&self) -> bool {
        self.past.get()
    }

    /// This run's key is another shard's: it is cut at its next event.
    pub(super) fn foreign(&self) -> bool {
        self.foreign.get()
    }

    /// The run took choice point `i`, of `options` options.
    pub(super) fn at_choice(&self, i: usize, options: usize) {
        if self.past.get() || options < 2 {
            return;
        }
        let product = self.product.get().saturating_mul(options as u64);
        self.product.set(product);
        if product >= self.need {
            self.past.set(true);
            self.enter(Some(i));
        }
    }

    /// The run ended; one that never reached its split point is a key of its own. Returns
    /// whether the run was another shard's.
    pub(super) fn end_run(&self) -> bool {
        if !self.past.get() {
            self.enter(None);
        }
        self.foreign.get()
    }

    /// The run's key is complete: split at choice point `at`, or at its end (`None`).
    fn enter(&self, at: Option<usize>) {
        let owned = match (self.key.get(), at) {
            // The path kept the key's split point (see `moved`): the same key.
            (Some((p, owned)), Some(i)) if p == i => owned,
            _ => {
                let j = self.keys.get();
                self.keys.set(j + 1);
                j % self.shard.count == self.shard.index
            }
        };
        self.key.set(at.map(|i| (i, owned)));
        self.foreign.set(!owned);
    }

    /// The path moved choice point `moved` (`None`: the tree is exhausted): at or before
    /// the key's split point, the next run is in another key.
    pub(super) fn moved(&self, moved: Option<usize>) {
        if let Some((p, _)) = self.key.get()
            && moved.is_none_or(|m| m <= p)
        {
            self.key.set(None);
        }
    }
}

//! The bound of a search: how many faults and runs, how many states remembered, and which
//! reductions are on.

/// The bound of a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    /// Most non-default fault choices in one run (`dfs`).
    pub max_faults: u32,
    /// Most runs in all; the search stops there, incomplete.
    pub max_runs: u64,
    /// Most fingerprints kept in the visited set; past it no new state is remembered (the
    /// search stays complete, it only prunes less).
    pub max_states: usize,
    /// Which reductions of the search are on (all, by default).
    pub reductions: Reductions,
}

impl Default for Bound {
    fn default() -> Self {
        Bound {
            max_faults: 2,
            max_runs: 1_000_000,
            max_states: 2_000_000,
            reductions: Reductions::ALL,
        }
    }
}

/// The reductions a `dfs` search may use, each switchable off so that a reduced and an
/// unreduced search of the same model compare in one command. None changes which
/// properties are violated within the bound, nor whether the search certifies: each only
/// spares runs whose outcome another run already shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reductions {
    /// Closed subtrees: a state whose continuations were explored without the deviation
    /// budget refusing a choice is cut wherever it comes up again with no more faults to
    /// spend, in later passes and larger fault budgets too (their continuations are the
    /// same ones, or fewer).
    pub memo: bool,
    /// Partial-order reduction of the order of events due at the same instant: of two
    /// independent events (disjoint [parts](crate::sim::Parts) of the world), one order
    /// is explored, by sleep sets (Godefroid): once the paths that take an event first are
    /// explored, the paths that take another first keep it asleep until an event dependent
    /// on it runs. A state is remembered with its sleep set, and a later visit is cut only
    /// where the earlier one slept on no more events, so that pruning a state never skips
    /// an order its first visit left to another path.
    pub por: bool,
    /// Symmetry reduction: of alternatives that lead to states alike up to the names of
    /// interchangeable things (workers that have run nothing yet, identical intents taken
    /// up at the same instant), one is explored, for designs that treat ids by identity
    /// only ([`crate::design::Design::symmetric`]).
    pub symmetry: bool,
    /// Not a reduction of the runs but of their cost: the world is saved after each new
    /// choice of a run and restored by the next run through the same choices, instead of
    /// that run replaying them from the start. The same runs, the same states, the same
    /// verdict. Off by itself for designs whose executors cannot be copied
    /// ([`crate::design::Executor::snapshot`]: every external executor).
    pub snapshots: bool,
    /// Timing equivalence of states: a state's moments are hashed only as far as they can
    /// still change the rest of the run and its verdict ([`crate::sim::Moments`]), so
    /// that two states reached at the same moment by histories that differ only in when
    /// things happened are one. The clock itself is hashed exactly.
    pub timing: bool,
}

impl Reductions {
    pub const ALL: Reductions = Reductions {
        memo: true,
        por: true,
        symmetry: true,
        snapshots: true,
        timing: true,
    };
    pub const NONE: Reductions = Reductions {
        memo: false,
        por: false,
        symmetry: false,
        snapshots: false,
        timing: false,
    };

    /// Each reduction alone, by name (the others off), in a fixed order: with
    /// [`Reductions::ALL`] and [`Reductions::NONE`], the searches a soundness comparison
    /// makes.
    pub fn each_alone() -> Vec<(&'static str, Reductions)> {
        vec![
            (
                "memo",
                Reductions {
                    memo: true,
                    ..Reductions::NONE
                },
            ),
            (
                "por",
                Reductions {
                    por: true,
                    ..Reductions::NONE
                },
            ),
            (
                "symmetry",
                Reductions {
                    symmetry: true,
                    ..Reductions::NONE
                },
            ),
            (
                "snapshots",
                Reductions {
                    snapshots: true,
                    ..Reductions::NONE
                },
            ),
            (
                "timing",
                Reductions {
                    timing: true,
                    ..Reductions::NONE
                },
            ),
        ]
    }

    /// The names of the reductions that are on, in a fixed order.
    pub fn names(self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.memo {
            v.push("memo");
        }
        if self.por {
            v.push("por");
        }
        if self.symmetry {
            v.push("symmetry");
        }
        if self.snapshots {
            v.push("snapshots");
        }
        if self.timing {
            v.push("timing");
        }
        v
    }
}

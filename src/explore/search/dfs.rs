//! The exhaustive search: fault budgets 0, 1, ... K (fewest faults first), each in passes
//! of growing deviation budget, each pass depth first over the path of choice points.
//!
//! A pass is a loop of four steps: start a run (from the saved world nearest the end of
//! the path's old part), run it with the path's chooser and the pruning hook, judge what it
//! did, and move the path to its next sequence. The reductions each keep their own room:
//! the path and its chooser ([`super::path`]), sleep sets and symmetry ([`super::por`]),
//! the states remembered ([`super::memo`]), the saved worlds ([`super::snapshot`]) and a
//! shard's share ([`super::shard`]).

use std::collections::BTreeSet;

use super::memo::{ClosedStates, Cut, PassMemory, Visit};
use super::path::{Capped, Node, PathChooser, RunState, advance, with_learned};
use super::por::sleep_key;
use super::shard::{Shard, Split};
use super::snapshot::{Snap, Snapshots};
use super::{
    Bound, Exploration, Level, PROGRESS_EVERY, Strategy, TimingScope, Violation, violated,
};
use crate::check::{Metrics, Property};
use crate::design::Design;
use crate::model::Model;
use crate::sim::Millis;
use crate::vocab::record::End;
use crate::world::World;

/// The `dfs` search of `model` with `design`, of the whole tree or of one shard's share.
pub(super) fn dfs(
    model: &Model,
    design: &dyn Design,
    properties: &[Property],
    bound: Bound,
    shard: Option<Shard>,
    progress: &dyn Fn(u64),
) -> Exploration {
    let scope = TimingScope::of(model, design);
    let mut search = Search {
        progress,
        thresholds: scope.values(),
        world: World::new(model, design, false),
        properties,
        // Timing equivalence: the observer's moments matter only to a property that reads
        // times (`resolved_within`, or a design's own, which may read anything).
        observer: properties
            .iter()
            .any(|p| matches!(p, Property::ResolvedWithin(_) | Property::Custom(_))),
        bound,
        runs: 0,
        report: Exploration {
            strategy: Strategy::Dfs,
            bound,
            levels: Vec::new(),
            pruning: true,
            visited_full: false,
            violations: Vec::new(),
            budget_runs: 0,
            scope,
        },
        learned: BTreeSet::new(),
        closed: ClosedStates::new(),
        shard,
    };
    for k in 0..=bound.max_faults {
        let level = search.level(k);
        let (found, complete, saturated) = (level.found, level.complete, level.saturated);
        search.report.levels.push(level);
        // Fewest faults first: a violation at this budget ends the search; so does a limit,
        // and so does a budget no run could spend.
        if found || !complete || saturated {
            break;
        }
    }
    search.report.scope.learned = search.learned.into_iter().collect();
    search.report
}

/// The deviation budgets of a fault budget's passes, in order; the last is unbounded.
///
/// A pass repeats the runs of the smaller ones. Growing by one until no run meets the
/// budget made a complete search cost the sum of every budget's pass: ten times the last
/// one on a two-intent race, where the budget reached 17. The small budgets find a
/// violation a few deviations away after a few runs, which is what the passes are for;
/// past them, one pass without a bound covers everything once.
const DEVIATION_BUDGETS: [u32; 5] = [0, 1, 2, 4, u32::MAX];

/// The state of a `dfs` search across its passes.
struct Search<'a, 'm> {
    progress: &'a dyn Fn(u64),
    thresholds: Vec<Millis>,
    world: World<'m>,
    properties: &'a [Property],
    /// Some property reads the observer's moments ([`crate::sim::Moments`]).
    observer: bool,
    bound: Bound,
    /// Runs of every pass so far.
    runs: u64,
    report: Exploration,
    /// Every threshold learned in any run so far (for the certificate's scope).
    learned: BTreeSet<Millis>,
    /// States whose continuations were explored, up to a number of faults
    /// ([`super::Reductions::memo`]), kept across passes and fault budgets.
    closed: ClosedStates,
    /// The shard of a sharded search ([`super::explore_shard`]); `None`, or one shard of
    /// one, searches the whole tree.
    shard: Option<Shard>,
}

/// What one pass (a fault budget and a deviation budget) did.
#[derive(Default)]
struct Pass {
    runs: u64,
    pruned: u64,
    states: u64,
    max_depth: usize,
    /// The most deviations a run of the pass took.
    max_deviations: u32,
    /// Every sequence within the pass's budgets was run or cut.
    complete: bool,
    /// A run met a fault choice the fault budget forbade.
    capped_faults: bool,
    /// A run met a choice the deviation budget forbade.
    capped_deviations: bool,
    found: bool,
    /// Runs cut at their split point, another shard's.
    split_cut: u64,
}

impl Pass {
    /// Adds the pass's figures, of deviation budget `d`, to its level's.
    fn add_to(&self, level: &mut Level, d: u32) {
        level.runs += self.runs;
        level.pruned += self.pruned;
        level.distinct_states = level.distinct_states.max(self.states);
        level.states_visited += self.states;
        level.max_depth = level.max_depth.max(self.max_depth);
        level.max_deviations = self.max_deviations;
        level.deviation_budget = d;
        level.split_cut += self.split_cut;
        level.found = self.found;
    }
}

/// What a pass keeps from one run to the next.
struct Walk {
    /// The fault and deviation budgets.
    k: u32,
    d: u32,
    /// The path: the current run's choice points.
    nodes: Vec<Node>,
    capped: Capped,
    memory: PassMemory,
    /// Worlds saved along the path ([`super::Reductions::snapshots`]).
    snaps: Snapshots,
    split: Option<Split>,
}

/// A run that ended: what it spent, and whether a state explored already cut it.
struct Ran {
    run: RunState,
    cut: Cut,
}

impl Search<'_, '_> {
    /// The level of fault budget `k`. Within it, deviations from the first option of any
    /// choice are bounded too, and the bound grows until no run meets it: a violation a
    /// few deviations away is met early, whatever the number of choices before it.
    fn level(&mut self, k: u32) -> Level {
        let mut level = Level {
            max_faults: k,
            ..Level::default()
        };
        for d in DEVIATION_BUDGETS {
            let pass = self.pass(k, d);
            pass.add_to(&mut level, d);
            if pass.found || !pass.complete {
                break;
            }
            if !pass.capped_deviations {
                level.complete = true;
                level.saturated = !pass.capped_faults;
                break;
            }
        }
        level
    }

    /// Every choice sequence with at most `k` faults and `d` deviations, depth first.
    fn pass(&mut self, k: u32, d: u32) -> Pass {
        let mut pass = Pass::default();
        let mut walk = Walk {
            k,
            d,
            nodes: Vec::new(),
            capped: Capped::default(),
            memory: PassMemory::new(self.bound.max_states),
            snaps: Snapshots::new(self.bound.reductions.snapshots),
            split: self.shard.filter(|s| s.count > 1).map(Split::new),
        };
        pass.complete = loop {
            if self.runs >= self.bound.max_runs {
                break false;
            }
            self.count_run(&mut pass);
            let ran = self.run(&mut walk);
            // The first violating run ends the search: it has the fewest faults there are.
            if self.judge(&walk, &ran, &mut pass) {
                break false;
            }
            if !self.next_path(&mut walk, &ran) {
                break true;
            }
        };
        pass.states = walk.memory.states();
        pass.capped_faults = walk.capped.faults.get();
        pass.capped_deviations = walk.capped.deviations.get();
        self.report.visited_full |= walk.memory.full;
        pass
    }

    /// Counts a run about to start, and reports progress.
    fn count_run(&mut self, pass: &mut Pass) {
        self.runs += 1;
        pass.runs += 1;
        if self.runs % PROGRESS_EVERY == 0 {
            (self.progress)(PROGRESS_EVERY);
        }
    }

    /// Runs the path once: from the world saved nearest the end of the part of the path
    /// the previous run took too, or from the start, taking the path's choices and opening
    /// new ones; cut at a state explored already.
    fn run(&mut self, walk: &mut Walk) -> Ran {
        let prefix = walk.nodes.len();
        let from = walk.snaps.start(prefix);
        let run = Snap::resume(from.as_ref(), walk.split.as_ref());
        let mut saver = walk.snaps.saver(prefix, from.as_ref());
        let mut cut = Cut::default();
        {
            let Walk {
                k,
                d,
                nodes,
                capped,
                memory,
                split,
                ..
            } = walk;
            let (k, d, split) = (*k, *d, split.as_ref());
            let mut chooser = PathChooser {
                nodes,
                run: &run,
                capped,
                fault_budget: k,
                deviation_budget: d,
                thresholds: &self.thresholds,
                por: self.bound.reductions.por,
                symmetry: self.bound.reductions.symmetry,
                split,
            };
            let closed = self.bound.reductions.memo.then_some(&self.closed);
            let (timing, observer) = (self.bound.reductions.timing, self.observer);
            let pruning = &mut self.report.pruning;
            let mut at_event = |w: &World<'_>| {
                if let Some(s) = split {
                    // Another shard's run is cut at its first event past the split point.
                    if s.foreign() {
                        return false;
                    }
                    // A state above the split point has continuations in the keys of
                    // other shards, which this shard does not run: remembered, it would
                    // stand for continuations never explored (closed), or cut a later run
                    // whose own continuations are this shard's (visited). Only a state
                    // past the split point has every continuation in this run's key, which
                    // this shard owns and runs to every leaf.
                    if !s.past() {
                        return true;
                    }
                }
                // The prefix replays states an earlier run visited: look only past it.
                if run.pos.get() < prefix || !*pruning {
                    return true;
                }
                match visit(w, &run, timing.then_some(observer), k, d) {
                    Some(v) => memory.meet(closed, v, &mut cut),
                    None => {
                        *pruning = false;
                        true
                    }
                }
            };
            let mut between = |w: &World<'_>| saver.between(w, &run, split);
            let from = from.as_ref().map(|s| &s.world);
            (self.world).run_resumable(from, &mut chooser, &mut at_event, &mut between);
        }
        walk.snaps.keep(from, saver);
        // A run that found every event due asleep repeats explored orders: it is cut.
        cut.any |= run.asleep.get();
        if cut.bounded {
            // Its subtree met fault choices the budget refused: so would this one have.
            walk.capped.faults.set(true);
        }
        Ran { run, cut }
    }

    /// Judges a run that ended: counts it as another shard's, pruned, or run to its end
    /// and checked against the properties. Returns whether the pass stops there: a
    /// violation, or a run the events budget cut.
    fn judge(&mut self, walk: &Walk, ran: &Ran, pass: &mut Pass) -> bool {
        let foreign = walk.split.as_ref().is_some_and(Split::end_run);
        let (pos, run) = (ran.run.pos.get(), &ran.run);
        pass.max_depth = pass.max_depth.max(pos);
        pass.max_deviations = pass.max_deviations.max(run.deviations.get());
        self.learned.extend(run.learned.borrow().iter().copied());
        if self.world.end().0 == End::Budget {
            self.report.budget_runs += 1;
            return true;
        }
        if foreign {
            pass.split_cut += 1;
        } else if ran.cut.any {
            pass.pruned += 1;
        } else {
            let summary = Metrics::default().add_outcome(&self.world.outcome());
            for p in violated(self.properties, &summary) {
                pass.found = true;
                if self.report.violations.iter().all(|v| v.property != p) {
                    self.report.violations.push(Violation {
                        property: p,
                        faults: run.faults.get(),
                        values: walk.nodes[..pos].iter().map(Node::value).collect(),
                        after_runs: self.runs,
                    });
                }
            }
        }
        pass.found
    }

    /// Moves the path past the run that ended; `false` when the tree is exhausted.
    fn next_path(&mut self, walk: &mut Walk, ran: &Ran) -> bool {
        let (pos, run) = (ran.run.pos.get(), &ran.run);
        let (refused, refused_fault) = (run.refused_at.get(), run.refused_fault_at.get());
        walk.memory.ended(pos, ran.cut, refused, refused_fault);
        // Choice points past a cut were never reached: the path ends where the run did.
        walk.nodes.truncate(pos);
        let moved = advance(&mut walk.nodes);
        if let Some(s) = &walk.split {
            s.moved(moved);
        }
        if self.bound.reductions.memo {
            (walk.memory).moved(moved, &mut self.closed, self.bound.max_states);
        }
        moved.is_some()
    }
}

/// The state of world `w` that `run` is in, as the search remembers it, with the budgets
/// `k` and `d` of its pass; `observer`: the moments are hashed only as far as they can
/// still matter (timing equivalence), and whether a property reads the observer's. `None`
/// when an executor cannot fingerprint its memory.
fn visit(w: &World<'_>, run: &RunState, observer: Option<bool>, k: u32, d: u32) -> Option<Visit> {
    let fp = w.fingerprint_with(observer.map(|o| w.moments(o)))?;
    let fp = with_learned(fp, &run.learned.borrow());
    let (fp, sleep) = sleep_key(fp, w, &run.sleep.borrow());
    Some(Visit {
        fp,
        sleep,
        faults_left: k - run.faults.get(),
        deviations_left: d - run.deviations.get(),
        pos: run.pos.get(),
    })
}

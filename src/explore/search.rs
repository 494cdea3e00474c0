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

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};

use super::menu;
use crate::check::{Metrics, Property, RunSummary};
use crate::design::Design;
use crate::model::Model;
use crate::sim::{
    Alternatives, Chooser, Class, Millis, Purpose, RandomChooser, Recorder, TieEvent,
};
use crate::vocab::record::End;
use crate::world::World;

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

impl Strategy {}

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
    /// Runs of a shard ([`explore_shard`]) cut at their split point, their subtree another
    /// shard's: neither judged nor pruned. Always 0 unsharded.
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

/// The timing values a `dfs` search offered at its timing choices: the two ends of every
/// range, and the values 1 ms either side of each threshold below that falls strictly
/// inside a range. A certificate covers every schedule with at most K faults *at these
/// values*: a constant of the design that it neither declared
/// ([`Design::time_thresholds`], [`crate::design::ExecCtx::declare_threshold`]) nor set as
/// a timer's delay is outside it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimingScope {
    /// The model's knobs and the design's declared constants, as named thresholds.
    pub named: Vec<menu::Threshold>,
    /// Thresholds learned during the runs (the delays of the design's timers, the ages it
    /// declared), sorted, those equal to a named one left out.
    pub learned: Vec<Millis>,
    /// What the design fixed rather than offered as choices
    /// ([`Design::certificate_caveats`]): named in the scope, since no schedule varied it.
    pub caveats: Vec<String>,
}

impl TimingScope {
    /// The scope of a search of `design` on `model`, before any run.
    pub fn of(model: &Model, design: &dyn Design) -> Self {
        // A configured design's thresholds are those of the configuration it runs.
        let model = model.for_design(design.name());
        let mut named = menu::named_thresholds(model);
        for (ms, what) in design.time_thresholds(&model.executor) {
            if ms > 0 {
                named.push(menu::Threshold { ms, knob: what });
            }
        }
        TimingScope {
            named,
            learned: Vec::new(),
            caveats: design.certificate_caveats(),
        }
    }

    /// Every threshold's value, sorted, deduplicated.
    pub fn values(&self) -> Vec<Millis> {
        let mut v: Vec<Millis> = self.named.iter().map(|t| t.ms).collect();
        v.extend(&self.learned);
        v.sort_unstable();
        v.dedup();
        v
    }

    /// One line: `timings at each range's ends and 1 ms either side of 5000
    /// (executor.timeout_ms), 60000 (agent.tool_timeout_ms); of the design's timers and
    /// declared ages: 2000`.
    pub fn describe(&self) -> String {
        let mut by_ms: Vec<(Millis, Vec<&str>)> = Vec::new();
        let mut named = self.named.clone();
        named.sort();
        for t in &named {
            match by_ms.last_mut() {
                Some((ms, knobs)) if *ms == t.ms => {
                    if !knobs.contains(&t.knob) {
                        knobs.push(t.knob)
                    }
                }
                _ => by_ms.push((t.ms, vec![t.knob])),
            }
        }
        let mut out = String::from("timing values: each range's two ends");
        if !by_ms.is_empty() {
            let list: Vec<String> = by_ms
                .iter()
                .map(|(ms, knobs)| format!("{ms} ({})", knobs.join(", ")))
                .collect();
            out.push_str(" and 1 ms either side of ");
            out.push_str(&list.join(", "));
        }
        if !self.learned.is_empty() {
            let list: Vec<String> = self.learned.iter().map(u64::to_string).collect();
            out.push_str("; and of the design's timer delays and declared ages: ");
            out.push_str(&list.join(", "));
        }
        for c in &self.caveats {
            out.push_str("; ");
            out.push_str(c);
        }
        out
    }
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
        Strategy::Dfs => dfs(model, design, properties, bound, None, progress),
        Strategy::Swarm | Strategy::Random => {
            sample(model, design, properties, strategy, bound, progress)
        }
    }
}

/// One shard of a sharded `dfs` search: shard `index` (from 0) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

/// The share of shard `shard` of the `dfs` search [`explore_reporting`] makes: with the
/// other shards' (every index `0..count`, each searched by the same call on any machine),
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
    dfs(model, design, properties, bound, Some(shard), progress)
}

/// Runs between two calls of a search's progress callback.
pub const PROGRESS_EVERY: u64 = 1024;

/// One choice point on the current path: the options it offers and which one the path
/// takes.
#[derive(Clone, Debug)]
struct Node {
    options: Vec<u64>,
    next: usize,
    fault: bool,
    /// For the order of a tie under [`Reductions::por`]: the tied events (the options are
    /// indices into it, those not asleep), so that the ones taken before the current one
    /// are put to sleep.
    tie: Vec<TieEvent>,
}

impl Node {
    fn value(&self) -> u64 {
        self.options[self.next]
    }
}

/// The chooser of one `dfs` run: replays the path's prefix, then opens new choice points
/// with the options the budgets leave and takes the first.
struct PathChooser<'a> {
    nodes: &'a mut Vec<Node>,
    /// Choice points passed so far in this run (shared with the pruning hook).
    pos: &'a Cell<usize>,
    /// Non-default fault choices so far in this run (shared with the pruning hook).
    faults: &'a Cell<u32>,
    /// Choices other than their first option so far in this run (shared likewise).
    deviations: &'a Cell<u32>,
    /// Set when the fault budget forbade a fault choice.
    capped_faults: &'a Cell<bool>,
    /// Set when the deviation budget forbade a choice.
    capped_deviations: &'a Cell<bool>,
    /// The deepest choice point of this run where a budget refused options: the deviation
    /// budget, and the fault budget.
    refused_at: &'a Cell<Option<usize>>,
    refused_fault_at: &'a Cell<Option<usize>>,
    fault_budget: u32,
    deviation_budget: u32,
    thresholds: &'a [Millis],
    /// Thresholds the design made known so far in this run (sorted, deduplicated, none of
    /// `thresholds`): a function of the run's prefix, so a menu opened at a choice point is
    /// the same on every run through it.
    learned: &'a RefCell<Vec<Millis>>,
    /// Partial-order reduction ([`Reductions::por`]): the sleep set, the events due now
    /// that need not run next, since every order starting with one of them was explored
    /// (a tie's options taken before the current one, as long as each event handled since
    /// is independent of them).
    por: bool,
    /// Symmetry reduction ([`Reductions::symmetry`]): one of interchangeable alternatives.
    symmetry: bool,
    sleep: &'a RefCell<Vec<TieEvent>>,
    /// Set when every event due now was asleep: the run repeats explored orders, and ends.
    asleep: &'a Cell<bool>,
    /// The split of a sharded search ([`explore_shard`]).
    split: Option<&'a Split>,
}

impl PathChooser<'_> {
    /// The options of a new choice point and whether it is a fault; records a refusal of
    /// some of them by a budget at choice point `i`.
    fn options(
        &self,
        i: usize,
        purpose: Purpose,
        alternatives: Alternatives<'_>,
    ) -> (Vec<u64>, bool) {
        let fault = purpose.class() == Class::Fault;
        let mut options = match (purpose.class(), alternatives) {
            (Class::Timing, Alternatives::Span { min, len }) => {
                let learned = self.learned.borrow();
                if learned.is_empty() {
                    menu::menu(min, len, self.thresholds)
                } else {
                    let all: Vec<Millis> = self
                        .thresholds
                        .iter()
                        .chain(learned.iter())
                        .copied()
                        .collect();
                    menu::menu(min, len, &all)
                }
            }
            _ => (0..alternatives.len()).collect::<Vec<u64>>(),
        };
        if options.len() > 1 && fault && self.faults.get() >= self.fault_budget {
            self.capped_faults.set(true);
            self.refused_fault_at.set(Some(i));
            options.truncate(1);
        }
        if options.len() > 1 && !fault && self.deviations.get() >= self.deviation_budget {
            self.capped_deviations.set(true);
            self.refused_at.set(Some(i));
            options.truncate(1);
        }
        (options, fault)
    }
}

impl PathChooser<'_> {
    /// Passes schedule choice point `i` (a tie's order or a worker pick): counts it for
    /// the shard's split and, if the path takes another option than its first, as a
    /// deviation.
    fn take_schedule(&self, i: usize) {
        self.pos.set(i + 1);
        let node = &self.nodes[i];
        if let Some(s) = self.split {
            s.at_choice(i, node.options.len());
        }
        if node.next > 0 {
            self.deviations.set(self.deviations.get() + 1);
        }
    }

    /// Opens the choice point at the current position with `options` (a schedule choice,
    /// never a fault), cut to its first option if the deviation budget is spent.
    fn open(&mut self, mut options: Vec<u64>, tie: Vec<TieEvent>) {
        let i = self.nodes.len();
        if options.len() > 1 && self.deviations.get() >= self.deviation_budget {
            self.capped_deviations.set(true);
            self.refused_at.set(Some(i));
            options.truncate(1);
        }
        self.nodes.push(Node {
            options,
            next: 0,
            fault: false,
            tie,
        });
    }
}

impl Chooser for PathChooser<'_> {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        // Another shard's run, past its split point: the first option (0 in every menu),
        // no choice point, until the next event cuts it.
        if self.split.is_some_and(|s| s.foreign.get()) {
            return 0;
        }
        let i = self.pos.get();
        self.pos.set(i + 1);
        if i == self.nodes.len() {
            let (options, fault) = self.options(i, purpose, alternatives);
            self.nodes.push(Node {
                options,
                next: 0,
                fault,
                tie: Vec::new(),
            });
        }
        let node = &self.nodes[i];
        if let Some(s) = self.split {
            s.at_choice(i, node.options.len());
        }
        if node.next > 0 {
            // Faults have their own budget; the deviation budget counts the others.
            let counter = if node.fault {
                self.faults
            } else {
                self.deviations
            };
            counter.set(counter.get() + 1);
        }
        node.value()
    }

    fn orders_ties(&self) -> bool {
        true
    }

    fn order(&mut self, tie: &[TieEvent]) -> Option<usize> {
        if self.split.is_some_and(|s| s.foreign.get()) {
            return None;
        }
        if !self.por && !self.symmetry {
            return match tie.len() {
                0 | 1 => Some(0),
                n => Some(self.choose(Purpose::Order, Alternatives::Uniform(n as u64)) as usize),
            };
        }
        let por = self.por;
        let mut sleep = self.sleep.borrow_mut();
        // Sleepers are events due at one instant: every one of them has run or the run
        // ended before the clock moves on, except one a pause put off (it is then a new
        // event), so an earlier instant's sleepers are forgotten.
        if sleep.first().is_some_and(|e| e.at_ms != tie[0].at_ms) {
            sleep.clear();
        }
        let asleep = |e: &TieEvent| por && sleep.iter().any(|s| s.id == e.id);
        if tie.len() == 1 {
            if asleep(&tie[0]) {
                self.asleep.set(true);
                return None;
            }
            return Some(0);
        }
        let i = self.pos.get();
        if i == self.nodes.len() {
            let symmetry = self.symmetry;
            let options: Vec<u64> = (0..tie.len())
                .filter(|&j| !asleep(&tie[j]))
                // Of interchangeable events, the first awake one stands for the others.
                .filter(|&j| {
                    !symmetry
                        || tie[j].class == 0
                        || !tie[..j]
                            .iter()
                            .any(|e| e.class == tie[j].class && !asleep(e))
                })
                .map(|j| j as u64)
                .collect();
            if options.is_empty() {
                self.asleep.set(true);
                return None;
            }
            self.open(options, tie.to_vec());
        }
        self.take_schedule(i);
        let node = &self.nodes[i];
        // The events taken first on the paths explored before this one go to sleep.
        if por {
            for &earlier in &node.options[..node.next] {
                sleep.push(node.tie[earlier as usize]);
            }
        }
        Some(node.value() as usize)
    }

    fn choose_up_to_symmetry(&mut self, purpose: Purpose, classes: &[u32]) -> u64 {
        if self.split.is_some_and(|s| s.foreign.get()) {
            return 0;
        }
        if !self.symmetry || classes.len() <= 1 {
            return match classes.len() {
                0 | 1 => 0,
                n => self.choose(purpose, Alternatives::Uniform(n as u64)),
            };
        }
        let i = self.pos.get();
        if i == self.nodes.len() {
            // One alternative of each class, the first; every unclassed one.
            let options: Vec<u64> = (0..classes.len())
                .filter(|&j| classes[j] == 0 || !classes[..j].contains(&classes[j]))
                .map(|j| j as u64)
                .collect();
            self.open(options, Vec::new());
        }
        self.take_schedule(i);
        self.nodes[i].value()
    }

    fn handled(&mut self, event: TieEvent) {
        if self.por {
            self.sleep
                .borrow_mut()
                .retain(|s| s.at_ms == event.at_ms && s.independent(&event));
        }
    }

    fn learn_threshold(&mut self, ms: Millis) {
        if ms == 0 || self.thresholds.binary_search(&ms).is_ok() {
            return;
        }
        let mut learned = self.learned.borrow_mut();
        if let Err(at) = learned.binary_search(&ms) {
            learned.insert(at, ms);
        }
    }
}

/// Mixes the thresholds learned so far into a state's fingerprint: two runs in the same
/// world state but with different thresholds known offer different menus from there on, so
/// they are different states of the search.
fn with_learned(fp: u64, learned: &[Millis]) -> u64 {
    learned.iter().fold(fp, |h, &t| {
        (h ^ t).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29)
    })
}

/// The events asleep at a state, by their positions in the queue, as a bit set (`None` if
/// one sits at position 64 or later). A state reached with more events asleep leaves more
/// orders to other paths: a visit is cut only where an earlier one slept on no more
/// ([`Closed::covers`]).
fn sleep_mask(positions: &[usize]) -> Option<u64> {
    positions
        .iter()
        .try_fold(0u64, |m, &p| (p < 64).then(|| m | 1 << p))
}

/// Mixes the events asleep at a state into its fingerprint, by their positions in the
/// queue, where they do not fit a [`sleep_mask`]: the state is then another state of the
/// search for each sleep set.
fn with_sleep(fp: u64, positions: &[usize]) -> u64 {
    positions.iter().fold(fp, |h, &p| {
        (h ^ (p as u64 + 1))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(31)
    })
}

/// Moves the path to its next sequence: the deepest choice point with an option left takes
/// it, and everything after it is dropped. Returns that choice point's index, `None` when
/// the tree is exhausted.
fn advance(nodes: &mut Vec<Node>) -> Option<usize> {
    while let Some(n) = nodes.last_mut() {
        if n.next + 1 < n.options.len() {
            n.next += 1;
            return Some(nodes.len() - 1);
        }
        nodes.pop();
    }
    None
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
struct Split {
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
    fn new(shard: Shard) -> Self {
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

    fn start_run(&self) {
        self.product.set(1);
        self.past.set(false);
        self.foreign.set(false);
    }

    /// This run's state so far: what a saved world keeps of it ([`Reductions::snapshots`]).
    fn run_state(&self) -> (u64, bool, bool) {
        (self.product.get(), self.past.get(), self.foreign.get())
    }

    /// A run restored from a saved world takes up the saved run's state there: it made the
    /// same choices. The key it is in is unchanged, since the choices before the saved
    /// position are the path's (see `moved`).
    fn resume(&self, (product, past, foreign): (u64, bool, bool)) {
        self.product.set(product);
        self.past.set(past);
        self.foreign.set(foreign);
    }

    /// The run took choice point `i`, of `options` options.
    fn at_choice(&self, i: usize, options: usize) {
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
    fn end_run(&self) -> bool {
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
    fn moved(&self, moved: Option<usize>) {
        if let Some((p, _)) = self.key.get()
            && moved.is_none_or(|m| m <= p)
        {
            self.key.set(None);
        }
    }
}

/// A state whose subtree was finished, for [`Reductions::memo`]: what its runs covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Closed {
    /// Every continuation with at most this many more faults was run or cut as equivalent
    /// (`u32::MAX`: no fault choice was refused, so every continuation); any number of
    /// deviations.
    faults_left: u32,
    /// The events asleep when it was explored ([`sleep_mask`]): continuations that start
    /// with one of them were left to other paths.
    sleep: u64,
}

impl Closed {
    /// Whether its runs cover those of a visit with `faults_left` faults to spend and the
    /// events of `sleep` asleep: at most as many faults, and no order it left to other
    /// paths that this visit would have to run (Godefroid's condition for caching states
    /// under sleep sets: the cached sleep set is a subset of the current one).
    fn covers(self, faults_left: u32, sleep: u64) -> bool {
        self.faults_left >= faults_left && self.sleep & !sleep == 0
    }
}

/// Why a subtree does not stand for every continuation of its states, as bits of
/// [`Open::partial`]: a run in it met a fault choice the fault budget refused (or was cut at
/// a state closed only up to a number of faults), so it stands for the continuations with
/// as many faults as were left...
const PARTIAL_FAULTS: u8 = 1;
/// ...or it met a choice the deviation budget refused, or was cut at a state visited in
/// this pass, so it stands only for the continuations within this pass's budgets.
const PARTIAL_PASS: u8 = 2;

/// What a pass knows of the subtrees it has not finished, for [`Reductions::memo`].
///
/// A state met after `p` choices has as continuations every run through the path's first
/// `p` choices: the subtree of prefix `p`. That subtree is finished when the search moves
/// a choice before `p`. If no run in it met a choice the deviation budget refused, and none
/// was cut at a state visited in the pass (which stands only for the pass's budgets), its
/// runs are every continuation of the state with as many faults as it had left, whatever
/// the deviations (every one, if no fault choice was refused either): the state is
/// closed, and a later visit with no more faults to spend is cut, in this pass, later
/// passes and larger fault budgets alike.
#[derive(Default)]
struct Open {
    /// States met after `p` choices, their subtrees unfinished: `(p, fingerprint, faults
    /// left, sleep mask)`, `p` never decreasing.
    states: Vec<(usize, u64, u32, u64)>,
    /// Per prefix length `p` on the current path: what keeps its subtree from standing for
    /// every continuation (`PARTIAL_FAULTS`, `PARTIAL_PASS` bits).
    partial: Vec<u8>,
}

impl Open {
    /// Marks the subtrees of every prefix up to `p` (those that contain choice point `p`)
    /// with `why`.
    fn mark_partial(&mut self, p: usize, why: u8) {
        if self.partial.len() <= p {
            self.partial.resize(p + 1, 0);
        }
        for f in &mut self.partial[..=p] {
            *f |= why;
        }
    }

    /// The path moved choice point `moved` (`None`: the tree is exhausted): closes the
    /// states whose subtree is now finished and stands for the continuations of a number
    /// of faults.
    fn finish(&mut self, moved: Option<usize>, closed: &mut HashMap<u64, Closed>, room: usize) {
        let keep = moved.map_or(0, |j| j + 1);
        while let Some(&(p, fp, faults_left, sleep)) = self.states.last() {
            if p < keep {
                break;
            }
            self.states.pop();
            let why = self.partial.get(p).copied().unwrap_or(0);
            if why & PARTIAL_PASS != 0 {
                continue;
            }
            let new = Closed {
                faults_left: if why & PARTIAL_FAULTS != 0 {
                    faults_left
                } else {
                    u32::MAX
                },
                sleep,
            };
            let full = closed.len() >= room;
            match closed.get_mut(&fp) {
                // Of two closings neither of which covers the other, the first is kept.
                Some(old) if new.covers(old.faults_left, old.sleep) => *old = new,
                Some(_) => {}
                None if !full => {
                    closed.insert(fp, new);
                }
                None => {}
            }
        }
        // Prefix `j + 1` ends in the moved choice: a new subtree, nothing known of it.
        self.partial.truncate(keep);
    }
}

/// The properties `summary` violates, among `properties`.
fn violated(properties: &[Property], summary: &RunSummary) -> impl Iterator<Item = Property> {
    properties
        .iter()
        .copied()
        .filter(move |p| !p.holds(summary))
        .collect::<Vec<_>>()
        .into_iter()
}

fn dfs(
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
        closed: HashMap::new(),
        shard,
    };
    for k in 0..=bound.max_faults {
        let mut level = Level {
            max_faults: k,
            ..Level::default()
        };
        // Within the fault budget, deviations from the first option of any choice are
        // bounded too, and the bound grows until no run meets it: a violation a few
        // deviations away is met early, whatever the number of choices before it.
        let mut found = false;
        for d in DEVIATION_BUDGETS {
            let pass = search.pass(k, d);
            level.runs += pass.runs;
            level.pruned += pass.pruned;
            level.distinct_states = level.distinct_states.max(pass.states);
            level.states_visited += pass.states;
            level.max_depth = level.max_depth.max(pass.max_depth);
            level.max_deviations = pass.max_deviations;
            level.deviation_budget = d;
            level.split_cut += pass.split_cut;
            found = pass.found;
            level.found = found;
            if found || !pass.complete {
                break;
            }
            if !pass.capped_deviations {
                level.complete = true;
                level.saturated = !pass.capped_faults;
                break;
            }
        }
        let (complete, saturated) = (level.complete, level.saturated);
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
    bound: Bound,
    /// Runs of every pass so far.
    runs: u64,
    report: Exploration,
    /// Every threshold learned in any run so far (for the certificate's scope).
    learned: BTreeSet<Millis>,
    /// States whose continuations were explored, up to a number of faults
    /// ([`Reductions::memo`]), kept across passes and fault budgets.
    closed: HashMap<u64, Closed>,
    /// The shard of a sharded search ([`explore_shard`]); `None`, or one shard of one,
    /// searches the whole tree.
    shard: Option<Shard>,
}

/// Choices between two saved worlds on a path: a run then replays fewer than this many of
/// its path's choices, and saves a world only so often (a copy of the world costs about as
/// much as replaying a few choices' events).
const SNAPSHOT_EVERY: usize = 8;

/// A world saved after `pos` choices of a run, with its chooser's counts at that moment.
struct Snap {
    pos: usize,
    faults: u32,
    deviations: u32,
    learned: Vec<Millis>,
    sleep: Vec<TieEvent>,
    /// The sharded search's state of the run ([`Split::run_state`]).
    split: (u64, bool, bool),
    world: crate::world::snapshot::Snapshot,
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

impl Search<'_, '_> {
    /// Every choice sequence with at most `k` faults and `d` deviations, depth first.
    fn pass(&mut self, k: u32, d: u32) -> Pass {
        let mut pass = Pass::default();
        // (fingerprint, faults left) -> the most deviations left it was reached with, and
        // the events asleep then (a sleep mask).
        let mut visited: HashMap<(u64, u32), (u32, u64)> = HashMap::new();
        let mut nodes: Vec<Node> = Vec::new();
        let (capped_faults, capped_deviations) = (Cell::new(false), Cell::new(false));
        let memo = self.bound.reductions.memo;
        // Timing equivalence: the observer's moments matter only to a property that reads
        // times (`resolved_within`, or a design's own, which may read anything).
        let timing = self.bound.reductions.timing;
        let observer = self
            .properties
            .iter()
            .any(|p| matches!(p, Property::ResolvedWithin(_) | Property::Custom(_)));
        let mut open = Open::default();
        // Worlds saved along the current path, by position ([`Reductions::snapshots`]).
        let mut snaps: Vec<Snap> = Vec::new();
        let saving = Cell::new(self.bound.reductions.snapshots);
        let split = self.shard.filter(|s| s.count > 1).map(Split::new);
        pass.complete = loop {
            if self.runs >= self.bound.max_runs {
                break false;
            }
            self.runs += 1;
            pass.runs += 1;
            if self.runs % PROGRESS_EVERY == 0 {
                (self.progress)(PROGRESS_EVERY);
            }
            let prefix = nodes.len();
            // A world saved after `p` choices holds the first `p` choices of its run: it
            // stands for this run's start if they are this path's, that is if `p` is at
            // most the position of the choice the path just moved (`prefix - 1`).
            while snaps.last().is_some_and(|s| s.pos >= prefix) {
                snaps.pop();
            }
            let from = snaps.pop();
            let at = |f: fn(&Snap) -> u32| from.as_ref().map_or(0, f);
            let pos = Cell::new(from.as_ref().map_or(0, |s| s.pos));
            let (faults, deviations) =
                (Cell::new(at(|s| s.faults)), Cell::new(at(|s| s.deviations)));
            let learned = RefCell::new(from.as_ref().map_or_else(Vec::new, |s| s.learned.clone()));
            let sleep = RefCell::new(from.as_ref().map_or_else(Vec::new, |s| s.sleep.clone()));
            let (refused_at, refused_fault_at) = (Cell::new(None), Cell::new(None));
            let asleep = Cell::new(false);
            let mut saved: Vec<Snap> = Vec::new();
            let mut last_saved = from.as_ref().map(|s| s.pos);
            if let Some(s) = &split {
                s.start_run();
                // A run restored after `p` choices has passed them as the saved run did.
                if let Some(f) = &from {
                    s.resume(f.split);
                }
            }
            let mut cut = false;
            // The run was cut at a state that is not closed: its subtree stands for the
            // continuations within the budgets, not for every one.
            let mut cut_partial = false;
            // The run was cut at a state closed only up to a number of faults.
            let mut cut_bounded = false;
            {
                let mut chooser = PathChooser {
                    nodes: &mut nodes,
                    pos: &pos,
                    faults: &faults,
                    deviations: &deviations,
                    capped_faults: &capped_faults,
                    capped_deviations: &capped_deviations,
                    refused_at: &refused_at,
                    refused_fault_at: &refused_fault_at,
                    fault_budget: k,
                    deviation_budget: d,
                    thresholds: &self.thresholds,
                    learned: &learned,
                    por: self.bound.reductions.por,
                    symmetry: self.bound.reductions.symmetry,
                    sleep: &sleep,
                    asleep: &asleep,
                    split: split.as_ref(),
                };
                let (report, bound) = (&mut self.report, self.bound);
                let split = split.as_ref();
                let (closed, open) = (&self.closed, &mut open);
                let mut at_event = |w: &World<'_>| {
                    if let Some(s) = split {
                        // Another shard's run is cut at its first event past the split point.
                        if s.foreign.get() {
                            return false;
                        }
                        // A state above the split point has continuations in the keys of
                        // other shards, which this shard does not run: remembered, it would
                        // stand for continuations never explored (closed), or cut a later run
                        // whose own continuations are this shard's (visited). Only a state past
                        // the split point has every continuation in this run's key, which
                        // this shard owns and runs to every leaf.
                        if !s.past.get() {
                            return true;
                        }
                    }
                    // The prefix replays states an earlier run visited: look only past it.
                    if pos.get() < prefix || !report.pruning {
                        return true;
                    }
                    let Some(fp) = w.fingerprint_with(timing.then(|| w.moments(observer))) else {
                        report.pruning = false;
                        return true;
                    };
                    let mut fp = with_learned(fp, &learned.borrow());
                    let mut mask = 0;
                    {
                        let sleep = sleep.borrow();
                        if !sleep.is_empty() {
                            let ids: Vec<u32> = sleep.iter().map(|e| e.id).collect();
                            let positions = w.queued_positions(&ids);
                            match sleep_mask(&positions) {
                                Some(m) => mask = m,
                                None => fp = with_sleep(fp, &positions),
                            }
                        }
                    }
                    let faults_left = k - faults.get();
                    if memo
                        && let Some(c) = closed.get(&fp)
                        && c.covers(faults_left, mask)
                    {
                        cut = true;
                        if c.faults_left != u32::MAX {
                            // Its subtree met fault choices the budget refused: so would
                            // this one have.
                            cut_bounded = true;
                            capped_faults.set(true);
                        }
                        return false;
                    }
                    let key = (fp, faults_left);
                    let left = d - deviations.get();
                    let room = visited.len() < bound.max_states;
                    let go_on = match visited.get_mut(&key) {
                        Some(best) if best.0 >= left && best.1 & !mask == 0 => {
                            cut = true;
                            cut_partial = true;
                            false
                        }
                        Some(best) => {
                            if left >= best.0 {
                                *best = (left, mask);
                            }
                            true
                        }
                        None if room => {
                            visited.insert(key, (left, mask));
                            true
                        }
                        None => {
                            report.visited_full = true;
                            true
                        }
                    };
                    if go_on && memo {
                        open.states.push((pos.get(), fp, faults_left, mask));
                    }
                    go_on
                };
                // Past the path's old part, the world is saved once after each new choice.
                let mut between = |w: &World<'_>| {
                    let p = pos.get();
                    if !saving.get()
                        || p < prefix
                        || last_saved.is_some_and(|l| p < l + SNAPSHOT_EVERY)
                    {
                        return;
                    }
                    last_saved = Some(p);
                    match w.save() {
                        Some(world) => saved.push(Snap {
                            pos: p,
                            faults: faults.get(),
                            deviations: deviations.get(),
                            learned: learned.borrow().clone(),
                            sleep: sleep.borrow().clone(),
                            split: split.map_or((1, false, false), Split::run_state),
                            world,
                        }),
                        // An executor that cannot be copied: every run from its start.
                        None => saving.set(false),
                    }
                };
                self.world.run_resumable(
                    from.as_ref().map(|s| &s.world),
                    &mut chooser,
                    &mut at_event,
                    &mut between,
                );
            }
            snaps.extend(from);
            snaps.append(&mut saved);
            // A run that found every event due asleep repeats explored orders: it is cut.
            cut |= asleep.get();
            let foreign = split.as_ref().is_some_and(Split::end_run);
            pass.max_depth = pass.max_depth.max(pos.get());
            pass.max_deviations = pass.max_deviations.max(deviations.get());
            self.learned.extend(learned.into_inner());
            if self.world.end().0 == End::Budget {
                self.report.budget_runs += 1;
                break false;
            }
            if foreign {
                pass.split_cut += 1;
            } else if cut {
                pass.pruned += 1;
            } else {
                let summary = Metrics::default().add_outcome(&self.world.outcome());
                for p in violated(self.properties, &summary) {
                    pass.found = true;
                    if self.report.violations.iter().all(|v| v.property != p) {
                        self.report.violations.push(Violation {
                            property: p,
                            faults: faults.get(),
                            values: nodes[..pos.get()].iter().map(Node::value).collect(),
                            after_runs: self.runs,
                        });
                    }
                }
            }
            // The first violating run ends the search: it has the fewest faults there are.
            if pass.found {
                break false;
            }
            if let Some(i) = refused_at.get() {
                open.mark_partial(i, PARTIAL_PASS);
            }
            if let Some(i) = refused_fault_at.get() {
                open.mark_partial(i, PARTIAL_FAULTS);
            }
            if cut_partial {
                open.mark_partial(pos.get(), PARTIAL_PASS);
            }
            if cut_bounded {
                open.mark_partial(pos.get(), PARTIAL_FAULTS);
            }
            // Choice points past a cut were never reached: the path ends where the run did.
            nodes.truncate(pos.get());
            let moved = advance(&mut nodes);
            if let Some(s) = &split {
                s.moved(moved);
            }
            if memo {
                open.finish(moved, &mut self.closed, self.bound.max_states);
            }
            if moved.is_none() {
                break true;
            }
        };
        pass.states = visited.len() as u64;
        pass.capped_faults = capped_faults.get();
        pass.capped_deviations = capped_deviations.get();
        pass
    }
}

/// Seeds of the swarm's configuration stream are the run's seed mixed with this, so that the
/// configuration and the run's own draws are independent.
const SWARM_SALT: u64 = 0x5357_4152_4d5f_6366; // "SWARM_cf"

/// The swarm's mix for one seed: per fault purpose, off or the model's probability times 1,
/// 4 or 16 (at most one half); per timing purpose, uniform over its range or only its two
/// ends.
struct SwarmChooser {
    random: RandomChooser,
    /// Per purpose (by index): for a fault, 0 = off, else the multiplier; for a timing, 0 =
    /// uniform, 1 = the ends only.
    scale: [u64; Purpose::COUNT],
}

impl SwarmChooser {
    fn new(model: &Model, seed: u64) -> Self {
        let mut config = model.chooser(seed ^ SWARM_SALT);
        let mut scale = [0; Purpose::COUNT];
        for p in Purpose::ALL {
            match p.class() {
                Class::Fault => {
                    scale[p.index()] =
                        [0, 1, 4, 16][config.choose(p, Alternatives::Uniform(4)) as usize];
                }
                Class::Timing => scale[p.index()] = config.choose(p, Alternatives::Uniform(2)),
                _ => {}
            }
        }
        SwarmChooser {
            random: model.chooser(seed),
            scale,
        }
    }
}

impl Chooser for SwarmChooser {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        let scale = self.scale[purpose.index()];
        match (purpose.class(), alternatives) {
            // A yes/no fault with the model's probability yes/(no+yes): off, or more likely.
            (Class::Fault, Alternatives::Weighted(&[no, yes])) => {
                if scale == 0 {
                    return 0;
                }
                let den = u64::from(no) + u64::from(yes);
                let num = u64::from(yes) * scale;
                let weights = if 2 * num >= den {
                    [1, 1]
                } else {
                    // num < den / 2 <= u32::MAX: both fit.
                    [(den - num) as u32, num as u32]
                };
                self.random
                    .choose(purpose, Alternatives::Weighted(&weights))
            }
            // A delay at one end of its range, either end alike.
            (Class::Timing, Alternatives::Span { len, .. }) if scale == 1 => {
                if self.random.choose(purpose, Alternatives::Uniform(2)) == 0 {
                    0
                } else {
                    len - 1
                }
            }
            _ => self.random.choose(purpose, alternatives),
        }
    }
}

fn sample(
    model: &Model,
    design: &dyn Design,
    properties: &[Property],
    strategy: Strategy,
    bound: Bound,
    progress: &dyn Fn(u64),
) -> Exploration {
    let mut world = World::new(model, design, false);
    let mut level = Level::default();
    let mut violations = Vec::new();
    let mut budget_runs = 0;
    for seed in 0..bound.max_runs {
        level.runs += 1;
        if level.runs % PROGRESS_EVERY == 0 {
            progress(PROGRESS_EVERY);
        }
        let mut random;
        let mut swarm;
        let inner: &mut dyn Chooser = match strategy {
            Strategy::Swarm => {
                swarm = SwarmChooser::new(model, seed);
                &mut swarm
            }
            _ => {
                random = model.chooser(seed);
                &mut random
            }
        };
        let mut recorder = Recorder::new(inner);
        world.run(&mut recorder);
        level.max_depth = level.max_depth.max(recorder.choices.len());
        if world.end().0 == End::Budget {
            budget_runs += 1;
            break;
        }
        let summary = Metrics::default().add_outcome(&world.outcome());
        let mut any = false;
        for p in violated(properties, &summary) {
            any = true;
            let faults = recorder
                .choices
                .iter()
                .filter(|c| c.purpose.class() == Class::Fault && c.value != 0)
                .count() as u32;
            violations.push(Violation {
                property: p,
                faults,
                values: recorder.choices.iter().map(|c| c.value).collect(),
                after_runs: seed + 1,
            });
        }
        // A run without a single choice is the model's only run: every seed repeats it.
        if any || recorder.choices.is_empty() {
            break;
        }
    }
    Exploration {
        strategy,
        bound,
        levels: vec![level],
        pruning: false,
        visited_full: false,
        violations,
        budget_runs,
        scope: TimingScope::of(model, design),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A threshold learned during a run reaches the menus of the timing choices after it,
    /// not the menus already opened, and is mixed into the state's fingerprint.
    #[test]
    fn a_learned_threshold_shapes_only_later_menus() {
        let mut nodes = Vec::new();
        let (pos, faults, deviations) = (Cell::new(0), Cell::new(0), Cell::new(0));
        let (capped_faults, capped_deviations) = (Cell::new(false), Cell::new(false));
        let learned = RefCell::new(Vec::new());
        let refused_at = Cell::new(None);
        let thresholds = [5_000];
        let mut chooser = PathChooser {
            nodes: &mut nodes,
            pos: &pos,
            faults: &faults,
            deviations: &deviations,
            capped_faults: &capped_faults,
            capped_deviations: &capped_deviations,
            refused_at: &refused_at,
            refused_fault_at: &Cell::new(None),
            por: false,
            symmetry: false,
            sleep: &RefCell::new(Vec::new()),
            asleep: &Cell::new(false),
            split: None,
            fault_budget: 0,
            deviation_budget: 10,
            thresholds: &thresholds,
            learned: &learned,
        };
        let span = Alternatives::Span {
            min: 0,
            len: 20_001,
        };
        chooser.choose(Purpose::Arrival, span);
        chooser.learn_threshold(2_000);
        // Known already (a model threshold), or zero: not learned again.
        chooser.learn_threshold(5_000);
        chooser.learn_threshold(0);
        chooser.choose(Purpose::Arrival, span);
        assert_eq!(*learned.borrow(), [2_000]);
        assert_eq!(nodes[0].options, [0, 4_999, 5_001, 20_000]);
        assert_eq!(nodes[1].options, [0, 1_999, 2_001, 4_999, 5_001, 20_000]);
        assert_eq!(with_learned(7, &[]), 7);
        assert_ne!(with_learned(7, &[2_000]), with_learned(7, &[2_001]));
    }
}

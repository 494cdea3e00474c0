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
//! A run whose world, at an event, is in a state an earlier run of the same depth has
//! already been in with at least as many faults left to spend is cut there: everything
//! that can follow was explored from the earlier visit (the fingerprint covers everything
//! that decides the rest of the run and its outcome; see [`World::fingerprint`]). The
//! search is *complete* when every sequence within the bound was run or cut this way; then
//! no property violation within the bound exists, up to fingerprint collisions (64 bits).
//!
//! `swarm` and `random` sample seeds instead: plain random simulation, and swarm testing,
//! where each seed first decides which fault purposes are on at all and how likely
//! (at most the model's probability times 16, at most one half), so that rare combinations
//! of faults show up. What a swarm seed decided is its choice vector, which replays like any
//! other.

use std::cell::Cell;
use std::collections::HashMap;

use super::menu;
use crate::check::{Metrics, Property, RunSummary};
use crate::design::Design;
use crate::model::Model;
use crate::sim::{Alternatives, Chooser, Class, Millis, Purpose, RandomChooser, Recorder};
use crate::world::World;

/// How the schedule space is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Every choice sequence within the fault budget, depth first, fewest faults first.
    Dfs,
    /// Random seeds, each with its own mix of enabled faults.
    Swarm,
    /// Plain random seeds, as `run` draws them.
    Random,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Dfs => "dfs",
            Strategy::Swarm => "swarm",
            Strategy::Random => "random",
        }
    }
}

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
}

impl Default for Bound {
    fn default() -> Self {
        Bound {
            max_faults: 2,
            max_runs: 1_000_000,
            max_states: 4_000_000,
        }
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    match strategy {
        Strategy::Dfs => dfs(model, design, properties, bound),
        Strategy::Swarm | Strategy::Random => sample(model, design, properties, strategy, bound),
    }
}

/// One choice point on the current path: the options it offers and which one the path
/// takes.
#[derive(Clone, Debug)]
struct Node {
    options: Vec<u64>,
    next: usize,
    fault: bool,
}

impl Node {
    fn value(&self) -> u64 {
        self.options[self.next]
    }
}

/// The chooser of one `dfs` run: replays the path's prefix, then opens new choice points
/// with their first option.
struct PathChooser<'a> {
    nodes: &'a mut Vec<Node>,
    /// Choice points passed so far in this run (shared with the pruning hook).
    pos: &'a Cell<usize>,
    /// Non-default fault choices so far in this run (shared with the pruning hook).
    faults: &'a Cell<u32>,
    /// Set when the budget forbade a fault choice.
    capped: &'a Cell<bool>,
    budget: u32,
    thresholds: &'a [Millis],
}

impl PathChooser<'_> {
    fn options(&self, purpose: Purpose, alternatives: Alternatives<'_>) -> (Vec<u64>, bool) {
        let all = || (0..alternatives.len()).collect::<Vec<u64>>();
        match (purpose.class(), alternatives) {
            (Class::Fault, _) if self.faults.get() >= self.budget => {
                self.capped.set(true);
                (vec![0], true)
            }
            (Class::Fault, _) => (all(), true),
            (Class::Timing, Alternatives::Span { min, len }) => {
                (menu::menu(min, len, self.thresholds), false)
            }
            _ => (all(), false),
        }
    }
}

impl Chooser for PathChooser<'_> {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        let i = self.pos.get();
        self.pos.set(i + 1);
        if i == self.nodes.len() {
            let (options, fault) = self.options(purpose, alternatives);
            self.nodes.push(Node {
                options,
                next: 0,
                fault,
            });
        }
        let node = &self.nodes[i];
        let value = node.value();
        if node.fault && value != 0 {
            self.faults.set(self.faults.get() + 1);
        }
        value
    }

    fn orders_ties(&self) -> bool {
        true
    }
}

/// Moves the path to its next sequence: the deepest choice point with an option left takes
/// it, and everything after it is dropped. False when the tree is exhausted.
fn advance(nodes: &mut Vec<Node>) -> bool {
    while let Some(n) = nodes.last_mut() {
        if n.next + 1 < n.options.len() {
            n.next += 1;
            return true;
        }
        nodes.pop();
    }
    false
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

fn dfs(model: &Model, design: &dyn Design, properties: &[Property], bound: Bound) -> Exploration {
    let thresholds = menu::thresholds(model);
    let mut world = World::new(model, design, false);
    let mut report = Exploration {
        strategy: Strategy::Dfs,
        bound,
        levels: Vec::new(),
        pruning: true,
        visited_full: false,
        violations: Vec::new(),
    };
    let mut total_runs = 0u64;
    for k in 0..=bound.max_faults {
        let mut level = Level {
            max_faults: k,
            ..Level::default()
        };
        // Fingerprint -> the most faults still to spend when it was last reached.
        let mut visited: HashMap<u64, u32> = HashMap::new();
        let mut nodes: Vec<Node> = Vec::new();
        let mut found_here = false;
        let capped = Cell::new(false);
        level.complete = loop {
            if total_runs >= bound.max_runs {
                break false;
            }
            total_runs += 1;
            level.runs += 1;
            let prefix = nodes.len();
            let (pos, faults) = (Cell::new(0), Cell::new(0));
            let mut cut = false;
            {
                let mut chooser = PathChooser {
                    nodes: &mut nodes,
                    pos: &pos,
                    faults: &faults,
                    capped: &capped,
                    budget: k,
                    thresholds: &thresholds,
                };
                let mut at_event = |w: &World<'_>| {
                    // The prefix replays states an earlier run visited: look only past it.
                    if pos.get() < prefix || !report.pruning {
                        return true;
                    }
                    let Some(fp) = w.fingerprint() else {
                        report.pruning = false;
                        return true;
                    };
                    let left = k - faults.get();
                    let room = visited.len() < bound.max_states;
                    match visited.get_mut(&fp) {
                        Some(best) if *best >= left => {
                            cut = true;
                            false
                        }
                        Some(best) => {
                            *best = left;
                            true
                        }
                        None if room => {
                            visited.insert(fp, left);
                            true
                        }
                        None => {
                            report.visited_full = true;
                            true
                        }
                    }
                };
                world.run_observed(&mut chooser, &mut at_event);
            }
            level.max_depth = level.max_depth.max(pos.get());
            if cut {
                level.pruned += 1;
                // The choice points after the cut were never reached: nothing to explore
                // below them from this run.
                nodes.truncate(pos.get());
            } else {
                let summary = Metrics::default().add_run(&world);
                for p in violated(properties, &summary) {
                    found_here = true;
                    if report.violations.iter().all(|v| v.property != p) {
                        report.violations.push(Violation {
                            property: p,
                            faults: faults.get(),
                            values: nodes[..pos.get()].iter().map(Node::value).collect(),
                            after_runs: total_runs,
                        });
                    }
                }
            }
            if !advance(&mut nodes) {
                break true;
            }
        };
        level.distinct_states = visited.len() as u64;
        level.saturated = level.complete && !capped.get();
        let (complete, saturated) = (level.complete, level.saturated);
        report.levels.push(level);
        // Fewest faults first: a violation at this budget ends the search; so does a limit,
        // and so does a budget no run could spend.
        if found_here || !complete || saturated {
            break;
        }
    }
    report
}

/// Seeds of the swarm's configuration stream are the run's seed mixed with this, so that the
/// configuration and the run's own draws are independent.
const SWARM_SALT: u64 = 0x5357_4152_4d5f_6366; // "SWARM_cf"

/// The swarm's choice of how likely each fault purpose is in one seed: off, or the model's
/// probability times 1, 4 or 16 (at most one half).
struct SwarmChooser {
    random: RandomChooser,
    /// Per purpose (by index): 0 = off, else the multiplier.
    scale: [u64; Purpose::COUNT],
}

impl SwarmChooser {
    fn new(seed: u64) -> Self {
        let mut config = RandomChooser::new(seed ^ SWARM_SALT);
        let mut scale = [0; Purpose::COUNT];
        for p in Purpose::ALL {
            if p.class() == Class::Fault {
                scale[p.index()] =
                    [0, 1, 4, 16][config.choose(p, Alternatives::Uniform(4)) as usize];
            }
        }
        SwarmChooser {
            random: RandomChooser::new(seed),
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
) -> Exploration {
    let mut world = World::new(model, design, false);
    let mut level = Level::default();
    let mut violations = Vec::new();
    for seed in 0..bound.max_runs {
        level.runs += 1;
        let mut random;
        let mut swarm;
        let inner: &mut dyn Chooser = match strategy {
            Strategy::Swarm => {
                swarm = SwarmChooser::new(seed);
                &mut swarm
            }
            _ => {
                random = RandomChooser::new(seed);
                &mut random
            }
        };
        let mut recorder = Recorder::new(inner);
        world.run(&mut recorder);
        level.max_depth = level.max_depth.max(recorder.choices.len());
        let summary = Metrics::default().add_run(&world);
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
        if any {
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
    }
}

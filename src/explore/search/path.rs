//! The path of a `dfs` search: the choice points of the current run, the options each
//! offers and the one the path takes, and the chooser that walks it ([`PathChooser`]):
//! it replays the path's prefix, then opens new choice points with the options the
//! budgets leave and takes the first. After a run, [`advance`] moves the path to the next
//! sequence, depth first.

use std::cell::{Cell, RefCell};

use super::super::menu;
use super::shard::Split;
use crate::sim::{Alternatives, Chooser, Class, Millis, Purpose, TieEvent};

/// One choice point on the current path: the options it offers and which one the path
/// takes.
#[derive(Clone, Debug)]
pub(super) struct Node {
    pub(super) options: Vec<u64>,
    pub(super) next: usize,
    pub(super) fault: bool,
    /// For the order of a tie under [`Reductions::por`](super::Reductions::por): the tied
    /// events (the options are indices into it, those not asleep), so that the ones taken
    /// before the current one are put to sleep.
    pub(super) tie: Vec<TieEvent>,
}

impl Node {
    pub(super) fn value(&self) -> u64 {
        self.options[self.next]
    }
}

/// What one run's chooser and the world's hooks during the run share: how far the run is
/// and what it has spent. A run restored from a saved world starts from the saved run's
/// ([`super::snapshot::Snap::resume`]).
#[derive(Default)]
pub(super) struct RunState {
    /// Choice points passed so far in this run.
    pub(super) pos: Cell<usize>,
    /// Non-default fault choices so far in this run.
    pub(super) faults: Cell<u32>,
    /// Choices other than their first option so far in this run.
    pub(super) deviations: Cell<u32>,
    /// The deepest choice point of this run where a budget refused options: the deviation
    /// budget, and the fault budget.
    pub(super) refused_at: Cell<Option<usize>>,
    pub(super) refused_fault_at: Cell<Option<usize>>,
    /// Thresholds the design made known so far in this run (sorted, deduplicated, none of
    /// the search's own): a function of the run's prefix, so a menu opened at a choice
    /// point is the same on every run through it.
    pub(super) learned: RefCell<Vec<Millis>>,
    /// Partial-order reduction ([`Reductions::por`](super::Reductions::por)): the sleep
    /// set, the events due now that need not run next, since every order starting with one
    /// of them was explored (a tie's options taken before the current one, as long as each
    /// event handled since is independent of them).
    pub(super) sleep: RefCell<Vec<TieEvent>>,
    /// Set when every event due now was asleep: the run repeats explored orders, and ends.
    pub(super) asleep: Cell<bool>,
}

/// What the budgets of a pass refused in any of its runs.
#[derive(Default)]
pub(super) struct Capped {
    /// The fault budget forbade a fault choice.
    pub(super) faults: Cell<bool>,
    /// The deviation budget forbade a choice.
    pub(super) deviations: Cell<bool>,
}

/// The chooser of one `dfs` run: replays the path's prefix, then opens new choice points
/// with the options the budgets leave and takes the first.
pub(super) struct PathChooser<'a> {
    pub(super) nodes: &'a mut Vec<Node>,
    /// The run's counts, shared with the world's hooks (the pruning hook reads them).
    pub(super) run: &'a RunState,
    pub(super) capped: &'a Capped,
    pub(super) fault_budget: u32,
    pub(super) deviation_budget: u32,
    pub(super) thresholds: &'a [Millis],
    /// Partial-order reduction ([`Reductions::por`](super::Reductions::por)).
    pub(super) por: bool,
    /// Symmetry reduction ([`Reductions::symmetry`](super::Reductions::symmetry)): one of
    /// interchangeable alternatives.
    pub(super) symmetry: bool,
    /// The split of a sharded search ([`super::explore_shard`]).
    pub(super) split: Option<&'a Split>,
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
                let learned = self.run.learned.borrow();
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
        if options.len() > 1 && fault && self.run.faults.get() >= self.fault_budget {
            self.capped.faults.set(true);
            self.run.refused_fault_at.set(Some(i));
            options.truncate(1);
        }
        if options.len() > 1 && !fault && self.run.deviations.get() >= self.deviation_budget {
            self.capped.deviations.set(true);
            self.run.refused_at.set(Some(i));
            options.truncate(1);
        }
        (options, fault)
    }

    /// Passes schedule choice point `i` (a tie's order or a worker pick): counts it for
    /// the shard's split and, if the path takes another option than its first, as a
    /// deviation.
    pub(super) fn take_schedule(&self, i: usize) {
        self.run.pos.set(i + 1);
        let node = &self.nodes[i];
        if let Some(s) = self.split {
            s.at_choice(i, node.options.len());
        }
        if node.next > 0 {
            self.run.deviations.set(self.run.deviations.get() + 1);
        }
    }

    /// Opens the choice point at the current position with `options` (a schedule choice,
    /// never a fault), cut to its first option if the deviation budget is spent.
    pub(super) fn open(&mut self, mut options: Vec<u64>, tie: Vec<TieEvent>) {
        let i = self.nodes.len();
        if options.len() > 1 && self.run.deviations.get() >= self.deviation_budget {
            self.capped.deviations.set(true);
            self.run.refused_at.set(Some(i));
            options.truncate(1);
        }
        self.nodes.push(Node {
            options,
            next: 0,
            fault: false,
            tie,
        });
    }

    /// Another shard's run, past its split point: it takes the first option everywhere
    /// (0 in every menu) and opens no choice point, until the next event cuts it.
    pub(super) fn foreign(&self) -> bool {
        self.split.is_some_and(Split::foreign)
    }
}

impl Chooser for PathChooser<'_> {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        if self.foreign() {
            return 0;
        }
        let i = self.run.pos.get();
        self.run.pos.set(i + 1);
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
                &self.run.faults
            } else {
                &self.run.deviations
            };
            counter.set(counter.get() + 1);
        }
        node.value()
    }

    fn orders_ties(&self) -> bool {
        true
    }

    fn order(&mut self, tie: &[TieEvent]) -> Option<usize> {
        if self.foreign() {
            return None;
        }
        if !self.por && !self.symmetry {
            return match tie.len() {
                0 | 1 => Some(0),
                n => Some(self.choose(Purpose::Order, Alternatives::Uniform(n as u64)) as usize),
            };
        }
        self.order_reduced(tie)
    }

    fn choose_up_to_symmetry(&mut self, purpose: Purpose, classes: &[u32]) -> u64 {
        if self.foreign() {
            return 0;
        }
        if !self.symmetry || classes.len() <= 1 {
            return match classes.len() {
                0 | 1 => 0,
                n => self.choose(purpose, Alternatives::Uniform(n as u64)),
            };
        }
        self.choose_one_per_class(classes)
    }

    fn handled(&mut self, event: TieEvent) {
        if self.por {
            self.wake(event);
        }
    }

    fn learn_threshold(&mut self, ms: Millis) {
        if ms == 0 || self.thresholds.binary_search(&ms).is_ok() {
            return;
        }
        let mut learned = self.run.learned.borrow_mut();
        if let Err(at) = learned.binary_search(&ms) {
            learned.insert(at, ms);
        }
    }
}

/// Mixes the thresholds learned so far into a state's fingerprint: two runs in the same
/// world state but with different thresholds known offer different menus from there on, so
/// they are different states of the search.
pub(super) fn with_learned(fp: u64, learned: &[Millis]) -> u64 {
    learned.iter().fold(fp, |h, &t| {
        (h ^ t).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29)
    })
}

/// Moves the path to its next sequence: the deepest choice point with an option left takes
/// it, and everything after it is dropped. Returns that choice point's index, `None` when
/// the tree is exhausted.
pub(super) fn advance(nodes: &mut Vec<Node>) -> Option<usize> {
    while let Some(n) = nodes.last_mut() {
        if n.next + 1 < n.options.len() {
            n.next += 1;
            return Some(nodes.len() - 1);
        }
        nodes.pop();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A threshold learned during a run reaches the menus of the timing choices after it,
    /// not the menus already opened, and is mixed into the state's fingerprint.
    #[test]
    fn a_learned_threshold_shapes_only_later_menus() {
        let mut nodes = Vec::new();
        let run = RunState::default();
        let thresholds = [5_000];
        let mut chooser = PathChooser {
            nodes: &mut nodes,
            run: &run,
            capped: &Capped::default(),
            por: false,
            symmetry: false,
            split: None,
            fault_budget: 0,
            deviation_budget: 10,
            thresholds: &thresholds,
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
        assert_eq!(*run.learned.borrow(), [2_000]);
        assert_eq!(nodes[0].options, [0, 4_999, 5_001, 20_000]);
        assert_eq!(nodes[1].options, [0, 1_999, 2_001, 4_999, 5_001, 20_000]);
        assert_eq!(with_learned(7, &[]), 7);
        assert_ne!(with_learned(7, &[2_000]), with_learned(7, &[2_001]));
    }
}

//! The reductions of schedule choices: partial-order reduction by sleep sets (Godefroid)
//! of the order of events due at the same instant
//! ([`Reductions::por`](super::Reductions::por)), and symmetry, one of interchangeable
//! alternatives ([`Reductions::symmetry`](super::Reductions::symmetry)). Both only narrow the
//! options a [`PathChooser`] opens; the sleep set a state is reached with is part of what
//! the search remembers of it ([`sleep_key`]).

use super::path::PathChooser;
use crate::sim::TieEvent;
use crate::world::World;

impl PathChooser<'_> {
    /// The order of a tie under partial-order or symmetry reduction: of the tied events
    /// not asleep, the path's option; `None` when every one is asleep (the run repeats
    /// explored orders and ends there).
    pub(super) fn order_reduced(&mut self, tie: &[TieEvent]) -> Option<usize> {
        let por = self.por;
        let mut sleep = self.run.sleep.borrow_mut();
        // Sleepers are events due at one instant: every one of them has run or the run
        // ended before the clock moves on, except one a pause put off (it is then a new
        // event), so an earlier instant's sleepers are forgotten.
        if sleep.first().is_some_and(|e| e.at_ms != tie[0].at_ms) {
            sleep.clear();
        }
        let asleep = |e: &TieEvent| por && sleep.iter().any(|s| s.id == e.id);
        if tie.len() == 1 {
            if asleep(&tie[0]) {
                self.run.asleep.set(true);
                return None;
            }
            return Some(0);
        }
        let i = self.run.pos.get();
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
                self.run.asleep.set(true);
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

    /// A schedule choice among alternatives of `classes` (0: unclassed) under symmetry
    /// reduction: one alternative of each class, the first; every unclassed one.
    pub(super) fn choose_one_per_class(&mut self, classes: &[u32]) -> u64 {
        let i = self.run.pos.get();
        if i == self.nodes.len() {
            let options: Vec<u64> = (0..classes.len())
                .filter(|&j| classes[j] == 0 || !classes[..j].contains(&classes[j]))
                .map(|j| j as u64)
                .collect();
            self.open(options, Vec::new());
        }
        self.take_schedule(i);
        self.nodes[i].value()
    }

    /// `event` ran: the sleepers it depends on wake up.
    pub(super) fn wake(&self, event: TieEvent) {
        self.run
            .sleep
            .borrow_mut()
            .retain(|s| s.at_ms == event.at_ms && s.independent(&event));
    }
}

/// The events asleep at a state, by their positions in the queue, as a bit set (`None` if
/// one sits at position 64 or later). A state reached with more events asleep leaves more
/// orders to other paths: a visit is cut only where an earlier one slept on no more
/// ([`super::memo::Closed::covers`]).
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

/// The state `fp` of world `w` with the events of `sleep` asleep, as the search remembers
/// it: the fingerprint (the sleep set mixed in where it does not fit a mask) and the sleep
/// mask (0: none asleep).
pub(super) fn sleep_key(fp: u64, w: &World<'_>, sleep: &[TieEvent]) -> (u64, u64) {
    if sleep.is_empty() {
        return (fp, 0);
    }
    let ids: Vec<u32> = sleep.iter().map(|e| e.id).collect();
    let positions = w.queued_positions(&ids);
    match sleep_mask(&positions) {
        Some(m) => (fp, m),
        None => (with_sleep(fp, &positions), 0),
    }
}

//! Worlds saved along the path of a `dfs` search ([`Reductions::snapshots`]): the world
//! is saved after each few new choices of a run, and the next run through the same
//! choices restores it instead of replaying them from the start. The same runs, the same
//! states, the same verdict; only cheaper.
//!
//! [`Reductions::snapshots`]: super::Reductions::snapshots

use std::cell::{Cell, RefCell};

use super::path::RunState;
use super::shard::Split;
use crate::sim::{Millis, TieEvent};
use crate::world::World;
use crate::world::snapshot::Snapshot;

/// Choices between two saved worlds on a path: a run then replays fewer than this many of
/// its path's choices, and saves a world only so often (a copy of the world costs about as
/// much as replaying a few choices' events).
const SNAPSHOT_EVERY: usize = 8;

/// A world saved after `pos` choices of a run, with its chooser's counts at that moment.
pub(super) struct Snap {
    pos: usize,
    faults: u32,
    deviations: u32,
    learned: Vec<Millis>,
    sleep: Vec<TieEvent>,
    /// The sharded search's state of the run ([`Split::run_state`]).
    split: (u64, bool, bool),
    pub(super) world: Snapshot,
}

impl Snap {
    /// The state of a run that starts from `from` (from the start: `None`): a run
    /// restored after `p` choices has passed them as the saved run did.
    pub(super) fn resume(from: Option<&Snap>, split: Option<&Split>) -> RunState {
        if let Some(s) = split {
            s.start_run();
            if let Some(f) = from {
                s.resume(f.split);
            }
        }
        let Some(s) = from else {
            return RunState::default();
        };
        RunState {
            pos: Cell::new(s.pos),
            faults: Cell::new(s.faults),
            deviations: Cell::new(s.deviations),
            learned: RefCell::new(s.learned.clone()),
            sleep: RefCell::new(s.sleep.clone()),
            ..RunState::default()
        }
    }
}

/// The worlds saved along the current path, by position, and whether saving is on (off
/// for good once an executor could not be copied).
pub(super) struct Snapshots {
    saved: Vec<Snap>,
    saving: bool,
}

impl Snapshots {
    pub(super) fn new(on: bool) -> Self {
        Snapshots {
            saved: Vec::new(),
            saving: on,
        }
    }

    /// The saved world a run starts from, the first `prefix` choices of its path being
    /// the previous run's. A world saved after `p` choices holds the first `p` choices of
    /// its run: it stands for this run's start if they are this path's, that is if `p` is
    /// at most the position of the choice the path just moved (`prefix - 1`).
    pub(super) fn start(&mut self, prefix: usize) -> Option<Snap> {
        while self.saved.last().is_some_and(|s| s.pos >= prefix) {
            self.saved.pop();
        }
        self.saved.pop()
    }

    /// One run's saving of worlds past the path's first `prefix` choices, the run started
    /// from `from`.
    pub(super) fn saver(&self, prefix: usize, from: Option<&Snap>) -> Saver {
        Saver {
            prefix,
            last: from.map(|s| s.pos),
            saved: Vec::new(),
            saving: self.saving,
        }
    }

    /// After a run: the world it started from and those it saved are on the path.
    pub(super) fn keep(&mut self, from: Option<Snap>, mut saver: Saver) {
        self.saved.extend(from);
        self.saved.append(&mut saver.saved);
        self.saving = saver.saving;
    }
}

/// The worlds one run saves.
pub(super) struct Saver {
    prefix: usize,
    /// Where the last world on the path was saved.
    last: Option<usize>,
    saved: Vec<Snap>,
    saving: bool,
}

impl Saver {
    /// Between two events of the run: past the path's old part, the world is saved once
    /// after each new choice, at most every [`SNAPSHOT_EVERY`] choices.
    pub(super) fn between(&mut self, w: &World<'_>, run: &RunState, split: Option<&Split>) {
        let p = run.pos.get();
        if !self.saving || p < self.prefix || self.last.is_some_and(|l| p < l + SNAPSHOT_EVERY) {
            return;
        }
        self.last = Some(p);
        match w.save() {
            Some(world) => self.saved.push(Snap {
                pos: p,
                faults: run.faults.get(),
                deviations: run.deviations.get(),
                learned: run.learned.borrow().clone(),
                sleep: run.sleep.borrow().clone(),
                split: split.map_or((1, false, false), Split::run_state),
                world,
            }),
            // An executor that cannot be copied: every run from its start.
            None => self.saving = false,
        }
    }
}

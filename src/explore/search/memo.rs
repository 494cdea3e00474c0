//! What a `dfs` search remembers of the states its runs met: within a pass, every state
//! visited (a later visit with no more budget left is cut); across passes and fault
//! budgets, the states whose every continuation was explored ([`Reductions::memo`]).

use std::collections::HashMap;

#[cfg(doc)]
use super::Reductions;

/// The states closed so far, by fingerprint: kept across passes and fault budgets.
pub(super) type ClosedStates = HashMap<u64, Closed>;

/// A state whose subtree was finished, for [`Reductions::memo`]: what its runs covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Closed {
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
    pub(super) fn covers(self, faults_left: u32, sleep: u64) -> bool {
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
pub(super) struct Open {
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
    pub(super) fn mark_partial(&mut self, p: usize, why: u8) {
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
    fn finish(&mut self, moved: Option<usize>, closed: &mut ClosedStates, room: usize) {
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

/// How a run ended at a state it met, if it did.
#[derive(Clone, Copy, Default)]
pub(super) struct Cut {
    /// The run was cut at a state explored already.
    pub(super) any: bool,
    /// It was cut at a state that is not closed: its subtree stands for the continuations
    /// within the pass's budgets, not for every one.
    pub(super) partial: bool,
    /// It was cut at a state closed only up to a number of faults.
    pub(super) bounded: bool,
}

/// A state a run met past its path's prefix, as the search remembers it.
pub(super) struct Visit {
    /// The fingerprint (with the thresholds learned and a sleep set that fits no mask).
    pub(super) fp: u64,
    /// The events asleep ([`super::por::sleep_key`]).
    pub(super) sleep: u64,
    pub(super) faults_left: u32,
    pub(super) deviations_left: u32,
    /// Choice points passed before it.
    pub(super) pos: usize,
}

/// What one pass remembers: the states it visited, and (for [`Reductions::memo`]) the
/// subtrees it has not finished.
pub(super) struct PassMemory {
    /// (fingerprint, faults left) -> the most deviations left it was reached with, and the
    /// events asleep then (a sleep mask).
    visited: HashMap<(u64, u32), (u32, u64)>,
    /// Most states remembered (`--max-states`).
    room: usize,
    /// The visited set reached `room`.
    pub(super) full: bool,
    open: Open,
}

impl PassMemory {
    pub(super) fn new(room: usize) -> Self {
        PassMemory {
            visited: HashMap::new(),
            room,
            full: false,
            open: Open::default(),
        }
    }

    /// States visited in the pass.
    pub(super) fn states(&self) -> u64 {
        self.visited.len() as u64
    }

    /// A run meets state `v`; `closed`: the closed states, if memo is on. Returns whether
    /// the run goes on, and records why it was cut in `cut`.
    pub(super) fn meet(&mut self, closed: Option<&ClosedStates>, v: Visit, cut: &mut Cut) -> bool {
        if let Some(c) = closed.and_then(|closed| closed.get(&v.fp))
            && c.covers(v.faults_left, v.sleep)
        {
            cut.any = true;
            // Its subtree met fault choices the budget refused: so would this one have.
            cut.bounded = c.faults_left != u32::MAX;
            return false;
        }
        let (left, mask) = (v.deviations_left, v.sleep);
        let room = self.visited.len() < self.room;
        let go_on = match self.visited.get_mut(&(v.fp, v.faults_left)) {
            Some(best) if best.0 >= left && best.1 & !mask == 0 => {
                cut.any = true;
                cut.partial = true;
                false
            }
            Some(best) => {
                if left >= best.0 {
                    *best = (left, mask);
                }
                true
            }
            None if room => {
                self.visited.insert((v.fp, v.faults_left), (left, mask));
                true
            }
            None => {
                self.full = true;
                true
            }
        };
        if go_on && closed.is_some() {
            self.open.states.push((v.pos, v.fp, v.faults_left, mask));
        }
        go_on
    }

    /// A run ended after `pos` choice points, cut as `cut`, a budget having refused
    /// options at `refused_at` (deviations) and `refused_fault_at` (faults): the subtrees
    /// that contain those choice points do not stand for every continuation.
    pub(super) fn ended(
        &mut self,
        pos: usize,
        cut: Cut,
        refused_at: Option<usize>,
        refused_fault_at: Option<usize>,
    ) {
        if let Some(i) = refused_at {
            self.open.mark_partial(i, PARTIAL_PASS);
        }
        if let Some(i) = refused_fault_at {
            self.open.mark_partial(i, PARTIAL_FAULTS);
        }
        if cut.partial {
            self.open.mark_partial(pos, PARTIAL_PASS);
        }
        if cut.bounded {
            self.open.mark_partial(pos, PARTIAL_FAULTS);
        }
    }

    /// The path moved choice point `moved` (`None`: the tree is exhausted): the states
    /// whose subtree is now finished close, into `closed` (at most `room` of them).
    pub(super) fn moved(&mut self, moved: Option<usize>, closed: &mut ClosedStates, room: usize) {
        self.open.finish(moved, closed, room);
    }
}

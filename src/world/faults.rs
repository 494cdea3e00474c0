//! Scripted faults: documented scenarios as exact cases.
//!
//! Compiled once from the model into small lookup lists. A fault names a *create* by its
//! number, counted from 1 in the order executors ask to send creates, across the run: reads
//! and status polls are not counted and never hit by a scripted fault, so "drop the reply of
//! attempt 1" means the first request that can commit, whatever a design reads first.
//!
//! Each fault remembers whether it fired (its attempt was reached and it took effect, or a
//! pause froze an event), so that a sweep can warn about scripted faults it never exercised.

use std::cell::Cell;

use crate::model::{CrashPoint, Fault, Paused};
use crate::sim::Millis;
use crate::vocab::ids::{AttemptId, Region, WorkerId};

/// The index of a fault in the model's list.
type Index = usize;

#[derive(Clone, Debug, Default)]
pub struct Faults {
    drop_request: Vec<(u32, Index)>,
    drop_reply: Vec<(u32, Index)>,
    crash_worker: Vec<(u32, CrashPoint, Option<u32>, Index)>,
    crash_commit: Vec<(u32, Option<u32>, Index)>,
    crash_provider: Vec<(u32, Index)>,
    slow: Vec<(u32, Millis, Index)>,
    reroute: Vec<(u32, u32, Index)>,
    reject: Vec<(u32, Index)>,
    pauses: Vec<(Paused, Option<u32>, Millis, Millis, Index)>,
    /// Per fault of the model, whether it fired since [`Faults::take_fired`] last ran. Set
    /// from the `&self` queries, outside the simulation state: it never changes a run.
    fired: Vec<Cell<bool>>,
    /// This run's create number of each attempt (by attempt id), `None` for reads.
    numbers: Vec<Option<u32>>,
    creates: u32,
    /// The run's storage commits so far (external executors' `fsync`s during turns).
    commits: u32,
}

impl Faults {
    pub fn new(faults: &[Fault]) -> Self {
        let mut f = Faults {
            fired: vec![Cell::new(false); faults.len()],
            ..Faults::default()
        };
        for (i, fault) in faults.iter().enumerate() {
            match *fault {
                Fault::DropRequest { attempt } => f.drop_request.push((attempt, i)),
                Fault::DropReply { attempt } => f.drop_reply.push((attempt, i)),
                Fault::CrashWorker {
                    attempt,
                    point,
                    worker,
                } => f.crash_worker.push((attempt, point, worker, i)),
                Fault::CrashAtCommit { commit, worker } => f.crash_commit.push((commit, worker, i)),
                Fault::CrashProvider { attempt } => f.crash_provider.push((attempt, i)),
                Fault::SlowProcessing { attempt, ms } => f.slow.push((attempt, ms, i)),
                Fault::Reroute { attempt, region } => f.reroute.push((attempt, region, i)),
                Fault::Reject { attempt } => f.reject.push((attempt, i)),
                Fault::Pause {
                    component,
                    from_ms,
                    duration_ms,
                    worker,
                } => f.pauses.push((
                    component,
                    worker,
                    from_ms,
                    from_ms.saturating_add(duration_ms),
                    i,
                )),
            }
        }
        f
    }

    /// Hashes what this run has counted: each attempt's create number and the creates so far
    /// (they decide which scripted faults hit later sends). The faults themselves are the
    /// model's; which ones fired is a warning for sweeps, kept across runs, and never changes
    /// a run (a fault hits by create number, not once only).
    pub(crate) fn fingerprint<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        let Faults {
            drop_request: _,
            drop_reply: _,
            crash_worker: _,
            crash_commit: _,
            crash_provider: _,
            slow: _,
            reroute: _,
            reject: _,
            pauses: _,
            fired: _,
            numbers,
            creates,
            commits,
        } = self;
        numbers.hash(h);
        creates.hash(h);
        commits.hash(h);
    }

    /// Per fault of the model, whether it fired in the runs since the last call; clears.
    pub fn take_fired(&mut self) -> Vec<bool> {
        self.fired.iter().map(|c| c.replace(false)).collect()
    }

    /// Marks fault `i` as fired and says yes.
    fn fire(&self, i: Index) -> bool {
        self.fired[i].set(true);
        true
    }

    /// Whether a fault of `list` names create `n`; marks it fired.
    fn hit(&self, list: &[(u32, Index)], n: Option<u32>) -> bool {
        n.and_then(|n| list.iter().find(|&&(m, _)| m == n))
            .is_some_and(|&(_, i)| self.fire(i))
    }

    /// Starts a new run.
    pub(crate) fn reset(&mut self) {
        self.numbers.clear();
        self.creates = 0;
        self.commits = 0;
    }

    /// The executor asks to send `attempt`; creates are numbered for the faults.
    pub(crate) fn number(&mut self, attempt: AttemptId, is_create: bool) {
        let index = attempt.0 as usize - 1;
        if self.numbers.len() <= index {
            self.numbers.resize(index + 1, None);
        }
        if is_create {
            self.creates += 1;
            self.numbers[index] = Some(self.creates);
        }
    }

    /// The create number of `a`, if it is a create.
    fn create(&self, a: AttemptId) -> Option<u32> {
        self.numbers.get(a.0 as usize - 1).copied().flatten()
    }

    pub fn drops_request(&self, a: AttemptId) -> bool {
        self.hit(&self.drop_request, self.create(a))
    }

    pub fn drops_reply(&self, a: AttemptId) -> bool {
        self.hit(&self.drop_reply, self.create(a))
    }

    /// Whether a scripted crash or pause names worker `w` (which makes it unlike the
    /// others: no symmetry between it and them).
    pub fn names_worker(&self, w: WorkerId) -> bool {
        self.crash_worker.iter().any(|c| c.2 == Some(w.0))
            || self.crash_commit.iter().any(|c| c.1 == Some(w.0))
            || self.pauses.iter().any(|p| p.1 == Some(w.0))
    }

    pub fn crashes_worker(&self, a: AttemptId, point: CrashPoint, worker: WorkerId) -> bool {
        let Some(c) = self.create(a) else {
            return false;
        };
        self.crash_worker
            .iter()
            .find(|&&(n, p, w, _)| n == c && p == point && w.is_none_or(|w| w == worker.0))
            .is_some_and(|&(.., i)| self.fire(i))
    }

    /// Worker `worker` makes a storage commit: its number in the run, and whether a scripted
    /// crash names it.
    pub fn commit(&mut self, worker: WorkerId) -> (u32, bool) {
        self.commits += 1;
        let n = self.commits;
        let hit = self
            .crash_commit
            .iter()
            .find(|&&(c, w, _)| c == n && w.is_none_or(|w| w == worker.0))
            .is_some_and(|&(.., i)| self.fire(i));
        (n, hit)
    }

    pub fn rejects(&self, a: AttemptId) -> bool {
        self.hit(&self.reject, self.create(a))
    }

    pub fn crashes_provider(&self, a: AttemptId) -> bool {
        self.hit(&self.crash_provider, self.create(a))
    }

    pub fn slow_processing(&self, a: AttemptId) -> Option<Millis> {
        let c = self.create(a)?;
        let &(_, ms, i) = self.slow.iter().find(|&&(n, ..)| n == c)?;
        self.fire(i);
        Some(ms)
    }

    /// The region attempt `a` is sent to.
    pub fn region(&self, a: AttemptId) -> Region {
        let c = self.create(a);
        Region(
            self.reroute
                .iter()
                .find(|&&(n, ..)| Some(n) == c)
                .map_or(0, |&(_, r, i)| {
                    self.fire(i);
                    r
                }),
        )
    }

    /// If `component` (of `worker`, for the executor's events) is paused at `now`, when the
    /// pause ends.
    /// Whether the model pauses anything at all (most models do not: the event loop then
    /// skips asking [`Faults::paused_until`] of every event).
    pub fn any_pause(&self) -> bool {
        !self.pauses.is_empty()
    }

    pub fn paused_until(
        &self,
        component: Paused,
        worker: Option<WorkerId>,
        now: Millis,
    ) -> Option<Millis> {
        self.pauses
            .iter()
            .filter(|&&(c, w, from, until, _)| {
                c == component
                    && w.is_none_or(|w| worker == Some(WorkerId(w)))
                    && from <= now
                    && now < until
            })
            .map(|&(.., until, i)| {
                self.fire(i);
                until
            })
            .max()
    }
}

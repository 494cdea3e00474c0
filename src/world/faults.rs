//! Scripted faults: documented scenarios as exact cases.
//!
//! Compiled once from the model into small lookup lists. A fault names a *create* by its
//! number, counted from 1 in the order executors ask to send creates, across the run: reads
//! and status polls are not counted and never hit by a scripted fault, so "drop the reply of
//! attempt 1" means the first request that can commit, whatever a design reads first.

use crate::model::{CrashPoint, Fault, Paused};
use crate::sim::Millis;
use crate::vocab::ids::{AttemptId, Region, WorkerId};

#[derive(Clone, Debug, Default)]
pub struct Faults {
    drop_request: Vec<u32>,
    drop_reply: Vec<u32>,
    crash_worker: Vec<(u32, CrashPoint, Option<u32>)>,
    crash_provider: Vec<u32>,
    slow: Vec<(u32, Millis)>,
    reroute: Vec<(u32, u32)>,
    reject: Vec<u32>,
    pauses: Vec<(Paused, Option<u32>, Millis, Millis)>,
    /// This run's create number of each attempt (by attempt id), `None` for reads.
    numbers: Vec<Option<u32>>,
    creates: u32,
}

impl Faults {
    pub fn new(faults: &[Fault]) -> Self {
        let mut f = Faults::default();
        for fault in faults {
            match *fault {
                Fault::DropRequest { attempt } => f.drop_request.push(attempt),
                Fault::DropReply { attempt } => f.drop_reply.push(attempt),
                Fault::CrashWorker {
                    attempt,
                    point,
                    worker,
                } => f.crash_worker.push((attempt, point, worker)),
                Fault::CrashProvider { attempt } => f.crash_provider.push(attempt),
                Fault::SlowProcessing { attempt, ms } => f.slow.push((attempt, ms)),
                Fault::Reroute { attempt, region } => f.reroute.push((attempt, region)),
                Fault::Reject { attempt } => f.reject.push(attempt),
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
                )),
            }
        }
        f
    }

    /// Starts a new run.
    pub(crate) fn reset(&mut self) {
        self.numbers.clear();
        self.creates = 0;
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
        self.create(a)
            .is_some_and(|n| self.drop_request.contains(&n))
    }

    pub fn drops_reply(&self, a: AttemptId) -> bool {
        self.create(a).is_some_and(|n| self.drop_reply.contains(&n))
    }

    pub fn crashes_worker(&self, a: AttemptId, point: CrashPoint, worker: WorkerId) -> bool {
        let Some(c) = self.create(a) else {
            return false;
        };
        self.crash_worker
            .iter()
            .any(|&(n, p, w)| n == c && p == point && w.is_none_or(|w| w == worker.0))
    }

    pub fn rejects(&self, a: AttemptId) -> bool {
        self.create(a).is_some_and(|n| self.reject.contains(&n))
    }

    pub fn crashes_provider(&self, a: AttemptId) -> bool {
        self.create(a)
            .is_some_and(|n| self.crash_provider.contains(&n))
    }

    pub fn slow_processing(&self, a: AttemptId) -> Option<Millis> {
        let c = self.create(a)?;
        self.slow.iter().find(|&&(n, _)| n == c).map(|&(_, ms)| ms)
    }

    /// The region attempt `a` is sent to.
    pub fn region(&self, a: AttemptId) -> Region {
        let c = self.create(a);
        Region(
            self.reroute
                .iter()
                .find(|&&(n, _)| Some(n) == c)
                .map_or(0, |&(_, r)| r),
        )
    }

    /// If `component` (of `worker`, for the executor's events) is paused at `now`, when the
    /// pause ends.
    pub fn paused_until(
        &self,
        component: Paused,
        worker: Option<WorkerId>,
        now: Millis,
    ) -> Option<Millis> {
        self.pauses
            .iter()
            .filter(|&&(c, w, from, until)| {
                c == component
                    && w.is_none_or(|w| worker == Some(WorkerId(w)))
                    && from <= now
                    && now < until
            })
            .map(|&(_, _, _, until)| until)
            .max()
    }
}

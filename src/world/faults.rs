//! Scripted faults: documented scenarios as exact cases.
//!
//! Compiled once from the model into small lookup lists. Attempts are numbered from 1 in the
//! order executors ask to send them, across the run.

use super::ids::{AttemptId, Region, WorkerId};
use crate::model::{CrashPoint, Fault, Paused};
use crate::sim::Millis;

#[derive(Clone, Debug, Default)]
pub struct Faults {
    drop_request: Vec<u32>,
    drop_reply: Vec<u32>,
    crash_worker: Vec<(u32, CrashPoint, Option<u32>)>,
    crash_provider: Vec<u32>,
    slow: Vec<(u32, Millis)>,
    reroute: Vec<(u32, u32)>,
    pauses: Vec<(Paused, Millis, Millis)>,
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
                Fault::Pause {
                    component,
                    from_ms,
                    duration_ms,
                } => f
                    .pauses
                    .push((component, from_ms, from_ms.saturating_add(duration_ms))),
            }
        }
        f
    }

    pub fn drops_request(&self, a: AttemptId) -> bool {
        self.drop_request.contains(&a.0)
    }

    pub fn drops_reply(&self, a: AttemptId) -> bool {
        self.drop_reply.contains(&a.0)
    }

    pub fn crashes_worker(&self, a: AttemptId, point: CrashPoint, worker: WorkerId) -> bool {
        self.crash_worker
            .iter()
            .any(|&(n, p, w)| n == a.0 && p == point && w.is_none_or(|w| w == worker.0))
    }

    pub fn crashes_provider(&self, a: AttemptId) -> bool {
        self.crash_provider.contains(&a.0)
    }

    pub fn slow_processing(&self, a: AttemptId) -> Option<Millis> {
        self.slow
            .iter()
            .find(|&&(n, _)| n == a.0)
            .map(|&(_, ms)| ms)
    }

    /// The region attempt `a` is sent to.
    pub fn region(&self, a: AttemptId) -> Region {
        Region(
            self.reroute
                .iter()
                .find(|&&(n, _)| n == a.0)
                .map_or(0, |&(_, r)| r),
        )
    }

    /// If `component` is paused at `now`, when the pause ends.
    pub fn paused_until(&self, component: Paused, now: Millis) -> Option<Millis> {
        self.pauses
            .iter()
            .filter(|&&(c, from, until)| c == component && from <= now && now < until)
            .map(|&(_, _, until)| until)
            .max()
    }
}

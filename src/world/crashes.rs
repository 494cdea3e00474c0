//! Worker processes crashing and restarting: the crash points the model scripts or draws,
//! what a crash closes (every open attempt of the worker, its journal's volatile part), and
//! the restart that hands the new process its waiting calls.

use super::*;

impl World<'_> {
    /// Whether `worker` crashes at `point` of `attempt`: a scripted fault, or a random one
    /// while the run's crash budget lasts.
    pub(super) fn crash_check(
        &mut self,
        worker: WorkerId,
        attempt: AttemptId,
        point: CrashPoint,
        ch: &mut dyn Chooser,
    ) -> bool {
        if self.faults.crashes_worker(attempt, point, worker) {
            return true;
        }
        if self.random_crashes >= self.model.workers.max_crashes {
            return false;
        }
        let c = &self.model.workers.crash;
        let p = match point {
            CrashPoint::BeforeDispatch => c.before_dispatch,
            CrashPoint::AfterSend => c.after_send,
            CrashPoint::AfterReply => c.after_reply,
            // Asked through the step's context, at the commit itself (turns.rs).
            CrashPoint::AtCommit => return false,
        };
        let crashed = ch.chance(Purpose::WorkerCrash, p);
        self.random_crashes += u32::from(crashed);
        crashed
    }

    pub(super) fn crash(
        &mut self,
        worker: WorkerId,
        attempt: AttemptId,
        point: CrashPoint,
        ch: &mut dyn Chooser,
    ) {
        self.crash_with(worker, ch, |restart_at_ms| WorkerEvent::Crashes {
            worker,
            point: point.name(),
            attempt,
            restart_at_ms,
        });
    }

    /// `worker`'s process dies at the run's storage commit `commit`.
    pub(super) fn crash_at_commit(&mut self, worker: WorkerId, commit: u32, ch: &mut dyn Chooser) {
        self.crash_with(worker, ch, |restart_at_ms| WorkerEvent::CrashesAtCommit {
            worker,
            commit,
            restart_at_ms,
        });
    }

    /// `worker` crashes: every open attempt of it is closed unanswered, its journal's volatile
    /// part is lost, its restart is due; `event` (given the restart's time) says how. With
    /// `workers.crash.machine_loss`, whether its machine is lost too is a fault of its own.
    fn crash_with(
        &mut self,
        worker: WorkerId,
        ch: &mut dyn Chooser,
        event: impl FnOnce(Millis) -> WorkerEvent,
    ) {
        self.workers[worker.0 as usize].crash();
        for i in 0..self.transport.attempts.len() {
            let a = &mut self.transport.attempts[i];
            if a.worker == worker && a.open {
                a.open = false;
                // Its answer will never reach anyone.
                self.unknown_from(AttemptId(i as u32 + 1));
                self.cancel_attempt_timer(AttemptId(i as u32 + 1));
            }
        }
        self.journal.get_mut().crash(worker);
        let restart_at = self.now + self.model.workers.restart_delay_ms;
        self.trace
            .log(self.now, Component::Executor, || event(restart_at));
        if ch.chance(Purpose::MachineLoss, self.model.workers.crash.machine_loss) {
            self.workers[worker.0 as usize].machine_lost = true;
            self.trace
                .log(self.now, Component::Executor, || WorkerEvent::MachineLost {
                    worker,
                });
        }
        self.push(restart_at, Event::WorkerRestart { worker });
    }

    pub(super) fn restart(&mut self, worker: WorkerId, ch: &mut dyn Chooser) {
        let executor = self.design.executor_in(self.model);
        let w = &mut self.workers[worker.0 as usize];
        w.restart(executor);
        let inbox = std::mem::take(&mut w.inbox);
        // In the model's spelling.
        let journal = match self.model.workers.journal {
            crate::model::Durability::Durable => "durable",
            crate::model::Durability::Volatile => "volatile",
        };
        self.trace
            .log(self.now, Component::Executor, || WorkerEvent::Restarts {
                worker,
                journal,
            });
        self.exec(worker, ch, |e, ctx| e.on_restart(ctx));
        for call in inbox {
            if self.workers[worker.0 as usize].up {
                self.exec(worker, ch, |e, ctx| e.on_call(ctx, call));
            } else {
                self.workers[worker.0 as usize].inbox.push(call);
            }
        }
    }
}

//! An executor worker's turn in the world: the design's callback runs with its context,
//! then the world carries out what it asked for (sends, timers, reports, thresholds for the
//! explorer), turns the claims it made into claims on intents, and hands the agent's own
//! commands (a call, a later act) to the queue.

use super::*;

impl World<'_> {
    pub(super) fn agent_out(&mut self, out: Option<AgentOut>, ch: &mut dyn Chooser) {
        match out {
            None => {}
            Some(AgentOut::Call {
                call,
                timeout_at_ms,
            }) => {
                let n = u64::from(self.model.workers.count);
                let worker = if ch.orders_ties() && n > 1 {
                    let classes = self.worker_classes();
                    ch.choose_up_to_symmetry(Purpose::WorkerPick, &classes)
                } else {
                    ch.index(Purpose::WorkerPick, n)
                };
                let worker = WorkerId(worker as u32);
                self.push(self.now, Event::CallDelivered { worker, call });
                // Built-in designs keep one journal shared by every worker: a redelivered
                // call would look already in hand anywhere (inert.rs warns).
                if let Some(after) = self.model.workers.redelivery_ms
                    && self.design.is_external()
                {
                    self.push(self.now.saturating_add(after), Event::Redeliver { call });
                }
                self.push_timer(
                    timeout_at_ms,
                    Event::AgentTimeout {
                        call: call.call,
                        issue: call.issue,
                    },
                );
            }
            Some(AgentOut::Later { intent, act, at_ms }) => {
                self.push(at_ms, Event::AgentAct { intent, act });
            }
        }
    }

    /// Runs one executor callback on `worker`, then carries out its commands.
    pub(super) fn exec(
        &mut self,
        worker: WorkerId,
        ch: &mut dyn Chooser,
        f: impl FnOnce(&mut dyn Executor, &mut ExecCtx<'_>),
    ) {
        self.workers[worker.0 as usize].touched = true;
        let should_retry = self.transport.answer_should_retry.take();
        let Some(mut executor) = self.workers[worker.0 as usize].executor.take() else {
            return;
        };
        // Set by a crash that lost the machine; the next step is the restart's.
        let machine_lost = std::mem::take(&mut self.workers[worker.0 as usize].machine_lost);
        let mut out = std::mem::take(&mut self.exec_out);
        let (faults, random_crashes) = (&mut self.faults, &mut self.random_crashes);
        let (max_crashes, p) = (
            self.model.workers.max_crashes,
            self.model.workers.crash.at_commit,
        );
        let mut commits = |w: WorkerId| {
            let (n, scripted) = faults.commit(w);
            let crashed = scripted
                || (*random_crashes < max_crashes && ch.chance(Purpose::WorkerCrash, p) && {
                    *random_crashes += 1;
                    true
                });
            (n, crashed)
        };
        let mut ctx = ExecCtx::new(
            self.now,
            (worker, self.workers[worker.0 as usize].incarnation),
            Lent {
                journal: self.journal.get_mut(),
                out: &mut out,
                minted: &mut self.transport.minted,
                trace: &mut self.trace,
                claims: &mut self.records.call_claims,
                commits: &mut commits,
            },
            should_retry.map(|v| (self.model.provider.should_retry.header.as_str(), v)),
        )
        .with_machine_lost(machine_lost);
        f(executor.as_mut(), &mut ctx);
        self.workers[worker.0 as usize].executor = Some(executor);
        self.tag_claims();
        self.exec_commands(worker, &mut out, ch);
        out.clear();
        self.exec_out = out;
    }

    /// Turns the claims the callback just made, on the calls their operations serve, into
    /// claims on the intents and steps those calls serve.
    pub(super) fn tag_claims(&mut self) {
        for c in self.records.call_claims.drain(..) {
            // A call the agent never made serves no intent: nothing to judge the claim by.
            let Some(intent) = self.agent.serves(c.call) else {
                self.trace
                    .log(c.at_ms, Component::Executor, || OpEvent::ClaimIgnored {
                        op: c.op,
                        call: c.call,
                    });
                continue;
            };
            debug_assert!(
                self.records
                    .claims
                    .last()
                    .is_none_or(|l| l.at_ms <= c.at_ms),
                "claims recorded out of time order"
            );
            self.records.claims.push(Claim {
                op: c.op,
                intent,
                at_ms: c.at_ms,
                kind: c.kind,
            });
        }
    }

    pub(super) fn exec_commands(
        &mut self,
        worker: WorkerId,
        cmds: &mut Vec<ExecCommand>,
        ch: &mut dyn Chooser,
    ) {
        let now = self.now;
        for cmd in cmds.drain(..) {
            if !self.workers[worker.0 as usize].up {
                break;
            }
            match cmd {
                ExecCommand::Send {
                    attempt,
                    op,
                    request,
                    timeout_ms,
                } => {
                    let is_create = matches!(request.kind, RequestKind::Create { .. });
                    self.faults.number(attempt, is_create);
                    if self.crash_check(worker, attempt, CrashPoint::BeforeDispatch, ch) {
                        self.crash(worker, attempt, CrashPoint::BeforeDispatch, ch);
                        break;
                    }
                    let timeout_ms = timeout_ms.unwrap_or(self.model.executor.timeout_ms);
                    self.send(worker, attempt, op, request, timeout_ms, ch);
                    if self.crash_check(worker, attempt, CrashPoint::AfterSend, ch) {
                        self.crash(worker, attempt, CrashPoint::AfterSend, ch);
                        break;
                    }
                }
                ExecCommand::Timer {
                    at_ms,
                    tag,
                    periodic,
                    spread_ms,
                } => self.set_timer(worker, at_ms, spread_ms, tag, periodic, ch),
                ExecCommand::Threshold { ms } => ch.learn_threshold(ms),
                ExecCommand::CrashAtCommit { commit } => {
                    self.crash_at_commit(worker, commit, ch);
                    break;
                }
                ExecCommand::Report {
                    call,
                    issue,
                    result,
                } => {
                    self.trace
                        .log(now, Component::Executor, || WorkerEvent::Reports {
                            worker,
                            call,
                            result,
                        });
                    self.push(
                        now,
                        Event::ToolResult {
                            call,
                            issue,
                            result,
                        },
                    );
                }
            }
        }
    }

    /// A timer the design set for `worker` at `at_ms`, jittered over `spread_ms`. The
    /// design's own delay is a threshold later timing choices may straddle; a jittered one
    /// is a timing choice itself, between its two ends.
    fn set_timer(
        &mut self,
        worker: WorkerId,
        at_ms: Millis,
        spread_ms: Millis,
        tag: u64,
        periodic: bool,
        ch: &mut dyn Chooser,
    ) {
        let now = self.now;
        let min = at_ms.saturating_sub(now);
        ch.learn_threshold(min);
        let at_ms = if spread_ms == 0 {
            at_ms
        } else {
            let max = min.saturating_add(spread_ms);
            ch.learn_threshold(max);
            now.saturating_add(ch.between(Purpose::Backoff, min, max))
        };
        let incarnation = self.workers[worker.0 as usize].incarnation;
        self.push(
            at_ms,
            Event::ExecTimer {
                worker,
                incarnation,
                tag,
                periodic,
            },
        );
    }
}

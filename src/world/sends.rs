//! An attempt's life in the world: the send a worker makes, the network's fate for its
//! request and its reply, the provider's commands (replies, effects committed into the
//! ledger), and what closes it for its worker (the reply, a timeout, a reset). The ground
//! truth is kept on the way: the operation each send serves, the moment from which its
//! outcome is unknown to the executor.

use super::*;

impl World<'_> {
    /// A worker sends `attempt` of `op`: recorded with the ground truth it serves, its
    /// timeout set, its request handed to the network.
    pub(super) fn send(
        &mut self,
        worker: WorkerId,
        attempt: AttemptId,
        op: OpId,
        request: Request,
        timeout_ms: Millis,
        ch: &mut dyn Chooser,
    ) {
        let now = self.now;
        let request = self.record_send(worker, attempt, op, request);
        self.trace
            .log(now, Component::Executor, || WorkerEvent::Sends {
                worker,
                op,
                attempt,
                request: request.kind.to_string(),
                key: request.key,
                region: (request.region.0 != 0).then(|| request.region.to_string()),
            });
        // A client without a timeout waits for as long as the run lasts.
        if timeout_ms != crate::design::context::NO_TIMEOUT {
            self.push_timer(
                now.saturating_add(timeout_ms),
                Event::AttemptTimeout { attempt },
            );
        }
        self.carry_request(attempt, ch);
    }

    /// Records the send of `attempt`: its worker, operation and request (in the region the
    /// faults put it), and the intent and step its operation serves. Returns the request
    /// as sent.
    fn record_send(
        &mut self,
        worker: WorkerId,
        attempt: AttemptId,
        op: OpId,
        request: Request,
    ) -> Request {
        let index = attempt.0 as usize - 1;
        let create = matches!(request.kind, RequestKind::Create { .. });
        if self.transport.attempts.len() <= index {
            let unsent = AttemptInfo {
                worker,
                op,
                open: false,
                create: false,
                serves: None,
            };
            self.transport.attempts.resize(index + 1, unsent);
            self.records.attempt_ops.resize(index + 1, op);
            self.transport.requests.resize(index + 1, request);
        }
        let serves = self.serves(op);
        self.transport.attempts[index] = AttemptInfo {
            worker,
            op,
            open: true,
            create,
            serves: Some(serves),
        };
        self.records.attempt_ops[index] = op;
        let record = self.op_record(op);
        record.intent.get_or_insert(serves);
        let request = Request {
            region: self.faults.region(attempt),
            ..request
        };
        self.transport.requests[index] = request;
        self.transport.remote_calls += 1;
        debug_assert!(
            self.transport.requests.len() == self.transport.attempts.len()
                && self.records.attempt_ops.len() == self.transport.attempts.len(),
            "one request and one operation per attempt"
        );
        request
    }

    /// The network's fate for the request of `attempt`: lost, or delivered (perhaps twice).
    fn carry_request(&mut self, attempt: AttemptId, ch: &mut dyn Chooser) {
        let now = self.now;
        match self.network.request(attempt, &self.faults, ch) {
            Transit::Lost { scripted } => {
                self.trace
                    .log(now, Component::Network, || NetworkEvent::RequestLost {
                        attempt,
                        scripted,
                    })
            }
            // Only a reply's connection is reset (`Network::reply`).
            Transit::Reset { .. } => {}
            Transit::Delivered {
                latency_ms,
                duplicate_ms,
            } => {
                self.push(now + latency_ms, Event::RequestArrives { attempt });
                if let Some(d) = duplicate_ms {
                    self.trace.log(now, Component::Network, || {
                        NetworkEvent::RequestDuplicated { attempt }
                    });
                    self.push(now + d, Event::RequestArrives { attempt });
                }
            }
        }
    }

    pub(super) fn attempt_timeout(&mut self, attempt: AttemptId, ch: &mut dyn Chooser) {
        self.close_unanswered(attempt, Response::Timeout, ch);
    }

    /// The connection of `attempt` was reset: its worker learns now that no answer comes
    /// (unless the attempt was closed already).
    pub(super) fn connection_reset(&mut self, attempt: AttemptId, ch: &mut dyn Chooser) {
        self.close_unanswered(attempt, Response::Reset, ch);
    }

    /// Closes `attempt`, still open, without an answer: its outcome is unknown, and its
    /// worker hears `response` (a timeout, whose timer this is, or a reset, which cancels
    /// the timer).
    pub(super) fn close_unanswered(
        &mut self,
        attempt: AttemptId,
        response: Response,
        ch: &mut dyn Chooser,
    ) {
        let info = &mut self.transport.attempts[attempt.0 as usize - 1];
        if !info.open {
            return;
        }
        info.open = false;
        let (worker, op) = (info.worker, info.op);
        if matches!(response, Response::Reset) {
            self.cancel_attempt_timer(attempt);
        }
        self.unknown_from(attempt);
        self.trace
            .log(self.now, Component::Executor, || match response {
                Response::Reset => WorkerEvent::ConnectionReset { worker, attempt },
                _ => WorkerEvent::TimedOut { worker, attempt },
            });
        self.exec(worker, ch, |e, ctx| {
            e.on_response(ctx, op, attempt, response)
        });
    }

    pub(super) fn reply_arrives(&mut self, attempt: AttemptId, reply: Reply, ch: &mut dyn Chooser) {
        let info = &mut self.transport.attempts[attempt.0 as usize - 1];
        if !info.open {
            self.trace.log(self.now, Component::Network, || {
                NetworkEvent::ReplyDiscarded { attempt }
            });
            return;
        }
        info.open = false;
        let (worker, op) = (info.worker, info.op);
        self.cancel_attempt_timer(attempt);
        if self.crash_check(worker, attempt, CrashPoint::AfterReply, ch) {
            // The reply died with the process: the outcome is unknown to the executor.
            self.unknown_from(attempt);
            self.crash(worker, attempt, CrashPoint::AfterReply, ch);
            return;
        }
        if matches!(
            reply,
            Reply::ServerError { .. } | Reply::InProgress | Reply::Expired
        ) {
            self.unknown_from(attempt);
        }
        let response = Response::Reply(reply);
        let should_retry = crate::model::stack::ErrorClass::of(response)
            .and_then(|class| self.model.provider.should_retry.on(class));
        self.trace
            .log(self.now, Component::Executor, || WorkerEvent::Replied {
                worker,
                attempt,
                reply,
                should_retry: should_retry.map(|v| v.to_string()),
            });
        self.transport.answer_should_retry = should_retry;
        self.exec(worker, ch, |e, ctx| {
            e.on_response(ctx, op, attempt, response)
        });
    }

    /// The transport lost track of `attempt` (a timeout, an indeterminate reply, its worker
    /// crashed): if it was a create, its operation's outcome is unknown from now on.
    ///
    /// Not when the operation is already confirmed or failed in the journal: a stale
    /// attempt (a worker frozen while another finished the operation) changes nothing of
    /// what is known about it.
    pub(super) fn unknown_from(&mut self, attempt: AttemptId) {
        let a = self.transport.attempts[attempt.0 as usize - 1];
        let settled = matches!(
            self.journal.get_mut().get(a.op).map(|o| o.state()),
            Some(OpState::Confirmed | OpState::Failed)
        );
        if a.create && !settled {
            let now = self.now;
            self.op_record(a.op).first_unknown_ms.get_or_insert(now);
        }
    }

    pub(super) fn provider_commands(&mut self, out: &mut Vec<ProviderOut>, ch: &mut dyn Chooser) {
        let now = self.now;
        for o in out.drain(..) {
            match o {
                ProviderOut::Reply { attempt, reply } => {
                    match self.network.reply(attempt, &self.faults, ch) {
                        Transit::Lost { scripted } => {
                            self.trace
                                .log(now, Component::Network, || NetworkEvent::ReplyLost {
                                    attempt,
                                    scripted,
                                })
                        }
                        Transit::Delivered { latency_ms, .. } => {
                            self.push(now + latency_ms, Event::ReplyArrives { attempt, reply })
                        }
                        Transit::Reset { latency_ms } => {
                            self.trace
                                .log(now, Component::Network, || NetworkEvent::ReplyReset {
                                    attempt,
                                });
                            self.push(now + latency_ms, Event::ConnectionReset { attempt })
                        }
                    }
                }
                ProviderOut::Wake { job, at_ms } => self.push(at_ms, Event::ProviderWake { job }),
                ProviderOut::Commit(committed) => {
                    let attempt = committed.attempt;
                    let (intent, step) = self.transport.attempts[attempt.0 as usize - 1]
                        .serves
                        .expect("a send that reached the provider was recorded");
                    let effect = Effect::tagged(committed, intent, step);
                    self.trace
                        .log(now, Component::Ledger, || LedgerEvent::Commits {
                            resource: effect.resource,
                            intent: effect.intent,
                        });
                    self.ledger.commit(effect);
                }
            }
        }
    }
}

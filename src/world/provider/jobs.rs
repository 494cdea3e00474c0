//! The provider's work on a request it processes: a job started (with its key record, if
//! deduplicated), then finished (the effect committed, the record completed, the reply and
//! its waiters answered) or crashed mid-way, leaving what the contract's atomicity leaves.

use super::*;

impl Provider {
    /// Starts the work. Its processing time is the one choice made on arrival (unless a fault
    /// scripts it); the rest of the contract runs when the job wakes ([`Self::on_wake`]).
    /// Asynchronous acceptance hands the client the status handle now.
    pub(super) fn start(&mut self, c: &mut Call<'_>, record: Option<ScopedKey>) {
        let (now, attempt, request) = (c.now, c.attempt, c.request);
        let job = self.jobs.len() as u32;
        let label = self
            .dedup_key(c)
            .map(|k| self.scope(&c.request, k))
            .filter(|_| self.labels_resources());
        let p = self.config.processing_ms;
        let processing = c
            .faults
            .slow_processing(attempt)
            .unwrap_or_else(|| c.ch.between(Purpose::Processing, p.min, p.max));
        self.jobs.push(Job {
            attempt,
            request,
            params: c.params,
            started_ms: now,
            record,
            label,
            waiters: Vec::new(),
            outcome: None,
        });
        c.trace.log(now, Component::Provider, || {
            let key = match (request.key, record) {
                (_, Some(scoped)) => format!("new key {}", scoped.key),
                (None, None) => "no key".to_string(),
                (Some(k), None) => format!("key {k} not deduplicated"),
            };
            ProviderEvent::Considers {
                attempt,
                what: format!("{key}; processing for {processing} ms"),
            }
        });
        c.out.push(ProviderOut::Wake {
            job,
            at_ms: now + processing,
        });
        if self.config.accept_async {
            c.answer(Reply::Accepted { handle: job }, format_args!(""));
        }
    }

    /// A job finishes processing.
    pub(crate) fn on_wake(
        &mut self,
        now: Millis,
        job: u32,
        faults: &Faults,
        ch: &mut dyn Chooser,
        trace: &mut Trace,
        out: &mut Vec<ProviderOut>,
    ) {
        let j = self.jobs[job as usize].clone();
        if faults.crashes_provider(j.attempt)
            || ch.chance(Purpose::ProviderCrash, self.config.crash_during_processing)
        {
            return self.crash(now, job, &j, ch, trace, out);
        }
        let (reply, resource) = if self.config.accept_async
            && ch.chance(Purpose::AsyncFailure, self.config.async_failure)
        {
            (Reply::OperationFailed, None)
        } else if ch.chance(Purpose::ProviderError, self.config.error_before_commit) {
            (Reply::ServerError { replayed: false }, None)
        } else {
            let resource = self.commit(now, &j, ch, out);
            let reply = if ch.chance(
                Purpose::ProviderErrorAfterCommit,
                self.config.error_after_commit,
            ) {
                Reply::ServerError { replayed: false }
            } else {
                Reply::Created {
                    resource,
                    replayed: false,
                }
            };
            (reply, Some(resource))
        };
        if let Some(scoped) = j.record {
            self.finish_record(now, job, &j, scoped, reply, resource);
        }
        self.jobs[job as usize].outcome = Some((reply, resource));
        if self.config.accept_async {
            // Already answered 202; the outcome waits for a status poll.
            trace.log(now, Component::Provider, || ProviderEvent::Done {
                attempt: j.attempt,
                reply,
                kept: true,
            });
            return;
        }
        trace.log(now, Component::Provider, || ProviderEvent::Done {
            attempt: j.attempt,
            reply,
            kept: false,
        });
        out.push(ProviderOut::Reply {
            attempt: j.attempt,
            reply,
        });
        for &waiter in &j.waiters {
            let reply = self.replay(reply, resource);
            trace.log(now, Component::Provider, || ProviderEvent::WaiterDone {
                attempt: waiter,
                reply,
            });
            out.push(ProviderOut::Reply {
                attempt: waiter,
                reply,
            });
        }
    }

    pub(super) fn crash(
        &mut self,
        now: Millis,
        job: u32,
        j: &Job,
        ch: &mut dyn Chooser,
        trace: &mut Trace,
        out: &mut Vec<ProviderOut>,
    ) {
        // A status poll of this job must not say "running" forever.
        let committed = self.config.atomicity == Atomicity::EffectThenKey;
        let left = match self.config.atomicity {
            Atomicity::Atomic => "nothing (rolled back)",
            Atomicity::KeyThenEffect => "a key without an effect",
            Atomicity::EffectThenKey => {
                let resource = self.commit(now, j, ch, out);
                self.jobs[job as usize].outcome =
                    Some((Reply::ServerError { replayed: false }, Some(resource)));
                "an effect without a key"
            }
        };
        if let Some(scoped) = j.record {
            self.store
                .get_mut()
                .crash(self.config.atomicity, &scoped, job);
        }
        if !committed {
            self.jobs[job as usize].outcome = Some((Reply::OperationFailed, None));
        }
        trace.log(now, Component::Provider, || {
            ProviderEvent::ProviderCrashed {
                attempt: j.attempt,
                left,
            }
        });
    }

    pub(super) fn commit(
        &mut self,
        now: Millis,
        j: &Job,
        ch: &mut dyn Chooser,
        out: &mut Vec<ProviderOut>,
    ) -> ResourceId {
        let resource = ResourceId(self.resources.len() as u32);
        let lag = if self.config.lookup == Lookup::None {
            0
        } else {
            let l = self.config.visibility_lag_ms;
            ch.between(Purpose::VisibilityLag, l.min, l.max)
        };
        self.resources.push(Resource {
            tenant: j.request.tenant,
            endpoint: j.request.endpoint,
            params: j.params,
            visible_at_ms: now + lag,
        });
        if let Some(label) = j.label {
            self.labelled.entry(label).or_default().push(resource);
        }
        out.push(ProviderOut::Commit(Committed {
            resource,
            attempt: j.attempt,
            tenant: j.request.tenant,
            endpoint: j.request.endpoint,
            params: j.params,
            key: j.request.key,
            at_ms: now,
        }));
        resource
    }

    /// Stores the job's result under its key, if the contract stores this kind of outcome;
    /// otherwise forgets the key so that a retry executes again.
    pub(super) fn finish_record(
        &mut self,
        now: Millis,
        job: u32,
        j: &Job,
        scoped: ScopedKey,
        reply: Reply,
        resource: Option<ResourceId>,
    ) {
        let stored = match self.config.stored_outcomes {
            StoredOutcomes::All => true,
            StoredOutcomes::SuccessOnly => reply.status() < 300,
            StoredOutcomes::SuccessAndClientErrors => reply.status() < 500,
            StoredOutcomes::Committed => resource.is_some(),
        };
        let record = stored.then_some(Record {
            fingerprint: j.params,
            endpoint: j.request.endpoint,
            first_request_ms: j.started_ms,
            first_sent_ms: j.request.first_sent_ms,
            completed_ms: Some(now),
            pruned_at_ms: None,
            slot: Slot::Done { reply, resource },
        });
        self.store
            .get_mut()
            .complete(self.config.atomicity, scoped, job, record);
    }
}

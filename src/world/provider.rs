//! The provider: a remote API with an idempotency contract.
//!
//! A create is processed in two steps: on arrival the contract decides (new, replay, reject,
//! wait, race); after the processing time the job commits its effect and stores its result
//! as the contract says. A crash in between leaves what the `atomicity` knob says it leaves:
//! nothing (atomic), a key without an effect (key then effect) or an effect without a key
//! (effect then key). Lookups read the provider's resources through a visibility lag.

use std::fmt;

use super::faults::Faults;
use super::keystore::{Claimed, Record, ScopedKey, SharedKeyStore, Slot};
use super::ledger::Effect;
use crate::model::*;
use crate::sim::{Chooser, ChooserExt, Millis, Purpose};
use crate::vocab::ids::*;
use crate::vocab::protocol::{LookupQuery, Reply, Request, RequestKind};
use crate::vocab::trace::{Component, Trace};

/// Something the provider asks the world to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderOut {
    Reply {
        attempt: AttemptId,
        reply: Reply,
    },
    /// Call `on_wake(job)` at `at_ms`.
    Wake {
        job: u32,
        at_ms: Millis,
    },
    /// An effect was committed: ground truth for the ledger.
    Commit(Effect),
}

#[derive(Clone, Debug)]
struct Job {
    attempt: AttemptId,
    request: Request,
    params: Params,
    started_ms: Millis,
    /// The key record this job writes when it finishes, if any.
    record: Option<ScopedKey>,
    /// Same-key requests held until this job finishes (`in_flight: wait`).
    waiters: Vec<AttemptId>,
    /// The final result, once processing ended (what a status poll reads).
    outcome: Option<(Reply, Option<ResourceId>)>,
}

#[derive(Clone, Copy, Debug)]
struct Resource {
    tenant: Tenant,
    endpoint: Endpoint,
    params: Params,
    visible_at_ms: Millis,
}

#[derive(Debug)]
pub struct Provider {
    config: ProviderModel,
    store: SharedKeyStore,
    jobs: Vec<Job>,
    resources: Vec<Resource>,
}

impl Provider {
    pub fn new(config: ProviderModel) -> Self {
        Self {
            config,
            store: SharedKeyStore::default(),
            jobs: Vec::new(),
            resources: Vec::new(),
        }
    }

    pub(crate) fn clear(&mut self) {
        self.store.get_mut().clear();
        self.jobs.clear();
        self.resources.clear();
    }

    pub fn store(&mut self) -> &mut super::keystore::KeyStore {
        self.store.get_mut()
    }

    fn scope(&self, request: &Request, key: Key) -> ScopedKey {
        let (tenant, endpoint, region) = match self.config.key_scope {
            KeyScope::Global => (None, None, None),
            KeyScope::Tenant => (Some(request.tenant), None, None),
            KeyScope::TenantEndpoint => (Some(request.tenant), Some(request.endpoint), None),
            KeyScope::TenantRegion => (Some(request.tenant), None, Some(request.region)),
        };
        ScopedKey {
            tenant,
            endpoint,
            region,
            key,
        }
    }

    fn expired(&self, record: &Record, now: Millis) -> bool {
        expired(&self.config, record, now)
    }
}

/// Whether `record` is past the contract's retention at `now`.
fn expired(config: &ProviderModel, record: &Record, now: Millis) -> bool {
    let Some(retention) = config.retention_ms else {
        return false;
    };
    let since = match config.retention_from {
        RetentionFrom::FirstRequest => Some(record.first_request_ms),
        RetentionFrom::Completion => record.completed_ms,
    };
    since.is_some_and(|t| now >= t.saturating_add(retention))
}

/// Whether an in-progress `record` has outlived the contract's in-progress expiry at `now`.
fn in_progress_expired(config: &ProviderModel, record: &Record, now: Millis) -> bool {
    matches!(record.slot, Slot::InFlight { .. } | Slot::Orphaned)
        && config
            .in_progress_expiry_ms
            .is_some_and(|d| now >= record.first_request_ms.saturating_add(d))
}

impl Provider {
    /// A request arrives.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_request(
        &mut self,
        now: Millis,
        attempt: AttemptId,
        request: Request,
        faults: &Faults,
        ch: &mut dyn Chooser,
        trace: &mut Trace,
        out: &mut Vec<ProviderOut>,
    ) {
        match request.kind {
            RequestKind::Lookup(query) => {
                let reply = self.lookup(now, &request, query);
                trace.log(now, Component::Provider, || {
                    format!("{attempt}: lookup {query} -> {reply}")
                });
                out.push(ProviderOut::Reply { attempt, reply });
            }
            RequestKind::Create { params } => {
                self.create(now, attempt, request, params, faults, ch, trace, out)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn create(
        &mut self,
        now: Millis,
        attempt: AttemptId,
        request: Request,
        params: Params,
        faults: &Faults,
        ch: &mut dyn Chooser,
        trace: &mut Trace,
        out: &mut Vec<ProviderOut>,
    ) {
        // The reason is formatted only when tracing is on.
        let answer = |reply: Reply,
                      why: fmt::Arguments<'_>,
                      trace: &mut Trace,
                      out: &mut Vec<ProviderOut>| {
            trace.log(now, Component::Provider, || {
                format!("{attempt}: {why} -> {reply}")
            });
            out.push(ProviderOut::Reply { attempt, reply });
        };
        // Business validation runs before the idempotency layer: nothing is recorded.
        if faults.rejects(attempt) {
            return answer(
                Reply::Rejected,
                format_args!("refused (scripted)"),
                trace,
                out,
            );
        }
        if request.key.is_none() && self.config.require_key {
            return answer(Reply::MissingKey, format_args!("no key"), trace, out);
        }
        let key = match (self.config.dedup, self.config.key_source, request.key) {
            (Dedup::None, _, _) | (Dedup::ByKey, KeySource::Client, None) => {
                return self.start(now, attempt, request, params, None, faults, ch, trace, out);
            }
            (Dedup::ByKey, KeySource::Client, Some(key)) => key,
            // The provider keys the request by what it asks for, whoever asks.
            (Dedup::ByKey, KeySource::Payload, _) => Key(params.0),
        };
        let scoped = self.scope(&request, key);
        // A record no longer counts once expired (if expiry means a new request) or once an
        // in-progress record outlived its function.
        let forget_expired = self.config.after_expiry == AfterExpiry::NewRequest;
        let config = &self.config;
        let stale = |r: &Record| {
            (forget_expired && expired(config, r, now)) || in_progress_expired(config, r, now)
        };
        let job = self.jobs.len() as u32;
        let marker = Record {
            fingerprint: params,
            first_request_ms: now,
            completed_ms: None,
            slot: Slot::InFlight { job },
        };
        // The store's own protocol for this atomicity (the code loom checks): claim the key,
        // or, effect-then-key, only look.
        let atomicity = self.config.atomicity;
        let existing = match self.store.get_mut().begin(atomicity, scoped, marker, stale) {
            Claimed::Existing(r) => Some(r),
            Claimed::Fresh { replaced } => {
                if let Some(old) = replaced {
                    trace.log(now, Component::Provider, || match old.slot {
                        Slot::Done { .. } => {
                            format!("{attempt}: key {key} expired and was forgotten")
                        }
                        _ => format!(
                            "{attempt}: in-progress record of key {key} expired; executing again"
                        ),
                    });
                }
                None
            }
        };
        let Some(record) = existing else {
            return self.start(
                now,
                attempt,
                request,
                params,
                Some(scoped),
                faults,
                ch,
                trace,
                out,
            );
        };
        if self.expired(&record, now) {
            // Only reached when expiry means refusal.
            return answer(
                Reply::Expired,
                format_args!("key {key} expired"),
                trace,
                out,
            );
        }
        if record.fingerprint != params {
            match self.config.mismatch {
                Mismatch::Reject => {
                    return answer(
                        Reply::Mismatch,
                        format_args!("key {key} was first used with {}", record.fingerprint),
                        trace,
                        out,
                    );
                }
                Mismatch::TreatAsNew => {
                    return self.start(now, attempt, request, params, None, faults, ch, trace, out);
                }
                Mismatch::ReturnOriginal => {}
            }
        }
        match record.slot {
            Slot::Done { reply, resource } => {
                if self.config.replay == ReplayMode::ReexecuteFailed
                    && reply.status() >= 500
                    && resource.is_none()
                {
                    // Failed work with no effect runs again, under the same record.
                    let job = self.jobs.len() as u32;
                    if !self.store.get_mut().reclaim(&scoped, record, job) {
                        return answer(
                            Reply::InProgress,
                            format_args!("key {key} is being executed again"),
                            trace,
                            out,
                        );
                    }
                    trace.log(now, Component::Provider, || {
                        format!("{attempt}: key {key} failed before: executing again")
                    });
                    return self.start(
                        now,
                        attempt,
                        request,
                        params,
                        Some(scoped),
                        faults,
                        ch,
                        trace,
                        out,
                    );
                }
                let reply = self.replay(reply, resource);
                answer(reply, format_args!("key {key} seen: replay"), trace, out)
            }
            Slot::InFlight { job } if self.config.accept_async => answer(
                Reply::Accepted { handle: job },
                format_args!("key {key} in progress: its status handle"),
                trace,
                out,
            ),
            Slot::InFlight { .. } | Slot::Orphaned => match self.config.in_flight {
                InFlight::Reject => answer(
                    Reply::InProgress,
                    format_args!("key {key} in progress"),
                    trace,
                    out,
                ),
                InFlight::Wait => {
                    if let Slot::InFlight { job } = record.slot {
                        self.jobs[job as usize].waiters.push(attempt);
                    }
                    trace.log(now, Component::Provider, || {
                        format!("{attempt}: key {key} in progress; waits for it")
                    });
                }
                InFlight::ProcessBoth => {
                    self.start(now, attempt, request, params, None, faults, ch, trace, out)
                }
            },
        }
    }

    fn replay(&self, stored: Reply, resource: Option<ResourceId>) -> Reply {
        let stored = match stored {
            Reply::Created { resource, .. } => Reply::Created {
                resource,
                replayed: true,
            },
            Reply::ServerError { .. } => Reply::ServerError { replayed: true },
            other => other,
        };
        match (self.config.replay, resource) {
            (ReplayMode::CurrentState | ReplayMode::ReexecuteFailed, Some(resource)) => {
                Reply::Created {
                    resource,
                    replayed: true,
                }
            }
            (ReplayMode::AlreadyExists, Some(_)) => Reply::AlreadyExists,
            _ => stored,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        now: Millis,
        attempt: AttemptId,
        request: Request,
        params: Params,
        record: Option<ScopedKey>,
        faults: &Faults,
        ch: &mut dyn Chooser,
        trace: &mut Trace,
        out: &mut Vec<ProviderOut>,
    ) {
        let job = self.jobs.len() as u32;
        let p = self.config.processing_ms;
        let processing = faults
            .slow_processing(attempt)
            .unwrap_or_else(|| ch.between(Purpose::Processing, p.min, p.max));
        self.jobs.push(Job {
            attempt,
            request,
            params,
            started_ms: now,
            record,
            waiters: Vec::new(),
            outcome: None,
        });
        trace.log(now, Component::Provider, || {
            let key = match (request.key, record) {
                (_, Some(scoped)) => format!("new key {}", scoped.key),
                (None, None) => "no key".to_string(),
                (Some(k), None) => format!("key {k} not deduplicated"),
            };
            format!("{attempt}: {key}; processing for {processing} ms")
        });
        out.push(ProviderOut::Wake {
            job,
            at_ms: now + processing,
        });
        if self.config.accept_async {
            let reply = Reply::Accepted { handle: job };
            trace.log(now, Component::Provider, || {
                format!("{attempt}: -> {reply}")
            });
            out.push(ProviderOut::Reply { attempt, reply });
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
        trace.log(now, Component::Provider, || {
            format!("{}: done -> {reply}", j.attempt)
        });
        if self.config.accept_async {
            // Already answered 202; the outcome waits for a status poll.
            return;
        }
        out.push(ProviderOut::Reply {
            attempt: j.attempt,
            reply,
        });
        for &waiter in &j.waiters {
            out.push(ProviderOut::Reply {
                attempt: waiter,
                reply: self.replay(reply, resource),
            });
        }
    }

    fn crash(
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
            format!(
                "{}: provider crashed mid-processing, leaving {left}; no reply",
                j.attempt
            )
        });
    }

    fn commit(
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
        out.push(ProviderOut::Commit(Effect {
            resource,
            attempt: j.attempt,
            intent: j.request.tag.0,
            step: j.request.tag.1,
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
    fn finish_record(
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
        };
        let record = stored.then_some(Record {
            fingerprint: j.params,
            first_request_ms: j.started_ms,
            completed_ms: Some(now),
            slot: Slot::Done { reply, resource },
        });
        self.store
            .get_mut()
            .complete(self.config.atomicity, scoped, job, record);
    }

    fn visible(&self, resource: ResourceId, now: Millis) -> bool {
        self.resources
            .get(resource.0 as usize)
            .is_some_and(|r| r.visible_at_ms <= now)
    }

    fn lookup(&self, now: Millis, request: &Request, query: LookupQuery) -> Reply {
        let found = |r: ResourceId| {
            if self.visible(r, now) {
                Reply::Found { resource: r }
            } else {
                Reply::NotFound
            }
        };
        if let LookupQuery::Operation(handle) = query {
            // The status monitor reports an effect once it is visible, and "running" until.
            return match self.jobs.get(handle as usize).and_then(|j| j.outcome) {
                Some((_, Some(resource))) if self.visible(resource, now) => {
                    Reply::Found { resource }
                }
                Some((_, None)) => Reply::OperationFailed,
                _ => Reply::Pending,
            };
        }
        match (self.config.lookup, query) {
            (Lookup::ByKey, LookupQuery::Key(key)) => {
                match self.store.get(&self.scope(request, key)).map(|r| r.slot) {
                    Some(Slot::Done {
                        resource: Some(r), ..
                    }) => found(r),
                    Some(Slot::InFlight { .. } | Slot::Orphaned) => Reply::Pending,
                    _ => Reply::NotFound,
                }
            }
            (Lookup::ByResourceId, LookupQuery::Resource(r)) => {
                match self.resources.get(r.0 as usize) {
                    Some(res) if res.tenant == request.tenant => found(r),
                    _ => Reply::NotFound,
                }
            }
            (Lookup::Search, LookupQuery::Search { params }) => self
                .resources
                .iter()
                .enumerate()
                .find(|(_, r)| {
                    r.tenant == request.tenant
                        && r.endpoint == request.endpoint
                        && r.params == params
                        && r.visible_at_ms <= now
                })
                .map_or(Reply::NotFound, |(i, _)| Reply::Found {
                    resource: ResourceId(i as u32),
                }),
            _ => Reply::Unsupported,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::RandomChooser;
    use crate::vocab::protocol::ToolCall;

    fn provider(lookup: &str) -> Provider {
        let config: ProviderModel = serde_json::from_value(serde_json::json!({
            "dedup": "by_key", "lookup": lookup, "visibility_lag_ms": 100, "processing_ms": 50
        }))
        .unwrap();
        Provider::new(config)
    }

    fn call(tenant: u32) -> ToolCall {
        ToolCall {
            call: CallId(1),
            issue: 1,
            auth: AuthId(0),
            tenant: Tenant(tenant),
            endpoint: Endpoint(0),
            params: Params(5),
            tag: IntentTag(IntentId(0), 0),
        }
    }

    /// Sends `request` at `now` and returns the provider's outputs.
    fn send(p: &mut Provider, now: Millis, attempt: u32, request: Request) -> Vec<ProviderOut> {
        let mut out = Vec::new();
        let mut ch = RandomChooser::new(0);
        let faults = Faults::default();
        p.on_request(
            now,
            AttemptId(attempt),
            request,
            &faults,
            &mut ch,
            &mut Trace::default(),
            &mut out,
        );
        out
    }

    fn lookup(p: &mut Provider, now: Millis, tenant: u32, q: LookupQuery) -> Reply {
        match send(p, now, 99, Request::lookup(&call(tenant), q))[..] {
            [ProviderOut::Reply { reply, .. }] => reply,
            ref other => panic!("{other:?}"),
        }
    }

    /// Creates under key k1 at 0 ms; the effect commits at 50 ms and is visible at 150 ms.
    fn created(p: &mut Provider) {
        let out = send(p, 0, 1, Request::create(&call(0), Some(Key(1))));
        assert_eq!(out, [ProviderOut::Wake { job: 0, at_ms: 50 }]);
        let mut out = Vec::new();
        let mut ch = RandomChooser::new(0);
        p.on_wake(
            50,
            0,
            &Faults::default(),
            &mut ch,
            &mut Trace::default(),
            &mut out,
        );
        assert!(matches!(
            out[0],
            ProviderOut::Commit(Effect {
                resource: ResourceId(0),
                ..
            })
        ));
    }

    #[test]
    fn lookup_by_key_sees_pending_then_lagging_then_found() {
        let mut p = provider("by_key");
        send(&mut p, 0, 1, Request::create(&call(0), Some(Key(1))));
        assert_eq!(
            lookup(&mut p, 10, 0, LookupQuery::Key(Key(1))),
            Reply::Pending
        );
        let mut p = provider("by_key");
        created(&mut p);
        // Committed at 50 ms, but the read path lags: "not found" is not proof of absence.
        assert_eq!(
            lookup(&mut p, 60, 0, LookupQuery::Key(Key(1))),
            Reply::NotFound
        );
        let found = Reply::Found {
            resource: ResourceId(0),
        };
        assert_eq!(lookup(&mut p, 150, 0, LookupQuery::Key(Key(1))), found);
        assert_eq!(
            lookup(&mut p, 150, 0, LookupQuery::Key(Key(2))),
            Reply::NotFound
        );
        assert_eq!(
            lookup(&mut p, 150, 0, LookupQuery::Resource(ResourceId(0))),
            Reply::Unsupported
        );
    }

    #[test]
    fn lookup_by_resource_id_and_search_respect_lag_and_tenant() {
        let mut p = provider("by_resource_id");
        created(&mut p);
        let q = LookupQuery::Resource(ResourceId(0));
        assert_eq!(lookup(&mut p, 149, 0, q), Reply::NotFound);
        assert_eq!(
            lookup(&mut p, 150, 0, q),
            Reply::Found {
                resource: ResourceId(0)
            }
        );
        assert_eq!(lookup(&mut p, 150, 1, q), Reply::NotFound);
        let mut p = provider("search");
        created(&mut p);
        let q = LookupQuery::Search { params: Params(5) };
        assert_eq!(lookup(&mut p, 149, 0, q), Reply::NotFound);
        assert_eq!(
            lookup(&mut p, 150, 0, q),
            Reply::Found {
                resource: ResourceId(0)
            }
        );
        assert_eq!(
            lookup(&mut p, 150, 0, LookupQuery::Search { params: Params(6) }),
            Reply::NotFound
        );
        assert_eq!(lookup(&mut p, 150, 1, q), Reply::NotFound);
    }

    #[test]
    fn no_lookup_and_required_keys() {
        let mut p = provider("none");
        created(&mut p);
        assert_eq!(
            lookup(&mut p, 500, 0, LookupQuery::Key(Key(1))),
            Reply::Unsupported
        );
        let mut config = provider("none").config;
        config.require_key = true;
        let mut p = Provider::new(config);
        let out = send(&mut p, 0, 1, Request::create(&call(0), None));
        assert_eq!(
            out,
            [ProviderOut::Reply {
                attempt: AttemptId(1),
                reply: Reply::MissingKey
            }]
        );
    }
}

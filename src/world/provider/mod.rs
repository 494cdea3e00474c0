//! The provider: a remote API with an idempotency contract.
//!
//! A create is processed in two steps: on arrival the contract decides (new, replay, reject,
//! wait, race); after the processing time the job commits its effect and stores its result
//! as the contract says. A crash in between leaves what the `atomicity` knob says it leaves:
//! nothing (atomic), a key without an effect (key then effect) or an effect without a key
//! (effect then key). Lookups read the provider's resources through a visibility lag; what a
//! lookup by key can still see once the key record is gone is the `key_lifetime` knob.

/// The parts of the world an event of the provider reads or writes (`sim::por`): key records, resources, jobs, and (through its commands) the ledger of effects it commits.
pub const PARTS: crate::sim::Parts = crate::sim::Parts::PROVIDER;

mod jobs;
mod lookup;

use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasherDefault;

use super::faults::Faults;
use super::keystore::{Claimed, Record, ScopedKey, SeqHasher, SharedKeyStore, Slot};
use super::ledger::Committed;
use crate::model::*;
use crate::sim::{Chooser, ChooserExt, Millis, Purpose};
use crate::vocab::event::ProviderEvent;
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
    /// An effect was committed: ground truth for the ledger (the world tags it with its intent).
    Commit(Committed),
}

#[derive(Clone, Debug)]
struct Job {
    attempt: AttemptId,
    request: Request,
    params: Params,
    started_ms: Millis,
    /// The key record this job writes when it finishes, if any.
    record: Option<ScopedKey>,
    /// The scoped key the request carried, deduplicated or not: what its resource is
    /// labelled with when the key is an attribute of the resource.
    label: Option<ScopedKey>,
    /// Same-key requests held until this job finishes (`in_flight: wait`).
    waiters: Vec<AttemptId>,
    /// The final result, once processing ended (what a status poll reads).
    outcome: Option<(Reply, Option<ResourceId>)>,
}

/// When it started becomes its key record's first request: [`crate::sim::moments::of_keys`].
impl std::hash::Hash for Job {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Job {
            attempt,
            request,
            params,
            started_ms,
            record,
            label,
            waiters,
            outcome,
        } = self;
        attempt.hash(h);
        request.hash(h);
        params.hash(h);
        crate::sim::moments::of_keys(h, *started_ms);
        record.hash(h);
        label.hash(h);
        waiters.hash(h);
        outcome.hash(h);
    }
}

#[derive(Clone, Copy, Debug)]
struct Resource {
    tenant: Tenant,
    endpoint: Endpoint,
    params: Params,
    visible_at_ms: Millis,
}

/// When it becomes visible is compared only with the clock.
impl std::hash::Hash for Resource {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Resource {
            tenant,
            endpoint,
            params,
            visible_at_ms,
        } = self;
        tenant.hash(h);
        endpoint.hash(h);
        params.hash(h);
        crate::sim::moments::against(h, *visible_at_ms, &[0]);
    }
}

#[derive(Clone, Debug)]
pub struct Provider {
    config: ProviderModel,
    store: SharedKeyStore,
    jobs: Vec<Job>,
    resources: Vec<Resource>,
    /// The resources created under each scoped key, oldest first: kept only when the key is
    /// an attribute of the resource and can be looked up (`key_lifetime: resource`, `lookup:
    /// by_key`). Only ever read by key, never iterated.
    labelled: HashMap<ScopedKey, Vec<ResourceId>, BuildHasherDefault<SeqHasher>>,
}

impl Provider {
    pub fn new(config: ProviderModel) -> Self {
        Self {
            config,
            store: SharedKeyStore::default(),
            jobs: Vec::new(),
            resources: Vec::new(),
            labelled: HashMap::default(),
        }
    }

    pub(crate) fn clear(&mut self) {
        self.store.get_mut().clear();
        self.jobs.clear();
        self.resources.clear();
        self.labelled.clear();
    }

    /// Whether resources are indexed by the key they were created under.
    fn labels_resources(&self) -> bool {
        self.config.key_lifetime == KeyLifetime::Resource && self.config.lookup == Lookup::ByKey
    }

    pub(crate) fn reserve(&mut self, n: usize) {
        self.store.get_mut().reserve(n);
        self.resources.reserve(n);
    }

    pub fn store(&mut self) -> &mut super::keystore::KeyStore {
        self.store.get_mut()
    }

    /// Hashes the provider's state (its contract is the model's): the jobs with their
    /// waiters and outcomes, the resources with their visibility moments, the key records,
    /// and the resources by key (the two maps in no particular order).
    pub(crate) fn fingerprint<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        let Provider {
            config: _,
            store,
            jobs,
            resources,
            labelled,
        } = self;
        jobs.hash(h);
        resources.hash(h);
        store.fingerprint(h);
        crate::sim::hash::unordered(h, labelled.iter());
    }

    /// What of the provider's state handling `request` reads or writes, for the
    /// independence of provider events ([`crate::sim::TieEvent::entities`]): the key record
    /// of its scoped key, and the resources of its tenant, endpoint and parameters (what a
    /// create makes and a search finds). `[0, 0]` when it cannot be told (a read of a
    /// resource the provider does not have): then it is dependent on every provider event.
    ///
    /// Two requests with none of these in common commute up to the names the provider
    /// gives in arrival order (resource ids, job numbers, the ledger's order), which no
    /// behaviour and no property depends on beyond their identity.
    pub(crate) fn entities(&self, request: &Request) -> [u64; 2] {
        let entity = |x: &dyn Fn(&mut crate::sim::hash::StableHasher)| {
            let mut h = crate::sim::hash::StableHasher::new();
            x(&mut h);
            std::hash::Hasher::finish(&h).max(1)
        };
        let resources = |tenant: Tenant, endpoint: Endpoint, params: Params| {
            entity(&|h| std::hash::Hash::hash(&(1u8, tenant, endpoint, params), h))
        };
        let key = |k: Key| {
            let scoped = self.scope(request, k);
            entity(&|h| std::hash::Hash::hash(&(2u8, scoped), h))
        };
        match request.kind {
            RequestKind::Create { params } => [
                request.key.map_or(0, key),
                resources(request.tenant, request.endpoint, params),
            ],
            RequestKind::Lookup(LookupQuery::Key(k)) => [key(k), 0],
            RequestKind::Lookup(LookupQuery::Search { params }) => {
                [resources(request.tenant, request.endpoint, params), 0]
            }
            RequestKind::Lookup(LookupQuery::Resource(id)) => {
                match self.resources.get(id.0 as usize) {
                    Some(r) => [resources(r.tenant, r.endpoint, r.params), 0],
                    None => [0, 0],
                }
            }
            RequestKind::Lookup(LookupQuery::Operation(job)) => match self.jobs.get(job as usize) {
                Some(j) => self.entities(&j.request),
                None => [0, 0],
            },
        }
    }

    /// [`Provider::entities`] of the request job `job` processes.
    pub(crate) fn job_entities(&self, job: u32) -> [u64; 2] {
        self.jobs
            .get(job as usize)
            .map_or([0, 0], |j| self.entities(&j.request))
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

    /// Past a retention floor that has a maximum, the moment a record is pruned is a choice
    /// of the simulation: drawn once per record (purpose `pruning`), the first time the
    /// record is looked at after its floor, uniformly up to the maximum. Returns the moment
    /// if it was drawn now.
    fn settle_pruning(
        &mut self,
        scoped: &ScopedKey,
        now: Millis,
        ch: &mut dyn Chooser,
    ) -> Option<Millis> {
        let (Some(floor), Some(max)) = (self.config.retention_ms, self.config.retention_max_ms)
        else {
            return None;
        };
        let record = self.store.get_mut().get(scoped)?;
        let since = window_start(&self.config, record)?;
        if record.pruned_at_ms.is_some() || now < since.saturating_add(floor) {
            return None;
        }
        let kept_ms = ch.between(Purpose::Pruning, floor, max.max(floor));
        self.store
            .get_mut()
            .prune_at(scoped, since.saturating_add(kept_ms))
    }
}

/// When `record`'s retention starts counting, if it has started.
fn window_start(config: &ProviderModel, record: &Record) -> Option<Millis> {
    match config.retention_from {
        RetentionFrom::FirstRequest => Some(record.first_request_ms),
        RetentionFrom::Completion => record.completed_ms,
        RetentionFrom::ClientFirstSent => {
            Some(record.first_sent_ms.unwrap_or(record.first_request_ms))
        }
    }
}

/// Whether `record` is past the contract's retention at `now`: past the moment it was
/// pruned, if that was drawn, else past the floor.
fn expired(config: &ProviderModel, record: &Record, now: Millis) -> bool {
    let Some(retention) = config.retention_ms else {
        return false;
    };
    let Some(since) = window_start(config, record) else {
        return false;
    };
    now >= record
        .pruned_at_ms
        .unwrap_or_else(|| since.saturating_add(retention))
}

/// Whether an in-progress `record` has outlived the contract's in-progress expiry at `now`.
fn in_progress_expired(config: &ProviderModel, record: &Record, now: Millis) -> bool {
    matches!(record.slot, Slot::InFlight { .. } | Slot::Orphaned)
        && config
            .in_progress_expiry_ms
            .is_some_and(|d| now >= record.first_request_ms.saturating_add(d))
}

/// One create on its way through the contract: the request, and where its choices, trace
/// and answer go. Each decision below takes this one value, so that it can be a small
/// function of its own rather than one that threads eight arguments.
/// What the world lends the provider while it handles one event.
pub(crate) struct Env<'a> {
    pub now: Millis,
    pub faults: &'a Faults,
    pub ch: &'a mut dyn Chooser,
    pub trace: &'a mut Trace,
    pub out: &'a mut Vec<ProviderOut>,
}

struct Call<'a> {
    now: Millis,
    attempt: AttemptId,
    request: Request,
    params: Params,
    faults: &'a Faults,
    ch: &'a mut dyn Chooser,
    trace: &'a mut Trace,
    out: &'a mut Vec<ProviderOut>,
}

impl Call<'_> {
    /// Traces `what` for this attempt; it is formatted only when tracing is on.
    fn log(&mut self, what: fmt::Arguments<'_>) {
        let attempt = self.attempt;
        self.trace
            .log(self.now, Component::Provider, || ProviderEvent::Considers {
                attempt,
                what: what.to_string(),
            });
    }

    /// Replies at once, tracing why (formatted only when tracing is on).
    fn answer(&mut self, reply: Reply, why: fmt::Arguments<'_>) {
        let attempt = self.attempt;
        self.trace
            .log(self.now, Component::Provider, || ProviderEvent::Answers {
                attempt,
                why: why.to_string(),
                reply,
            });
        self.out.push(ProviderOut::Reply { attempt, reply });
    }
}

/// Whether a record no longer holds its key at `now`: past retention when expiry means a
/// new request, or in progress for longer than the work could still be running.
fn stale(config: &ProviderModel, record: &Record, now: Millis) -> bool {
    (config.after_expiry == AfterExpiry::NewRequest && expired(config, record, now))
        || in_progress_expired(config, record, now)
}

impl Provider {
    /// A request arrives.
    pub(crate) fn on_request(&mut self, attempt: AttemptId, request: Request, env: Env<'_>) {
        let Env {
            now,
            faults,
            ch,
            trace,
            out,
        } = env;
        match request.kind {
            RequestKind::Lookup(query) => {
                if let (Lookup::ByKey, LookupQuery::Key(key)) = (self.config.lookup, query) {
                    let scoped = self.scope(&request, key);
                    if let Some(at) = self.settle_pruning(&scoped, now, ch) {
                        trace.log(now, Component::Provider, || ProviderEvent::Pruned {
                            key,
                            at_ms: at,
                        });
                    }
                }
                let reply = self.lookup(now, &request, query);
                trace.log(now, Component::Provider, || ProviderEvent::Looks {
                    attempt,
                    query: query.to_string(),
                    reply,
                });
                out.push(ProviderOut::Reply { attempt, reply });
            }
            RequestKind::Create { params } => {
                let mut call = Call {
                    now,
                    attempt,
                    request,
                    params,
                    faults,
                    ch,
                    trace,
                    out,
                };
                self.create(&mut call);
            }
        }
    }

    /// The contract's decisions on arrival, in the order a provider applies them; each one
    /// either deals with the request (answers, holds or starts it) or hands it on.
    fn create(&mut self, c: &mut Call<'_>) {
        if self.refuse_before_keys(c) {
            return;
        }
        let Some(key) = self.dedup_key(c) else {
            return self.start(c, None);
        };
        if self.outside_client_window(c, key) {
            return;
        }
        let scoped = self.scope(&c.request, key);
        if let Some(at) = self.settle_pruning(&scoped, c.now, c.ch) {
            c.log(format_args!(
                "key {key} past its retention floor; pruned at {at} ms"
            ));
        }
        let Some(record) = self.claim_key(c, scoped) else {
            return self.start(c, Some(scoped));
        };
        if self.refuse_expired(c, key, &record) || self.on_mismatch(c, key, &record) {
            return;
        }
        match record.slot {
            Slot::Done { reply, resource } => {
                self.replay_stored(c, scoped, record, reply, resource)
            }
            Slot::InFlight { .. } | Slot::Orphaned => self.same_key_in_flight(c, key, record.slot),
        }
    }

    /// Business validation and the required-key rule run before the idempotency layer, so a
    /// refusal records nothing and a corrected retry is judged afresh. Returns whether it
    /// refused.
    fn refuse_before_keys(&self, c: &mut Call<'_>) -> bool {
        if c.faults.rejects(c.attempt) {
            c.answer(Reply::Rejected, format_args!("refused (scripted)"));
        } else if c.ch.chance(Purpose::Throttle, self.config.throttle) {
            let retry_after_ms = self.config.retry_after_ms;
            c.answer(
                Reply::Throttled { retry_after_ms },
                format_args!("rate limited"),
            );
        } else if c
            .ch
            .chance(Purpose::RequestTimeout, self.config.request_timeout)
        {
            c.answer(Reply::RequestTimeout, format_args!("request timed out"));
        } else if c.request.key.is_none() && self.config.require_key {
            c.answer(Reply::MissingKey, format_args!("no key"));
        } else {
            return false;
        }
        true
    }

    /// With the window measured from the client's first send (`Repeatability-First-Sent`),
    /// a request first sent longer ago than the retention is outside it whatever the
    /// provider recorded, even nothing: refused (412), or with `after_expiry: new_request`
    /// processed as a new request, not deduplicated. Returns whether it dealt with it.
    fn outside_client_window(&mut self, c: &mut Call<'_>, key: Key) -> bool {
        let (Some(retention), Some(sent)) = (self.config.retention_ms, c.request.first_sent_ms)
        else {
            return false;
        };
        if self.config.retention_from != RetentionFrom::ClientFirstSent
            || c.now < sent.saturating_add(retention)
        {
            return false;
        }
        match self.config.after_expiry {
            AfterExpiry::Reject => c.answer(
                Reply::Expired,
                format_args!("key {key} first sent at {sent} ms, outside the window"),
            ),
            AfterExpiry::NewRequest => {
                c.log(format_args!(
                    "key {key} first sent at {sent} ms, outside the window: a new request"
                ));
                self.start(c, None);
            }
        }
        true
    }

    /// The key the request is deduplicated under, if any. A client key says which requests
    /// are one; a payload key makes the provider decide that from what is asked for, whoever
    /// asks, so that genuine repeats merge.
    fn dedup_key(&self, c: &Call<'_>) -> Option<Key> {
        self.dedup_key_of(&c.request, c.params)
    }

    fn dedup_key_of(&self, request: &Request, params: Params) -> Option<Key> {
        match (self.config.dedup, self.config.key_source, request.key) {
            (Dedup::None, _, _) | (Dedup::ByKey, KeySource::Client, None) => None,
            (Dedup::ByKey, KeySource::Client, Some(key)) => Some(key),
            (Dedup::ByKey, KeySource::Payload, _) => Some(Key(params.0)),
        }
    }

    /// Looks the key up in its scope through the store's own protocol for this atomicity
    /// (the code loom checks): claim the key or, effect-then-key, only look. A [`stale`]
    /// record gives way, and the trace says so, since a second effect may follow. Returns
    /// the live record, or `None` when the key is now this request's to execute under.
    fn claim_key(&mut self, c: &mut Call<'_>, scoped: ScopedKey) -> Option<Record> {
        let (config, now, key) = (&self.config, c.now, scoped.key);
        let marker = Record {
            fingerprint: c.params,
            endpoint: c.request.endpoint,
            first_request_ms: now,
            first_sent_ms: c.request.first_sent_ms,
            completed_ms: None,
            pruned_at_ms: None,
            slot: Slot::InFlight {
                job: self.jobs.len() as u32,
            },
        };
        let stale = |r: &Record| stale(config, r, now);
        let replaced = match self
            .store
            .get_mut()
            .begin(config.atomicity, scoped, marker, stale)
        {
            Claimed::Existing(record) => return Some(record),
            Claimed::Fresh { replaced } => replaced,
        };
        match replaced.map(|old| old.slot) {
            None => {}
            Some(Slot::Done { .. }) => c.log(format_args!("key {key} expired and was forgotten")),
            Some(_) => c.log(format_args!(
                "in-progress record of key {key} expired; executing again"
            )),
        }
        None
    }

    /// A live record past retention is reached only when expiry means refusal (otherwise it
    /// was [`stale`] and gave way): the key can no longer be used. Returns whether it refused.
    fn refuse_expired(&self, c: &mut Call<'_>, key: Key, record: &Record) -> bool {
        let expired = self.expired(record, c.now);
        if expired {
            c.answer(Reply::Expired, format_args!("key {key} expired"));
        }
        expired
    }

    /// Same key, another request: other parameters, or another endpoint where the scope does
    /// not separate endpoints (a key reused by mistake, or a key that stands for more than
    /// one request). Returns whether it dealt with the request; `ReturnOriginal` goes on to
    /// answer from the record as if the request matched.
    fn on_mismatch(&mut self, c: &mut Call<'_>, key: Key, record: &Record) -> bool {
        let other_endpoint = record.endpoint != c.request.endpoint;
        if record.fingerprint == c.params && !other_endpoint {
            return false;
        }
        match self.config.mismatch {
            Mismatch::Reject if other_endpoint => c.answer(
                Reply::Mismatch,
                format_args!(
                    "key {key} was first used with {} on {}",
                    record.fingerprint, record.endpoint
                ),
            ),
            Mismatch::Reject => c.answer(
                Reply::Mismatch,
                format_args!("key {key} was first used with {}", record.fingerprint),
            ),
            Mismatch::TreatAsNew => self.start(c, None),
            Mismatch::ReturnOriginal => return false,
        }
        true
    }

    /// A finished record answers a retry with its stored outcome, as the replay mode presents
    /// it; only `ReexecuteFailed` runs failed work again, and only when it left no effect.
    fn replay_stored(
        &mut self,
        c: &mut Call<'_>,
        scoped: ScopedKey,
        record: Record,
        reply: Reply,
        resource: Option<ResourceId>,
    ) {
        let failed_without_effect = reply.status() >= 500 && resource.is_none();
        if self.config.replay == ReplayMode::ReexecuteFailed && failed_without_effect {
            return self.reexecute(c, scoped, record);
        }
        let key = scoped.key;
        let reply = self.replay(reply, resource);
        c.answer(reply, format_args!("key {key} seen: replay"));
    }

    /// Runs failed work again under the same record. The store hands the record over only if
    /// no other retry reclaimed it first; if one did, that one is executing it now.
    fn reexecute(&mut self, c: &mut Call<'_>, scoped: ScopedKey, failed: Record) {
        let key = scoped.key;
        let job = self.jobs.len() as u32;
        if !self.store.get_mut().reclaim(&scoped, failed, job) {
            return c.answer(
                Reply::InProgress,
                format_args!("key {key} is being executed again"),
            );
        }
        c.log(format_args!("key {key} failed before: executing again"));
        self.start(c, Some(scoped));
    }

    /// A request whose key is held by unfinished work (or by a crash's orphan). Accepted work
    /// has a status handle to give; otherwise the in-flight rule says: refuse (409, retryable,
    /// not stored), hold it for the first one's result, or process both and risk two effects.
    fn same_key_in_flight(&mut self, c: &mut Call<'_>, key: Key, slot: Slot) {
        if let (Slot::InFlight { job }, true) = (slot, self.config.accept_async) {
            return c.answer(
                Reply::Accepted { handle: job },
                format_args!("key {key} in progress: its status handle"),
            );
        }
        match self.config.in_flight {
            InFlight::Reject => c.answer(Reply::InProgress, format_args!("key {key} in progress")),
            InFlight::Wait => {
                // An orphan has no job to finish it: the request is held and never answered.
                if let Slot::InFlight { job } = slot {
                    self.jobs[job as usize].waiters.push(c.attempt);
                }
                c.log(format_args!("key {key} in progress; waits for it"));
            }
            InFlight::ProcessBoth => self.start(c, None),
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
        }
    }

    /// Sends `request` at `now` and returns the provider's outputs.
    fn send(p: &mut Provider, now: Millis, attempt: u32, request: Request) -> Vec<ProviderOut> {
        let mut out = Vec::new();
        let mut ch = RandomChooser::new(0);
        let faults = Faults::default();
        let env = Env {
            now,
            faults: &faults,
            ch: &mut ch,
            trace: &mut Trace::default(),
            out: &mut out,
        };
        p.on_request(AttemptId(attempt), request, env);
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
            ProviderOut::Commit(Committed {
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
    fn a_first_send_outside_the_window_is_refused_or_a_new_request() {
        let mut config = provider("none").config;
        config.retention_ms = Some(500);
        config.retention_from = RetentionFrom::ClientFirstSent;
        config.after_expiry = AfterExpiry::Reject;
        let late = Request {
            first_sent_ms: Some(0),
            ..Request::create(&call(0), Some(Key(1)))
        };
        let mut p = Provider::new(config.clone());
        let out = send(&mut p, 500, 1, late);
        let refused = [ProviderOut::Reply {
            attempt: AttemptId(1),
            reply: Reply::Expired,
        }];
        assert_eq!(out, refused);
        assert!(p.store().is_empty(), "a refusal records nothing");
        // Within the window it is a new key.
        let out = send(&mut p, 499, 2, late);
        assert_eq!(out, [ProviderOut::Wake { job: 0, at_ms: 549 }]);
        // With expiry as a new request, it executes without touching the key's record.
        config.after_expiry = AfterExpiry::NewRequest;
        let mut p = Provider::new(config);
        send(&mut p, 100, 1, Request::create(&call(0), Some(Key(1))));
        let out = send(&mut p, 500, 2, late);
        assert_eq!(out, [ProviderOut::Wake { job: 1, at_ms: 550 }]);
        assert!(p.jobs[1].record.is_none());
        assert_eq!(p.store().len(), 1);
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

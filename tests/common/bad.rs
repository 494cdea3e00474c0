//! The known-bad corpus: designs with one real bug each, as an executor author could write
//! it, for the tests that prove the search finds them (`tests/known_bad.rs`).
//!
//! Each is built from the real design it breaks and changes one thing, so that what fails
//! is that one thing (as in `tests/common/broken.rs`, whose fixtures three of them are):
//! - [`key_per_call`]: `same_key` with the key minted per tool call (the built-in
//!   `new_key_after_replan`): a replan presents the intent as a new operation;
//! - [`RECORD_AFTER_SEND`]: `journal` that writes the operation's key to the journal once the
//!   send is out (a step after the dispatch) instead of before it: a crash in between leaves
//!   a record without its key, and the restarted worker sends the operation again without one;
//! - `broken::NEGATIVE_READ_AT_ONCE`: `journal_reconcile` that believes "not found" at once;
//! - `broken::UNFENCED`: `journal_reconcile_lease` that acts on stale answers;
//! - [`RETENTION_FOREVER`]: `journal` that believes the provider keeps keys forever
//!   (`executor.assumed_retention_ms` ignored): it sends an old key again without reading
//!   anything back, after the provider may have forgotten it;
//! - [`IN_PROGRESS_IS_FAILURE`]: `same_key` that hears a 409 "in progress" as a refusal;
//! - [`TENANT_BLIND_HASH`]: `payload_hash_key` whose hash leaves the tenant out;
//! - [`SWEEPER_WITHOUT_LEASE`]: `journal_reconcile_lease` without its lease: its recovery
//!   sweeper takes over operations that are still in flight and sends them again;
//! - [`ACCEPTED_IS_DONE`]: `journal` that hears a 202 Accepted as done;
//! - [`MEMOISED_RECEIPT`]: a same-key design whose journal names each operation's own
//!   resource but whose answer to the agent names the first resource of its endpoint;
//! - [`DEBOUNCED`]: the same without the memo, answering an identical call within 2 s of a
//!   success from a cache: a design-internal constant, declared to the explorer.
#![allow(dead_code)]

use std::collections::BTreeMap;

use retrylab::design::{self, Design, ExecCtx, Executor, OpState};
use retrylab::design::{Identity, Retrying};
use retrylab::design::{Journaled, Policy};
use retrylab::model::ExecutorModel;
use retrylab::vocab::ids::{AttemptId, Key, OpId, ResourceId};
use retrylab::vocab::protocol::{Reply, Request, Response, ToolCall, ToolResult};

/// What a known-bad design is made of: a built-in design, or the journal engine under a
/// policy.
#[derive(Clone, Copy)]
pub enum Base {
    Builtin(&'static str),
    Journaled(Policy),
}

/// A design built from a real one, with one change: to its configuration, to what its
/// executor hears, or to when it writes an operation's key.
pub struct Bad {
    pub name: &'static str,
    /// The bug, in one line.
    pub summary: &'static str,
    pub base: Base,
    pub configure: fn(&ExecutorModel) -> ExecutorModel,
    /// What the executor is told in place of each response.
    pub hears: fn(Response) -> Response,
    /// The key of a new operation reaches the journal only after its first send is out.
    pub key_recorded_after_send: bool,
}

impl Design for Bad {
    fn name(&self) -> &str {
        self.name
    }

    fn summary(&self) -> &str {
        self.summary
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        let config = (self.configure)(config);
        let inner = match self.base {
            Base::Builtin(name) => design::find(name)
                .expect("a built-in design")
                .executor(&config),
            Base::Journaled(policy) => Box::new(Journaled::new(policy, &config)),
        };
        Box::new(Wrapped {
            inner,
            hears: self.hears,
            key_recorded_after_send: self.key_recorded_after_send,
            unrecorded: BTreeMap::new(),
        })
    }
}

/// Timer tag bit of the deferred key write: clear of `Journaled`'s tags (an operation id,
/// bit 40 for a lease wait, `u64::MAX` for the sweeper).
const RECORD_KEY: u64 = 1 << 41;

struct Wrapped {
    inner: Box<dyn Executor>,
    hears: fn(Response) -> Response,
    key_recorded_after_send: bool,
    /// Keys sent but not yet written to the journal (process memory: a crash loses them).
    unrecorded: BTreeMap<OpId, Key>,
}

impl Wrapped {
    /// Runs one callback of the real design. With the key written after the send, every
    /// operation whose first send left during the callback has its key taken back out of
    /// the journal and written again by a step of its own, after the send (a timer due now:
    /// the world carries out the send, and a crash after it, first).
    fn step(&mut self, ctx: &mut ExecCtx<'_>, f: impl FnOnce(&mut dyn Executor, &mut ExecCtx<'_>)) {
        if !self.key_recorded_after_send {
            return f(self.inner.as_mut(), ctx);
        }
        let unsent: Vec<OpId> = ctx
            .journal_ref()
            .iter()
            .filter(|o| o.key_sent_ms.is_none())
            .map(|o| o.id())
            .collect();
        let known = ctx.journal_ref().iter().count();
        f(self.inner.as_mut(), ctx);
        let sent: Vec<OpId> = ctx
            .journal_ref()
            .iter()
            .enumerate()
            .filter(|(i, o)| (*i >= known || unsent.contains(&o.id())) && o.key_sent_ms.is_some())
            .map(|(_, o)| o.id())
            .collect();
        for op in sent {
            let Some(key) = ctx.journal().get_mut(op).and_then(|o| o.key.take()) else {
                continue;
            };
            self.unrecorded.insert(op, key);
            ctx.set_timer(0, RECORD_KEY | u64::from(op.0));
        }
    }
}

impl Executor for Wrapped {
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        self.step(ctx, |e, ctx| e.on_call(ctx, call))
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        let response = (self.hears)(response);
        self.step(ctx, |e, ctx| e.on_response(ctx, op, attempt, response))
    }

    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        if self.key_recorded_after_send && tag != u64::MAX && tag & RECORD_KEY != 0 {
            let op = OpId(tag as u32);
            if let (Some(key), Some(o)) = (self.unrecorded.remove(&op), ctx.journal().get_mut(op)) {
                o.key = Some(key);
                ctx.note(|| format!("{op}: key {key} recorded, after its send"));
            }
            return;
        }
        self.step(ctx, |e, ctx| e.on_timer(ctx, tag))
    }

    fn on_start(&mut self, ctx: &mut ExecCtx<'_>) {
        self.step(ctx, |e, ctx| e.on_start(ctx))
    }

    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        self.step(ctx, |e, ctx| e.on_restart(ctx))
    }

    /// The keys sent but not yet written back (what the deferred writes will restore), then
    /// the real design's memory. `hears` and `key_recorded_after_send` are fixed for the
    /// design.
    fn fingerprint(&self, mut h: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        self.unrecorded.hash(&mut h);
        self.inner.fingerprint(h)
    }
}

fn unchanged(config: &ExecutorModel) -> ExecutorModel {
    config.clone()
}

fn as_sent(response: Response) -> Response {
    response
}

/// Bug 1: `same_key` with the key minted per tool call: the built-in `new_key_after_replan`.
pub fn key_per_call() -> &'static dyn Design {
    design::find("new_key_after_replan").expect("built in")
}

/// Bug 2: `journal` that writes an operation's key once its first send is out, as
/// `send(request); db.save(op)` does: a crash between the two loses the key.
pub static RECORD_AFTER_SEND: Bad = Bad {
    name: "bad_record_after_send",
    summary: "journal whose operation key is written after the dispatch, not before",
    base: Base::Builtin("journal"),
    configure: unchanged,
    hears: as_sent,
    key_recorded_after_send: true,
};

/// Bug 5: `journal` that believes keys are kept forever: no assumed retention, so an old key is
/// sent again blindly.
pub static RETENTION_FOREVER: Bad = Bad {
    name: "bad_retention_forever",
    summary: "journal that resends a key past the provider's retention, without a read-back",
    base: Base::Builtin("journal"),
    configure: |c| ExecutorModel {
        assumed_retention_ms: None,
        ..c.clone()
    },
    hears: as_sent,
    key_recorded_after_send: false,
};

/// Bug 6: `same_key` that hears a 409 "in progress" as a refusal: the operation is settled as
/// failed while the first request is still running.
pub static IN_PROGRESS_IS_FAILURE: Bad = Bad {
    name: "bad_in_progress_is_failure",
    summary: "same_key that reports a 409 in progress as a failure",
    base: Base::Builtin("same_key"),
    configure: unchanged,
    hears: |r| match r {
        Response::Reply(Reply::InProgress) => Response::Reply(Reply::Rejected),
        other => other,
    },
    key_recorded_after_send: false,
};

/// Bug 8: `journal_reconcile_lease` without its lease: any worker's sweeper takes over an
/// operation that has not moved for a sweep period, in flight or not, and acts on it.
pub static SWEEPER_WITHOUT_LEASE: Bad = Bad {
    name: "bad_sweeper_without_lease",
    summary: "journal_reconcile_lease whose sweeper takes over operations without a lease",
    base: Base::Journaled(Policy {
        reconcile: true,
        lease: false,
        auth_ledger: false,
        fencing: true,
    }),
    configure: unchanged,
    hears: as_sent,
    key_recorded_after_send: false,
};

/// Bug 9: `journal` that hears a 202 Accepted as done (a bare success, no receipt) instead of
/// polling the accepted work.
pub static ACCEPTED_IS_DONE: Bad = Bad {
    name: "bad_accepted_is_done",
    summary: "journal that reports success on a 202 Accepted",
    base: Base::Builtin("journal"),
    configure: unchanged,
    hears: |r| match r {
        Response::Reply(Reply::Accepted { .. }) => Response::Reply(Reply::AlreadyExists),
        other => other,
    },
    key_recorded_after_send: false,
};

/// Bug 7: `payload_hash_key` whose hash covers the action and the arguments but not the tenant:
/// two tenants asking for the same thing present one key.
pub struct TenantBlindHash;

pub static TENANT_BLIND_HASH: TenantBlindHash = TenantBlindHash;

impl Design for TenantBlindHash {
    fn name(&self) -> &str {
        "bad_tenant_blind_hash"
    }

    fn summary(&self) -> &str {
        "payload_hash_key whose hash leaves the tenant out"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Retrying::new(TenantBlind, config))
    }
}

struct TenantBlind;

/// `payload_hash_key`'s hash, over the endpoint and the arguments only.
fn tenant_blind_key(call: &ToolCall) -> Key {
    retrylab::design::preset::key_of(&[u64::from(call.endpoint.0), call.params.0])
}

impl Identity for TenantBlind {
    /// Stateless: everything it knows is in the journal.
    fn fingerprint(&self, _h: &mut dyn std::hash::Hasher) -> bool {
        true
    }

    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId {
        if let Some(op) = ctx.journal_ref().find_by_call(call.call) {
            return op;
        }
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal()
            .create(call, Some(tenant_blind_key(call)), worker, now)
    }
}

/// Bug 10: a design whose journal is right and whose answer to the agent is not: it
/// memoises the receipt per endpoint (a cached `ticket_url(endpoint)` helper in the tool
/// wrapper), so every later call to an endpoint is told the first call's resource. Its claims
/// name each operation's own resource, so `no_false_resolution` holds; only the receipt the
/// user is handed is wrong, and an agent that compensates on it undoes another intent's
/// effect.
pub struct MemoisedReceipt;

pub static MEMOISED_RECEIPT: MemoisedReceipt = MemoisedReceipt;

impl Design for MemoisedReceipt {
    fn name(&self) -> &str {
        "bad_memoised_receipt"
    }

    fn summary(&self) -> &str {
        "one key per call, same-key retries; tells each call the first receipt of its endpoint"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(MemoisedExecutor {
            attempts: config.attempts,
            memoise: true,
            debounce_ms: None,
            first: BTreeMap::new(),
            done: BTreeMap::new(),
        })
    }
}

/// Bug 12: a tool wrapper that debounces an identical call (same tenant, action and
/// arguments) within 2 s of a success, answering it from its cache: a guard against a model
/// that calls a tool twice, which merges the repeat a user really wanted. The 2 s is the
/// design's own constant, not a model knob: the design declares it
/// ([`Design::time_thresholds`]) so that `explore` offers values on both sides of it.
/// [`DEBOUNCED_UNDECLARED`] is the same code without the declaration: its certificate does
/// not cover the window (its scope says which values it tried).
pub struct Debounced {
    pub declared: bool,
}

pub static DEBOUNCED: Debounced = Debounced { declared: true };
pub static DEBOUNCED_UNDECLARED: Debounced = Debounced { declared: false };

/// The debounce window of [`Debounced`].
pub const DEBOUNCE_MS: u64 = 2_000;

impl Design for Debounced {
    fn name(&self) -> &str {
        if self.declared {
            "bad_debounced"
        } else {
            "bad_debounced_undeclared"
        }
    }

    fn summary(&self) -> &str {
        "one key per call, same-key retries; an identical call within 2 s of a success is answered from a cache"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(MemoisedExecutor {
            attempts: config.attempts,
            memoise: false,
            debounce_ms: Some(DEBOUNCE_MS),
            first: BTreeMap::new(),
            done: BTreeMap::new(),
        })
    }

    fn time_thresholds(&self, _config: &ExecutorModel) -> Vec<(u64, &'static str)> {
        if self.declared {
            vec![(DEBOUNCE_MS, "the design's debounce window")]
        } else {
            Vec::new()
        }
    }
}

struct MemoisedExecutor {
    attempts: u32,
    /// Tell each call the first receipt of its endpoint (bug 10).
    memoise: bool,
    /// Answer an identical call within this many milliseconds of a success from the cache
    /// (bug 12).
    debounce_ms: Option<u64>,
    /// The first receipt seen per (tenant, endpoint): process memory.
    first: BTreeMap<(u32, u32), ResourceId>,
    /// The last success per (tenant, endpoint, arguments): when, and its receipt.
    done: BTreeMap<(u32, u32, u64), (u64, ResourceId)>,
}

impl MemoisedExecutor {
    fn send(&mut self, ctx: &mut ExecCtx<'_>, op: OpId) {
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        if s.attempts >= self.attempts {
            s.owes_report = false;
            let call = o.call();
            ctx.transition(op, OpState::Unknown);
            return ctx.report(&call, ToolResult::Unknown);
        }
        s.attempts += 1;
        let request = Request::create(&o.call(), o.key);
        ctx.transition(op, OpState::Dispatched);
        ctx.send(op, request);
    }

    fn settle(&mut self, ctx: &mut ExecCtx<'_>, op: OpId, state: OpState, result: ToolResult) {
        ctx.transition(op, state);
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        if std::mem::take(&mut s.owes_report) {
            let call = o.call();
            ctx.report(&call, result);
        }
    }
}

impl Executor for MemoisedExecutor {
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        let what = (call.tenant.0, call.endpoint.0, call.params.0);
        if let (Some(window), Some(&(at, resource))) = (self.debounce_ms, self.done.get(&what))
            && ctx.now() - at < window
        {
            let age = ctx.now() - at;
            ctx.note(|| {
                format!(
                    "{}: identical to a call done {age} ms ago: cached",
                    call.call
                )
            });
            return ctx.report(
                &call,
                ToolResult::Success {
                    resource: Some(resource),
                },
            );
        }
        let key = Some(ctx.new_key());
        let (worker, now) = (ctx.worker(), ctx.now());
        let op = ctx.journal().create(&call, key, worker, now);
        ctx.transition(op, OpState::Authorized);
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.owes_report = true;
        }
        self.send(ctx, op);
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        _attempt: AttemptId,
        response: Response,
    ) {
        if ctx
            .journal_ref()
            .get(op)
            .is_none_or(|o| o.state().is_settled())
        {
            return;
        }
        match response {
            Response::Reply(Reply::Created { resource, .. }) => {
                let call = ctx.journal_ref().get(op).expect("recorded").call();
                if let Some(o) = ctx.journal().get_mut(op) {
                    // The journal keeps the operation's own resource: its claim is true.
                    o.receipt = Some(resource);
                }
                let what = (call.tenant.0, call.endpoint.0, call.params.0);
                self.done.insert(what, (ctx.now(), resource));
                let first = *self
                    .first
                    .entry((call.tenant.0, call.endpoint.0))
                    .or_insert(resource);
                let told = if self.memoise { first } else { resource };
                let result = ToolResult::Success {
                    resource: Some(told),
                };
                self.settle(ctx, op, OpState::Confirmed, result)
            }
            Response::Reply(
                Reply::Rejected | Reply::Mismatch | Reply::MissingKey | Reply::OperationFailed,
            ) => self.settle(ctx, op, OpState::Failed, ToolResult::Failure),
            // Anything else: the same key again, while the call's attempts last.
            _ => self.send(ctx, op),
        }
    }

    fn fingerprint(&self, mut h: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        self.first.hash(&mut h);
        self.done.hash(&mut h);
        true
    }

    fn reset(&mut self) -> bool {
        self.first.clear();
        self.done.clear();
        true
    }
}

//! Contract assumptions: what a design's guarantee rests on, as data checked against a model.
//!
//! A design's guarantee ("no duplicate effect...") holds only where the provider's contract
//! and the model's timings give it what it relies on: a key deduplicated atomically, kept as
//! long as the design may send it again, a read-back that tells the truth... Each
//! [`Assumption`] has a stable snake_case name, a one-line description, and a check that
//! reads a [`Model`] and says whether it holds there, and why. `run` and `check` report every
//! assumption of every design they run; one that does not hold means the design's guarantee
//! does not apply to the model (its figures may still be good, but nothing promises it).
//!
//! The checks are upper bounds computed from the model's knobs (the longest latency, the
//! longest processing, scripted slow processing and pauses included), so an assumption that
//! holds holds on every seed.

use super::Design;
use crate::model::{
    AfterExpiry, Atomicity, Dedup, Durability, Fault, InFlight, KeyLifetime, KeyScope, KeySource,
    Lookup, Mismatch, Model, Paused, StepFailure, StoredOutcomes,
};
use crate::sim::Millis;

type Check = dyn Fn(&Model) -> (bool, String) + Send + Sync;

/// One contract assumption of a design's guarantee.
pub struct Assumption {
    /// Stable snake_case name, as reported.
    pub name: &'static str,
    /// One line on what is assumed.
    pub description: &'static str,
    check: Box<Check>,
}

impl Assumption {
    /// An assumption whose `check` says whether a model satisfies it, and why.
    pub fn new(
        name: &'static str,
        description: &'static str,
        check: impl Fn(&Model) -> (bool, String) + Send + Sync + 'static,
    ) -> Self {
        Self {
            name,
            description,
            check: Box::new(check),
        }
    }

    /// Whether `model` satisfies the assumption, and why (one line).
    pub fn check(&self, model: &Model) -> (bool, String) {
        (self.check)(model)
    }

    /// The same assumption, satisfied without a look at the model whenever `not_needed`
    /// says why it is not needed there.
    pub fn unless(
        self,
        not_needed: impl Fn(&Model) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        let check = self.check;
        Self {
            check: Box::new(move |m| match not_needed(m) {
                Some(why) => (true, why),
                None => check(m),
            }),
            ..self
        }
    }
}

/// One assumption judged against a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    pub name: String,
    pub holds: bool,
    pub why: String,
}

/// Every assumption of `design`, judged against `model`, in the design's order. A design
/// with a guarantee that runs the model's `executor.stack` in place of its own layers
/// ([`Design::runs_model_stack`]) has one more, `own_layers`, which does not hold there:
/// the others are judged for its own layers and the shorthand's knobs.
pub fn judge(design: &dyn Design, model: &Model) -> Vec<Judgement> {
    // A configured design is judged by the configuration it runs.
    let model = model.for_design(design.name());
    let mut judged: Vec<Judgement> = design
        .assumptions()
        .iter()
        .map(|a| {
            let (holds, why) = a.check(model);
            Judgement {
                name: a.name.to_string(),
                holds,
                why,
            }
        })
        .collect();
    if design.runs_model_stack()
        && model.executor.stack_spec().is_some()
        && !design.guarantee().is_empty()
    {
        judged.push(Judgement {
            name: OWN_LAYERS.to_string(),
            holds: false,
            why: format!(
                "{} replaces the design's own retry layers, for which its guarantee and the assumptions above were stated",
                if model.executor.stack.is_some() { "executor.stack" } else { "executor.preset" }
            ),
        });
    }
    judged
}

/// The assumption a design that runs a model's stack adds where the model gives one.
pub const OWN_LAYERS: &str = "own_layers";

// ---- what the model allows, at most ----

/// The longest one-way latency.
pub fn latency_max(m: &Model) -> Millis {
    m.network.latency_ms.max
}

/// The longest time a request is processed: the drawn maximum or a scripted slow
/// processing, plus the longest provider pause.
pub fn processing_max(m: &Model) -> Millis {
    let slow = m
        .faults
        .iter()
        .filter_map(|f| match f {
            Fault::SlowProcessing { ms, .. } => Some(*ms),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let pause = m
        .faults
        .iter()
        .filter_map(|f| match f {
            Fault::Pause {
                component: Paused::Provider,
                duration_ms,
                ..
            } => Some(*duration_ms),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    m.provider.processing_ms.max.max(slow).saturating_add(pause)
}

/// The most worker crashes a run can have: the scripted ones and the random budget.
pub fn crashes_max(m: &Model) -> u64 {
    let scripted = m
        .faults
        .iter()
        .filter(|f| matches!(f, Fault::CrashWorker { .. } | Fault::CrashAtCommit { .. }))
        .count() as u64;
    let random = m.workers.crash.any();
    scripted
        + if random {
            u64::from(m.workers.max_crashes)
        } else {
            0
        }
}

/// The time every scripted pause freezes a component, added up.
pub fn pauses_ms(m: &Model) -> Millis {
    m.faults
        .iter()
        .filter_map(|f| match f {
            Fault::Pause { duration_ms, .. } => Some(*duration_ms),
            _ => None,
        })
        .fold(0, Millis::saturating_add)
}

/// Whose retries a retry horizon bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resender {
    /// The shared transport loop (`same_key`): bounded only by the agent's calls.
    Retrying,
    /// The journal family: also bounded by the deadline and the assumed retention.
    Journal { reads: bool, lease: bool },
}

/// How long after a key's first send a design may send it again, at most, and what bounds
/// it: the agent's calls (each waits at most its tool timeout, then thinks), the executor's
/// sends and waits in the last call, crashes and restarts, pauses and the way to the
/// provider; for the journal family also the deadline and the assumed retention; for
/// everyone the run's horizon.
pub fn retry_horizon(m: &Model, who: Resender) -> (Millis, String) {
    let (a, e) = (&m.agent, &m.executor);
    let steps = match a.on_step_failure {
        StepFailure::RestartWorkflow => u64::from(m.workload.steps),
        StepFailure::RetryStep => 1,
    };
    let calls = (u64::from(a.max_calls) * steps).saturating_sub(1);
    let agent = calls.saturating_mul(a.tool_timeout_ms.saturating_add(a.think_ms.max));
    let (reads, lease) = match who {
        Resender::Retrying => (false, false),
        Resender::Journal { reads, lease } => (reads, lease),
    };
    let sends = e.attempts + if reads { e.reads } else { 0 };
    let waits = (1..sends).fold(0, |t: Millis, n| t.saturating_add(e.backoff_before(n)));
    let executor = u64::from(sends)
        .saturating_mul(e.timeout_ms)
        .saturating_add(waits);
    let per_crash = m
        .workers
        .restart_delay_ms
        .saturating_add(if lease { e.lease_ms } else { 0 });
    let mut recovery = crashes_max(m).saturating_mul(per_crash);
    if matches!(who, Resender::Journal { .. }) {
        recovery = recovery.saturating_add(e.sweep_ms.unwrap_or(0));
    }
    let lat = latency_max(m);
    let mut horizon = agent
        .saturating_add(executor)
        .saturating_add(recovery)
        .saturating_add(pauses_ms(m))
        .saturating_add(lat);
    let mut bound = "agent calls, sends, restarts and pauses";
    let mut cap = |limit: Millis, by: &'static str| {
        if limit < horizon {
            horizon = limit;
            bound = by;
        }
    };
    if matches!(who, Resender::Journal { .. }) {
        if let Some(d) = e.deadline_ms {
            cap(d.saturating_add(lat), "executor.deadline_ms");
        }
        if let Some(r) = e.assumed_retention_ms {
            cap(
                r.saturating_sub(e.timeout_ms).saturating_add(lat),
                "executor.assumed_retention_ms",
            );
        }
    }
    cap(m.horizon_ms, "horizon_ms");
    (horizon, format!("bounded by {bound}"))
}

// ---- the assumptions ----

/// The provider deduplicates the caller's key, key record and effect committed together.
pub fn atomic_dedup() -> Assumption {
    Assumption::new(
        "atomic_dedup",
        "the provider deduplicates the caller's key, and commits key record and effect together",
        |m| {
            let p = &m.provider;
            if p.dedup != Dedup::ByKey {
                return (
                    false,
                    "provider.dedup is none: no key is deduplicated".into(),
                );
            }
            if p.key_source != KeySource::Client {
                return (
                    false,
                    "provider.key_source is payload: the provider ignores the caller's key".into(),
                );
            }
            match p.atomicity {
                Atomicity::Atomic => (
                    true,
                    "dedup by_key on the caller's key, atomicity atomic".into(),
                ),
                Atomicity::KeyThenEffect => (
                    false,
                    "atomicity key_then_effect: a crash between key and effect leaves a key without its effect".into(),
                ),
                Atomicity::EffectThenKey => (
                    false,
                    "atomicity effect_then_key: concurrent requests both execute, and a crash leaves an effect without its key".into(),
                ),
            }
        },
    )
}

/// Every send of a key reaches the scope that saw it first.
pub fn one_key_scope() -> Assumption {
    Assumption::new(
        "one_key_scope",
        "every send of a key reaches the key scope that saw it first (no failover to another region under a region-scoped key)",
        |m| {
            let rerouted = m
                .faults
                .iter()
                .any(|f| matches!(f, Fault::Reroute { region, .. } if *region != 0));
            match (m.provider.key_scope, rerouted) {
                (KeyScope::TenantRegion, true) => (
                    false,
                    "key_scope tenant_region and a scripted reroute to another region: the key is new there".into(),
                ),
                (KeyScope::TenantRegion, false) => (
                    true,
                    "key_scope tenant_region, and no send is rerouted to another region".into(),
                ),
                (scope, _) => (
                    true,
                    format!(
                        "key_scope {}, which does not depend on the region",
                        match scope {
                            KeyScope::Global => "global",
                            KeyScope::Tenant => "tenant",
                            _ => "tenant_endpoint",
                        }
                    ),
                ),
            }
        },
    )
}

/// A concurrent request with the same key is refused or held, for as long as it runs.
pub fn in_flight_refused_or_held() -> Assumption {
    Assumption::new(
        "in_flight_refused_or_held",
        "a concurrent request with the same key is refused (409) or held until the first ends",
        in_flight_check,
    )
}

fn in_flight_check(m: &Model) -> (bool, String) {
    let p = &m.provider;
    if p.in_flight == InFlight::ProcessBoth {
        return (
            false,
            "in_flight process_both: two requests with one key can both commit".into(),
        );
    }
    let longest = processing_max(m);
    match p.in_progress_expiry_ms {
        Some(x) if x <= longest => (
            false,
            format!(
                "in_progress_expiry_ms {x} <= the longest processing {longest} ms: a retry then executes beside the first"
            ),
        ),
        _ => (
            true,
            format!(
                "in_flight {}",
                if p.in_flight == InFlight::Reject {
                    "reject"
                } else {
                    "wait"
                }
            ),
        ),
    }
}

/// A changed request under a used key is refused or answered as the original.
pub fn mismatch_refused_or_original() -> Assumption {
    Assumption::new(
        "mismatch_refused_or_original",
        "a changed request under a used key is refused or answered as the original, never executed",
        |m| {
            let a = &m.agent;
            let changes = a.on_failure.change_args > 0 || a.on_unknown.change_args > 0;
            match m.provider.mismatch {
                Mismatch::Reject => (true, "mismatch reject".into()),
                Mismatch::ReturnOriginal => (true, "mismatch return_original".into()),
                Mismatch::TreatAsNew if !changes => (
                    true,
                    "mismatch treat_as_new, but the agent never changes arguments here".into(),
                ),
                Mismatch::TreatAsNew => (
                    false,
                    "mismatch treat_as_new and the agent may change arguments: a second effect"
                        .into(),
                ),
            }
        },
    )
}

/// A committed request's outcome is stored, so a retry never executes it again.
pub fn every_outcome_stored() -> Assumption {
    Assumption::new(
        "every_outcome_stored",
        "the outcome of every committed request is stored, so a retry never executes it again",
        |m| {
            let p = &m.provider;
            let name = match p.stored_outcomes {
                StoredOutcomes::All => return (true, "stored_outcomes all".into()),
                StoredOutcomes::Committed => {
                    return (
                        true,
                        "stored_outcomes committed: the key is recorded with every effect".into(),
                    );
                }
                StoredOutcomes::SuccessOnly => "success_only",
                StoredOutcomes::SuccessAndClientErrors => "success_and_client_errors",
            };
            if p.error_after_commit.is_zero() {
                (
                    true,
                    format!("stored_outcomes {name}, but no 5xx follows a commit here"),
                )
            } else {
                (
                    false,
                    format!(
                        "stored_outcomes {name} with error_after_commit above 0: a 5xx after a commit is not stored, and the retry executes again"
                    ),
                )
            }
        },
    )
}

/// The provider keeps a key at least as long as the design may send it again.
pub fn retention_covers_retries(who: Resender) -> Assumption {
    Assumption::new(
        "retention_covers_retries",
        "the provider keeps a key at least as long as the design may send it again",
        move |m| {
            let p = &m.provider;
            let Some(r) = p.retention_ms else {
                return (
                    true,
                    "provider.retention_ms absent: keys are kept forever".into(),
                );
            };
            if p.after_expiry == AfterExpiry::Reject {
                return (
                    true,
                    "after_expiry reject: an expired key is refused, never executed again".into(),
                );
            }
            let (horizon, how) = retry_horizon(m, who);
            let cmp = if r >= horizon { ">=" } else { "<" };
            (
                r >= horizon,
                format!("provider.retention_ms {r} {cmp} the retry horizon {horizon} ms ({how})"),
            )
        },
    )
}

/// The journal survives a worker crash.
pub fn durable_journal() -> Assumption {
    Assumption::new(
        "durable_journal",
        "the executor's journal (its operations and keys) survives a worker crash",
        |m| match m.workers.journal {
            Durability::Durable => (true, "workers.journal durable".into()),
            Durability::Volatile if crashes_max(m) == 0 => (
                true,
                "workers.journal volatile, but no worker can crash here".into(),
            ),
            Durability::Volatile => (
                false,
                "workers.journal volatile and workers can crash: a crash forgets the key".into(),
            ),
        },
    )
}

/// A replan keeps the user's authorization: the design's one operation per authorization is
/// one operation per intent.
pub fn authorization_survives() -> Assumption {
    Assumption::new(
        "authorization_survives",
        "every call of an intent carries the same user authorization: a replan never loses it",
        |m| {
            let loss = m.agent.authorization_loss;
            if loss.is_zero() {
                (true, "agent.authorization_loss 0".into())
            } else {
                (
                    false,
                    format!(
                        "agent.authorization_loss {loss}: a replan may come back with a new authorization, which is a new operation under a new key"
                    ),
                )
            }
        },
    )
}

/// What a lookup by key can still see when the design reads: under `key_lifetime: record`
/// nothing once the record is gone (expired, pruned, or never stored), and a "not found" then
/// proves nothing; at a provider that keeps no record under the caller's key (no dedup, or a
/// key taken from the payload) a read never finds anything. Holds when the key lives with the
/// resource, when records outlive the run
/// and every outcome is stored, or when the design never trusts a read by a key older than a
/// retention no longer than the provider's.
fn key_read_sees_effect(m: &Model) -> (bool, String) {
    let p = &m.provider;
    if p.dedup == Dedup::None || p.key_source == KeySource::Payload {
        return (
            false,
            format!(
                "a lookup by key, but the provider keeps no record under the caller's key ({}), so a read finds nothing where the effect exists",
                if p.dedup == Dedup::None {
                    "dedup none"
                } else {
                    "key_source payload"
                }
            ),
        );
    }
    if p.key_lifetime == KeyLifetime::Resource {
        return (
            true,
            "a lookup by key, which finds the resource as long as it exists (key_lifetime resource)"
                .into(),
        );
    }
    let unstored = !matches!(
        p.stored_outcomes,
        StoredOutcomes::All | StoredOutcomes::Committed
    ) && !p.error_after_commit.is_zero();
    if unstored {
        return (
            false,
            "a lookup by key, but a 5xx after a commit leaves no record (key_lifetime record), so a read finds nothing where the effect exists".into(),
        );
    }
    match (p.retention_ms, m.executor.assumed_retention_ms) {
        (None, _) => (
            true,
            "a lookup by key, and key records are kept for the run".into(),
        ),
        (Some(r), Some(a)) if a <= r => (
            true,
            format!(
                "a lookup by key; records expire (retention_ms {r}) but the design never trusts a read by a key older than executor.assumed_retention_ms {a}"
            ),
        ),
        (Some(r), believed) => (
            false,
            format!(
                "key_lifetime record: a lookup by key finds nothing once the record expires (retention_ms {r}), and the design, believing {}, takes that for absence",
                believed.map_or("keys are kept forever".to_string(), |a| format!(
                    "executor.assumed_retention_ms {a}"
                ))
            ),
        ),
    }
}

/// The read-back tells this operation's effect apart after a lost reply.
pub fn read_back_identifies_operation() -> Assumption {
    Assumption::new(
        "read_back_identifies_operation",
        "after a lost reply the read-back can find this operation's effect: a lookup by key the provider answers",
        |m| {
            let (mine, theirs) = (m.executor.reconcile, m.provider.lookup);
            if mine != theirs {
                return (
                    false,
                    format!(
                        "executor.reconcile {} but provider.lookup {}: every read is unsupported, and the design falls back to resending under its key",
                        lookup_name(mine),
                        lookup_name(theirs)
                    ),
                );
            }
            match mine {
                Lookup::ByKey => key_read_sees_effect(m),
                Lookup::Search if m.workload.genuine_repeat.is_zero() => (
                    true,
                    "a search by attributes, and no intent here repeats another's arguments".into(),
                ),
                Lookup::Search => (
                    false,
                    "a search by attributes finds a genuine repeat's resource as readily as this operation's".into(),
                ),
                Lookup::ByResourceId => (
                    false,
                    "a lookup by resource id needs the id that came with the lost reply; the design falls back to resending under its key".into(),
                ),
                Lookup::None => (false, "no lookup".into()),
            }
        },
    )
}

fn lookup_name(l: Lookup) -> &'static str {
    match l {
        Lookup::None => "none",
        Lookup::ByKey => "by_key",
        Lookup::ByResourceId => "by_resource_id",
        Lookup::Search => "search",
    }
}

/// Whether the read-back answers "not found" at all: the executor reads the way the
/// provider offers, by key or by search.
fn reads_answer(m: &Model) -> bool {
    let (mine, theirs) = (m.executor.reconcile, m.provider.lookup);
    mine == theirs && matches!(mine, Lookup::ByKey | Lookup::Search)
}

/// A "not found" is trusted only once an earlier send's effect would be visible.
pub fn visibility_bound_covers_lag() -> Assumption {
    Assumption::new(
        "visibility_bound_covers_lag",
        "a \"not found\" is trusted only once any earlier send's effect would be visible: the bound covers the network both ways, the processing and the visibility lag",
        |m| {
            if !reads_answer(m) {
                return (
                    true,
                    "not used: no read-back here answers \"not found\"".into(),
                );
            }
            let lat = latency_max(m);
            let (proc, lag) = (processing_max(m), m.provider.visibility_lag_ms.max);
            let need = lag
                .saturating_add(proc)
                .saturating_add(lat.saturating_mul(2));
            let bound = m.executor.visibility_bound_ms;
            let cmp = if bound >= need { ">=" } else { "<" };
            (
                bound >= need,
                format!(
                    "executor.visibility_bound_ms {bound} {cmp} {need} (lag {lag} + processing {proc} + latency 2 x {lat})"
                ),
            )
        },
    )
}

/// Not needed where every create after the first follows a search that proved absence.
pub fn search_decides(m: &Model) -> Option<String> {
    let search = m.executor.reconcile == Lookup::Search && m.provider.lookup == Lookup::Search;
    (search && m.workload.genuine_repeat.is_zero() && m.network.duplicate.is_zero()).then(|| {
        "not needed: a create goes out again only after a search past the visibility bound finds nothing, and no network copy of a request arrives later".to_string()
    })
}

/// A lease outlasts one step of its holder: a send and its timeout.
pub fn lease_covers_step() -> Assumption {
    Assumption::new(
        "lease_covers_step",
        "a lease outlasts its holder's step: the client timeout plus the longest latency",
        |m| {
            let (lease, timeout, lat) =
                (m.executor.lease_ms, m.executor.timeout_ms, latency_max(m));
            let need = timeout.saturating_add(lat);
            let cmp = if lease >= need { ">=" } else { "<" };
            (
                lease >= need,
                format!("executor.lease_ms {lease} {cmp} timeout_ms {timeout} + latency {lat}"),
            )
        },
    )
}

/// Two requests with one key never overlap at the provider, or the provider absorbs it.
pub fn lease_outlasts_request() -> Assumption {
    Assumption::new(
        "lease_outlasts_request",
        "two workers' sends of one operation never overlap at the provider: the lease outlasts a request's latency and processing, or the provider refuses or holds the second",
        |m| {
            let why = match racing(m) {
                Ok(why) => why,
                Err(verdict) => return verdict,
            };
            let lease = m.executor.lease_ms;
            let (lat, proc) = (latency_max(m), processing_max(m));
            let need = lat.saturating_add(proc);
            let cmp = if lease >= need { ">=" } else { "<" };
            (
                lease >= need,
                format!("{why}; executor.lease_ms {lease} {cmp} latency {lat} + processing {proc}"),
            )
        },
    )
}

/// Whether two sends of one key can both commit at the provider (`Ok`, with why: then only
/// their timing keeps them apart), or the verdict of a timing assumption without looking at
/// the timing: not needed when the provider refuses or holds the second send, broken when the
/// network duplicates requests.
fn racing(m: &Model) -> Result<String, (bool, String)> {
    let (ok, why) = in_flight_check(m);
    if ok {
        return Err((true, format!("not needed: {why}")));
    }
    if !m.network.duplicate.is_zero() {
        return Err((false, format!("{why}, and the network duplicates requests")));
    }
    Ok(why)
}

/// The lease keeps other workers out, not its holder: the holder's own next send of an
/// operation (a transport retry, or a replan the agent sends again) must not reach a
/// provider that executes both while the last one may still be processing.
pub fn own_sends_spaced() -> Assumption {
    Assumption::new(
        "own_sends_spaced",
        "the lease holder's own sends of one operation never overlap at the provider: they are spaced past a request's latency and processing, or the provider refuses or holds the second",
        |m| {
            let why = match racing(m) {
                Ok(why) => why,
                Err(verdict) => return verdict,
            };
            let (lat, proc) = (latency_max(m), processing_max(m));
            let need = lat.saturating_add(proc);
            match own_resend_gap(m) {
                None => (true, format!("{why}; no worker sends an operation twice")),
                Some((gap, how)) => {
                    let cmp = if gap >= need { ">=" } else { "<" };
                    (
                        gap >= need,
                        format!(
                            "{why}; the holder sends again {gap} ms after its last send ({how}) {cmp} latency {lat} + processing {proc}"
                        ),
                    )
                }
            }
        },
    )
}

/// Where the read-back decides before every resend (it identifies the operation, and a "not
/// found" counts only once the visibility bound has passed since the last send), no send goes
/// out again while an earlier one may still be processing.
pub fn read_back_waits(m: &Model) -> Option<String> {
    (read_back_identifies_operation().check(m).0 && visibility_bound_covers_lag().check(m).0)
        .then(|| {
            "not needed: before sending again the read-back waits out the visibility bound since the last send".to_string()
        })
}

/// The shortest time between two sends of one operation by one worker, and what makes it:
/// a transport retry one client timeout and one backoff after the send, or a re-run or
/// replan the agent decides after the executor reported the timeout (its shortest thought).
/// `None` when the worker never sends an operation twice.
fn own_resend_gap(m: &Model) -> Option<(Millis, String)> {
    let e = &m.executor;
    let retry = (e.attempts > 1).then(|| {
        (
            e.timeout_ms.saturating_add(e.backoff_ms),
            format!(
                "executor.timeout_ms {} + backoff_ms {}",
                e.timeout_ms, e.backoff_ms
            ),
        )
    });
    let think = m.agent.think_ms.min;
    let replan = (m.agent.max_calls > 1).then(|| {
        (
            e.timeout_ms.saturating_add(think),
            format!(
                "executor.timeout_ms {} + agent.think_ms.min {think}",
                e.timeout_ms
            ),
        )
    });
    retry.into_iter().chain(replan).min_by_key(|(gap, _)| *gap)
}

/// The assumptions of a design that sends again under its key: the provider's key contract
/// must absorb every resend. Under a lease, two sends of one operation overlapping at the
/// provider is what the lease prevents, or the provider must absorb.
pub fn key_contract(who: Resender) -> Vec<Assumption> {
    let lease = matches!(who, Resender::Journal { lease: true, .. });
    let reads = matches!(who, Resender::Journal { reads: true, .. });
    vec![
        atomic_dedup(),
        one_key_scope(),
        if lease {
            lease_outlasts_request()
        } else {
            in_flight_refused_or_held()
        },
        every_outcome_stored(),
        retention_covers_retries(who),
    ]
    .into_iter()
    // Under a lease, in_flight_refused_or_held no longer covers the holder's own resends.
    .chain(lease.then(|| {
        if reads {
            own_sends_spaced().unless(read_back_waits)
        } else {
            own_sends_spaced()
        }
    }))
    .collect()
}

/// Not needed where the provider's key contract absorbs every resend of the design: a
/// false "not found" then costs one same-key request that is answered as the first.
pub fn key_contract_absorbs(who: Resender) -> impl Fn(&Model) -> Option<String> + Send + Sync {
    move |m| {
        key_contract(who)
            .iter()
            .all(|a| a.check(m).0)
            .then(|| "not needed: the provider's key contract absorbs every resend".to_string())
    }
}

/// The names [`by_name`] knows: every assumption an external executor may declare.
pub const NAMES: &[&str] = &[
    "atomic_dedup",
    "one_key_scope",
    "in_flight_refused_or_held",
    "mismatch_refused_or_original",
    "every_outcome_stored",
    "retention_covers_retries",
    "durable_journal",
    "authorization_survives",
    "read_back_identifies_operation",
    "visibility_bound_covers_lag",
    "lease_covers_step",
    "lease_outlasts_request",
    "own_sends_spaced",
];

/// The assumption called `name`, as an external executor declares it in its `hello`
/// (docs/executor-protocol.md). Those that depend on who resends are judged as for the
/// shared transport loop: an executor that declares them promises that its own sends stay
/// within the model's `executor` knobs (attempts, backoff, timeout) and the agent's calls.
pub fn by_name(name: &str) -> Option<Assumption> {
    Some(match name {
        "atomic_dedup" => atomic_dedup(),
        "one_key_scope" => one_key_scope(),
        "in_flight_refused_or_held" => in_flight_refused_or_held(),
        "mismatch_refused_or_original" => mismatch_refused_or_original(),
        "every_outcome_stored" => every_outcome_stored(),
        "retention_covers_retries" => retention_covers_retries(Resender::Retrying),
        "durable_journal" => durable_journal(),
        "authorization_survives" => authorization_survives(),
        "read_back_identifies_operation" => read_back_identifies_operation(),
        "visibility_bound_covers_lag" => visibility_bound_covers_lag(),
        "lease_covers_step" => lease_covers_step(),
        "lease_outlasts_request" => lease_outlasts_request(),
        "own_sends_spaced" => own_sends_spaced(),
        _ => return None,
    })
}

/// One warning line per assumption of `design` that does not hold on the model named
/// `model`: its guarantee does not apply there.
pub fn warnings(model: &str, design: &str, judged: &[Judgement]) -> Vec<String> {
    judged
        .iter()
        .filter(|a| !a.holds)
        .map(|a| {
            format!(
                "warning: {model}: {design}: assumption {} does not hold ({}): the design's guarantee does not apply",
                a.name, a.why
            )
        })
        .collect()
}

#[cfg(test)]
mod by_name_tests {
    #[test]
    fn every_name_is_its_assumptions_name() {
        for n in super::NAMES {
            assert_eq!(super::by_name(n).map(|a| a.name), Some(*n));
        }
        assert!(super::by_name("no_such").is_none());
    }
}

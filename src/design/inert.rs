//! Values a model accepts that make a component inert or a figure meaningless: a sweeper
//! that never runs in the horizon, read-backs that all come back inside the visibility
//! bound, a lookup by key at a provider that keeps no keys, a deadline that passes before the
//! first timeout... Each is valid (the run does what the model says) but almost certainly
//! not what its author meant, and the figures it produces mislead. `run`, `check`, `trace`,
//! `replay`, `explore`, `report` and `show-model` print each as a warning on stderr, with
//! the field, its value, why, and a value to use; stdout and the exit code do not change.
//!
//! A check about a field only some designs read warns only when the model compares one of
//! them (its `designs`, resolved), and names them.

use super::assumptions::{crashes_max, latency_max, pauses_ms, processing_max};
use crate::model::*;
use crate::sim::Millis;

/// One misconfiguration: the field's JSON path and what is wrong with its value, starting
/// with the value (`"3000 is not longer than ..."`), as a model error reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inert {
    pub path: String,
    pub message: String,
}

/// The built-in designs of the journal family: they read `deadline_ms`, `sweep_ms`,
/// `assumed_retention_ms` and `poll_ms`.
pub const JOURNAL: [&str; 4] = [
    "journal",
    "journal_reconcile",
    "journal_reconcile_lease",
    "durable_authorization",
];

/// The built-in designs that read outcomes back: they read `reconcile`, `reads` and
/// `visibility_bound_ms`.
pub const RECONCILING: [&str; 2] = ["journal_reconcile", "journal_reconcile_lease"];

/// Whether design `name` reads `executor.attempts` in `m`: a design preset if one of its
/// layers takes its attempts from it (`single_use_token` sends once per token, whatever it
/// says) and the model gives no `executor.stack` in place of its layers; every other design
/// (the journal family; a program's own or an external one, which may).
fn reads_attempts(m: &Model, name: &str) -> bool {
    super::preset::find(name)
        .is_none_or(|p| m.executor.stack_spec().is_none() && p.reads_knob("executor.attempts"))
}

/// Every misconfiguration of `m`, in the order of the model's fields; then those of each
/// configured design's own executor fields (`designs[i].executor...`).
pub fn inert(m: &Model) -> Vec<Inert> {
    if m.configured.is_empty() {
        return inert_of(m);
    }
    // The shared section is judged for the designs that run it.
    let mut shared = m.clone();
    shared.designs.retain(|d| !m.configured.contains_key(d));
    shared.configured = Default::default();
    let mut out = inert_of(&shared);
    for c in m.configured.values() {
        let mut own = (*c.model).clone();
        own.designs = vec![c.design.clone()];
        for i in inert_of(&own) {
            // Only what the entry's own fields cause: the rest is the shared section's.
            let Some(rest) = i.path.strip_prefix("executor.") else {
                continue;
            };
            let field = rest.split(['.', '[']).next().unwrap_or_default();
            if c.fields.iter().any(|f| f == field) {
                out.push(Inert {
                    path: format!("designs[{}].executor.{rest}", c.index),
                    message: i.message,
                });
            }
        }
    }
    out
}

fn inert_of(m: &Model) -> Vec<Inert> {
    let mut out = Vec::new();
    let mut warn = |path: &str, message: String| {
        out.push(Inert {
            path: path.to_string(),
            message,
        })
    };
    let journal = among(m, &JOURNAL);
    let reconciling = among(m, &RECONCILING);
    let retrying: Vec<&str> = m
        .designs
        .iter()
        .map(String::as_str)
        .filter(|d| reads_attempts(m, d))
        .collect();
    let stack_field = if m.executor.stack.is_some() {
        "executor.stack"
    } else {
        "executor.preset"
    };
    if m.executor.stack_spec().is_some()
        && !m.designs.iter().any(|d| super::preset::find(d).is_some())
    {
        warn(
            stack_field,
            format!(
                "no design of the model runs it ({}): only the design presets take their retry layers from it (`retrylab designs`: no_dedup, same_key, ...); the journal family and external executors run their own; compare a preset, or leave the stack out",
                names(&m.designs.iter().map(String::as_str).collect::<Vec<_>>())
            ),
        );
    }
    horizon(m, &mut warn);
    workload(m, &mut warn);
    agent(m, &mut warn);
    timeouts(m, &retrying, &mut warn);
    if !journal.is_empty() {
        journal_fields(m, &names(&journal), &mut warn);
    }
    if !reconciling.is_empty() {
        read_back(m, &names(&reconciling), &mut warn);
    }
    workers(m, &mut warn);
    if m.network.request_loss.is_one() {
        warn(
            "network.request_loss",
            format!(
                "{}: no request ever reaches the provider, so nothing is ever done and every figure is of a provider that does not exist; use a probability below 1",
                m.network.request_loss
            ),
        );
    }
    out
}

type Warn<'a> = dyn FnMut(&str, String) + 'a;

/// The designs of `family` the model compares, in the model's order.
fn among<'m>(m: &'m Model, family: &[&str]) -> Vec<&'m str> {
    m.designs
        .iter()
        .map(String::as_str)
        .filter(|d| family.contains(d))
        .collect()
}

fn names(designs: &[&str]) -> String {
    designs.join(", ")
}

/// Retry `n` of `executor` waits `backoff_before(n)`: the waits before retries `1..=n`.
fn backoffs(e: &ExecutorModel, n: u32) -> Millis {
    (1..=n).fold(0, |t: Millis, k| t.saturating_add(e.backoff_before(k)))
}

fn horizon(m: &Model, warn: &mut Warn<'_>) {
    let a = &m.agent;
    if m.horizon_ms > a.tool_timeout_ms {
        return;
    }
    let w = &m.workload;
    let arrivals = w
        .spacing_ms
        .max
        .saturating_mul(u64::from(w.intents.saturating_sub(1)));
    let calls = u64::from(a.max_calls).saturating_mul(u64::from(w.steps));
    let need = arrivals
        .saturating_add(calls.saturating_mul(a.tool_timeout_ms.saturating_add(a.think_ms.max)))
        .max(a.tool_timeout_ms + 1);
    warn(
        "horizon_ms",
        format!(
            "{} is not longer than agent.tool_timeout_ms {}: the run ends before the agent stops waiting for a call that gets no answer (a crashed worker's, or one still retrying), so such a call is left unresolved and no retry of it is seen; use horizon_ms {need} or more (every call of the last intent, each waited for and thought over)",
            m.horizon_ms, a.tool_timeout_ms
        ),
    );
}

fn workload(m: &Model, warn: &mut Warn<'_>) {
    let w = &m.workload;
    if !w.genuine_repeat.is_zero() && w.intents == 1 {
        warn(
            "workload.genuine_repeat",
            format!(
                "{} with workload.intents 1: the only intent has none before it to repeat, so no genuine repeat happens; use workload.intents 2 or more, or genuine_repeat 0",
                w.genuine_repeat
            ),
        );
    }
    if w.repeat_across_tenants && (w.tenants == 1 || w.genuine_repeat.is_zero()) {
        let why = if w.tenants == 1 {
            "workload.tenants 1: there is no other tenant to repeat across; use workload.tenants 2 or more"
        } else {
            "workload.genuine_repeat 0: no intent repeats another; use a genuine_repeat above 0"
        };
        warn(
            "workload.repeat_across_tenants",
            format!("true with {why}, or leave it out"),
        );
    }
}

fn agent(m: &Model, warn: &mut Warn<'_>) {
    let (a, steps) = (&m.agent, m.workload.steps);
    if a.compensate && steps == 1 {
        warn(
            "agent.compensate",
            "true with workload.steps 1: there is no earlier step to undo, so no compensation happens; use workload.steps 2 or more, or leave it out".into(),
        );
    }
    if a.on_step_failure == StepFailure::RestartWorkflow && steps == 1 {
        warn(
            "agent.on_step_failure",
            "restart_workflow with workload.steps 1: the workflow is its one step, so this is retry_step; use workload.steps 2 or more, or leave it out".into(),
        );
    }
    let replans = [a.on_failure, a.on_unknown]
        .iter()
        .any(|r| r.replan > 0 || r.change_args > 0);
    if !a.authorization_loss.is_zero() && (a.max_calls == 1 || !replans) {
        let why = if a.max_calls == 1 {
            "agent.max_calls 1: the agent never makes a second call"
        } else {
            "no replan or change_args weight in agent.on_failure or agent.on_unknown: the agent never replans"
        };
        warn(
            "agent.authorization_loss",
            format!(
                "{} with {why}, and only a replan loses an authorization, so none is ever lost; use agent.max_calls 2 or more with a replan weight, or authorization_loss 0",
                a.authorization_loss
            ),
        );
    }
}

/// The client timeout against the quickest reply and against the agent's patience.
fn timeouts(m: &Model, retrying: &[&str], warn: &mut Warn<'_>) {
    let (e, p) = (&m.executor, &m.provider);
    let lat = m.network.latency_ms;
    // A 202 is answered at once; otherwise the reply waits for the processing.
    let (proc_min, proc_max) = if p.accept_async {
        (0, 0)
    } else {
        (p.processing_ms.min, processing_max(m))
    };
    let quickest = lat.min.saturating_mul(2).saturating_add(proc_min);
    if quickest >= e.timeout_ms {
        let slowest = lat.max.saturating_mul(2).saturating_add(proc_max);
        warn(
            "executor.timeout_ms",
            format!(
                "{} is not longer than the quickest processed reply (latency 2 x {} + processing {proc_min} = {quickest} ms): every request the provider executes is answered after the client timeout and its reply discarded, so every first send is a lost reply (only answers from a key record, such as a replay, come in time); use executor.timeout_ms {} or more (the slowest reply)",
                e.timeout_ms,
                lat.min,
                slowest.saturating_add(1)
            ),
        );
    }
    let tool = m.agent.tool_timeout_ms;
    if e.attempts > 1 && e.timeout_ms >= tool && !retrying.is_empty() {
        let waits = backoffs(e, e.attempts - 1);
        let fit = tool.saturating_sub(waits) / u64::from(e.attempts);
        let fix = if fit > quickest {
            format!(
                "use executor.timeout_ms {} or less, so that the {} attempts and their backoffs fit in the agent's wait",
                fit, e.attempts
            )
        } else {
            "use executor.attempts 1, or a longer agent.tool_timeout_ms".to_string()
        };
        warn(
            "executor.attempts",
            format!(
                "{} with executor.timeout_ms {} not shorter than agent.tool_timeout_ms {tool}: every transport retry goes out after the agent stopped waiting for the call, so no retry's result reaches it; {fix}",
                e.attempts, e.timeout_ms
            ),
        );
    }
}

/// The fields only the journal family reads.
fn journal_fields(m: &Model, designs: &str, warn: &mut Warn<'_>) {
    let e = &m.executor;
    let (timeout, first_wait) = (e.timeout_ms, e.backoff_before(1));
    // A lost reply: the operation acts again after its timeout and the first backoff, or
    // when a sweeper takes it over (it has not changed for sweep_ms since the timeout).
    let (again, how) = match e.sweep_ms {
        Some(s) if s < first_wait => (s, format!("sweep_ms {s}")),
        _ => (first_wait, format!("backoff_ms {first_wait}")),
    };
    if let Some(d) = e.deadline_ms
        && d <= timeout.saturating_add(again)
    {
        let n = e.attempts.max(2);
        let all = u64::from(n)
            .saturating_mul(timeout)
            .saturating_add(backoffs(e, n - 1));
        warn(
            "executor.deadline_ms",
            format!(
                "{d} is not longer than executor.timeout_ms {timeout} + {how}: an operation whose reply is lost is past its deadline before it can act again, so it is escalated without a retry or a read-back unless a worker crash has it recovered sooner (designs {designs}); use executor.deadline_ms {} or more ({n} sends of timeout_ms and the backoffs between them)",
                all.saturating_add(1)
            ),
        );
    }
    if let Some(s) = e.sweep_ms
        && s >= m.horizon_ms
    {
        let fix = (timeout + 1).max(m.horizon_ms / 2);
        let fix = if fix < m.horizon_ms {
            format!(
                "use executor.sweep_ms {fix} (below the horizon, above timeout_ms {timeout}), or leave it out for no sweeper"
            )
        } else {
            "leave it out for no sweeper, or lengthen horizon_ms".to_string()
        };
        warn(
            "executor.sweep_ms",
            format!(
                "{s} is not shorter than horizon_ms {}: the recovery sweeper never runs (designs {designs}); {fix}",
                m.horizon_ms
            ),
        );
    }
    // A lost reply: the first resend goes out a timeout and a backoff after the first send,
    // and it is refused when its age and one more timeout reach the assumed retention.
    let first_resend = timeout.saturating_mul(2).saturating_add(first_wait);
    if let Some(a) = e.assumed_retention_ms
        && a <= first_resend
    {
        let fix = match m.provider.retention_ms {
            Some(r) => format!("use the provider's retention, executor.assumed_retention_ms {r}"),
            None => "leave it out: the provider keeps keys forever".to_string(),
        };
        warn(
            "executor.assumed_retention_ms",
            format!(
                "{a} is not longer than 2 x executor.timeout_ms {timeout} + backoff_ms {first_wait}: a key whose reply is lost is already too old for its first resend, so a key is never sent again without a read-back that proves the effect absent, and the operation is escalated instead (designs {designs}); {fix}"
            ),
        );
    }
    if m.provider.accept_async && e.poll_ms >= m.horizon_ms {
        warn(
            "executor.poll_ms",
            format!(
                "{} is not shorter than horizon_ms {}: accepted (202) work is never polled within the run, so every accepted create is left unresolved (designs {designs}); use executor.poll_ms 1000 (the default)",
                e.poll_ms, m.horizon_ms
            ),
        );
    }
}

/// The read-back of the reconciling designs: a lookup that can find something, and reads
/// that can outlast the visibility bound.
fn read_back(m: &Model, designs: &str, warn: &mut Warn<'_>) {
    let (e, p) = (&m.executor, &m.provider);
    if e.reconcile == Lookup::ByKey && p.lookup == Lookup::ByKey {
        let why = if p.dedup == Dedup::None {
            Some(("provider.dedup is none", "provider.dedup by_key"))
        } else if p.key_source == KeySource::Payload {
            Some((
                "provider.key_source is payload (records are kept under a hash of the request, not the caller's key)",
                "provider.key_source client",
            ))
        } else {
            None
        };
        if let Some((why, fix)) = why {
            warn(
                "provider.lookup",
                format!(
                    "by_key, but {why}: the provider keeps no record under the caller's key, so a lookup by key never finds anything, and every \"not found\" is taken for absence and the create sent again (designs {designs}); use provider.lookup search (with executor.reconcile search) where the API can search, or {fix}"
                ),
            );
        }
    }
    let answers = e.reconcile == p.lookup && matches!(e.reconcile, Lookup::ByKey | Lookup::Search);
    let bound = e.visibility_bound_ms;
    if !answers || bound == 0 {
        return;
    }
    let trip = latency_max(m).saturating_mul(2);
    let span = |reads: u32| read_span(m, reads);
    let last = span(e.reads);
    if last >= bound {
        return;
    }
    let fix = match (backoff_for(m, bound), reads_for(&span, e.reads, bound)) {
        (Some(b), Some(r)) => {
            format!("use executor.backoff_ms {b} or more, or executor.reads {r} or more")
        }
        (Some(b), None) => format!("use executor.backoff_ms {b} or more"),
        (None, Some(r)) => format!("use executor.reads {r} or more"),
        (None, None) => {
            "use a longer executor.backoff_ms and max_backoff_ms, or a shorter visibility bound"
                .to_string()
        }
    };
    warn(
        "executor.reads",
        format!(
            "{}: the last read-back of an agent call returns at most {last} ms after the send it follows (timeout_ms {} + backoffs {} + {} x round trip {trip} ms), inside executor.visibility_bound_ms {bound}: every \"not found\" is inconclusive, and the call is reported unknown, never decided (designs {designs}); {fix}",
            e.reads,
            e.timeout_ms,
            backoffs(e, e.reads),
            e.reads
        ),
    );
}

/// The fewest reads (more than `reads`, at most [`crate::model::MAX_CALLS`]) whose `span` reaches
/// `bound`.
fn reads_for(span: &dyn Fn(u32) -> Millis, reads: u32, bound: Millis) -> Option<u32> {
    (reads + 1..=crate::model::MAX_CALLS).find(|&r| span(r) >= bound)
}

/// The shortest `executor.backoff_ms` (no longer than `max_backoff_ms`) with which the
/// reads of one agent call reach `bound`: the span grows with the backoff, so a bisection.
fn backoff_for(m: &Model, bound: Millis) -> Option<Millis> {
    let reaches = |b: Millis| {
        let mut t = m.clone();
        t.executor.backoff_ms = b;
        read_span(&t, t.executor.reads) >= bound
    };
    let (mut lo, mut hi) = (m.executor.backoff_ms, m.executor.max_backoff_ms);
    if !reaches(hi) {
        return None;
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if reaches(mid) { hi = mid } else { lo = mid + 1 }
    }
    Some(lo)
}

/// How long after a create whose reply is lost the last of `reads` read-backs of one agent
/// call returns, at most: one timeout, then each read after its backoff, answered within a
/// round trip (plus every provider pause).
fn read_span(m: &Model, reads: u32) -> Millis {
    let e = &m.executor;
    let trip = latency_max(m).saturating_mul(2);
    e.timeout_ms
        .saturating_add(backoffs(e, reads))
        .saturating_add(trip.saturating_mul(u64::from(reads)))
        .saturating_add(pauses_ms(m))
}

fn workers(m: &Model, warn: &mut Warn<'_>) {
    let w = &m.workers;
    let random = w.crash.any();
    if random && w.max_crashes == 0 {
        warn(
            "workers.max_crashes",
            "0 with a crash probability in workers.crash: no random crash ever happens; use workers.max_crashes 1 or more, or crash probabilities 0".into(),
        );
    }
    let has_commit_crash = !w.crash.at_commit.is_zero()
        || m.faults
            .iter()
            .any(|f| matches!(f, crate::model::Fault::CrashAtCommit { .. }));
    if has_commit_crash {
        let known = crate::design::names();
        let built_in: Vec<&str> = m
            .designs
            .iter()
            .map(String::as_str)
            .filter(|d| known.contains(d))
            .collect();
        if !built_in.is_empty() {
            warn(
                "workers.crash.at_commit",
                format!(
                    "crashes at storage commits apply to external executors only (an fsync of a file of the run's storage): the built-in designs ({}) have no storage commits, and meet none of these crashes",
                    built_in.join(", ")
                ),
            );
        }
    }
    if w.redelivery_ms.is_some() {
        let known = crate::design::names();
        let built_in: Vec<&str> = m
            .designs
            .iter()
            .map(String::as_str)
            .filter(|d| known.contains(d))
            .collect();
        if !built_in.is_empty() {
            warn(
                "workers.redelivery_ms",
                format!(
                    "applies to external executors only: the built-in designs ({}) keep one journal shared by every worker, in which a redelivered call would look already in hand on any worker, so they are run without redelivery",
                    built_in.join(", ")
                ),
            );
        }
    }
    if crashes_max(m) > 0 && w.restart_delay_ms >= m.horizon_ms {
        warn(
            "workers.restart_delay_ms",
            format!(
                "{} is not shorter than horizon_ms {}: a crashed worker never comes back within the run, so no restart recovers anything; use workers.restart_delay_ms 1000 (the default) or another value well below the horizon",
                w.restart_delay_ms, m.horizon_ms
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_families_name_built_in_designs() {
        let known = crate::design::names();
        for d in JOURNAL.iter().chain(&RECONCILING) {
            assert!(known.contains(d), "{d}");
        }
    }

    #[test]
    fn the_designs_that_read_the_attempts_are_those_whose_layers_say_so() {
        let text = include_str!("../../models/ticket_lost_response.json");
        let mut m = Model::from_json(text, "ticket_lost_response.json").unwrap();
        let not = |m: &Model| -> Vec<&str> {
            crate::design::names()
                .into_iter()
                .filter(|d| !reads_attempts(m, d))
                .collect()
        };
        assert_eq!(not(&m), ["single_use_token"]);
        assert!(reads_attempts(&m, "a_program_s_own"));
        // Under a model's stack, no preset reads the shorthand's attempts.
        m.executor.stack = Some(
            serde_json::from_value(serde_json::json!({
                "layers": [{ "name": "http", "attempts": 3, "retry_on": "uncertain" }]
            }))
            .unwrap(),
        );
        use crate::design::Design;
        let presets: Vec<&str> = crate::design::preset::all()
            .iter()
            .map(|p| p.name())
            .collect();
        let mut expected = presets.clone();
        expected.sort_by_key(|p| crate::design::names().iter().position(|n| n == p));
        assert_eq!(not(&m), expected);
        assert!(reads_attempts(&m, "journal"));
    }
}

//! What each event says: its line of the timeline, in the words the world has always
//! written (the goldens, the timelines users read and grep, and the texts pinned below
//! depend on them). Readers of a run never parse these words: they read the event.

use std::fmt;

use super::*;

fn scripted_note(scripted: bool) -> &'static str {
    if scripted { " (scripted fault)" } else { "" }
}

impl fmt::Display for TraceEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceEvent::Workload(e) => e.fmt(f),
            TraceEvent::Agent(e) => e.fmt(f),
            TraceEvent::Worker(e) => e.fmt(f),
            TraceEvent::Op(e) => e.fmt(f),
            TraceEvent::Network(e) => e.fmt(f),
            TraceEvent::Provider(e) => e.fmt(f),
            TraceEvent::Ledger(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for WorkloadEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use WorkloadEvent::*;
        match self {
            Arrives {
                intent,
                repeat_of: Some(p),
                ..
            } => write!(f, "{intent} arrives: genuinely repeats {p}"),
            Arrives { intent, tenant, .. } => write!(f, "{intent} arrives ({tenant})"),
            BudgetSpent { events } => write!(
                f,
                "the run stops here: its budget of {events} events is spent, with events still pending"
            ),
        }
    }
}

impl fmt::Display for AgentEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use AgentEvent::*;
        match self {
            Calls {
                call,
                intent,
                step,
                nth,
                params,
            } => {
                let what = match step {
                    CallStep::Compensation(k) => format!("compensation of step {k}"),
                    CallStep::Step(k) => format!("step {k}"),
                    CallStep::Only => "its".to_string(),
                };
                write!(f, "{call} for {intent} ({what} call #{nth}), {params}")
            }
            LateResult {
                call,
                issue,
                result,
            } => write!(f, "{call} (issue {issue}): late result ({result}) ignored"),
            CannotCompensate { intent, step } => {
                write!(f, "{intent}: cannot compensate step {step}: no receipt")
            }
            ToolTimeout { call } => write!(f, "{call}: no result within the tool timeout"),
            LastCallSpent { intent, seen } => {
                write!(f, "{intent}: {seen} after the last allowed call")
            }
            Decides {
                intent,
                seen,
                act,
                at_ms,
                authorization_lost,
            } => {
                let lost = match authorization_lost {
                    true => {
                        "; the authorization is lost (a new session): the user authorizes again"
                    }
                    false => "",
                };
                write!(f, "{intent}: {seen}; decides to {act} at {at_ms} ms{lost}")
            }
            Replans { intent } => write!(f, "{intent}: replans the whole workflow from step 0"),
            Tells { intent, told } => write!(f, "{intent}: tells the user {}", told.name()),
        }
    }
}

impl fmt::Display for WorkerEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use WorkerEvent::*;
        match self {
            WaitsForRestart { worker, call } => {
                write!(f, "{worker} is down; {call} waits for its restart")
            }
            Unanswered { call, to: None } => write!(
                f,
                "{call} not answered within the queue's visibility timeout; no worker polls the queue now"
            ),
            Unanswered { call, to: Some(w) } => write!(
                f,
                "{call} not answered within the queue's visibility timeout: delivered again, to {w}"
            ),
            Reports {
                worker,
                call,
                result,
            } => write!(f, "{worker}: reports {result} for {call}"),
            Sends {
                worker,
                op,
                attempt,
                request,
                key,
                region,
            } => {
                write!(f, "{worker}: {op} sends {attempt}: {request}, ")?;
                match key {
                    Some(k) => write!(f, "key {k}")?,
                    None => f.write_str("no key")?,
                }
                match region {
                    Some(r) => write!(f, ", to {r}"),
                    None => Ok(()),
                }
            }
            TimedOut { worker, attempt } => write!(f, "{worker}: {attempt} timed out"),
            ConnectionReset { worker, attempt } => {
                write!(f, "{worker}: connection of {attempt} reset")
            }
            Replied {
                worker,
                attempt,
                reply,
                should_retry,
            } => {
                write!(f, "{worker}: reply to {attempt}: {reply}")?;
                match should_retry {
                    Some(v) => write!(f, " (should-retry: {v})"),
                    None => Ok(()),
                }
            }
            Crashes {
                worker,
                point,
                attempt,
                restart_at_ms,
            } => write!(
                f,
                "{worker} crashes {point} of {attempt}; restarts at {restart_at_ms} ms"
            ),
            CrashesAtCommit {
                worker,
                commit,
                restart_at_ms,
            } => write!(
                f,
                "{worker} crashes at storage commit {commit}; restarts at {restart_at_ms} ms"
            ),
            MachineLost { worker } => write!(
                f,
                "{worker}'s machine is lost: its directory keeps what its commits made durable"
            ),
            Restarts { worker, journal } => {
                write!(f, "{worker} restarts ({journal} journal) and recovers")
            }
        }
    }
}

impl fmt::Display for OpEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use OpEvent::*;
        match self {
            ClaimIgnored { op, call } => {
                write!(
                    f,
                    "{op}: claim on {call}, which the agent never made: ignored"
                )
            }
            Transition {
                worker,
                op,
                from,
                to,
                fence,
            } => {
                write!(f, "{worker}: {op} {from} -> {to}")?;
                match fence {
                    Some(n) => write!(f, " (fence {n})"),
                    None => Ok(()),
                }
            }
            StaleFence { worker, op, fence } => write!(
                f,
                "{worker}: {op}: fence {fence} is stale, result not recorded"
            ),
            Abandons { worker, op, state } => {
                write!(f, "{worker}: {op} given up as {state} (outcome unknown)")
            }
            Note { worker, text, .. } => write!(f, "{worker}: {text}"),
        }
    }
}

impl fmt::Display for NetworkEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use NetworkEvent::*;
        match self {
            RequestLost { attempt, scripted } => {
                write!(f, "request of {attempt} lost{}", scripted_note(*scripted))
            }
            RequestDuplicated { attempt } => write!(f, "request of {attempt} duplicated"),
            ReplyLost { attempt, scripted } => {
                write!(f, "reply to {attempt} lost{}", scripted_note(*scripted))
            }
            ReplyReset { attempt } => {
                write!(f, "reply to {attempt}: the connection will be reset")
            }
            ReplyDiscarded { attempt } => write!(
                f,
                "reply to {attempt} arrives after the attempt was closed (answered, timed out, or its worker crashed): discarded"
            ),
        }
    }
}

impl fmt::Display for ProviderEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ProviderEvent::*;
        match self {
            Pruned { key, at_ms } => {
                write!(
                    f,
                    "key {key} past its retention floor; pruned at {at_ms} ms"
                )
            }
            Looks {
                attempt,
                query,
                reply,
            } => write!(f, "{attempt}: lookup {query} -> {reply}"),
            Considers { attempt, what } => write!(f, "{attempt}: {what}"),
            Answers {
                attempt,
                why,
                reply,
            } if why.is_empty() => write!(f, "{attempt}: -> {reply}"),
            Answers {
                attempt,
                why,
                reply,
            } => write!(f, "{attempt}: {why} -> {reply}"),
            Done {
                attempt,
                reply,
                kept: true,
            } => write!(
                f,
                "{attempt}: done -> {reply}, kept for a status poll (the 202 was its answer)"
            ),
            Done { attempt, reply, .. } => write!(f, "{attempt}: done -> {reply}"),
            WaiterDone { attempt, reply } => {
                write!(f, "{attempt}: the request it waited for is done -> {reply}")
            }
            ProviderCrashed { attempt, left } => write!(
                f,
                "{attempt}: provider crashed mid-processing, leaving {left}; no reply"
            ),
        }
    }
}

impl fmt::Display for LedgerEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LedgerEvent::*;
        match self {
            Commits { resource, intent } => {
                write!(f, "effect {resource} committed for {intent}")
            }
        }
    }
}

/// Every event's text, exactly as the line the world wrote before events were typed (the
/// old `format!` strings, instantiated): the timelines, the goldens and what users grep for
/// depend on these words.
#[cfg(test)]
mod tests {
    use super::*;

    fn text(e: impl Into<TraceEvent>) -> String {
        e.into().to_string()
    }

    #[test]
    fn the_workload_says_what_it_said() {
        let i = IntentId(2);
        let lines = [
            (
                text(WorkloadEvent::Arrives {
                    intent: i,
                    tenant: Tenant(1),
                    repeat_of: None,
                }),
                "intent 2 arrives (tenant 1)",
            ),
            (
                text(WorkloadEvent::Arrives {
                    intent: i,
                    tenant: Tenant(1),
                    repeat_of: Some(IntentId(0)),
                }),
                "intent 2 arrives: genuinely repeats intent 0",
            ),
            (
                text(WorkloadEvent::BudgetSpent { events: 1_000_000 }),
                "the run stops here: its budget of 1000000 events is spent, with events still pending",
            ),
        ];
        for (got, want) in lines {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn the_agent_says_which_call_it_makes() {
        let (i, c) = (IntentId(2), CallId(3));
        let lines = [
            (
                text(AgentEvent::Calls {
                    call: c,
                    intent: i,
                    step: CallStep::Step(1),
                    nth: 2,
                    params: Params(7),
                }),
                "call 3 for intent 2 (step 1 call #2), params 7",
            ),
            (
                text(AgentEvent::Calls {
                    call: c,
                    intent: i,
                    step: CallStep::Only,
                    nth: 1,
                    params: Params(7),
                }),
                "call 3 for intent 2 (its call #1), params 7",
            ),
            (
                text(AgentEvent::Calls {
                    call: c,
                    intent: i,
                    step: CallStep::Compensation(0),
                    nth: 1,
                    params: Params(7),
                }),
                "call 3 for intent 2 (compensation of step 0 call #1), params 7",
            ),
        ];
        for (got, want) in lines {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn the_agent_says_what_it_saw_and_decided() {
        let (i, c) = (IntentId(2), CallId(3));
        let lines = [
            (
                text(AgentEvent::LateResult {
                    call: c,
                    issue: 1,
                    result: ToolResult::Success {
                        resource: Some(ResourceId(4)),
                    },
                }),
                "call 3 (issue 1): late result (success (r4)) ignored",
            ),
            (
                text(AgentEvent::CannotCompensate { intent: i, step: 1 }),
                "intent 2: cannot compensate step 1: no receipt",
            ),
            (
                text(AgentEvent::ToolTimeout { call: c }),
                "call 3: no result within the tool timeout",
            ),
            (
                text(AgentEvent::LastCallSpent {
                    intent: i,
                    seen: "unknown",
                }),
                "intent 2: unknown after the last allowed call",
            ),
            (
                text(AgentEvent::Decides {
                    intent: i,
                    seen: "failure",
                    act: "replan",
                    at_ms: 1500,
                    authorization_lost: true,
                }),
                "intent 2: failure; decides to replan at 1500 ms; the authorization is lost (a new session): the user authorizes again",
            ),
            (
                text(AgentEvent::Replans { intent: i }),
                "intent 2: replans the whole workflow from step 0",
            ),
            (
                text(AgentEvent::Tells {
                    intent: i,
                    told: Told::Success,
                }),
                "intent 2: tells the user success",
            ),
        ];
        for (got, want) in lines {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn the_workers_say_what_they_said() {
        let (w, a, op, c) = (WorkerId(0), AttemptId(2), OpId(1), CallId(3));
        let reply = Reply::InProgress;
        let lines = [
            (
                text(WorkerEvent::WaitsForRestart { worker: w, call: c }),
                "worker 0 is down; call 3 waits for its restart".to_string(),
            ),
            (
                text(WorkerEvent::Unanswered { call: c, to: None }),
                "call 3 not answered within the queue's visibility timeout; no worker polls the queue now".to_string(),
            ),
            (
                text(WorkerEvent::Reports {
                    worker: w,
                    call: c,
                    result: ToolResult::Failure,
                }),
                format!("worker 0: reports {} for call 3", ToolResult::Failure),
            ),
            (
                text(WorkerEvent::Sends {
                    worker: w,
                    op,
                    attempt: a,
                    request: "create params 3".to_string(),
                    key: None,
                    region: Some("region 1".to_string()),
                }),
                "worker 0: op 1 sends attempt 2: create params 3, no key, to region 1".to_string(),
            ),
            (
                text(WorkerEvent::TimedOut { worker: w, attempt: a }),
                "worker 0: attempt 2 timed out".to_string(),
            ),
            (
                text(WorkerEvent::ConnectionReset { worker: w, attempt: a }),
                "worker 0: connection of attempt 2 reset".to_string(),
            ),
            (
                text(WorkerEvent::Replied {
                    worker: w,
                    attempt: a,
                    reply,
                    should_retry: Some("true".to_string()),
                }),
                format!("worker 0: reply to attempt 2: {reply} (should-retry: true)"),
            ),
            (
                text(WorkerEvent::MachineLost { worker: w }),
                "worker 0's machine is lost: its directory keeps what its commits made durable"
                    .to_string(),
            ),
            (
                text(WorkerEvent::CrashesAtCommit {
                    worker: w,
                    commit: 3,
                    restart_at_ms: 9000,
                }),
                "worker 0 crashes at storage commit 3; restarts at 9000 ms".to_string(),
            ),
            (
                text(WorkerEvent::Crashes {
                    worker: w,
                    point: "after_send",
                    attempt: a,
                    restart_at_ms: 9000,
                }),
                "worker 0 crashes after_send of attempt 2; restarts at 9000 ms".to_string(),
            ),
            (
                text(WorkerEvent::Restarts {
                    worker: w,
                    journal: "volatile",
                }),
                "worker 0 restarts (volatile journal) and recovers".to_string(),
            ),
        ];
        for (got, want) in lines {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn the_operations_say_what_they_said() {
        let (w, op) = (WorkerId(0), OpId(1));
        let lines = [
            (
                text(OpEvent::ClaimIgnored {
                    op: OpId(4),
                    call: CallId(9),
                }),
                "op 4: claim on call 9, which the agent never made: ignored".to_string(),
            ),
            (
                text(OpEvent::Transition {
                    worker: w,
                    op,
                    from: "dispatched",
                    to: "confirmed",
                    fence: Some(2),
                }),
                "worker 0: op 1 dispatched -> confirmed (fence 2)".to_string(),
            ),
            (
                text(OpEvent::StaleFence {
                    worker: w,
                    op,
                    fence: 2,
                }),
                "worker 0: op 1: fence 2 is stale, result not recorded".to_string(),
            ),
            (
                text(OpEvent::Abandons {
                    worker: w,
                    op,
                    state: "failed",
                }),
                "worker 0: op 1 given up as failed (outcome unknown)".to_string(),
            ),
        ];
        for (got, want) in lines {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn the_network_the_provider_and_the_ledger_say_what_they_said() {
        let a = AttemptId(2);
        let reply = Reply::Created {
            resource: ResourceId(1),
            replayed: false,
        };
        let lines = [
            (
                text(NetworkEvent::RequestLost { attempt: a, scripted: true }),
                "request of attempt 2 lost (scripted fault)".to_string(),
            ),
            (
                text(NetworkEvent::RequestDuplicated { attempt: a }),
                "request of attempt 2 duplicated".to_string(),
            ),
            (
                text(NetworkEvent::ReplyLost { attempt: a, scripted: false }),
                "reply to attempt 2 lost".to_string(),
            ),
            (
                text(NetworkEvent::ReplyReset { attempt: a }),
                "reply to attempt 2: the connection will be reset".to_string(),
            ),
            (
                text(NetworkEvent::ReplyDiscarded { attempt: a }),
                "reply to attempt 2 arrives after the attempt was closed (answered, timed out, or its worker crashed): discarded".to_string(),
            ),
            (
                text(ProviderEvent::Pruned { key: Key(5), at_ms: 700 }),
                "key k5 past its retention floor; pruned at 700 ms".to_string(),
            ),
            (
                text(ProviderEvent::Looks {
                    attempt: a,
                    query: "key k5".to_string(),
                    reply,
                }),
                format!("attempt 2: lookup key k5 -> {reply}"),
            ),
            (
                text(ProviderEvent::Considers {
                    attempt: a,
                    what: "key k5 in progress; waits for it".to_string(),
                }),
                "attempt 2: key k5 in progress; waits for it".to_string(),
            ),
            (
                text(ProviderEvent::Done { attempt: a, reply, kept: true }),
                format!("attempt 2: done -> {reply}, kept for a status poll (the 202 was its answer)"),
            ),
            (
                text(ProviderEvent::Done { attempt: a, reply, kept: false }),
                format!("attempt 2: done -> {reply}"),
            ),
            (
                text(ProviderEvent::WaiterDone { attempt: AttemptId(3), reply }),
                format!("attempt 3: the request it waited for is done -> {reply}"),
            ),
            (
                text(ProviderEvent::ProviderCrashed {
                    attempt: a,
                    left: "a key without an effect",
                }),
                "attempt 2: provider crashed mid-processing, leaving a key without an effect; no reply".to_string(),
            ),
            (
                text(LedgerEvent::Commits {
                    resource: ResourceId(1),
                    intent: IntentId(2),
                }),
                "effect r1 committed for intent 2".to_string(),
            ),
        ];
        for (got, want) in lines {
            assert_eq!(got, want);
        }
    }
}

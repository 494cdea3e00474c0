//! What a timeline line says, as data: the typed event each component logs, from which the
//! line's text is rendered. The readers of a run's timeline (`trace --intent`, the outcome's
//! intent lookup, the sequence diagram) read these events, never the words, so rewording a
//! line changes what a person reads and nothing else.
//!
//! A variant holds the identifiers its line is about as typed values, and what is only for
//! a person to read (a reason, a value as the model prints it) as text rendered when the
//! line is logged, that is only when tracing is on.

use crate::sim::Millis;
use crate::vocab::ids::{
    AttemptId, CallId, IntentId, Key, OpId, Params, ResourceId, Tenant, WorkerId,
};
use crate::vocab::protocol::{Reply, ToolResult};
use crate::vocab::record::Told;
use crate::vocab::trace::Component;

mod text;

/// Which call of its intent the agent makes (the words of the call line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallStep {
    /// The intent's only step.
    Only,
    /// Step `n` of a workflow.
    Step(u32),
    /// The compensation of step `n`.
    Compensation(u32),
}

/// One event of a run, by the part of the world that logged it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    Workload(WorkloadEvent),
    Agent(AgentEvent),
    Worker(WorkerEvent),
    Op(OpEvent),
    Network(NetworkEvent),
    Provider(ProviderEvent),
    Ledger(LedgerEvent),
}

/// What the workload does: intents arrive; the run stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkloadEvent {
    /// An intent of the user arrives.
    Arrives {
        intent: IntentId,
        tenant: Tenant,
        repeat_of: Option<IntentId>,
    },
    /// The run's budget of events is spent with events pending.
    BudgetSpent { events: u64 },
}

impl From<WorkloadEvent> for TraceEvent {
    fn from(e: WorkloadEvent) -> Self {
        TraceEvent::Workload(e)
    }
}

/// What the agent does: its calls, its reactions, what it tells the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentEvent {
    /// The agent makes a tool call for an intent.
    Calls {
        call: CallId,
        intent: IntentId,
        step: CallStep,
        /// Which call of this step (from 1).
        nth: u32,
        params: Params,
    },
    /// A result of a call the agent no longer waits for.
    LateResult {
        call: CallId,
        issue: u32,
        result: ToolResult,
    },
    /// Compensation impossible: the step's receipt is missing.
    CannotCompensate { intent: IntentId, step: u32 },
    /// No result within the agent's tool timeout.
    ToolTimeout { call: CallId },
    /// A failure or an unknown seen after the last call the agent may make.
    LastCallSpent {
        intent: IntentId,
        seen: &'static str,
    },
    /// The agent's reaction to a failure or an unknown.
    Decides {
        intent: IntentId,
        seen: &'static str,
        act: &'static str,
        at_ms: Millis,
        /// The authorization is lost and the user authorizes again.
        authorization_lost: bool,
    },
    /// The agent replans the whole workflow.
    Replans { intent: IntentId },
    /// What the agent finally tells the user.
    Tells { intent: IntentId, told: Told },
}

impl From<AgentEvent> for TraceEvent {
    fn from(e: AgentEvent) -> Self {
        TraceEvent::Agent(e)
    }
}

/// What the world does with the executor's workers and queue: deliveries, sends, what closes an attempt, crashes and restarts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerEvent {
    /// A call delivered to a worker that is down waits for its restart.
    WaitsForRestart { worker: WorkerId, call: CallId },
    /// A call not answered within the queue's visibility timeout, delivered again to
    /// `to` (or to nobody: no worker polls).
    Unanswered { call: CallId, to: Option<WorkerId> },
    /// A worker reports a result to the agent.
    Reports {
        worker: WorkerId,
        call: CallId,
        result: ToolResult,
    },
    /// A worker sends an attempt to the provider.
    Sends {
        worker: WorkerId,
        op: OpId,
        attempt: AttemptId,
        /// The request as the model prints it (`create params 3`).
        request: String,
        key: Option<Key>,
        /// The region, when not the first.
        region: Option<String>,
    },
    /// An attempt's client timeout fires.
    TimedOut {
        worker: WorkerId,
        attempt: AttemptId,
    },
    /// An attempt's connection is reset.
    ConnectionReset {
        worker: WorkerId,
        attempt: AttemptId,
    },
    /// A worker hears the provider's reply.
    Replied {
        worker: WorkerId,
        attempt: AttemptId,
        reply: Reply,
        /// The provider's should-retry header, as the model prints it.
        should_retry: Option<String>,
    },
    /// A worker process crashes.
    Crashes {
        worker: WorkerId,
        point: &'static str,
        attempt: AttemptId,
        restart_at_ms: Millis,
    },
    /// A worker process dies at a storage commit of its executor (an `fsync` of a file of
    /// the run's storage), the run's `commit`th.
    CrashesAtCommit {
        worker: WorkerId,
        commit: u32,
        restart_at_ms: Millis,
    },
    /// A crashed worker's machine is lost: its directory keeps only what it committed.
    MachineLost { worker: WorkerId },
    /// A worker process restarts.
    Restarts {
        worker: WorkerId,
        journal: &'static str,
    },
}

impl From<WorkerEvent> for TraceEvent {
    fn from(e: WorkerEvent) -> Self {
        TraceEvent::Worker(e)
    }
}

/// What a design does with its operations: state changes, claims, its own notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpEvent {
    /// A claim on a call the agent never made.
    ClaimIgnored { op: OpId, call: CallId },
    /// An operation's state changes (`fence`: under a lease's fence).
    Transition {
        worker: WorkerId,
        op: OpId,
        from: &'static str,
        to: &'static str,
        fence: Option<u64>,
    },
    /// A stale lease holder's result, not recorded.
    StaleFence {
        worker: WorkerId,
        op: OpId,
        fence: u64,
    },
    /// An operation given up without its outcome.
    Abandons {
        worker: WorkerId,
        op: OpId,
        state: &'static str,
    },
    /// A design's or an executor process's own words, about `op` or `call` when it says so.
    Note {
        worker: WorkerId,
        op: Option<OpId>,
        call: Option<CallId>,
        text: String,
    },
}

impl From<OpEvent> for TraceEvent {
    fn from(e: OpEvent) -> Self {
        TraceEvent::Op(e)
    }
}

/// What the network does to a message: loses, duplicates, resets or discards it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetworkEvent {
    RequestLost {
        attempt: AttemptId,
        scripted: bool,
    },
    RequestDuplicated {
        attempt: AttemptId,
    },
    ReplyLost {
        attempt: AttemptId,
        scripted: bool,
    },
    /// The reply's connection will be reset on the way.
    ReplyReset {
        attempt: AttemptId,
    },
    /// A reply arriving after its attempt was closed.
    ReplyDiscarded {
        attempt: AttemptId,
    },
}

impl From<NetworkEvent> for TraceEvent {
    fn from(e: NetworkEvent) -> Self {
        TraceEvent::Network(e)
    }
}

/// What the provider decides and answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderEvent {
    /// A key past its retention floor is pruned before a lookup.
    Pruned { key: Key, at_ms: Millis },
    /// A lookup and its answer.
    Looks {
        attempt: AttemptId,
        query: String,
        reply: Reply,
    },
    /// A step of the contract's decision on an arrival that does not answer yet.
    Considers { attempt: AttemptId, what: String },
    /// An answer given on arrival, and why (`why` empty: just the answer).
    Answers {
        attempt: AttemptId,
        why: String,
        reply: Reply,
    },
    /// A job finishes; `kept`: the outcome waits for a status poll (the 202 was its answer).
    Done {
        attempt: AttemptId,
        reply: Reply,
        kept: bool,
    },
    /// A request that waited for another with its key is answered with its outcome.
    WaiterDone { attempt: AttemptId, reply: Reply },
    /// The provider crashes mid-processing.
    ProviderCrashed {
        attempt: AttemptId,
        left: &'static str,
    },
}

impl From<ProviderEvent> for TraceEvent {
    fn from(e: ProviderEvent) -> Self {
        TraceEvent::Provider(e)
    }
}

/// What the ledger records: effects committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LedgerEvent {
    /// An effect is committed.
    Commits {
        resource: ResourceId,
        intent: IntentId,
    },
}

impl From<LedgerEvent> for TraceEvent {
    fn from(e: LedgerEvent) -> Self {
        TraceEvent::Ledger(e)
    }
}

/// The identifiers a line is about, each as the line names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct About {
    pub intent: Option<IntentId>,
    pub call: Option<CallId>,
    pub attempt: Option<AttemptId>,
    pub op: Option<OpId>,
    pub resource: Option<ResourceId>,
}

impl TraceEvent {
    /// The component whose lane the event is on.
    pub fn component(&self) -> Component {
        match self {
            TraceEvent::Workload(_) => Component::Workload,
            TraceEvent::Agent(_) => Component::Agent,
            TraceEvent::Worker(_) | TraceEvent::Op(_) => Component::Executor,
            TraceEvent::Network(_) => Component::Network,
            TraceEvent::Provider(_) => Component::Provider,
            TraceEvent::Ledger(_) => Component::Ledger,
        }
    }

    /// The identifiers this event names.
    pub fn about(&self) -> About {
        match self {
            TraceEvent::Workload(WorkloadEvent::Arrives { intent, .. }) => About::intent(*intent),
            TraceEvent::Workload(WorkloadEvent::BudgetSpent { .. }) => About::default(),
            TraceEvent::Agent(e) => e.about(),
            TraceEvent::Worker(e) => e.about(),
            TraceEvent::Op(e) => e.about(),
            TraceEvent::Network(e) => About::attempt(e.attempt()),
            TraceEvent::Provider(e) => e.attempt().map_or(About::default(), About::attempt),
            TraceEvent::Ledger(LedgerEvent::Commits { resource, intent }) => About {
                resource: Some(*resource),
                ..About::intent(*intent)
            },
        }
    }

    /// The worker whose lane the event is on, if any: the one that acts, or the one a
    /// queue delivers to.
    pub fn worker(&self) -> Option<WorkerId> {
        match self {
            TraceEvent::Worker(e) => e.worker(),
            TraceEvent::Op(e) => e.worker(),
            _ => None,
        }
    }
}

impl About {
    fn intent(intent: IntentId) -> Self {
        About {
            intent: Some(intent),
            ..About::default()
        }
    }

    fn attempt(attempt: AttemptId) -> Self {
        About {
            attempt: Some(attempt),
            ..About::default()
        }
    }

    fn call(call: CallId) -> Self {
        About {
            call: Some(call),
            ..About::default()
        }
    }

    fn op(op: OpId) -> Self {
        About {
            op: Some(op),
            ..About::default()
        }
    }
}

impl AgentEvent {
    fn about(&self) -> About {
        use AgentEvent::*;
        match *self {
            Calls { call, intent, .. } => About {
                call: Some(call),
                ..About::intent(intent)
            },
            LateResult { call, result, .. } => About {
                resource: receipt(result),
                ..About::call(call)
            },
            ToolTimeout { call } => About::call(call),
            CannotCompensate { intent, .. }
            | LastCallSpent { intent, .. }
            | Decides { intent, .. }
            | Replans { intent }
            | Tells { intent, .. } => About::intent(intent),
        }
    }
}

impl WorkerEvent {
    fn about(&self) -> About {
        use WorkerEvent::*;
        match *self {
            WaitsForRestart { call, .. } | Unanswered { call, .. } => About::call(call),
            Reports { call, result, .. } => About {
                resource: receipt(result),
                ..About::call(call)
            },
            Sends { op, attempt, .. } => About {
                op: Some(op),
                ..About::attempt(attempt)
            },
            TimedOut { attempt, .. }
            | ConnectionReset { attempt, .. }
            | Replied { attempt, .. }
            | Crashes { attempt, .. } => About::attempt(attempt),
            Restarts { .. } | CrashesAtCommit { .. } | MachineLost { .. } => About::default(),
        }
    }

    fn worker(&self) -> Option<WorkerId> {
        use WorkerEvent::*;
        match *self {
            Unanswered { to, .. } => to,
            WaitsForRestart { worker, .. }
            | Reports { worker, .. }
            | Sends { worker, .. }
            | TimedOut { worker, .. }
            | ConnectionReset { worker, .. }
            | Replied { worker, .. }
            | Crashes { worker, .. }
            | CrashesAtCommit { worker, .. }
            | MachineLost { worker }
            | Restarts { worker, .. } => Some(worker),
        }
    }
}

impl OpEvent {
    fn about(&self) -> About {
        use OpEvent::*;
        match *self {
            ClaimIgnored { op, call } => About {
                call: Some(call),
                ..About::op(op)
            },
            Transition { op, .. } | StaleFence { op, .. } | Abandons { op, .. } => About::op(op),
            Note { op, call, .. } => About {
                op,
                call,
                ..About::default()
            },
        }
    }

    fn worker(&self) -> Option<WorkerId> {
        use OpEvent::*;
        match *self {
            ClaimIgnored { .. } => None,
            Transition { worker, .. }
            | StaleFence { worker, .. }
            | Abandons { worker, .. }
            | Note { worker, .. } => Some(worker),
        }
    }
}

impl NetworkEvent {
    /// The attempt whose request or reply this is.
    pub fn attempt(&self) -> AttemptId {
        use NetworkEvent::*;
        match *self {
            RequestLost { attempt, .. }
            | RequestDuplicated { attempt }
            | ReplyLost { attempt, .. }
            | ReplyReset { attempt }
            | ReplyDiscarded { attempt } => attempt,
        }
    }
}

impl ProviderEvent {
    /// The attempt the provider's line is about; none for a key pruned before a lookup.
    pub fn attempt(&self) -> Option<AttemptId> {
        use ProviderEvent::*;
        match *self {
            Pruned { .. } => None,
            Looks { attempt, .. }
            | Considers { attempt, .. }
            | Answers { attempt, .. }
            | Done { attempt, .. }
            | WaiterDone { attempt, .. }
            | ProviderCrashed { attempt, .. } => Some(attempt),
        }
    }
}

fn receipt(result: ToolResult) -> Option<ResourceId> {
    match result {
        ToolResult::Success { resource } => resource,
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_send_renders_as_the_timeline_prints_it_and_names_its_worker_op_and_attempt() {
        let send: TraceEvent = WorkerEvent::Sends {
            worker: WorkerId(1),
            op: OpId(0),
            attempt: AttemptId(12),
            request: "create params 3".to_string(),
            key: Some(Key(5)),
            region: None,
        }
        .into();
        assert_eq!(
            send.to_string(),
            "worker 1: op 0 sends attempt 12: create params 3, key k5"
        );
        assert_eq!(send.worker(), Some(WorkerId(1)));
        assert_eq!(
            send.about(),
            About {
                op: Some(OpId(0)),
                attempt: Some(AttemptId(12)),
                ..About::default()
            }
        );
    }

    #[test]
    fn a_queue_line_is_on_the_lane_of_the_worker_it_delivers_to() {
        let again: TraceEvent = WorkerEvent::Unanswered {
            call: CallId(5),
            to: Some(WorkerId(2)),
        }
        .into();
        assert_eq!(
            again.to_string(),
            "call 5 not answered within the queue's visibility timeout: delivered again, to worker 2"
        );
        assert_eq!(again.worker(), Some(WorkerId(2)));
        let nobody: TraceEvent = WorkerEvent::Unanswered {
            call: CallId(5),
            to: None,
        }
        .into();
        assert_eq!(nobody.worker(), None);
        assert_eq!(nobody.about().call, Some(CallId(5)));
    }

    #[test]
    fn an_answer_without_a_reason_is_just_the_arrow() {
        let reply = Reply::InProgress;
        let bare = ProviderEvent::Answers {
            attempt: AttemptId(3),
            why: String::new(),
            reply,
        };
        assert_eq!(bare.to_string(), format!("attempt 3: -> {reply}"));
        let why = ProviderEvent::Answers {
            attempt: AttemptId(3),
            why: "key k1 in progress".to_string(),
            reply,
        };
        assert_eq!(
            why.to_string(),
            format!("attempt 3: key k1 in progress -> {reply}")
        );
    }

    #[test]
    fn a_restart_and_a_pruned_key_are_about_no_intent() {
        let events: [TraceEvent; 2] = [
            WorkerEvent::Restarts {
                worker: WorkerId(0),
                journal: "durable",
            }
            .into(),
            ProviderEvent::Pruned {
                key: Key(1),
                at_ms: 7,
            }
            .into(),
        ];
        for e in events {
            assert_eq!(e.about(), About::default(), "{e}");
        }
    }
}

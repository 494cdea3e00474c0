//! What the world records of a run for the checkers: what the user heard, each operation as
//! the transport saw it, and the design's claims. Produced by the world and the designs'
//! context, read by [`crate::check`] through its `Outcome`.

use std::hash::{Hash, Hasher};

use crate::sim::Millis;
use crate::sim::moments;
use crate::vocab::ids::{
    AttemptId, CallId, Endpoint, IntentId, Key, OpId, Params, ResourceId, Tenant,
};
use crate::vocab::protocol::MAX_STEPS;

crate::sim::named_enum! {
    /// What the user was finally told about an intent.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Told {
        Success => "success",
        Failure => "failure",
        /// The agent admitted it does not know, or asked the user.
        Unresolved => "unresolved",
    }
}

impl Told {}

/// What the user heard about one intent, and what the agent believed each step did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Heard {
    /// The final message and when it was given; `None` if the user heard nothing.
    pub told: Option<(Told, Millis)>,
    /// Per forward step that the executor reported done: the arguments of the call it
    /// reported it for, and the receipt it named.
    pub steps: [Option<StepSuccess>; MAX_STEPS as usize],
}

/// A step the executor reported as done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepSuccess {
    /// The arguments of the call that was reported done (an agent may have changed them).
    pub params: Params,
    pub receipt: Option<ResourceId>,
}

/// One operation as the transport saw it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpRecord {
    /// The intent and step its calls serve (from its first send: the world's own record of
    /// which call the operation served then).
    pub intent: Option<(IntentId, u32)>,
    /// When its outcome first became unknown to the executor, as the transport saw it.
    pub first_unknown_ms: Option<Millis>,
}

/// What a design claimed about an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClaimKind {
    /// The effect exists; `Some(r)` names the resource the design holds as its receipt.
    Confirmed(Option<ResourceId>),
    /// Nothing was committed by this operation.
    Failed,
    /// Handed to a human: no claim about the effect, but the uncertainty is owned.
    Escalated,
}

/// A claim, and when it was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    pub op: OpId,
    /// The intent and step of the operation's calls.
    pub intent: (IntentId, u32),
    pub at_ms: Millis,
    pub kind: ClaimKind,
}

/// A claim as a design's context records it: about operation `op`, which serves tool call
/// `call`. The world turns it into a [`Claim`] on the intent and step the agent made that
/// call for: a design names calls, never intents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallClaim {
    pub op: OpId,
    pub call: CallId,
    pub at_ms: Millis,
    pub kind: ClaimKind,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    /// Nothing could change any more: no event left that can act.
    Quiescent,
    /// Cut off at the horizon with events still pending.
    Horizon,
    /// Stopped by an observer before the run was over (see
    /// [`World::run_observed`](crate::world::World::run_observed)): an explorer that has
    /// seen the state before. What the outcome shows is only the run so far.
    Pruned,
    /// Stopped after [`MAX_EVENTS`](crate::world::MAX_EVENTS) events with events still
    /// pending, before the horizon: the model asks for more work than one run may do. What
    /// the outcome shows is only the run so far, and no verdict trusts it (see
    /// [`RunSummary::budget`](crate::check::RunSummary::budget)).
    Budget,
}

// The moments of these records are read only by metrics (and `resolved_within`): hashed as
// an observer's ([`moments::observed`]).

impl Hash for Heard {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let Heard { told, steps } = self;
        told.map(|(t, _)| t).hash(h);
        if let Some((_, at)) = told {
            moments::observed(h, *at);
        }
        steps.hash(h);
    }
}

impl Hash for OpRecord {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let OpRecord {
            intent,
            first_unknown_ms,
        } = self;
        intent.hash(h);
        moments::observed_opt(h, *first_unknown_ms);
    }
}

impl Hash for Claim {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let Claim {
            op,
            intent,
            at_ms,
            kind,
        } = self;
        op.hash(h);
        intent.hash(h);
        moments::observed(h, *at_ms);
        kind.hash(h);
    }
}

/// An intent of the workload: what the user asked for, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intent {
    pub id: IntentId,
    pub arrival_ms: Millis,
    pub tenant: Tenant,
    pub endpoint: Endpoint,
    pub params: Params,
    /// The earlier intent this one genuinely repeats.
    pub repeat_of: Option<IntentId>,
    /// Actions in its workflow.
    pub steps: u32,
}

/// The arrival is read only by metrics (time to outcome): an observer's moment.
impl std::hash::Hash for Intent {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Intent {
            id,
            arrival_ms,
            tenant,
            endpoint,
            params,
            repeat_of,
            steps,
        } = self;
        id.hash(h);
        crate::sim::moments::observed(h, *arrival_ms);
        tenant.hash(h);
        endpoint.hash(h);
        params.hash(h);
        repeat_of.hash(h);
        steps.hash(h);
    }
}

/// The arguments of step `step` of an intent whose first action has `params`.
pub fn step_params(params: Params, step: u32) -> Params {
    Params(params.0 ^ (u64::from(step) << 40))
}

/// A committed effect, tagged with the intent and step that caused it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effect {
    pub resource: ResourceId,
    /// The send that committed it (the world maps it to the operation that sent it).
    pub attempt: AttemptId,
    pub intent: IntentId,
    /// The workflow step: 0, 1, ... for the intent's actions, [`COMPENSATION`](crate::vocab::protocol::COMPENSATION) + k for the
    /// compensation of step k.
    pub step: u32,
    pub tenant: Tenant,
    pub endpoint: Endpoint,
    pub params: Params,
    pub key: Option<Key>,
    pub at_ms: Millis,
}

/// When it was committed is read only by reports: an observer's moment.
impl std::hash::Hash for Effect {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Effect {
            resource,
            attempt,
            intent,
            step,
            tenant,
            endpoint,
            params,
            key,
            at_ms,
        } = self;
        resource.hash(h);
        attempt.hash(h);
        intent.hash(h);
        step.hash(h);
        tenant.hash(h);
        endpoint.hash(h);
        params.hash(h);
        key.hash(h);
        crate::sim::moments::observed(h, *at_ms);
    }
}

//! The agent: an LLM planner reduced to its reactions.
//!
//! For each intent it proposes a tool call and waits for the executor's result, at most
//! `tool_timeout_ms`. On success it tells the user. On a failure or an unknown outcome it
//! picks a reaction with the model's weights: re-run the same call, replan (a fresh call with
//! the same arguments), replan with changed arguments, give up (tell the user it failed), or
//! ask the user (tell them it is unresolved). After `max_calls` calls it reports what it last
//! saw: a failure as failure, an unknown as unresolved.
//!
//! Each action of an intent (each step, each compensation) carries the user's authorization
//! of it. A re-run of the same call keeps it, and so does a replan, unless the agent lost it:
//! with probability `authorization_loss`, a replan (with the same or changed arguments) starts
//! from a fresh session, a truncated context or the user asking again, and the user authorizes
//! the action anew. From then on every call of that intent carries fresh authorizations.
//!
//! The agent also keeps the ground truth that no design sees: which intent and step each of
//! its calls serves. The world reads it to tag effects and claims.

/// The parts of the world an event of the agent reads or writes (`sim::por`): every intent's progress, the calls it makes and their ids, what the user is told.
pub const PARTS: crate::sim::Parts = crate::sim::Parts::AGENT;

use crate::model::{AgentModel, Reaction, StepFailure};
use crate::sim::{Chooser, ChooserExt, Millis, Purpose};
use crate::vocab::event::{AgentEvent, CallStep};
use crate::vocab::ids::*;
use crate::vocab::protocol::MAX_STEPS;
use crate::vocab::protocol::{COMPENSATION, compensation_params};
use crate::vocab::protocol::{ToolCall, ToolResult};
use crate::vocab::record::{Intent, step_params};
use crate::vocab::trace::{Component, Trace};

pub use crate::vocab::record::Told;
use crate::vocab::record::{Heard, StepSuccess};

crate::sim::named_enum! {
    /// A reaction to a failure or an unknown outcome.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Act {
        RetrySame => "retry the same call",
        Replan => "replan",
        ChangeArgs => "replan with changed arguments",
        GiveUp => "give up",
        AskUser => "ask the user",
    }
}

/// Something the agent asks the world to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentOut {
    /// Hand this call to the executor now, and time it out at `timeout_at_ms`.
    Call {
        call: ToolCall,
        timeout_at_ms: Millis,
    },
    /// Carry out `act` for `intent` at `at_ms` (after thinking).
    Later {
        intent: IntentId,
        act: Act,
        at_ms: Millis,
    },
}

#[derive(Clone, Copy, Debug, Hash)]
struct IntentState {
    intent: Intent,
    /// The step under way: `k` for the workflow's action `k`, `COMPENSATION + k` while
    /// undoing it.
    step: u32,
    /// Arguments of the current call.
    params: Params,
    /// Calls made per forward step (across workflow restarts), and for compensations.
    calls: [u32; MAX_STEPS as usize],
    compensation_calls: u32,
    /// The call under way, and which issue of it.
    current: Option<(CallId, u32)>,
    /// The user's authorization of each forward step (then of each compensation), once given.
    auths: [Option<AuthId>; 2 * MAX_STEPS as usize],
    /// The reaction decided last lost the authorizations: the user gives them again.
    reauthorize: bool,
    /// The newest call made for this intent (what "retry the same call" re-runs).
    last_call: CallId,
    /// The resource each forward step produced, when the executor said.
    receipts: [Option<ResourceId>; MAX_STEPS as usize],
}

impl IntentState {
    fn compensating(&self) -> bool {
        self.step >= COMPENSATION
    }

    /// Where the authorization of the action under way is kept.
    fn auth_slot(&mut self) -> &mut Option<AuthId> {
        let slot = match self.step.checked_sub(COMPENSATION) {
            Some(k) => MAX_STEPS + k,
            None => self.step,
        };
        &mut self.auths[slot as usize]
    }

    fn calls_here(&mut self) -> &mut u32 {
        if self.compensating() {
            &mut self.compensation_calls
        } else {
            &mut self.calls[self.step as usize]
        }
    }
}

#[derive(Clone, Debug)]
pub struct Agent {
    config: AgentModel,
    /// By intent id; `None` until the intent has started.
    intents: Vec<Option<IntentState>>,
    /// Call id → the intent and step it serves (ground truth: the world's, never a design's).
    calls: Vec<(IntentId, u32)>,
    /// Authorizations the user gave in this run (the next one is numbered after them).
    authorizations: u32,
    /// Call id → issues so far (a re-run of the call is one more issue).
    issues: Vec<u32>,
    /// Per intent, what the user heard (read by the checkers through the run's outcome).
    heard: Vec<Heard>,
}

impl Agent {
    pub fn new(config: AgentModel) -> Self {
        Self {
            config,
            intents: Vec::new(),
            calls: Vec::new(),
            authorizations: 0,
            issues: Vec::new(),
            heard: Vec::new(),
        }
    }

    pub(crate) fn clear(&mut self) {
        self.intents.clear();
        self.calls.clear();
        self.authorizations = 0;
        self.issues.clear();
        self.heard.clear();
    }

    pub(crate) fn reserve(&mut self, n: usize) {
        self.intents.reserve(n);
        self.calls.reserve(n);
        self.issues.reserve(n);
        self.heard.reserve(n);
    }

    /// Hashes everything the agent remembers (its configuration is the model's): each
    /// intent's progress, which intent and step each call serves, the authorizations given,
    /// the issues of each call, and what the user heard and when.
    pub(crate) fn fingerprint<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        let Agent {
            config: _,
            intents,
            calls,
            authorizations,
            issues,
            heard,
        } = self;
        intents.hash(h);
        calls.hash(h);
        authorizations.hash(h);
        issues.hash(h);
        heard.hash(h);
    }

    /// What the user was told about `intent`, and when.
    pub fn told(&self, intent: IntentId) -> Option<(Told, Millis)> {
        self.heard.get(intent.0 as usize).and_then(|h| h.told)
    }

    /// What the user heard, per intent.
    pub fn heard(&self) -> &[Heard] {
        &self.heard
    }

    /// The resource the executor named when step `step` of `intent` succeeded.
    pub fn receipt(&self, intent: IntentId, step: u32) -> Option<ResourceId> {
        let s = self.intents.get(intent.0 as usize)?.as_ref()?;
        s.receipts.get(step as usize).copied().flatten()
    }

    /// The intent and step call `call` serves: ground truth, for the world that tags effects
    /// and claims with it. Designs never reach the agent.
    pub(crate) fn serves(&self, call: CallId) -> Option<(IntentId, u32)> {
        self.calls.get((call.0 as usize).checked_sub(1)?).copied()
    }

    /// The user's authorization of the action `intent` is at: each step, and each
    /// compensation, is authorized on its own, once, unless the agent lost it.
    fn auth(&mut self, intent: IntentId) -> AuthId {
        let s = state_mut(&mut self.intents, intent);
        *s.auth_slot().get_or_insert_with(|| {
            self.authorizations += 1;
            AuthId(self.authorizations - 1)
        })
    }

    /// A new intent: propose its first call.
    pub(crate) fn start(&mut self, intent: Intent, now: Millis, trace: &mut Trace) -> AgentOut {
        // Intents that arrive at the same instant may be taken up in either order (an
        // explored schedule chooses): each has its place by id.
        let i = intent.id.0 as usize;
        if self.intents.len() <= i {
            self.intents.resize_with(i + 1, || None);
            self.heard.resize(i + 1, Heard::default());
        }
        self.intents[i] = Some(IntentState {
            intent,
            step: 0,
            params: step_params(intent.params, 0),
            calls: [0; MAX_STEPS as usize],
            compensation_calls: 0,
            current: None,
            auths: [None; 2 * MAX_STEPS as usize],
            reauthorize: false,
            last_call: CallId(0),
            receipts: [None; MAX_STEPS as usize],
        });
        self.new_call(intent.id, now, trace)
    }

    fn new_call(&mut self, intent: IntentId, now: Millis, trace: &mut Trace) -> AgentOut {
        let call = CallId(self.calls.len() as u32 + 1);
        let step = state(&self.intents, intent).step;
        self.calls.push((intent, step));
        state_mut(&mut self.intents, intent).last_call = call;
        self.issues.push(0);
        self.issue(intent, call, now, trace)
    }

    fn issue(
        &mut self,
        intent: IntentId,
        call: CallId,
        now: Millis,
        trace: &mut Trace,
    ) -> AgentOut {
        let issue = {
            let n = &mut self.issues[call.0 as usize - 1];
            *n += 1;
            *n
        };
        let auth = self.auth(intent);
        let s = state_mut(&mut self.intents, intent);
        *s.calls_here() += 1;
        s.current = Some((call, issue));
        let tool_call = ToolCall {
            call,
            issue,
            auth,
            tenant: s.intent.tenant,
            endpoint: Endpoint(s.step),
            params: s.params,
        };
        let (n, step, steps) = (*s.calls_here(), s.step, s.intent.steps);
        trace.log(now, Component::Agent, || AgentEvent::Calls {
            call,
            intent,
            step: match step {
                _ if step >= COMPENSATION => CallStep::Compensation(step - COMPENSATION),
                _ if steps > 1 => CallStep::Step(step),
                _ => CallStep::Only,
            },
            nth: n,
            params: tool_call.params,
        });
        AgentOut::Call {
            call: tool_call,
            timeout_at_ms: now + self.config.tool_timeout_ms,
        }
    }

    fn intent_of(&self, call: CallId) -> Option<IntentId> {
        self.serves(call).map(|(intent, _)| intent)
    }

    /// Whether the agent still waits for issue `issue` of `call`: its tool timeout can
    /// still fire. Once it does not, the timeout is moot.
    pub(crate) fn awaits(&self, call: CallId, issue: u32) -> bool {
        self.intent_of(call).is_some_and(|intent| {
            self.heard[intent.0 as usize].told.is_none()
                && state(&self.intents, intent).current == Some((call, issue))
        })
    }

    /// The executor reported `result` for issue `issue` of `call`.
    pub(crate) fn on_result(
        &mut self,
        call: CallId,
        issue: u32,
        result: ToolResult,
        now: Millis,
        ch: &mut dyn Chooser,
        trace: &mut Trace,
    ) -> Option<AgentOut> {
        let intent = self.intent_of(call)?;
        let s = state(&self.intents, intent);
        if self.heard[intent.0 as usize].told.is_some() || s.current != Some((call, issue)) {
            trace.log(now, Component::Agent, || AgentEvent::LateResult {
                call,
                issue,
                result,
            });
            return None;
        }
        match result {
            ToolResult::Success { resource } => self.succeeded(intent, resource, now, trace),
            ToolResult::Failure => self.react(intent, false, now, ch, trace),
            ToolResult::Unknown => self.react(intent, true, now, ch, trace),
        }
    }

    /// A step succeeded: on to the next step, the next compensation, or the user.
    fn succeeded(
        &mut self,
        intent: IntentId,
        resource: Option<ResourceId>,
        now: Millis,
        trace: &mut Trace,
    ) -> Option<AgentOut> {
        let s = state_mut(&mut self.intents, intent);
        s.current = None;
        if s.compensating() {
            // Undo the step before it, if any; then the workflow has failed, cleanly.
            let undone = s.step - COMPENSATION;
            return match undone.checked_sub(1) {
                Some(k) => self.compensate(intent, k, now, trace),
                None => {
                    self.tell(intent, Told::Failure, now, trace);
                    None
                }
            };
        }
        s.receipts[s.step as usize] = resource;
        self.heard[intent.0 as usize].steps[s.step as usize] = Some(StepSuccess {
            params: s.params,
            receipt: resource,
        });
        if s.step + 1 < s.intent.steps {
            s.step += 1;
            s.params = step_params(s.intent.params, s.step);
            return Some(self.new_call(intent, now, trace));
        }
        self.tell(intent, Told::Success, now, trace);
        None
    }

    /// Starts undoing forward step `k` (and, after it, the steps before it).
    fn compensate(
        &mut self,
        intent: IntentId,
        k: u32,
        now: Millis,
        trace: &mut Trace,
    ) -> Option<AgentOut> {
        let s = state_mut(&mut self.intents, intent);
        let Some(resource) = s.receipts[k as usize] else {
            // Nothing names what to undo: the effect stays.
            trace.log(now, Component::Agent, || AgentEvent::CannotCompensate {
                intent,
                step: k,
            });
            self.tell(intent, Told::Failure, now, trace);
            return None;
        };
        s.step = COMPENSATION + k;
        s.params = compensation_params(resource);
        s.compensation_calls = 0;
        Some(self.new_call(intent, now, trace))
    }

    /// The agent's own wait for issue `issue` of `call` ran out.
    pub(crate) fn on_timeout(
        &mut self,
        call: CallId,
        issue: u32,
        now: Millis,
        ch: &mut dyn Chooser,
        trace: &mut Trace,
    ) -> Option<AgentOut> {
        let intent = self.intent_of(call)?;
        let s = state(&self.intents, intent);
        if self.heard[intent.0 as usize].told.is_some() || s.current != Some((call, issue)) {
            return None;
        }
        trace.log(now, Component::Agent, || AgentEvent::ToolTimeout { call });
        self.react(intent, true, now, ch, trace)
    }

    fn react(
        &mut self,
        intent: IntentId,
        unknown: bool,
        now: Millis,
        ch: &mut dyn Chooser,
        trace: &mut Trace,
    ) -> Option<AgentOut> {
        let max_calls = self.config.max_calls;
        let s = state_mut(&mut self.intents, intent);
        s.current = None;
        let seen = if unknown { "unknown" } else { "failure" };
        if *s.calls_here() >= max_calls {
            trace.log(now, Component::Agent, || AgentEvent::LastCallSpent {
                intent,
                seen,
            });
            return self.give_up(intent, unknown, now, trace);
        }
        let reaction: &Reaction = if unknown {
            &self.config.on_unknown
        } else {
            &self.config.on_failure
        };
        let act = Act::ALL[ch.weighted(Purpose::AgentDecision, &reaction.weights())];
        // Only a new plan can lose the authorization; a re-run is the same call, with its own.
        s.reauthorize = matches!(act, Act::Replan | Act::ChangeArgs)
            && ch.chance(Purpose::AuthorizationLoss, self.config.authorization_loss);
        let lost = s.reauthorize;
        let think = self.config.think_ms;
        let at_ms = now + ch.between(Purpose::AgentThink, think.min, think.max);
        trace.log(now, Component::Agent, || AgentEvent::Decides {
            intent,
            seen,
            act: act.name(),
            at_ms,
            authorization_lost: lost,
        });
        Some(AgentOut::Later { intent, act, at_ms })
    }

    /// The agent stops trying the current step. A definite failure of a later step starts
    /// compensation when the model asks for it; otherwise the user hears what was seen.
    fn give_up(
        &mut self,
        intent: IntentId,
        unknown: bool,
        now: Millis,
        trace: &mut Trace,
    ) -> Option<AgentOut> {
        let s = state(&self.intents, intent);
        if !unknown && self.config.compensate && !s.compensating() && s.step > 0 {
            return self.compensate(intent, s.step - 1, now, trace);
        }
        let told = if unknown {
            Told::Unresolved
        } else {
            Told::Failure
        };
        self.tell(intent, told, now, trace);
        None
    }

    /// Carries out a decided reaction.
    pub(crate) fn act(
        &mut self,
        intent: IntentId,
        act: Act,
        now: Millis,
        trace: &mut Trace,
    ) -> Option<AgentOut> {
        let restart = self.config.on_step_failure == StepFailure::RestartWorkflow;
        if self.heard[intent.0 as usize].told.is_some() {
            return None;
        }
        let s = state_mut(&mut self.intents, intent);
        if std::mem::take(&mut s.reauthorize) {
            // Every authorization the agent held for this intent is gone: each action from
            // here on, the one under way and the ones a replan runs again, is authorized anew.
            s.auths = [None; 2 * MAX_STEPS as usize];
        }
        match act {
            Act::RetrySame => {
                let call = s.last_call;
                Some(self.issue(intent, call, now, trace))
            }
            Act::Replan if restart && !s.compensating() && s.step > 0 => {
                // Plan the whole task again, from its first action.
                trace.log(now, Component::Agent, || AgentEvent::Replans { intent });
                s.step = 0;
                s.params = step_params(s.intent.params, 0);
                Some(self.new_call(intent, now, trace))
            }
            Act::Replan => Some(self.new_call(intent, now, trace)),
            Act::ChangeArgs => {
                // Drift: the same intent, arguments the user never asked for.
                let n = *s.calls_here();
                s.params = Params(s.params.0 ^ (u64::from(n) << 32));
                Some(self.new_call(intent, now, trace))
            }
            Act::GiveUp => self.give_up(intent, false, now, trace),
            Act::AskUser => {
                self.tell(intent, Told::Unresolved, now, trace);
                None
            }
        }
    }

    fn tell(&mut self, intent: IntentId, told: Told, now: Millis, trace: &mut Trace) {
        self.heard[intent.0 as usize].told = Some((told, now));
        trace.log(now, Component::Agent, || AgentEvent::Tells { intent, told });
    }
}

/// The state of `intent`, which has started.
fn state(intents: &[Option<IntentState>], intent: IntentId) -> &IntentState {
    intents[intent.0 as usize]
        .as_ref()
        .expect("an intent acts only once it has started")
}

fn state_mut(intents: &mut [Option<IntentState>], intent: IntentId) -> &mut IntentState {
    intents[intent.0 as usize]
        .as_mut()
        .expect("an intent acts only once it has started")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::hash::StableHasher;
    use std::hash::Hasher;

    fn intent() -> Intent {
        Intent {
            id: IntentId(0),
            arrival_ms: 0,
            tenant: Tenant(0),
            endpoint: Endpoint(0),
            params: Params(1),
            repeat_of: None,
            steps: 1,
        }
    }

    /// The fingerprint of an agent whose one intent's user was told `told` at `at_ms`.
    fn told(told: Option<Told>, at_ms: Millis) -> u64 {
        let config: AgentModel = serde_json::from_value(serde_json::json!({
            "tool_timeout_ms": 1000, "max_calls": 2,
            "on_failure": { "give_up": 1 }, "on_unknown": { "replan": 1 }
        }))
        .unwrap();
        let mut agent = Agent::new(config);
        let mut trace = Trace::default();
        agent.start(intent(), 0, &mut trace);
        if let Some(t) = told {
            agent.tell(IntentId(0), t, at_ms, &mut trace);
        }
        let mut h = StableHasher::new();
        agent.fingerprint(&mut h);
        h.finish()
    }

    #[test]
    fn what_the_user_was_told_and_when_is_in_the_fingerprint() {
        let success = Some(Told::Success);
        assert_eq!(told(success, 5), told(success, 5));
        assert_ne!(told(success, 5), told(success, 6));
        assert_ne!(told(success, 5), told(Some(Told::Unresolved), 5));
        assert_ne!(told(success, 5), told(None, 5));
    }
}

//! The agent: an LLM planner reduced to its reactions.
//!
//! For each intent it proposes a tool call and waits for the executor's result, at most
//! `tool_timeout_ms`. On success it tells the user. On a failure or an unknown outcome it
//! picks a reaction with the model's weights: re-run the same call, replan (a fresh call with
//! the same arguments), replan with changed arguments, give up (tell the user it failed), or
//! ask the user (tell them it is unresolved). After `max_calls` calls it reports what it last
//! saw: a failure as failure, an unknown as unresolved.

use super::ids::*;
use super::protocol::{ToolCall, ToolResult};
use super::trace::{Component, Trace};
use super::workload::Intent;
use crate::model::{AgentModel, Reaction};
use crate::sim::{Chooser, ChooserExt, Millis, Purpose};

/// What the user is finally told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Told {
    Success,
    Failure,
    /// The agent admitted it does not know, or asked the user.
    Unresolved,
}

impl Told {
    pub fn name(self) -> &'static str {
        match self {
            Told::Success => "success",
            Told::Failure => "failure",
            Told::Unresolved => "unresolved",
        }
    }
}

/// A reaction to a failure or an unknown outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    RetrySame,
    Replan,
    ChangeArgs,
    GiveUp,
    AskUser,
}

impl Act {
    const ORDER: [Act; 5] = [
        Act::RetrySame,
        Act::Replan,
        Act::ChangeArgs,
        Act::GiveUp,
        Act::AskUser,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Act::RetrySame => "retry the same call",
            Act::Replan => "replan",
            Act::ChangeArgs => "replan with changed arguments",
            Act::GiveUp => "give up",
            Act::AskUser => "ask the user",
        }
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

#[derive(Clone, Copy, Debug)]
struct IntentState {
    intent: Intent,
    params: Params,
    calls: u32,
    current: Option<CallId>,
    told: Option<(Told, Millis)>,
}

#[derive(Debug)]
pub struct Agent {
    config: AgentModel,
    intents: Vec<IntentState>,
    /// Call id → intent.
    calls: Vec<IntentId>,
}

impl Agent {
    pub fn new(config: AgentModel) -> Self {
        Self {
            config,
            intents: Vec::new(),
            calls: Vec::new(),
        }
    }

    pub(crate) fn clear(&mut self) {
        self.intents.clear();
        self.calls.clear();
    }

    /// What the user was told about `intent`, and when.
    pub fn told(&self, intent: IntentId) -> Option<(Told, Millis)> {
        self.intents.get(intent.0 as usize).and_then(|s| s.told)
    }

    /// A new intent: propose its first call.
    pub(crate) fn start(&mut self, intent: Intent, now: Millis, trace: &mut Trace) -> AgentOut {
        self.intents.push(IntentState {
            intent,
            params: intent.params,
            calls: 0,
            current: None,
            told: None,
        });
        self.new_call(intent.id, now, trace)
    }

    fn new_call(&mut self, intent: IntentId, now: Millis, trace: &mut Trace) -> AgentOut {
        let call = CallId(self.calls.len() as u32 + 1);
        self.calls.push(intent);
        self.issue(intent, call, now, trace)
    }

    fn issue(
        &mut self,
        intent: IntentId,
        call: CallId,
        now: Millis,
        trace: &mut Trace,
    ) -> AgentOut {
        let s = &mut self.intents[intent.0 as usize];
        s.calls += 1;
        s.current = Some(call);
        let tool_call = ToolCall {
            call,
            auth: AuthId(intent.0),
            tenant: s.intent.tenant,
            endpoint: s.intent.endpoint,
            params: s.params,
            tag: IntentTag(intent),
        };
        let n = s.calls;
        trace.log(now, Component::Agent, || {
            format!("{call} for {intent} (its call #{n}), {}", tool_call.params)
        });
        AgentOut::Call {
            call: tool_call,
            timeout_at_ms: now + self.config.tool_timeout_ms,
        }
    }

    /// The executor reported `result` for `call`.
    pub(crate) fn on_result(
        &mut self,
        call: CallId,
        result: ToolResult,
        now: Millis,
        ch: &mut dyn Chooser,
        trace: &mut Trace,
    ) -> Option<AgentOut> {
        let intent = *self.calls.get((call.0 as usize).checked_sub(1)?)?;
        let s = &self.intents[intent.0 as usize];
        if s.told.is_some() || s.current != Some(call) {
            trace.log(now, Component::Agent, || {
                format!("{call}: late result ({result}) ignored")
            });
            return None;
        }
        match result {
            ToolResult::Success { .. } => {
                self.tell(intent, Told::Success, now, trace);
                None
            }
            ToolResult::Failure => self.react(intent, false, now, ch, trace),
            ToolResult::Unknown => self.react(intent, true, now, ch, trace),
        }
    }

    /// The agent's own wait for `call` ran out.
    pub(crate) fn on_timeout(
        &mut self,
        call: CallId,
        now: Millis,
        ch: &mut dyn Chooser,
        trace: &mut Trace,
    ) -> Option<AgentOut> {
        let intent = *self.calls.get((call.0 as usize).checked_sub(1)?)?;
        let s = &self.intents[intent.0 as usize];
        if s.told.is_some() || s.current != Some(call) {
            return None;
        }
        trace.log(now, Component::Agent, || {
            format!("{call}: no result within the tool timeout")
        });
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
        let s = &mut self.intents[intent.0 as usize];
        s.current = None;
        let seen = if unknown { "unknown" } else { "failure" };
        if s.calls >= self.config.max_calls {
            let told = if unknown {
                Told::Unresolved
            } else {
                Told::Failure
            };
            trace.log(now, Component::Agent, || {
                format!("{intent}: {seen} after its last allowed call")
            });
            self.tell(intent, told, now, trace);
            return None;
        }
        let reaction: &Reaction = if unknown {
            &self.config.on_unknown
        } else {
            &self.config.on_failure
        };
        let act = Act::ORDER[ch.weighted(Purpose::AgentDecision, &reaction.weights())];
        let think = self.config.think_ms;
        let at_ms = now + ch.between(Purpose::AgentThink, think.min, think.max);
        trace.log(now, Component::Agent, || {
            format!("{intent}: {seen}; decides to {} at {at_ms} ms", act.name())
        });
        Some(AgentOut::Later { intent, act, at_ms })
    }

    /// Carries out a decided reaction.
    pub(crate) fn act(
        &mut self,
        intent: IntentId,
        act: Act,
        now: Millis,
        trace: &mut Trace,
    ) -> Option<AgentOut> {
        let s = &mut self.intents[intent.0 as usize];
        if s.told.is_some() {
            return None;
        }
        match act {
            Act::RetrySame => {
                let call = CallId(self.calls.iter().rposition(|&i| i == intent)? as u32 + 1);
                Some(self.issue(intent, call, now, trace))
            }
            Act::Replan => Some(self.new_call(intent, now, trace)),
            Act::ChangeArgs => {
                // Drift: the same intent, arguments the user never asked for.
                s.params = Params(s.params.0 ^ (u64::from(s.calls) << 32));
                Some(self.new_call(intent, now, trace))
            }
            Act::GiveUp => {
                self.tell(intent, Told::Failure, now, trace);
                None
            }
            Act::AskUser => {
                self.tell(intent, Told::Unresolved, now, trace);
                None
            }
        }
    }

    fn tell(&mut self, intent: IntentId, told: Told, now: Millis, trace: &mut Trace) {
        self.intents[intent.0 as usize].told = Some((told, now));
        trace.log(now, Component::Agent, || {
            format!("{intent}: tells the user {}", told.name())
        });
    }
}

//! The file form of an executor stack (`executor.stack` of a model, `layers` of a design
//! preset): its retry layers, outermost first, each with its attempts, backoff and jitter,
//! the errors it retries, its key, what a crash does to its call, its client timeout and its
//! deadline. `design::stack` runs it; `docs/executor-stacks.md` explains each field.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::sim::Millis;

crate::sim::named_enum! {
    /// An error a layer sees from the layer below, by the class a retry rule names.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum ErrorClass {
        /// No answer within the client timeout.
        Timeout => "timeout",
        /// 409: a request under the key is in progress.
        InProgress => "in_progress",
        /// 5xx.
        ServerError => "server_error",
        /// A "not found" or "pending" where the answer to a create was expected.
        Inconclusive => "inconclusive",
        /// 422: the key was first used with other arguments.
        Mismatch => "mismatch",
        /// 412: the key is past its window.
        Expired => "expired",
        /// 400 or another 4xx: the request is refused (a missing key, an unsupported one, a
        /// rejected request).
        Refused => "refused",
        /// The provider reports the operation failed.
        Failed => "failed",
        /// 429: refused by a rate limit, nothing done (perhaps with `Retry-After`).
        Throttled => "throttled",
        /// 408: the server gave up waiting for the request, nothing done.
        RequestTimeout => "request_timeout",
        /// The connection was reset after the request was sent: no answer.
        ConnectionReset => "connection_reset",
    }
}

/// Which key a layer's calls carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyMode {
    /// The key of the layer above (past the outermost layer, the application's).
    #[default]
    Inherited,
    /// No key, whatever the layers above hold.
    None,
    /// The key of the layer above if it has one; otherwise a key minted when this layer is
    /// called, the same on its own retries, so that a new call of this layer (a retry of a
    /// layer above it) mints a new one.
    PerCall,
    /// A new key for every send, whatever the layers above hold.
    PerAttempt,
}

/// What a crash of the worker does to a layer's call that was under way.
///
/// A restarted worker re-runs, for every operation it still owed an answer, the call of
/// the outermost layer that is redelivered; the layers below it are called anew (their
/// counts start again, their per-call keys are minted anew: they lived in the crashed
/// process). The redelivery comes when the worker restarts (`workers.restart_delay_ms`
/// stands for the queue's visibility timeout), to the same worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Redelivery {
    /// Nothing re-runs it: a loop in the worker's memory dies with the worker.
    #[default]
    None,
    /// The job that calls this layer is run again from its start: a new call of the layer,
    /// its count and its per-call key anew (a durable queue whose message holds the
    /// arguments only).
    Anew,
    /// Re-run as one of the layer's own retries: its count goes on (no call past its
    /// attempts) and its per-call key is kept (Temporal's activity attempts, SQS's receive
    /// count against the redrive policy's maximum).
    Retry,
    /// Re-run with its count and its per-call key as they were: a redelivery is not a retry
    /// and has no limit (Celery's `acks_late`, whose `request.retries` it leaves as it was).
    Resume,
}

/// How a stack reports an operation no layer retries any more.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GiveUp {
    /// As unknown, unless the last answer was a definite refusal (then failed).
    #[default]
    Unknown,
    /// As a failed tool result, as a wrapper that turns the last exception into an error
    /// does: a claim that the effect does not exist, judged against the ledger.
    Failure,
}

/// A layer's attempts: calls of the layer below per call of this layer, the first included.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Attempts {
    /// A number, 1 to 32.
    Count(u32),
    /// `"unlimited"` (Temporal's default), or, in a design preset only, a knob of the
    /// `executor` shorthand: `"executor.attempts"`, `"executor.layers.tool"`,
    /// `"executor.layers.queue"`.
    Named(String),
}

/// The attempts that mean no limit.
pub const UNLIMITED: &str = "unlimited";

/// The shorthand knobs a preset layer's attempts may name.
pub const KNOBS: [&str; 3] = [
    "executor.attempts",
    "executor.layers.tool",
    "executor.layers.queue",
];

/// What a layer retries: `"uncertain"` (timeout, in_progress, server_error, inconclusive,
/// throttled, request_timeout, connection_reset: what leaves the outcome open and may go
/// away), `"any"`, `"nothing"`, or a list of error classes.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Retries {
    Named(String),
    Classes(Vec<String>),
}

/// The random part added to, or taken from, each wait of a backoff. Each draw is a timing
/// choice like a latency: random simulation draws it, a search offers the ends of its range
/// and the design's thresholds, a replay repeats it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Jitter {
    /// The wait as computed.
    #[default]
    None,
    /// Anywhere from 0 to the wait (AWS's "full jitter", botocore's standard mode).
    Full,
    /// From half the wait to the wait (AWS's "equal jitter").
    Equal,
    /// The wait plus 0 to `max_ms` (tenacity's `wait_random` added, stamina's
    /// `wait_jitter`).
    Additive {
        /// The most added to a wait.
        max_ms: Millis,
    },
    /// From `min_percent` to `max_percent` of the wait (the OpenAI and Anthropic SDKs: 75 to
    /// 100).
    Multiplicative {
        /// The shortest wait, in percent of the computed one.
        min_percent: u32,
        /// The longest wait, in percent of the computed one (at most 1000).
        max_percent: u32,
    },
}

/// The waits between one layer's attempts.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackoffSpec {
    /// The wait before the first retry; absent, the shorthand's `executor.backoff_ms`.
    #[serde(default)]
    pub initial_ms: Option<Millis>,
    /// Each wait is the one before times this (1: a constant wait).
    #[serde(default = "two")]
    pub factor: u32,
    /// The longest wait, before jitter; absent, the shorthand's `executor.max_backoff_ms`.
    #[serde(default)]
    pub cap_ms: Option<Millis>,
    /// No wait shorter than this, after the jitter (stripe-python's 0.5 s). Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub floor_ms: Option<Millis>,
    /// No wait longer than this, after the jitter (stamina's `wait_max`, which bounds the
    /// wait with its jitter). Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub ceiling_ms: Option<Millis>,
    /// Waits written out instead (`[1000, 5000, 30000]`), the last one repeated: a table
    /// schedule. Given, `initial_ms`, `factor` and `cap_ms` are not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub table_ms: Option<Vec<Millis>>,
    /// The random spread of each wait: `"none"`, `"full"` (0 to the wait), `"equal"` (half
    /// the wait to the wait), `{"additive": {"max_ms": N}}` (the wait plus 0 to N ms) or
    /// `{"multiplicative": {"min_percent": A, "max_percent": B}}`. Each draw is a timing
    /// choice: explored at its ends, replayed exactly.
    #[serde(default)]
    pub jitter: Jitter,
}

fn two() -> u32 {
    2
}

/// One retry layer, in the file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LayerSpec {
    /// What the layer is (`http`, `sdk`, `tool`, `queue`, a framework's name), for messages.
    #[schemars(example = &"sdk")]
    pub name: String,
    /// Calls of the layer below per call of this layer, the first included: 1 to 32, or
    /// `"unlimited"` (a design preset may also name a knob of the shorthand).
    #[schemars(example = 3)]
    pub attempts: Attempts,
    /// Absent: the shorthand's (`executor.backoff_ms` doubled per retry, at most
    /// `executor.max_backoff_ms`), without jitter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub backoff: Option<BackoffSpec>,
    /// Another backoff for some error classes, by class name: a retry after an error of
    /// that class waits it instead of `backoff`, counted by the same retries (botocore waits
    /// on a 1 s base after a throttling error, 50 ms after the others).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("default" = {}), example = json!({"throttled": {"initial_ms": 1000, "cap_ms": 20000, "jitter": "full"}}))]
    pub backoff_on: BTreeMap<String, BackoffSpec>,
    /// The errors it retries: `"uncertain"` (timeout, in_progress, server_error,
    /// inconclusive, throttled, request_timeout, connection_reset), `"any"`, `"nothing"`,
    /// or a list of error classes (those, and `mismatch`, `expired`, `refused`, `failed`).
    /// Any other error goes up to the layer above.
    #[schemars(example = &"uncertain")]
    pub retry_on: Retries,
    /// The key its calls carry: `inherited` (the layer above's; past the outermost, the
    /// application's), `none`, `per_call` (the one given from above, else one minted per
    /// call of this layer and kept by its own retries), `per_attempt` (a new one per send).
    #[serde(default)]
    pub key: KeyMode,
    /// What a worker crash does to its call under way: `none` (nothing re-runs it), `anew`
    /// (the job runs again from its start), `retry` (one of its own retries, key kept),
    /// `resume` (count and key as they were, no limit).
    #[serde(default)]
    pub redelivery: Redelivery,
    /// The client timeout of each send (the innermost layer only: it is the one that
    /// sends). Absent: `executor.timeout_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub timeout_ms: Option<Millis>,
    /// The layer makes no retry once its current call has lasted this long when an attempt
    /// fails (tenacity's `stop_after_delay`, a total timeout). Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub deadline_ms: Option<Millis>,
    /// Whether it waits what a 429's `Retry-After` says instead of its backoff, up to a
    /// maximum (the OpenAI and Anthropic SDKs). Absent: it ignores the header (Stripe's
    /// SDKs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub retry_after: Option<RetryAfterSpec>,
    /// The should-retry header it reads on an answer (`provider.should_retry`), by name:
    /// `Stripe-Should-Retry` (Stripe's SDKs), `x-should-retry` (the OpenAI and Anthropic
    /// SDKs). A header of that name (without case) decides over `retry_on`: `true` retries
    /// the answer (attempts left), `false` passes it up. Absent: it reads none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null), example = &"x-should-retry")]
    pub should_retry_header: Option<String>,
}

/// Changes to one layer of an executor preset (`executor.overrides`, by the layer's name):
/// each field given replaces the layer's; the others stay the preset's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LayerOverride {
    /// In place of the layer's `attempts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub attempts: Option<Attempts>,
    /// In place of the layer's `backoff` (the whole object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub backoff: Option<BackoffSpec>,
    /// In place of the layer's `backoff_on` (the whole object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub backoff_on: Option<BTreeMap<String, BackoffSpec>>,
    /// In place of the layer's `retry_on`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub retry_on: Option<Retries>,
    /// In place of the layer's `key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub key: Option<KeyMode>,
    /// In place of the layer's `redelivery`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub redelivery: Option<Redelivery>,
    /// In place of the layer's `timeout_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub timeout_ms: Option<Millis>,
    /// In place of the layer's `deadline_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub deadline_ms: Option<Millis>,
    /// In place of the layer's `retry_after`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub retry_after: Option<RetryAfterSpec>,
    /// In place of the layer's `should_retry_header`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub should_retry_header: Option<String>,
}

impl LayerOverride {
    /// The names of the fields it sets.
    fn fields(&self) -> Vec<&'static str> {
        [
            ("attempts", self.attempts.is_some()),
            ("backoff", self.backoff.is_some()),
            ("backoff_on", self.backoff_on.is_some()),
            ("retry_on", self.retry_on.is_some()),
            ("key", self.key.is_some()),
            ("redelivery", self.redelivery.is_some()),
            ("timeout_ms", self.timeout_ms.is_some()),
            ("deadline_ms", self.deadline_ms.is_some()),
            ("retry_after", self.retry_after.is_some()),
            ("should_retry_header", self.should_retry_header.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }

    /// `layer` with these changes.
    fn apply(&self, layer: &mut LayerSpec) {
        if let Some(v) = &self.attempts {
            layer.attempts = v.clone();
        }
        if let Some(v) = &self.backoff {
            layer.backoff = Some(v.clone());
        }
        if let Some(v) = &self.backoff_on {
            layer.backoff_on = v.clone();
        }
        if let Some(v) = &self.retry_on {
            layer.retry_on = v.clone();
        }
        if let Some(v) = self.key {
            layer.key = v;
        }
        if let Some(v) = self.redelivery {
            layer.redelivery = v;
        }
        if let Some(v) = self.timeout_ms {
            layer.timeout_ms = Some(v);
        }
        if let Some(v) = self.deadline_ms {
            layer.deadline_ms = Some(v);
        }
        if let Some(v) = self.retry_after {
            layer.retry_after = Some(v);
        }
        if let Some(v) = &self.should_retry_header {
            layer.should_retry_header = Some(v.clone());
        }
    }
}

/// How a layer reads a 429's `Retry-After`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryAfterSpec {
    /// The longest `Retry-After` it waits; a longer one is treated as `above` says.
    pub max_ms: Millis,
    /// What a longer one does: `give_up` (this layer makes no retry: the OpenAI Python SDK
    /// above 120 s) or `backoff` (its own backoff instead: the Anthropic and OpenAI Node SDKs
    /// above 60 s).
    #[serde(default)]
    pub above: AboveMax,
}

/// What a `Retry-After` above a layer's maximum does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AboveMax {
    /// The layer makes no retry; the error goes up.
    #[default]
    GiveUp,
    /// The layer waits its own backoff.
    Backoff,
}

/// A stack in the file: its layers, outermost first, and how it gives up.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = example_stack())]
pub struct StackSpec {
    /// The retry layers, outermost first (1 to 16): an agent framework, a job queue, a tool
    /// wrapper, an SDK, an HTTP client.
    pub layers: Vec<LayerSpec>,
    /// When no layer retries: `unknown` (the honest answer) or `failure` (a failed tool
    /// result, as a wrapper that turns its last exception into an error reports).
    #[serde(default)]
    pub gives_up: GiveUp,
}

fn example_stack() -> serde_json::Value {
    json!({
        "layers": [
            { "name": "framework", "attempts": 3, "retry_on": ["timeout", "server_error"] },
            {
                "name": "sdk", "attempts": 3, "retry_on": "uncertain", "key": "per_call",
                "backoff": { "initial_ms": 500, "cap_ms": 8000, "jitter": "full" }
            }
        ],
        "gives_up": "unknown"
    })
}

/// Most layers a stack has.
pub const MAX_LAYERS: usize = 16;

/// The longest wait a table may name: the longest duration a model may name.
const MAX_WAIT_MS: Millis = 1_000_000_000_000;

/// The longest wait table.
pub const MAX_TABLE: usize = 64;

/// Most attempts a layer names as a number (as `executor.attempts`).
const MAX_COUNT: u32 = 32;

impl Retries {
    /// The classes it names, or what is wrong with it (`field` names the field).
    pub fn classes(&self, field: &str) -> Result<Vec<ErrorClass>, String> {
        match self {
            Retries::Named(n) => match n.as_str() {
                "uncertain" => Ok(vec![
                    ErrorClass::Timeout,
                    ErrorClass::InProgress,
                    ErrorClass::ServerError,
                    ErrorClass::Inconclusive,
                    ErrorClass::Throttled,
                    ErrorClass::RequestTimeout,
                    ErrorClass::ConnectionReset,
                ]),
                "any" => Ok(ErrorClass::ALL.to_vec()),
                "nothing" => Ok(Vec::new()),
                _ => Err(format!(
                    "{field}: {n:?}; expected \"uncertain\", \"any\", \"nothing\" or a list of error classes ({})",
                    class_names()
                )),
            },
            Retries::Classes(names) => names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    ErrorClass::ALL
                        .into_iter()
                        .find(|c| c.name() == n)
                        .ok_or_else(|| {
                            format!(
                                "{field}[{i}]: {n:?} is not an error class; expected one of {}",
                                class_names()
                            )
                        })
                })
                .collect(),
        }
    }
}

/// The error classes' names, comma separated.
pub fn class_names() -> String {
    ErrorClass::ALL.map(ErrorClass::name).join(", ")
}

impl StackSpec {
    /// This stack with `overrides` applied to the layers they name (a name no layer has
    /// changes nothing: [`StackSpec::override_problems`] reports it).
    pub fn with_overrides(&self, overrides: &BTreeMap<String, LayerOverride>) -> StackSpec {
        let mut s = self.clone();
        for layer in &mut s.layers {
            if let Some(o) = overrides.get(&layer.name) {
                o.apply(layer);
            }
        }
        s
    }

    /// What is wrong with `overrides` of this stack, under field `at`: a layer it does not
    /// have, or has twice (stacked presets), an override that changes nothing, or a field
    /// it sets that makes the layer invalid.
    pub fn override_problems(
        &self,
        at: &str,
        overrides: &BTreeMap<String, LayerOverride>,
    ) -> Vec<(String, String)> {
        let names: Vec<&str> = self.layers.iter().map(|l| l.name.as_str()).collect();
        let mut p = Vec::new();
        for (k, o) in overrides {
            let count = names.iter().filter(|n| **n == k.as_str()).count();
            let problem = match count {
                0 => Some(format!(
                    "the preset has no layer \"{k}\"; its layers: {}",
                    names.join(", ")
                )),
                1 if o.fields().is_empty() => {
                    Some("changes nothing; give the fields to change, or leave it out".into())
                }
                1 => None,
                n => Some(format!(
                    "the stacked presets have {n} layers named \"{k}\"; an override cannot tell them apart"
                )),
            };
            if let Some(message) = problem {
                p.push((format!("{at}.{k}"), message));
            }
        }
        let before = self.problems("", false);
        let changed = self.with_overrides(overrides);
        for (path, message) in changed.problems("", false) {
            if before.contains(&(path.clone(), message.clone())) {
                continue; // the stack's own, reported where it is written
            }
            // "layers[i].field" of the changed stack is "<at>.<layer name>.field", when the
            // override sets that field.
            let Some((i, rest)) = path
                .strip_prefix("layers[")
                .and_then(|r| r.split_once(']'))
                .and_then(|(i, rest)| Some((i.parse::<usize>().ok()?, rest)))
            else {
                continue;
            };
            let Some(layer) = changed.layers.get(i) else {
                continue;
            };
            let Some(o) = overrides.get(&layer.name) else {
                continue;
            };
            let set = o.fields().iter().any(|f| {
                rest.strip_prefix('.')
                    .and_then(|r| r.strip_prefix(f))
                    .is_some_and(|tail| tail.is_empty() || tail.starts_with(['.', '[']))
            });
            if set {
                p.push((format!("{at}.{}{rest}", layer.name), message));
            }
        }
        p
    }

    /// What is wrong with it, each as (field path under `at`, message). `knobs`: whether
    /// a layer's attempts may name a knob of the shorthand (design presets).
    pub fn problems(&self, at: &str, knobs: bool) -> Vec<(String, String)> {
        let mut p = Vec::new();
        if !(1..=MAX_LAYERS).contains(&self.layers.len()) {
            p.push((
                join(at, "layers"),
                format!(
                    "{} layers; a stack has 1 to {MAX_LAYERS}",
                    self.layers.len()
                ),
            ));
        }
        let last = self.layers.len().saturating_sub(1);
        for (i, l) in self.layers.iter().enumerate() {
            let at = format!("{}[{i}]", join(at, "layers"));
            l.problems(&at, knobs, i == last, &mut p);
        }
        p
    }
}

impl LayerSpec {
    fn problems(&self, at: &str, knobs: bool, innermost: bool, p: &mut Vec<(String, String)>) {
        let mut push = |field: &str, message: String| p.push((format!("{at}.{field}"), message));
        match &self.attempts {
            Attempts::Count(n) if !(1..=MAX_COUNT).contains(n) => push(
                "attempts",
                format!("{n}; a layer makes 1 to {MAX_COUNT} calls (\"unlimited\" for no limit)"),
            ),
            Attempts::Named(n) if n != UNLIMITED && !(knobs && KNOBS.contains(&n.as_str())) => {
                let expected = if knobs {
                    format!("a number, \"{UNLIMITED}\" or one of {}", KNOBS.join(", "))
                } else {
                    format!("a number or \"{UNLIMITED}\"")
                };
                push("attempts", format!("{n:?}; expected {expected}"))
            }
            _ => {}
        }
        if let Err(e) = self.retry_on.classes("retry_on") {
            push_raw(p, at, e);
        }
        if let Some(b) = &self.backoff {
            b.problems(at, p);
        }
        for (class, b) in &self.backoff_on {
            let at = format!("{at}.backoff_on.{class}");
            if !ErrorClass::ALL.iter().any(|c| c.name() == class) {
                p.push((
                    at.clone(),
                    format!(
                        "{class:?} is not an error class; expected one of {}",
                        class_names()
                    ),
                ));
            }
            b.problems_at(&at, p);
        }
        if self.timeout_ms.is_some() && !innermost {
            p.push((
                format!("{at}.timeout_ms"),
                "only the innermost layer sends, so only it has a client timeout; an outer layer bounds its call with deadline_ms".into(),
            ));
        }
        if self.timeout_ms == Some(0) {
            p.push((format!("{at}.timeout_ms"), "must be at least 1".into()));
        }
        if self.deadline_ms == Some(0) {
            p.push((
                format!("{at}.deadline_ms"),
                "must be at least 1; leave it out for no deadline".into(),
            ));
        }
    }
}

/// `at.field`, or `field` at the top.
fn join(at: &str, field: &str) -> String {
    if at.is_empty() {
        field.to_string()
    } else {
        format!("{at}.{field}")
    }
}

/// Pushes `message` of the form `"field: text"` as (`at.field`, text).
fn push_raw(p: &mut Vec<(String, String)>, at: &str, message: String) {
    match message.split_once(": ") {
        Some((field, text)) => p.push((format!("{at}.{field}"), text.to_string())),
        None => p.push((at.to_string(), message)),
    }
}

impl BackoffSpec {
    fn problems(&self, at: &str, p: &mut Vec<(String, String)>) {
        self.problems_at(&format!("{at}.backoff"), p);
    }

    /// What is wrong with it, the backoff being the field `at`.
    fn problems_at(&self, at: &str, p: &mut Vec<(String, String)>) {
        let mut push = |field: &str, message: String| p.push((format!("{at}.{field}"), message));
        if let Some(table) = &self.table_ms {
            if self.initial_ms.is_some() || self.cap_ms.is_some() || self.factor != 2 {
                push(
                    "table_ms",
                    "a table gives every wait; leave out initial_ms, factor and cap_ms".into(),
                );
            }
            if let Some(w) = table.iter().find(|&&w| w > MAX_WAIT_MS) {
                push(
                    "table_ms",
                    format!("{w} is longer than {MAX_WAIT_MS} ms (about 31 years)"),
                );
            }
            if !(1..=MAX_TABLE).contains(&table.len()) {
                push(
                    "table_ms",
                    format!("{} waits; a table has 1 to {MAX_TABLE}", table.len()),
                );
            }
        }
        if self.factor == 0 {
            push(
                "factor",
                "must be at least 1 (1: every wait the same)".into(),
            );
        }
        if let (Some(initial), Some(cap)) = (self.initial_ms, self.cap_ms)
            && cap < initial
        {
            push("cap_ms", format!("{cap} is below initial_ms {initial}"));
        }
        if let (Some(floor), Some(ceiling)) = (self.floor_ms, self.ceiling_ms)
            && ceiling < floor
        {
            push("ceiling_ms", format!("{ceiling} is below floor_ms {floor}"));
        }
        if let Jitter::Multiplicative {
            min_percent,
            max_percent,
        } = self.jitter
            && (min_percent > max_percent || max_percent > 1_000)
        {
            push(
                "jitter",
                format!(
                    "multiplicative from {min_percent} to {max_percent} percent; expected min_percent <= max_percent <= 1000"
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(v: serde_json::Value) -> StackSpec {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_stack_reads_with_its_defaults() {
        let s =
            spec(json!({ "layers": [{ "name": "http", "attempts": 3, "retry_on": "uncertain" }] }));
        let l = &s.layers[0];
        assert_eq!(l.key, KeyMode::Inherited);
        assert_eq!(l.redelivery, Redelivery::None);
        assert_eq!(l.backoff, None);
        assert_eq!(s.gives_up, GiveUp::Unknown);
        assert!(s.problems("executor.stack", false).is_empty());
        let b: BackoffSpec = serde_json::from_value(
            json!({ "jitter": { "multiplicative": { "min_percent": 75, "max_percent": 100 } } }),
        )
        .unwrap();
        assert_eq!(b.factor, 2);
        assert_eq!(
            b.jitter,
            Jitter::Multiplicative {
                min_percent: 75,
                max_percent: 100
            }
        );
        let b: BackoffSpec =
            serde_json::from_value(json!({ "jitter": { "additive": { "max_ms": 1000 } } }))
                .unwrap();
        assert_eq!(b.jitter, Jitter::Additive { max_ms: 1_000 });
    }

    #[test]
    fn every_problem_names_its_field() {
        let s = spec(json!({ "layers": [
            { "name": "a", "attempts": 0, "retry_on": "sometimes", "timeout_ms": 5 },
            { "name": "b", "attempts": "executor.attempts", "retry_on": ["timeout", "teapot"],
              "backoff": { "initial_ms": 10, "cap_ms": 5, "factor": 0,
                           "jitter": { "multiplicative": { "min_percent": 90, "max_percent": 80 } } },
              "deadline_ms": 0 },
            { "name": "c", "attempts": "unlimited", "retry_on": "any",
              "backoff": { "table_ms": [], "initial_ms": 1 } }
        ] }));
        let classes = class_names();
        let problems = s.problems("executor.stack", false);
        let expected: Vec<(String, String)> = [
            ("executor.stack.layers[0].attempts", "0; a layer makes 1 to 32 calls (\"unlimited\" for no limit)".to_string()),
            ("executor.stack.layers[0].retry_on", format!("\"sometimes\"; expected \"uncertain\", \"any\", \"nothing\" or a list of error classes ({classes})")),
            ("executor.stack.layers[0].timeout_ms", "only the innermost layer sends, so only it has a client timeout; an outer layer bounds its call with deadline_ms".to_string()),
            ("executor.stack.layers[1].attempts", "\"executor.attempts\"; expected a number or \"unlimited\"".to_string()),
            ("executor.stack.layers[1].retry_on[1]", format!("\"teapot\" is not an error class; expected one of {classes}")),
            ("executor.stack.layers[1].backoff.factor", "must be at least 1 (1: every wait the same)".to_string()),
            ("executor.stack.layers[1].backoff.cap_ms", "5 is below initial_ms 10".to_string()),
            ("executor.stack.layers[1].backoff.jitter", "multiplicative from 90 to 80 percent; expected min_percent <= max_percent <= 1000".to_string()),
            ("executor.stack.layers[1].deadline_ms", "must be at least 1; leave it out for no deadline".to_string()),
            ("executor.stack.layers[2].backoff.table_ms", "a table gives every wait; leave out initial_ms, factor and cap_ms".to_string()),
            ("executor.stack.layers[2].backoff.table_ms", "0 waits; a table has 1 to 64".to_string()),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b))
        .collect();
        assert_eq!(problems, expected);
        // A preset may name the shorthand's knobs.
        let knob = spec(
            json!({ "layers": [{ "name": "http", "attempts": "executor.attempts", "retry_on": "any" }] }),
        );
        assert!(knob.problems("layers", true).is_empty());
        let empty = spec(json!({ "layers": [] }));
        assert_eq!(
            empty.problems("executor.stack", false),
            [(
                "executor.stack.layers".to_string(),
                "0 layers; a stack has 1 to 16".to_string()
            )]
        );
    }

    #[test]
    fn the_named_sets_of_error_classes() {
        let named = |n: &str| Retries::Named(n.into()).classes("r").unwrap();
        assert_eq!(named("any"), ErrorClass::ALL);
        assert!(named("nothing").is_empty());
        assert_eq!(named("uncertain").len(), 7);
        for c in ErrorClass::ALL {
            let json = serde_json::to_value(c).unwrap();
            assert_eq!(
                json.as_str(),
                Some(c.name()),
                "the serde name is the file name"
            );
        }
    }
}

//! The designs that are policy only, as data: each file of `models/designs/` names which
//! calls share an operation record and the key the application binds to it (an
//! [`Application`] identity), the retry layers that run it ([`super::Stack`]), how the
//! stack gives up, and the guarantee with the assumptions it rests on.
//!
//! A layer's attempts are a number or a knob of the model's `executor` shorthand
//! (`executor.attempts`, `executor.layers.tool`, `executor.layers.queue`); every layer
//! waits the shorthand's backoff (`backoff_ms`, doubled per retry, at most
//! `max_backoff_ms`). The journal family is code ([`super::Journaled`]).

use std::hash::Hasher;
use std::sync::OnceLock;

use serde::Deserialize;

use super::context::ExecCtx;
use super::retrying::Identity;
use super::stack::{Stack, Stacked};
use super::{Assumption, Design, Executor, assumptions};
use crate::check::Property;
use crate::model::ExecutorModel;
use crate::model::stack::{Attempts, GiveUp, LayerSpec, StackSpec};
use crate::vocab::ids::{Key, OpId};
use crate::vocab::protocol::ToolCall;

/// Which calls share an operation record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationPer {
    /// A re-run of a tool call (the same call id) continues its operation; a new call,
    /// a replan among them, is a new operation.
    Call,
    /// Every call of the user's authorization (re-runs and replans) continues one
    /// operation.
    Authorization,
    /// Every call is a new operation, re-runs too.
    Issue,
}

/// The key the application binds to an operation when it is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplicationKey {
    None,
    /// A key never used before.
    Minted,
    /// A hash of the tenant, endpoint and arguments ([`argument_key`]).
    Arguments,
    /// The key of the tenant's conversation: an earlier operation's of the same tenant,
    /// if the journal holds one, else a new one.
    Thread,
}

/// The identity of a preset: which operation a call belongs to, and its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Application {
    pub per: OperationPer,
    pub key: ApplicationKey,
}

impl Identity for Application {
    /// Stateless: everything it knows is in the journal.
    fn fingerprint(&self, _h: &mut dyn std::hash::Hasher) -> bool {
        true
    }

    /// Stateless: nothing to forget.
    fn reset(&mut self) -> bool {
        true
    }

    /// Stateless: a copy is itself.
    fn copy(&self) -> Option<Self> {
        Some(*self)
    }

    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId {
        let known = match self.per {
            OperationPer::Call => ctx.journal_ref().find_by_call(call.call),
            OperationPer::Authorization => ctx.journal_ref().find_by_auth(call.auth),
            OperationPer::Issue => None,
        };
        if let Some(op) = known {
            return op;
        }
        let key = match self.key {
            ApplicationKey::None => None,
            ApplicationKey::Minted => Some(ctx.new_key()),
            ApplicationKey::Arguments => Some(argument_key(call)),
            ApplicationKey::Thread => {
                let thread = ctx
                    .journal_ref()
                    .iter()
                    .filter(|o| o.call().tenant == call.tenant)
                    .find_map(|o| o.key);
                Some(thread.unwrap_or_else(|| ctx.new_key()))
            }
        };
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal().create(call, key, worker, now)
    }
}

/// The key hashed from a call's tenant, endpoint and arguments: a fixed,
/// platform-independent hash, never a randomly keyed one, so that the same arguments give
/// the same key in every run.
pub fn argument_key(call: &ToolCall) -> Key {
    key_of(&[
        u64::from(call.tenant.0),
        u64::from(call.endpoint.0),
        call.params.0,
    ])
}

/// The key hashed from `words` (FNV-1a over their little-endian bytes).
pub fn key_of(words: &[u64]) -> Key {
    let mut h = crate::sim::hash::Fnv1a::new();
    for word in words {
        h.write(&word.to_le_bytes());
    }
    Key(h.finish())
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetFile {
    name: String,
    summary: String,
    notes: String,
    operation_per: OperationPer,
    application_key: ApplicationKey,
    layers: Vec<LayerSpec>,
    #[serde(default)]
    gives_up: GiveUp,
    guarantee: Vec<String>,
    assumptions: Vec<String>,
}

/// A design that is a preset: an [`Application`] identity run by a stack.
pub struct Preset {
    name: String,
    summary: String,
    notes: String,
    identity: Application,
    stack: StackSpec,
    guarantee: Vec<Property>,
    assumptions: Vec<String>,
}

impl Preset {
    /// Reads the preset file `text` (`file` names it in errors).
    fn parse(file: &str, text: &str) -> Result<Preset, String> {
        let f: PresetFile = serde_json::from_str(text).map_err(|e| format!("{file}: {e}"))?;
        let stack = StackSpec {
            layers: f.layers,
            gives_up: f.gives_up,
        };
        if let Some((field, problem)) = stack.problems("", true).into_iter().next() {
            return Err(format!("{file}: {field}: {problem}"));
        }
        let guarantee = f
            .guarantee
            .iter()
            .enumerate()
            .map(|(i, p)| {
                p.parse()
                    .map_err(|e| format!("{file}: guarantee[{i}]: {e}"))
            })
            .collect::<Result<Vec<Property>, String>>()?;
        for (i, a) in f.assumptions.iter().enumerate() {
            if assumptions::by_name(a).is_none() {
                return Err(format!(
                    "{file}: assumptions[{i}]: unknown assumption {a:?}; expected one of {}",
                    assumptions::NAMES.join(", ")
                ));
            }
        }
        Ok(Preset {
            name: f.name,
            summary: f.summary,
            notes: f.notes,
            identity: Application {
                per: f.operation_per,
                key: f.application_key,
            },
            stack,
            guarantee,
            assumptions: f.assumptions,
        })
    }

    /// Whether a layer takes its attempts from `knob` of the `executor` shorthand
    /// (`executor.attempts`, `executor.layers.tool`, `executor.layers.queue`).
    pub fn reads_knob(&self, knob: &str) -> bool {
        self.stack
            .layers
            .iter()
            .any(|l| matches!(&l.attempts, Attempts::Named(k) if k == knob))
    }

    /// What the preset's file says the design does, beyond its summary.
    pub fn notes(&self) -> &str {
        &self.notes
    }

    /// Its own stack under the model's `executor` section.
    pub fn stack(&self, config: &ExecutorModel) -> Stack {
        Stack::from_spec(&self.stack, config)
    }

    /// Its own stack as a model's `executor.stack` writes it under `config`: the knobs of
    /// the shorthand that its layers name resolved to their values. A model that gives it
    /// runs the preset exactly as one that does not.
    pub fn spec_in(&self, config: &ExecutorModel) -> StackSpec {
        let mut spec = self.stack.clone();
        for (l, resolved) in spec.layers.iter_mut().zip(&self.stack(config).layers) {
            if matches!(l.attempts, Attempts::Named(_)) {
                l.attempts = Attempts::Count(resolved.attempts);
            }
        }
        spec
    }

    /// The stack it runs under the model's `executor` section: the section's `stack` if it
    /// has one, else its own.
    pub fn stack_in(&self, config: &ExecutorModel) -> Stack {
        match config.stack_spec() {
            Some(given) => Stack::from_spec(&given, config),
            None => self.stack(config),
        }
    }
}

impl Design for Preset {
    fn name(&self) -> &str {
        &self.name
    }

    fn summary(&self) -> &str {
        &self.summary
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Stacked::with_stack(self.identity, self.stack_in(config)))
    }

    fn guarantee(&self) -> Vec<Property> {
        self.guarantee.clone()
    }

    fn assumptions(&self) -> Vec<Assumption> {
        self.assumptions
            .iter()
            .filter_map(|a| assumptions::by_name(a))
            .collect()
    }

    /// The client timeouts, deadlines and `Retry-After` maxima of the stack it runs (the
    /// shorthand's knobs are the model's, named already).
    fn time_thresholds(&self, config: &ExecutorModel) -> Vec<(crate::sim::Millis, &'static str)> {
        let mut out = Vec::new();
        for l in self.stack_in(config).layers {
            out.extend(l.timeout_ms.map(|t| (t, "a stack layer's timeout_ms")));
            out.extend(l.deadline_ms.map(|t| (t, "a stack layer's deadline_ms")));
            out.extend(
                l.retry_after
                    .map(|r| (r.max_ms, "a stack layer's retry_after.max_ms")),
            );
        }
        out
    }

    /// Its guarantee rests on its own layers.
    fn runs_model_stack(&self) -> bool {
        true
    }

    /// The stack reaches the world only through its context.
    fn parts(&self) -> crate::sim::Parts {
        crate::sim::Parts::EXECUTORS
    }

    /// Operations, calls and keys are compared for equality only.
    fn symmetric(&self) -> bool {
        true
    }

    /// An operation's times are never read: the stack counts attempts, and the
    /// first-sent moment it resends under is the provider's to compare.
    fn reads_settled_times(&self) -> bool {
        false
    }
}

/// The preset files of `models/designs/`, by name.
const FILES: [(&str, &str); 8] = [
    (
        "no_dedup",
        include_str!("../../models/designs/no_dedup.json"),
    ),
    (
        "same_key",
        include_str!("../../models/designs/same_key.json"),
    ),
    (
        "new_key_after_replan",
        include_str!("../../models/designs/new_key_after_replan.json"),
    ),
    (
        "key_per_attempt",
        include_str!("../../models/designs/key_per_attempt.json"),
    ),
    (
        "payload_hash_key",
        include_str!("../../models/designs/payload_hash_key.json"),
    ),
    (
        "layered_retries",
        include_str!("../../models/designs/layered_retries.json"),
    ),
    (
        "single_use_token",
        include_str!("../../models/designs/single_use_token.json"),
    ),
    (
        "thread_key",
        include_str!("../../models/designs/thread_key.json"),
    ),
];

/// Every design preset, read once. A bundled file that does not read is a defect of the
/// program, found by its tests: the message names the file and the field.
pub fn all() -> &'static [Preset] {
    static PRESETS: OnceLock<Vec<Preset>> = OnceLock::new();
    PRESETS.get_or_init(|| {
        crate::model::bundled::read_all("models/designs", &FILES, Preset::parse, |p: &Preset| {
            p.name.as_str()
        })
    })
}

/// The design preset called `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    all().iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::stack::{ErrorClass, RetryOn};
    use crate::model::stack::MAX_LAYERS;

    #[test]
    fn every_bundled_preset_reads() {
        let names: Vec<&str> = all().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, FILES.map(|(n, _)| n));
    }

    #[test]
    fn a_preset_file_that_does_not_read_is_refused_naming_the_field() {
        let good: serde_json::Value = serde_json::from_str(FILES[1].1).unwrap();
        let with = |path: &str, v: serde_json::Value| {
            let mut m = good.clone();
            *m.pointer_mut(path).unwrap() = v;
            Preset::parse("f.json", &m.to_string()).err().unwrap()
        };
        assert_eq!(
            with("/layers/0/attempts", serde_json::json!("executor.tries")),
            "f.json: layers[0].attempts: \"executor.tries\"; expected a number, \"unlimited\" or one of executor.attempts, executor.layers.tool, executor.layers.queue"
        );
        assert_eq!(
            with("/layers/0/attempts", serde_json::json!(0)),
            "f.json: layers[0].attempts: 0; a layer makes 1 to 32 calls (\"unlimited\" for no limit)"
        );
        let classes = "timeout, in_progress, server_error, inconclusive, mismatch, expired, refused, failed, throttled, request_timeout, connection_reset";
        assert_eq!(
            with("/layers/0/retry_on", serde_json::json!("sometimes")),
            format!(
                "f.json: layers[0].retry_on: \"sometimes\"; expected \"uncertain\", \"any\", \"nothing\" or a list of error classes ({classes})"
            )
        );
        assert_eq!(
            with(
                "/layers/0/retry_on",
                serde_json::json!(["timeout", "teapot"])
            ),
            format!(
                "f.json: layers[0].retry_on[1]: \"teapot\" is not an error class; expected one of {classes}"
            )
        );
        let too_many = serde_json::Value::Array(vec![good["layers"][0].clone(); MAX_LAYERS + 1]);
        assert_eq!(
            with("/layers", too_many),
            format!("f.json: layers: 17 layers; a stack has 1 to {MAX_LAYERS}")
        );
        assert!(
            with("/guarantee/0", serde_json::json!("no_such")).starts_with("f.json: guarantee[0]:")
        );
        assert!(
            with("/assumptions/0", serde_json::json!("no_such"))
                .starts_with("f.json: assumptions[0]: unknown assumption \"no_such\"")
        );
        assert_eq!(
            with("/layers", serde_json::json!([])),
            format!("f.json: layers: 0 layers; a stack has 1 to {MAX_LAYERS}")
        );
        let mut classes = good.clone();
        *classes.pointer_mut("/layers/0/retry_on").unwrap() =
            serde_json::json!(["timeout", "server_error"]);
        let p = Preset::parse("f.json", &classes.to_string()).unwrap();
        let retry_on = p.stack(&ExecutorModel::default()).layers[0].retry_on;
        assert_eq!(
            retry_on,
            RetryOn::of(&[ErrorClass::Timeout, ErrorClass::ServerError])
        );
        assert!(
            with("/layers/0/key", serde_json::json!("sometimes"))
                .starts_with("f.json: unknown variant `sometimes`"),
            "serde names the variants"
        );
    }

    #[test]
    fn the_attempts_of_a_layer_come_from_the_shorthand_or_the_file() {
        let config = ExecutorModel {
            attempts: 3,
            layers: crate::model::Layers { tool: 2, queue: 4 },
            ..ExecutorModel::default()
        };
        let attempts = |name| -> Vec<u32> {
            find(name)
                .unwrap()
                .stack(&config)
                .layers
                .iter()
                .map(|l| l.attempts)
                .collect()
        };
        assert_eq!(attempts("same_key"), [3]);
        assert_eq!(attempts("single_use_token"), [1]);
        assert_eq!(attempts("layered_retries"), [4, 2, 3]);
    }
}

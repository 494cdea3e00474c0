//! The model file: one scenario, read from JSON. Unknown fields are rejected everywhere.
//!
//! Durations are integer milliseconds of virtual time (`*_ms`); probabilities are
//! [`Ratio`]s; a [`Range`] is a constant or `{"min", "max"}` drawn uniformly.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

pub use super::designs::DesignList;
pub use super::provider::ProviderModel;
use super::range::Range;
use crate::sim::random::Generator;
use crate::sim::{Millis, Ratio};

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The JSON Schema the file follows (`"schema.json"` beside the bundled models), for
    /// editors; ignored by retrylab.
    #[serde(rename = "$schema", default, skip_serializing)]
    #[schemars(extend("default" = null), example = &"schema.json")]
    pub schema: Option<String>,
    /// The model's name, printed in tables and reports.
    #[schemars(example = &"ticket_lost_response")]
    pub name: String,
    /// What the scenario is about, in a sentence or two.
    #[serde(default)]
    pub description: String,
    /// A run stops at this virtual time; whatever is still open then is unresolved.
    #[schemars(example = 600_000)]
    pub horizon_ms: Millis,
    /// Designs compared when the command line names none: `"all"` (the default: every
    /// design the program knows, a program's own included, in the order `retrylab designs`
    /// lists them) or an array of their names.
    #[serde(rename = "designs", default)]
    pub design_list: DesignList,
    /// The names of the designs compared: [`Model::design_list`] resolved against the
    /// registry the model was read with (for `"all"`, every design of it, in its order).
    #[serde(skip)]
    pub designs: Vec<String>,
    /// Intents arriving over time.
    pub workload: WorkloadModel,
    /// The LLM planner's reaction to an error or an unknown outcome.
    pub agent: AgentModel,
    /// Settings of the executor, shared by every design of the model.
    #[serde(default)]
    #[schemars(example = json!({"attempts": 3, "timeout_ms": 5000}))]
    pub executor: ExecutorModel,
    /// The processes that run the executor.
    #[serde(default)]
    #[schemars(example = json!({"count": 2, "journal": "durable"}))]
    pub workers: WorkersModel,
    /// Each request and reply.
    #[serde(default)]
    #[schemars(example = json!({"latency_ms": {"min": 5, "max": 80}, "reply_loss": "1/10"}))]
    pub network: NetworkModel,
    /// The remote API and its idempotency contract: a preset name, a preset with changed
    /// knobs, or every knob written out.
    pub provider: ProviderModel,
    /// Faults that happen exactly, beside the random ones: an array of one-key objects.
    #[serde(default)]
    #[schemars(example = json!([{"drop_reply": {"attempt": 1}}, {"crash_worker": {"attempt": 2, "point": "after_send"}}]))]
    pub faults: Vec<Fault>,
    /// What must hold, or must be violated, per design: checked by `retrylab check`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("default" = {}), example = json!({"same_key": {"hold": ["no_duplicate"], "violate": ["no_false_failure"]}}))]
    pub expect: BTreeMap<String, Expectation>,
    /// A bound for exhaustive search: `retrylab explore` takes it as its default, and `check`
    /// also searches every schedule within it for each design with expectations, checking
    /// the properties the design must hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null), example = json!({"max_faults": 2}))]
    pub explore: Option<ExploreBound>,
    /// The random generator behind every seed: `splitmix64` (the default: cheap to start per
    /// seed) or `chacha8` (the earlier default, about 13 % more instructions per
    /// seed on one-intent models). A seed names a different run under each, so a `--seed`
    /// replay command is only good with the generator it was made with.
    #[serde(default, skip_serializing_if = "is_default_generator")]
    #[schemars(extend("default" = "splitmix64"), example = &"chacha8")]
    pub generator: Generator,
    /// The properties the designs of the registry the model was read with bring (not part
    /// of the file): `expect` may name them.
    #[serde(skip)]
    #[schemars(skip)]
    pub custom_properties: Vec<&'static crate::check::PropertyDef>,
    /// The entries of `designs` with an executor section of their own, by name: the design
    /// each configures, and the model it runs on (this one, with the entry's `executor`
    /// fields in place). See [`Model::for_design`].
    #[serde(skip)]
    #[schemars(skip)]
    pub configured: BTreeMap<String, Configuration>,
}

/// An entry of `designs` with its own executor configuration.
#[derive(Clone, Debug)]
pub struct Configuration {
    /// The design it configures (for an external executor, the entry itself).
    pub design: String,
    /// The model the entry runs on: the file's, with the entry's `executor` fields.
    pub model: Box<Model>,
    /// Its position in `designs`, and the `executor` fields it sets (for messages).
    pub index: usize,
    pub fields: Vec<String>,
}

impl Model {
    /// The random chooser of this model's generator for `seed`: what every command that runs
    /// a seed of the model draws from.
    pub fn chooser(&self, seed: u64) -> crate::sim::RandomChooser {
        crate::sim::RandomChooser::with_generator(self.generator, seed)
    }

    /// The model design `name` runs on: the file's, or for an entry of `designs` with an
    /// executor section of its own, the file's with that section's fields in place.
    pub fn for_design(&self, name: &str) -> &Model {
        self.configured.get(name).map_or(self, |c| &c.model)
    }
}

fn is_default_generator(g: &Generator) -> bool {
    *g == Generator::default()
}

/// The bound of an exhaustive search of a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExploreBound {
    /// Most non-default fault choices (a lost message, a crash, a provider error...) per run.
    #[schemars(example = 2)]
    pub max_faults: u32,
    /// Most runs of the search; it stops there, incomplete.
    #[serde(default = "default_explore_runs")]
    pub max_runs: u64,
}

/// The most faults per run an exhaustive search may take: beyond it the number of schedules
/// outgrows any budget (sample seeds with `run` instead).
pub const MAX_EXPLORE_FAULTS: u32 = 6;

fn default_explore_runs() -> u64 {
    1_000_000
}

/// Properties (named as in [`crate::check::Property`]) that one design must satisfy on every
/// seed (`hold`) or must violate on at least one (`violate`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    description = "Properties that one design must satisfy on every seed (`hold`) or must violate on at least one (`violate`): `no_duplicate`, `no_false_success`, `no_false_failure`, `no_merged_repeat`, `no_drift`, `no_masked_mismatch`, `no_false_resolution`, `resolved_within(T)`."
)]
pub struct Expectation {
    /// Properties that must hold on every seed.
    #[serde(default)]
    #[schemars(with = "Vec<super::json_schema::PropertyName>")]
    pub hold: Vec<String>,
    /// Properties that must be violated on at least one seed.
    #[serde(default)]
    #[schemars(with = "Vec<super::json_schema::PropertyName>")]
    pub violate: Vec<String>,
    /// Most runs of `check`'s exhaustive search of this design, in place of the model's
    /// `explore.max_runs` (`check --max-runs` overrides both); `explore --design` takes it as
    /// its default too. Needs the model's `explore` bound and a `hold` list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null), example = 5_000_000)]
    pub explore_max_runs: Option<u64>,
}

/// Intents arriving over time.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadModel {
    /// How many intents the user expresses in a run.
    #[schemars(example = 1)]
    pub intents: u32,
    /// Time between two consecutive intents.
    #[serde(default)]
    pub spacing_ms: Range,
    /// Probability that an intent genuinely repeats the previous one's parameters: the user
    /// really wants a second, identical resource.
    #[serde(default)]
    pub genuine_repeat: Ratio,
    /// A genuine repeat comes from the tenant whose turn it is, not from the tenant of the
    /// intent it repeats: another customer asking for exactly the same thing (identical
    /// arguments; each wants a resource of their own). No effect with one tenant.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub repeat_across_tenants: bool,
    /// Intents are spread over this many tenants, round-robin.
    #[serde(default = "one")]
    pub tenants: u32,
    /// Actions per intent, run in order (a ticket, then its notification...): each is its own
    /// tool call and its own effect; endpoint `k` for step `k`. A count, not a list.
    #[serde(default = "one")]
    #[schemars(example = 2)]
    pub steps: u32,
}

/// The LLM planner's reaction to an error or an unknown outcome.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentModel {
    /// How long the agent waits for a tool result before treating it as unknown.
    #[schemars(example = 60_000)]
    pub tool_timeout_ms: Millis,
    /// Most tool calls the agent makes for one intent; then it reports what it last saw.
    #[schemars(example = 3)]
    pub max_calls: u32,
    /// Time the agent takes before acting on a failure or an unknown outcome.
    #[serde(default)]
    pub think_ms: Range,
    /// Reaction weights after a definite failure.
    #[schemars(example = json!({"replan": 1}))]
    pub on_failure: Reaction,
    /// Reaction weights after an unknown outcome (timeout, indeterminate error).
    #[schemars(example = json!({"retry_same": 1, "replan": 1}))]
    pub on_unknown: Reaction,
    /// What a replan after a later step's failure re-plans: that step, or the whole workflow
    /// from its first step.
    #[serde(default)]
    pub on_step_failure: StepFailure,
    /// When a later step fails for good, undo the earlier steps with compensating actions
    /// (each a new tool call with its own failure modes) before telling the user.
    #[serde(default)]
    pub compensate: bool,
    /// Probability that a replan (`replan` or `change_args`) loses the user's authorization:
    /// a new session, a truncated context, the user asking again. The user then authorizes the
    /// action anew, and every call of the intent from then on carries a fresh authorization.
    /// A re-run of the same call (`retry_same`) keeps its authorization. 0 by default.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(extend("default" = "0/1"))]
    pub authorization_loss: Ratio,
}

fn is_false(b: &bool) -> bool {
    !b
}

fn is_zero(r: &Ratio) -> bool {
    r.is_zero()
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepFailure {
    /// Re-plan the failed step alone.
    #[default]
    RetryStep,
    /// Re-plan the whole workflow from its first step.
    RestartWorkflow,
}

/// Relative weights of the agent's possible reactions; at least one must be non-zero.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reaction {
    /// Re-run the same tool call (same call id).
    #[serde(default)]
    pub retry_same: u32,
    /// Plan again: a fresh tool call with the same arguments.
    #[serde(default)]
    pub replan: u32,
    /// Plan again with changed arguments (parameter drift).
    #[serde(default)]
    pub change_args: u32,
    /// Tell the user it failed.
    #[serde(default)]
    pub give_up: u32,
    /// Tell the user the outcome is unresolved and ask them.
    #[serde(default)]
    pub ask_user: u32,
}

impl Reaction {
    pub fn weights(&self) -> [u32; 5] {
        [
            self.retry_same,
            self.replan,
            self.change_args,
            self.give_up,
            self.ask_user,
        ]
    }
}

/// Settings of the executor, shared by every design of the model; each design uses the ones
/// that apply to it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ExecutorModel {
    /// Creates per agent call before the executor reports to the agent (1 = no transport
    /// retry). For `layered_retries` this is the HTTP layer.
    pub attempts: u32,
    /// Wait before the n-th retry: `backoff_ms * 2^(n-1)`, at most `max_backoff_ms`.
    pub backoff_ms: Millis,
    /// The longest wait between two retries.
    pub max_backoff_ms: Millis,
    /// Client timeout of one send; a reply after it is discarded.
    pub timeout_ms: Millis,
    /// Journal designs: from an operation's creation, the time after which it stops acting
    /// and escalates (reported unknown). Absent: no deadline.
    pub deadline_ms: Option<Millis>,
    /// Reconciling designs: how to read an outcome back (`by_key`, `by_resource_id`,
    /// `search`); it must be a lookup the provider offers.
    pub reconcile: Lookup,
    /// Reconciling designs: reads per agent call before reporting unknown.
    pub reads: u32,
    /// Reconciling designs: a "not found" is trusted only this long after the last send
    /// (the longest visibility lag the design assumes).
    pub visibility_bound_ms: Millis,
    /// Journal designs: wait between two status polls of accepted (202) work.
    pub poll_ms: Millis,
    /// Lease designs: how long a claim on an operation lasts.
    pub lease_ms: Millis,
    /// Journal designs: every this often, a worker takes over operations that have not
    /// changed for as long (a recovery sweeper). Absent: only a restarted worker recovers,
    /// and only its own operations.
    pub sweep_ms: Option<Millis>,
    /// `layered_retries`: retry loops above HTTP.
    pub layers: Layers,
    /// Journal designs: how long the operator believes the provider keeps a key. A key whose
    /// first send is that old (less one client timeout, so that the request still arrives
    /// in time) is never sent again without a read-back that decides; the operation is
    /// escalated instead. Absent: keys are believed to be kept forever.
    pub assumed_retention_ms: Option<Millis>,
    /// The retry layers of the designs that are stacks (the design presets: `retrylab
    /// designs`), outermost first, replacing each preset's own layers; the design keeps
    /// which calls share an operation and the key the application binds to it
    /// (docs/executor-stacks.md). Absent: each preset's layers, with the shorthand above
    /// (`attempts`, `backoff_ms`, `max_backoff_ms`, `layers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub stack: Option<super::stack::StackSpec>,
    /// An executor preset (`retrylab executors`: a framework's, an SDK's or a retry
    /// library's layers, with their sources) taken as `stack`, or a list of them stacked,
    /// outermost first (`["langgraph_py_sdk", "stripe_client_retries"]`: a LangGraph
    /// node retry around stripe-python; the stack gives up as the first one does). Absent:
    /// `stack`, or the designs' own layers.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null), example = &"stripe_client_retries")]
    pub preset: Option<PresetRef>,
    /// Changes to the preset's layers, by layer name (`retrylab executors` lists them): each
    /// field given replaces the layer's, e.g. `{"sdk": {"attempts": 5}}`. Only with
    /// `preset`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("default" = {}), example = json!({"anthropic": {"retry_after": {"max_ms": 60000, "above": "backoff"}}}))]
    pub overrides: BTreeMap<String, super::stack::LayerOverride>,
}

/// `executor.preset`: one executor preset, or several stacked, outermost first.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PresetRef {
    /// One preset's stack.
    One(String),
    /// The presets' layers, the first one's outermost.
    Stacked(Vec<String>),
}

impl PresetRef {
    /// The presets it names, outermost first.
    pub fn names(&self) -> Vec<&str> {
        match self {
            PresetRef::One(name) => vec![name.as_str()],
            PresetRef::Stacked(names) => names.iter().map(String::as_str).collect(),
        }
    }
}

impl Default for ExecutorModel {
    fn default() -> Self {
        Self {
            attempts: 1,
            backoff_ms: 0,
            max_backoff_ms: 60_000,
            timeout_ms: default_timeout_ms(),
            deadline_ms: None,
            reconcile: Lookup::ByKey,
            reads: 5,
            visibility_bound_ms: 0,
            poll_ms: 1_000,
            lease_ms: 30_000,
            sweep_ms: None,
            layers: Layers::default(),
            assumed_retention_ms: None,
            stack: None,
            preset: None,
            overrides: BTreeMap::new(),
        }
    }
}

impl ExecutorModel {
    /// The stack the design presets run under this section: `stack`, or the executor
    /// preset's; `None`: their own layers.
    pub fn stack_spec(&self) -> Option<Cow<'_, super::stack::StackSpec>> {
        if let Some(stack) = &self.stack {
            return Some(Cow::Borrowed(stack));
        }
        let presets = self
            .preset
            .as_ref()?
            .names()
            .into_iter()
            .map(super::executor_preset::find)
            .collect::<Option<Vec<_>>>()?;
        if let [preset] = presets[..]
            && self.overrides.is_empty()
        {
            return Some(Cow::Borrowed(&preset.stack));
        }
        let stacked = super::stack::StackSpec {
            layers: presets
                .iter()
                .flat_map(|p| p.stack.layers.clone())
                .collect(),
            gives_up: presets.first()?.stack.gives_up,
        };
        Some(Cow::Owned(stacked.with_overrides(&self.overrides)))
    }

    /// Wait before retry number `n` (1-based): doubling from `backoff_ms`, capped.
    pub fn backoff_before(&self, n: u32) -> Millis {
        let doublings = n.saturating_sub(1).min(31);
        self.backoff_ms
            .saturating_mul(1 << doublings)
            .min(self.max_backoff_ms)
    }
}

/// Independent retry loops of `layered_retries`, each counting whole runs of the layer below.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Layers {
    /// The tool wrapper re-invokes the HTTP call (with a fresh request and key).
    pub tool: u32,
    /// The job queue re-runs the tool job.
    pub queue: u32,
}

impl Default for Layers {
    fn default() -> Self {
        Self { tool: 1, queue: 1 }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Durability {
    /// The journal survives a worker crash.
    #[default]
    Durable,
    /// A crashed worker loses the operations it owned.
    Volatile,
}

/// The processes that run the executor.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkersModel {
    /// How many worker processes share the executor's work.
    #[serde(default = "one")]
    pub count: u32,
    /// Time a crashed worker takes to come back.
    #[serde(default = "default_restart_ms")]
    pub restart_delay_ms: Millis,
    /// Whether the journal survives a worker crash (`durable`) or not (`volatile`).
    #[serde(default)]
    pub journal: Durability,
    /// Random crash probability at each crash point.
    #[serde(default)]
    pub crash: CrashModel,
    /// Random crashes stop after this many in a run (scripted crashes always happen).
    #[serde(default = "one")]
    pub max_crashes: u32,
    /// A job queue's visibility timeout: a call not answered this long after the agent made
    /// it is delivered again, to one of the workers polling the queue then (up and not
    /// frozen by a pause; the schedule picks which, the same one or another), and again
    /// each time this passes while the agent still waits (at-least-once delivery: SQS,
    /// Celery with `acks_late`). Absent: a call goes to one worker, and a crashed worker
    /// gets its calls again when it restarts. External executors only, for now: the
    /// built-in designs share one journal between workers and run without it.
    #[serde(default)]
    pub redelivery_ms: Option<Millis>,
}

impl Default for WorkersModel {
    fn default() -> Self {
        Self {
            count: 1,
            restart_delay_ms: default_restart_ms(),
            journal: Durability::Durable,
            crash: CrashModel::default(),
            max_crashes: 1,
            redelivery_ms: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrashModel {
    /// Probability of a crash after the operation is recorded as dispatched, before the
    /// request leaves.
    #[serde(default)]
    pub before_dispatch: Ratio,
    /// Probability of a crash after the request left, before its reply.
    #[serde(default)]
    pub after_send: Ratio,
    /// Probability of a crash after the reply arrived, before it is recorded.
    #[serde(default)]
    pub after_reply: Ratio,
    /// Probability of a crash at a storage commit of an external executor: an `fsync` or
    /// `fdatasync` of a file of the run's storage (a SQLite commit makes two or three) during a
    /// turn. The process dies before the call returns; what it wrote before stays, so a crash
    /// can fall between two commits of one turn. Built-in designs have no storage commits.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(extend("default" = "0/1"))]
    pub at_commit: Ratio,
    /// Probability that a crash (at any point) is the loss of the worker's machine or
    /// container, not only of its process: in the worker's directory each file goes back to
    /// what its last commit (`fsync`, `fdatasync`) made durable, and a file never committed is
    /// left empty (names made, renamed or removed stay as they were). A fault of its own,
    /// drawn at each crash. The run's directory (a shared volume) keeps every write. External
    /// executors only; 0 (a process death, whose writes the kernel keeps) by default.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(extend("default" = "0/1"))]
    pub machine_loss: Ratio,
}

impl CrashModel {
    /// Whether any random crash is possible (a crash point with a probability above 0).
    pub fn any(&self) -> bool {
        [
            self.before_dispatch,
            self.after_send,
            self.after_reply,
            self.at_commit,
        ]
        .iter()
        .any(|r| !r.is_zero())
    }
}

crate::sim::named_enum! {
    /// Named points at which a worker can crash.
    #[derive(
        Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
    )]
    #[serde(rename_all = "snake_case")]
    pub enum CrashPoint {
        /// The operation is recorded as dispatched but the request has not left.
        BeforeDispatch => "before_dispatch",
        /// The request has left; the worker dies before its reply.
        AfterSend => "after_send",
        /// The reply arrived but the worker dies before recording it.
        AfterReply => "after_reply",
        /// An external executor's process commits a file of the run's storage (an `fsync`);
        /// it dies before the call returns. Not a point of an attempt: scripted as
        /// `crash_at_commit`.
        AtCommit => "at_commit",
    }
}

impl CrashPoint {}

/// Each request and reply.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkModel {
    /// One-way latency.
    #[serde(default = "default_latency")]
    pub latency_ms: Range,
    /// Probability that a request is lost on its way to the provider.
    #[serde(default)]
    pub request_loss: Ratio,
    /// Probability that a reply is lost on its way back (after the provider processed it).
    #[serde(default)]
    pub reply_loss: Ratio,
    /// Probability that a request is delivered twice.
    #[serde(default)]
    pub duplicate: Ratio,
    /// Probability that the connection is reset after the provider answered, instead of the
    /// reply arriving: the client learns at once, when the reply would have come, that it
    /// has no answer (`reset` to an external executor). The effect may exist.
    #[serde(default)]
    pub connection_reset: Ratio,
}

impl Default for NetworkModel {
    fn default() -> Self {
        Self {
            latency_ms: default_latency(),
            request_loss: Ratio::ZERO,
            reply_loss: Ratio::ZERO,
            duplicate: Ratio::ZERO,
            connection_reset: Ratio::ZERO,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[derive(Default)]
pub enum Dedup {
    /// Every request is a new effect.
    #[default]
    None,
    /// Requests carrying a key already seen (in scope, within retention) are deduplicated.
    ByKey,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyScope {
    /// One key space for every tenant and endpoint.
    Global,
    /// Per tenant (account).
    #[default]
    Tenant,
    /// Per tenant and endpoint.
    TenantEndpoint,
    /// Per tenant and region: the same key sent to another region executes again (EC2).
    TenantRegion,
}

/// Where the provider takes the idempotency key from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// The key the caller sends (a header or body field).
    #[default]
    Client,
    /// A hash of the request's parameters, whatever the caller sends (AWS Lambda Powertools):
    /// identical arguments are one request, genuine repeats included.
    Payload,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetentionFrom {
    /// From the first request under the key reaching the provider.
    #[default]
    FirstRequest,
    /// From the completion of the work that wrote the record (DynamoDB, Powertools).
    Completion,
    /// From the time the client says it first sent the request, carried on every retry
    /// (Azure's `Repeatability-First-Sent`): a retry sent later than the window after the
    /// first send is outside it even when no earlier request ever arrived.
    ClientFirstSent,
}

/// What a lookup by key can see once the provider no longer deduplicates under the key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyLifetime {
    /// The key is a record of its own: a lookup finds the resource only while the record is
    /// kept (not expired or pruned, and not deleted because its outcome is not stored).
    #[default]
    Record,
    /// The key is an attribute of the resource: a lookup by key finds the resource as long
    /// as the resource exists, whatever became of the deduplication record (EC2's
    /// `ClientToken` in `DescribeInstances`, a Calendar event id).
    Resource,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AfterExpiry {
    /// The expired key is forgotten: the request is processed as new (Stripe).
    #[default]
    NewRequest,
    /// The request is refused (Azure's 412).
    Reject,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Atomicity {
    /// Key record and effect commit together; a crash leaves neither.
    #[default]
    Atomic,
    /// The key record is written first; a crash leaves a key without an effect.
    KeyThenEffect,
    /// The effect is written first and the key only at completion: concurrent same-key
    /// requests both execute, and a crash leaves an effect without a key.
    EffectThenKey,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InFlight {
    /// 409 Conflict, retryable; not stored.
    #[default]
    Reject,
    /// Held until the first finishes, then answered with its result.
    Wait,
    /// Processed independently: a race that can commit twice.
    ProcessBoth,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mismatch {
    /// 422 (or 400): the key was used with other parameters.
    #[default]
    Reject,
    /// Answer as for the original request, ignoring the new parameters.
    ReturnOriginal,
    /// Process it as a new request.
    TreatAsNew,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StoredOutcomes {
    /// Every final result is stored and replayed, 5xx included (Stripe v1).
    #[default]
    All,
    /// Only 2xx; a failed key is forgotten and the retry re-executes.
    SuccessOnly,
    /// 2xx and 4xx; a 5xx is re-executed (Azure repeatable requests).
    SuccessAndClientErrors,
    /// A record exists if and only if the effect committed: the key and the mutation are one
    /// transaction, so work that failed before committing leaves nothing and a retry
    /// executes, while a 5xx sent after the commit keeps the record (EC2).
    Committed,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplayMode {
    /// The stored status and body.
    #[default]
    StoredResponse,
    /// The current state of the resource the key created (AWS, PayPal).
    CurrentState,
    /// A bare "already exists" without the resource.
    AlreadyExists,
    /// Success returns the resource; failed or partial work is executed again to completion
    /// (Stripe API v2): a stored 5xx whose effect committed returns that effect, one whose
    /// effect did not commit runs again.
    ReexecuteFailed,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Lookup {
    /// No way to read an outcome back.
    #[default]
    None,
    /// A read by idempotency key.
    ByKey,
    /// A read by the resource id the create returned (known only if its reply arrived).
    ByResourceId,
    /// A search by the request's parameters.
    Search,
}

/// A fault that happens exactly. `attempt` names a create request by its number, counted
/// from 1 in the order executors ask to send creates, across the whole run; reads and status
/// polls are not counted.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[schemars(example = json!({"drop_reply": {"attempt": 1}}), example = json!({"crash_worker": {"attempt": 1, "point": "after_send"}}), example = json!({"pause": {"component": "provider", "from_ms": 0, "duration_ms": 5000}}))]
pub enum Fault {
    /// The request of this attempt never reaches the provider.
    DropRequest {
        /// The create request, numbered from 1 across the run.
        #[schemars(example = 1)]
        attempt: u32,
    },
    /// The reply to this attempt is lost (after the provider processed it).
    DropReply {
        /// The create request, numbered from 1 across the run.
        #[schemars(example = 1)]
        attempt: u32,
    },
    /// The worker handling this attempt crashes at `point`.
    CrashWorker {
        /// The create request, numbered from 1 across the run.
        #[schemars(example = 1)]
        attempt: u32,
        /// Where the worker crashes: `before_dispatch`, `after_send` or `after_reply`.
        #[schemars(example = &"after_send")]
        point: CrashPoint,
        /// Only if this worker handles the attempt.
        #[serde(default)]
        worker: Option<u32>,
    },
    /// The worker that makes this storage commit crashes there (an external executor's
    /// `fsync` of a file of the run's storage during a turn, counted from 1 across the run in
    /// the order they happen): what it wrote before stays, the commit does not return.
    CrashAtCommit {
        /// The storage commit, numbered from 1 across the run.
        #[schemars(example = 2)]
        commit: u32,
        /// Only if this worker makes the commit.
        #[serde(default)]
        worker: Option<u32>,
    },
    /// The provider crashes while processing this attempt.
    CrashProvider {
        /// The create request, numbered from 1 across the run.
        #[schemars(example = 1)]
        attempt: u32,
    },
    /// Processing of this attempt takes exactly this long (a delayed success).
    SlowProcessing {
        /// The create request, numbered from 1 across the run.
        #[schemars(example = 1)]
        attempt: u32,
        /// How long the provider processes it.
        #[schemars(example = 30_000)]
        ms: Millis,
    },
    /// This attempt is sent to another region (a client failover).
    Reroute {
        /// The create request, numbered from 1 across the run.
        #[schemars(example = 1)]
        attempt: u32,
        /// The region it is sent to instead.
        #[schemars(example = 1)]
        region: u32,
    },
    /// The provider refuses this create on its merits (400); nothing is done.
    Reject {
        /// The create request, numbered from 1 across the run.
        #[schemars(example = 1)]
        attempt: u32,
    },
    /// A component is frozen: its events in `[from_ms, from_ms + duration_ms)` wait until
    /// the end of the pause.
    Pause {
        /// What is frozen: `agent`, `executor` or `provider`.
        #[schemars(example = &"provider")]
        component: Paused,
        /// When the pause starts.
        #[schemars(example = 0)]
        from_ms: Millis,
        /// How long it lasts.
        #[schemars(example = 5_000)]
        duration_ms: Millis,
        /// With `component: executor`: only this worker stalls (a long GC pause, a frozen
        /// VM), while the others go on.
        #[serde(default)]
        worker: Option<u32>,
    },
}

impl Fault {
    /// The fault as the model file names it, in short:
    /// `crash_worker {attempt: 7, point: after_send}`.
    pub fn describe(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or_default();
        let Some((kind, fields)) = value.as_object().and_then(|o| o.iter().next()) else {
            return value.to_string();
        };
        let fields: Vec<String> = fields
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v.as_str() {
                Some(s) => format!("{k}: {s}"),
                None => format!("{k}: {v}"),
            })
            .collect();
        format!("{kind} {{{}}}", fields.join(", "))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Paused {
    /// The agent (LLM planner).
    Agent,
    /// The executor's workers.
    Executor,
    /// The provider.
    Provider,
}

fn one() -> u32 {
    1
}
fn default_timeout_ms() -> Millis {
    5_000
}
fn default_restart_ms() -> Millis {
    1_000
}
fn default_latency() -> Range {
    Range::constant(10)
}
pub(crate) fn default_processing() -> Range {
    Range::constant(50)
}

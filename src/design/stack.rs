//! Executor stacks: the retry layers of an executor as data, and the one loop that runs them.
//!
//! Most of an executor is configured, not written: an agent framework's retry policy around
//! a tool wrapper around an SDK with its own retries, each layer with its attempts, backoff,
//! the errors it retries and the key it sends. A [`Stack`] lists those layers outermost
//! first; [`Stacked`] runs it for one worker:
//!
//! - an error from below goes up the stack until a layer retries it: the innermost layer
//!   whose rule names the error's [`ErrorClass`] and that has attempts left. A retry at a
//!   layer calls the layer below anew, whose own counts start again;
//! - the key of a send is passed down the stack: past the outermost layer it is the
//!   application's (what the design's [`Identity`] binds to the operation: none, the tool
//!   call's, the authorization's, the arguments' hash); each layer passes it on
//!   ([`KeyMode::Inherited`]), drops it ([`KeyMode::None`]), replaces it on every send
//!   ([`KeyMode::PerAttempt`]), or passes it on if it has one and otherwise mints its own
//!   when it is called, reused by its own retries ([`KeyMode::PerCall`], as an SDK sends a
//!   key it is given and generates one only when it is not);
//! - when no layer retries, the stack gives up ([`GiveUp`]): honestly as unknown, or as a
//!   failed tool result, the way a generic wrapper turns an exception into an error. A
//!   definite refusal (4xx) is a failure either way;
//! - a retry timer belongs to one call of the stack: if the agent calls again before it is
//!   due, it does nothing.
//!
//! The operation record, its scratch state and its recovery after a crash are the journal's,
//! as for every design. What a crash does to a call under way is each layer's
//! [`Redelivery`]: the restarted worker re-runs, for every operation it still owed an
//! answer, the call of the outermost layer that is redelivered (anew, as a retry of it, or
//! resumed), and a volatile journal forgets them. The application's key is the journal's
//! and never changes; what the layers mint is in memory, save for the count and key of a
//! layer redelivered with them, which the journal keeps.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use super::Executor;
use super::context::ExecCtx;
use super::journal::OpState;
use super::retrying::{Identity, Verdict, classify};
use crate::model::ExecutorModel;
use crate::model::stack::{
    AboveMax, Attempts, BackoffSpec, KNOBS, LayerSpec, RetryAfterSpec, UNLIMITED,
};
pub use crate::model::stack::{
    ErrorClass, GiveUp, Jitter, KeyMode, MAX_LAYERS, Redelivery, StackSpec,
};
use crate::sim::Millis;
use crate::vocab::ids::{AttemptId, Key, OpId};
use crate::vocab::protocol::{Reply, Request, Response, ToolCall, ToolResult};

impl ErrorClass {
    /// The class of a response that is not a success; `None` for a success.
    pub fn of(response: Response) -> Option<ErrorClass> {
        Some(match response {
            Response::Timeout => ErrorClass::Timeout,
            Response::Reset => ErrorClass::ConnectionReset,
            Response::Reply(reply) => match reply {
                Reply::Created { .. }
                | Reply::Found { .. }
                | Reply::AlreadyExists
                | Reply::Accepted { .. } => return None,
                Reply::InProgress => ErrorClass::InProgress,
                Reply::ServerError { .. } => ErrorClass::ServerError,
                Reply::NotFound | Reply::Pending => ErrorClass::Inconclusive,
                Reply::Mismatch => ErrorClass::Mismatch,
                Reply::Expired => ErrorClass::Expired,
                Reply::MissingKey | Reply::Unsupported | Reply::Rejected => ErrorClass::Refused,
                Reply::OperationFailed => ErrorClass::Failed,
                Reply::Throttled { .. } => ErrorClass::Throttled,
                Reply::RequestTimeout => ErrorClass::RequestTimeout,
            },
        })
    }

    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// The errors a layer retries: a set of [`ErrorClass`]es.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RetryOn(u16);

impl RetryOn {
    /// Nothing: the layer makes one call and passes every error up.
    pub const NOTHING: RetryOn = RetryOn(0);
    /// What leaves the outcome open and may go away: a timeout, a 409, a 5xx, an
    /// inconclusive answer. What an honest transport loop retries.
    pub const UNCERTAIN: RetryOn = RetryOn(
        ErrorClass::Timeout.bit()
            | ErrorClass::InProgress.bit()
            | ErrorClass::ServerError.bit()
            | ErrorClass::Inconclusive.bit()
            | ErrorClass::Throttled.bit()
            | ErrorClass::RequestTimeout.bit()
            | ErrorClass::ConnectionReset.bit(),
    );
    /// Every error, as a generic "retry on exception" does.
    pub const ANY: RetryOn = RetryOn((1 << ErrorClass::ALL.len()) - 1);

    /// The set of `classes`.
    pub fn of(classes: &[ErrorClass]) -> RetryOn {
        RetryOn(classes.iter().fold(0, |b, c| b | c.bit()))
    }

    pub fn contains(self, class: ErrorClass) -> bool {
        self.0 & class.bit() != 0
    }
}

/// The waits between one layer's attempts: before its `n`-th retry,
/// `initial_ms * factor^(n-1)`, at most `cap_ms` (or the `n`-th entry of `table_ms`, the
/// last one repeated), then spread by its jitter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Backoff {
    pub initial_ms: Millis,
    pub factor: u32,
    pub cap_ms: Millis,
    /// Waits written out; empty: the exponential ones.
    pub table_ms: Vec<Millis>,
    pub jitter: Jitter,
    /// No wait shorter than this, after the jitter.
    pub floor_ms: Millis,
    /// No wait longer than this, after the jitter (`Millis::MAX`: none).
    pub ceiling_ms: Millis,
}

impl Backoff {
    /// `initial_ms` times `factor` per retry, at most `cap_ms`, without jitter.
    pub fn exponential(initial_ms: Millis, factor: u32, cap_ms: Millis) -> Backoff {
        Backoff {
            initial_ms,
            factor,
            cap_ms,
            table_ms: Vec::new(),
            jitter: Jitter::None,
            floor_ms: 0,
            ceiling_ms: Millis::MAX,
        }
    }

    /// The wait before retry number `n` (1-based), before jitter.
    pub fn before(&self, n: u32) -> Millis {
        if let Some(last) = self.table_ms.last() {
            let i = (n.saturating_sub(1) as usize).min(self.table_ms.len() - 1);
            return self.table_ms.get(i).copied().unwrap_or(*last);
        }
        let steps = n.saturating_sub(1).min(31);
        self.initial_ms
            .saturating_mul(u64::from(self.factor).saturating_pow(steps))
            .min(self.cap_ms)
    }

    /// The shortest and longest wait before retry number `n`: the wait spread by the
    /// jitter.
    pub fn range(&self, n: u32) -> (Millis, Millis) {
        let wait = self.before(n);
        let percent = |p: u32| wait.saturating_mul(u64::from(p)) / 100;
        let floor = |(lo, hi): (Millis, Millis)| {
            let bound = |w: Millis| w.min(self.ceiling_ms).max(self.floor_ms);
            (bound(lo), bound(hi))
        };
        floor(match self.jitter {
            Jitter::None => (wait, wait),
            Jitter::Full => (0, wait),
            Jitter::Equal => (wait / 2, wait),
            Jitter::Additive { max_ms } => (wait, wait.saturating_add(max_ms)),
            Jitter::Multiplicative {
                min_percent,
                max_percent,
            } => (percent(min_percent), percent(max_percent)),
        })
    }
}

/// One retry layer of a stack.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layer {
    /// What the layer is (`http`, `tool`, `queue`, a framework's name), for messages.
    pub name: String,
    /// Calls of the layer below per call of this layer, the first included; `u32::MAX`:
    /// without limit.
    pub attempts: u32,
    pub backoff: Backoff,
    /// The backoff after an error of a class, in place of `backoff` (counted by the same
    /// retries).
    pub backoff_on: Vec<(ErrorClass, Backoff)>,
    pub retry_on: RetryOn,
    pub key: KeyMode,
    pub redelivery: Redelivery,
    /// The client timeout of each send (read from the innermost layer); `None`: the
    /// model's `executor.timeout_ms`.
    pub timeout_ms: Option<Millis>,
    /// No retry by this layer once its current call has lasted this long.
    pub deadline_ms: Option<Millis>,
    /// A 429's `Retry-After` up to this, waited instead of the backoff; above it, as the
    /// spec says. `None`: the header is ignored.
    pub retry_after: Option<RetryAfterSpec>,
    /// The should-retry header it follows over `retry_on` (`true`: retry, `false`: do
    /// not), by name, compared without case; `None`: it reads none.
    pub should_retry_header: Option<String>,
}

impl Layer {
    /// The backoff it waits after an error of `class`.
    pub fn backoff_after(&self, class: ErrorClass) -> &Backoff {
        self.backoff_on
            .iter()
            .find(|(c, _)| *c == class)
            .map_or(&self.backoff, |(_, b)| b)
    }

    /// A layer with no client timeout or deadline of its own.
    pub fn new(
        name: &str,
        attempts: u32,
        backoff: Backoff,
        retry_on: RetryOn,
        key: KeyMode,
        redelivery: Redelivery,
    ) -> Layer {
        Layer {
            name: name.into(),
            attempts,
            backoff,
            backoff_on: Vec::new(),
            retry_on,
            key,
            redelivery,
            timeout_ms: None,
            deadline_ms: None,
            retry_after: None,
            should_retry_header: None,
        }
    }
}

/// Retry layers, outermost first, and how the stack gives up.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stack {
    pub layers: Vec<Layer>,
    pub gives_up: GiveUp,
}

impl Stack {
    /// The shorthand of a model's `executor` section for a design with one transport loop:
    /// `executor.attempts` sends, waiting `backoff_ms` doubled each retry up to
    /// `max_backoff_ms`, retrying what leaves the outcome open, with the key `key`, and
    /// giving up as unknown.
    pub fn transport(config: &ExecutorModel, key: KeyMode) -> Stack {
        Stack {
            layers: vec![Layer::new(
                "http",
                config.attempts,
                shorthand_backoff(config),
                RetryOn::UNCERTAIN,
                key,
                Redelivery::Anew,
            )],
            gives_up: GiveUp::Unknown,
        }
    }

    /// The stack `spec` describes under the model's `executor` section (the shorthand's
    /// backoff where a layer gives none, and its knobs where a preset layer names them).
    /// `spec` is one that reads without problems ([`StackSpec::problems`]).
    pub fn from_spec(spec: &StackSpec, config: &ExecutorModel) -> Stack {
        Stack {
            layers: spec.layers.iter().map(|l| layer_of(l, config)).collect(),
            gives_up: spec.gives_up,
        }
    }
}

fn layer_of(l: &LayerSpec, config: &ExecutorModel) -> Layer {
    let attempts = match &l.attempts {
        Attempts::Count(n) => *n,
        Attempts::Named(n) if n == UNLIMITED => u32::MAX,
        Attempts::Named(n) => match n.as_str() {
            "executor.layers.tool" => config.layers.tool,
            "executor.layers.queue" => config.layers.queue,
            knob => {
                debug_assert!(KNOBS.contains(&knob), "checked when read: {knob}");
                config.attempts
            }
        },
    };
    let backoff = match &l.backoff {
        None => shorthand_backoff(config),
        Some(b) => backoff_of(b, config),
    };
    let backoff_on = l
        .backoff_on
        .iter()
        .filter_map(|(name, b)| {
            let class = ErrorClass::ALL.into_iter().find(|c| c.name() == name)?;
            Some((class, backoff_of(b, config)))
        })
        .collect();
    let classes = l.retry_on.classes("retry_on").unwrap_or_default();
    Layer {
        name: l.name.clone(),
        attempts,
        backoff,
        backoff_on,
        retry_on: RetryOn::of(&classes),
        key: l.key,
        redelivery: l.redelivery,
        timeout_ms: l.timeout_ms,
        deadline_ms: l.deadline_ms,
        retry_after: l.retry_after,
        should_retry_header: l.should_retry_header.clone(),
    }
}

fn backoff_of(b: &BackoffSpec, config: &ExecutorModel) -> Backoff {
    Backoff {
        initial_ms: b.initial_ms.unwrap_or(config.backoff_ms),
        factor: b.factor,
        cap_ms: b.cap_ms.unwrap_or(config.max_backoff_ms),
        table_ms: b.table_ms.clone().unwrap_or_default(),
        jitter: b.jitter.clone(),
        floor_ms: b.floor_ms.unwrap_or(0),
        ceiling_ms: b.ceiling_ms.unwrap_or(Millis::MAX),
    }
}

fn shorthand_backoff(config: &ExecutorModel) -> Backoff {
    Backoff::exponential(config.backoff_ms, 2, config.max_backoff_ms)
}

/// A layer's retry timer: the operation, its call generation (so that a retry timer of an
/// earlier call of the stack is recognised as stale) and the retrying layer. Its tag is
/// written by [`Retry::tag`] and read by [`Retry::of`], the one place that knows the bits:
/// the operation in the high half, then 24 bits of generation, then 8 of layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Retry {
    op: OpId,
    generation: u32,
    layer: u8,
}

const LAYER_BITS: u32 = 8;
const GENERATION_BITS: u32 = 24;

impl Retry {
    fn tag(self) -> u64 {
        u64::from(self.op.0) << 32
            | u64::from(self.generation) << LAYER_BITS
            | u64::from(self.layer)
    }

    fn of(tag: u64) -> Retry {
        Retry {
            op: OpId((tag >> 32) as u32),
            generation: ((tag >> LAYER_BITS) & ((1 << GENERATION_BITS) - 1)) as u32,
            layer: tag as u8,
        }
    }
}

/// What a stack keeps in memory for one operation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Calls {
    /// The calls each layer but the innermost has made of the layer below in its current
    /// call. The innermost layer's sends are the journal's `attempts`.
    counts: Vec<u32>,
    /// The key each [`KeyMode::PerCall`] layer minted for its current call.
    keys: Vec<Option<Key>>,
    /// When each layer's current call began; kept only by a stack with a deadline.
    started: Vec<Millis>,
    /// A retry timer is set for the current call of the stack.
    armed: bool,
    /// Which call of the stack a retry timer belongs to: a new call of the whole stack
    /// while one is set makes it stale (it then does nothing). Counted only then, so that
    /// states that differ in nothing else hash alike.
    generation: u32,
}

/// An executor that runs a [`Stack`] over the operations an [`Identity`] binds calls to.
pub struct Stacked<I> {
    identity: I,
    stack: Stack,
    /// Per operation, the layers' counts and keys (in memory: a crash forgets them, save
    /// those of a layer that is redelivered with them, which the journal keeps).
    calls: BTreeMap<OpId, Calls>,
    /// Whether a layer has a deadline (then the calls' start times are kept).
    deadlines: bool,
    /// Whether a layer is redelivered with its count and key (then the journal keeps them).
    durable: bool,
}

impl<I: Identity> Stacked<I> {
    /// The one-layer stack of `config`'s shorthand ([`Stack::transport`]), keyed by the
    /// identity.
    pub fn new(identity: I, config: &ExecutorModel) -> Self {
        Self::with_stack(identity, Stack::transport(config, KeyMode::Inherited))
    }

    /// Runs `stack`, which has 1 to [`crate::model::MAX_LAYERS`] layers (the file forms
    /// check it).
    pub fn with_stack(identity: I, stack: Stack) -> Self {
        assert!(
            (1..=MAX_LAYERS).contains(&stack.layers.len()),
            "a stack has 1 to {MAX_LAYERS} layers"
        );
        let deadlines = stack.layers.iter().any(|l| l.deadline_ms.is_some());
        let durable = stack
            .layers
            .iter()
            .any(|l| matches!(l.redelivery, Redelivery::Retry | Redelivery::Resume));
        Self {
            identity,
            stack,
            calls: BTreeMap::new(),
            deadlines,
            durable,
        }
    }

    fn innermost(&self) -> usize {
        self.stack.layers.len() - 1
    }

    fn memory(&mut self, op: OpId) -> &mut Calls {
        let n = self.stack.layers.len();
        self.calls.entry(op).or_insert_with(|| Calls {
            counts: vec![0; n - 1],
            keys: vec![None; n],
            started: Vec::new(),
            armed: false,
            generation: 0,
        })
    }

    /// Calls made by layer `i` in its current call, for operation `op`.
    fn count(&self, ctx: &ExecCtx<'_>, op: OpId, i: usize) -> u32 {
        if i == self.innermost() {
            ctx.journal_ref().scratch(op).map_or(0, |s| s.attempts)
        } else {
            self.calls.get(&op).map_or(0, |c| c.counts[i])
        }
    }

    fn set_count(&mut self, ctx: &mut ExecCtx<'_>, op: OpId, i: usize, n: u32) {
        if i == self.innermost() {
            if let Some(s) = ctx.journal().scratch_mut(op) {
                s.attempts = n;
            }
        } else {
            self.memory(op).counts[i] = n;
        }
    }

    /// Layers `from` and inward are called anew for `op`: their counts start again (each
    /// outer one has made its first call below) and their per-call keys are to be minted
    /// again. `from == 0` is a new call of the whole stack.
    fn call_anew(&mut self, ctx: &mut ExecCtx<'_>, op: OpId, from: usize) {
        let inner = self.innermost();
        let now = ctx.now();
        let deadlines = self.deadlines;
        if deadlines {
            for layer in &self.stack.layers[from..] {
                if let Some(d) = layer.deadline_ms {
                    // The age the retry decision compares against it.
                    ctx.declare_threshold(d);
                }
            }
        }
        let memory = self.memory(op);
        if deadlines {
            memory.started.resize(inner + 1, now);
            for t in memory.started.iter_mut().skip(from) {
                *t = now;
            }
        }
        for c in memory.counts.iter_mut().skip(from) {
            *c = 1;
        }
        for k in memory.keys.iter_mut().skip(from) {
            *k = None;
        }
        if from == 0 && memory.armed {
            memory.armed = false;
            memory.generation = memory.generation.wrapping_add(1) & ((1 << GENERATION_BITS) - 1);
        }
        if from <= inner {
            self.set_count(ctx, op, inner, 0);
        }
    }

    /// The key layer `i` passes down for the next send of `op`: past the outermost layer,
    /// the application's. A per-call layer passes what it is given, and mints its own only
    /// if nothing above gives one (as an SDK sends a key it is passed and generates one only
    /// when none is).
    fn key_of(&mut self, ctx: &mut ExecCtx<'_>, op: OpId, i: Option<usize>) -> Option<Key> {
        let Some(i) = i else {
            return self.identity.send_key(ctx, op);
        };
        let above = i.checked_sub(1);
        match self.stack.layers[i].key {
            KeyMode::Inherited => self.key_of(ctx, op, above),
            KeyMode::None => None,
            KeyMode::PerAttempt => Some(ctx.new_key()),
            KeyMode::PerCall => {
                if let Some(given) = self.key_of(ctx, op, above) {
                    return Some(given);
                }
                if let Some(k) = self.calls.get(&op).and_then(|c| c.keys[i]) {
                    return Some(k);
                }
                let k = ctx.new_key();
                self.memory(op).keys[i] = Some(k);
                Some(k)
            }
        }
    }

    /// Sends `op` once more, under the key the stack gives it now.
    fn dispatch(&mut self, ctx: &mut ExecCtx<'_>, op: OpId) {
        let innermost = Some(self.innermost());
        let key = self.key_of(ctx, op, innermost);
        let worker = ctx.worker();
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        // Whoever sends is responsible: a restart of this worker recovers it.
        o.owner = worker;
        s.attempts += 1;
        let request = Request::create(&o.call(), key);
        ctx.transition(op, OpState::Dispatched);
        let timeout = self.stack.layers[self.innermost()].timeout_ms;
        let attempt = ctx.send_with_timeout(op, request, timeout);
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.last_attempt = Some(attempt);
        }
        self.persist(ctx, op);
    }

    fn settle(&self, ctx: &mut ExecCtx<'_>, op: OpId, state: OpState, result: ToolResult) {
        // The receipt is written with the state: the claim the world records names it.
        if let ToolResult::Success { resource } = result
            && let Some(o) = ctx.journal().get_mut(op)
        {
            o.receipt = resource.or(o.receipt);
        }
        ctx.transition(op, state);
        self.report(ctx, op, result);
    }

    /// Tells the agent `result` for `op`'s call, if it is still owed an answer.
    fn report(&self, ctx: &mut ExecCtx<'_>, op: OpId, result: ToolResult) {
        if let Some((o, s)) = ctx.journal().parts_mut(op)
            && s.owes_report
        {
            s.owes_report = false;
            let call = o.call();
            ctx.report(&call, result);
        }
    }

    /// No layer retries `op` any more; `verdict` is what its last answer said.
    fn give_up(&self, ctx: &mut ExecCtx<'_>, op: OpId, verdict: Verdict) {
        match (self.stack.gives_up, verdict) {
            (GiveUp::Unknown, Verdict::Failed) => {
                self.settle(ctx, op, OpState::Failed, ToolResult::Failure)
            }
            (GiveUp::Unknown, _) => {
                ctx.transition(op, OpState::Unknown);
                self.report(ctx, op, ToolResult::Unknown);
            }
            (GiveUp::Failure, Verdict::Failed) => {
                ctx.transition(op, OpState::Unknown);
                ctx.transition(op, OpState::Failed);
                self.report(ctx, op, ToolResult::Failure);
            }
            (GiveUp::Failure, _) => {
                // The wrapper turns the last exception into a failed tool result; it learned
                // nothing about the effect.
                ctx.transition(op, OpState::Unknown);
                ctx.abandon(op, OpState::Failed);
                self.report(ctx, op, ToolResult::Failure);
            }
        }
    }

    /// The innermost layer that retries `class` with an attempt left and within its
    /// deadline, if any; `retry_after` is what a 429 asked for.
    fn retrying_layer(
        &self,
        ctx: &ExecCtx<'_>,
        op: OpId,
        class: ErrorClass,
        retry_after: Option<Millis>,
    ) -> Option<usize> {
        let now = ctx.now();
        (0..self.stack.layers.len()).rev().find(|&i| {
            let layer = &self.stack.layers[i];
            if let (Some(asked), Some(spec)) = (retry_after, layer.retry_after)
                && asked > spec.max_ms
                && spec.above == AboveMax::GiveUp
            {
                return false;
            }
            let within = layer.deadline_ms.is_none_or(|d| {
                let started = self.calls.get(&op).and_then(|c| c.started.get(i).copied());
                now.saturating_sub(started.unwrap_or(now)) < d
            });
            // A layer that reads the should-retry header follows it over its own rule.
            let retries = match (&layer.should_retry_header, ctx.should_retry_header()) {
                (Some(reads), Some((name, value))) if reads.eq_ignore_ascii_case(name) => value,
                _ => layer.retry_on.contains(class),
            };
            retries && self.count(ctx, op, i) < layer.attempts && within
        })
    }

    /// The journal's entry for what layer `i` keeps across a crash (its count and its
    /// per-call key), if it is redelivered with them.
    fn durable_entry(&self, op: OpId, i: usize) -> Option<String> {
        matches!(
            self.stack.layers[i].redelivery,
            Redelivery::Retry | Redelivery::Resume
        )
        .then(|| format!("retrylab.stack/{}/{i}", op.0))
    }

    /// Writes layer `i`'s count and key for `op` to the journal, if it is redelivered with
    /// them.
    fn keep_durable(&self, ctx: &mut ExecCtx<'_>, op: OpId, i: usize) {
        let Some(entry) = self.durable_entry(op, i) else {
            return;
        };
        let count = self.count(ctx, op, i);
        let key = self
            .calls
            .get(&op)
            .and_then(|c| c.keys[i])
            .map_or(0, |k| k.0);
        let worker = ctx.worker();
        ctx.journal()
            .kv_mut()
            .put(&entry, format!("{count} {key}"), worker);
    }

    /// Writes what every layer redelivered with its state keeps for `op` (a stack without
    /// one writes nothing).
    fn persist(&self, ctx: &mut ExecCtx<'_>, op: OpId) {
        if self.durable {
            for i in 0..self.stack.layers.len() {
                self.keep_durable(ctx, op, i);
            }
        }
    }

    /// What layer `i` kept for `op` across a crash: its count and its per-call key.
    fn recall_durable(&self, ctx: &ExecCtx<'_>, op: OpId, i: usize) -> Option<(u32, Option<Key>)> {
        let entry = self.durable_entry(op, i)?;
        let e = ctx.journal_ref().kv().get(&entry)?;
        let (count, key) = e.value.split_once(' ')?;
        let key = key.parse::<u64>().ok()?;
        Some((count.parse::<u32>().ok()?, (key != 0).then_some(Key(key))))
    }

    /// Arms layer `i`'s retry of `op` after a wait from `min` to `max` (its jitter).
    fn arm(&mut self, ctx: &mut ExecCtx<'_>, op: OpId, i: usize, (min, max): (Millis, Millis)) {
        let memory = self.memory(op);
        memory.armed = true;
        let retry = Retry {
            op,
            generation: memory.generation,
            layer: u8::try_from(i).expect("a stack has at most 255 layers"),
        };
        ctx.set_timer_within(min, max, retry.tag());
    }

    /// The call of the outermost redelivered layer is re-run for `op` after a crash.
    fn redeliver(&mut self, ctx: &mut ExecCtx<'_>, op: OpId) {
        let layers = &self.stack.layers;
        let Some(i) = layers.iter().position(|l| l.redelivery != Redelivery::None) else {
            // Nothing re-runs it: its send died with the process. The agent waits out its
            // tool timeout; a later call of the operation runs the stack anew.
            ctx.transition(op, OpState::Unknown);
            return;
        };
        let (redelivery, attempts) = (layers[i].redelivery, layers[i].attempts);
        if redelivery == Redelivery::Anew {
            self.call_anew(ctx, op, 0);
            return self.dispatch(ctx, op);
        }
        // What the layer kept, read before the layers above it (which lived in the crashed
        // process) are called anew.
        let kept = self.recall_durable(ctx, op, i);
        self.call_anew(ctx, op, 0);
        let (done, key) = kept.unwrap_or((0, None));
        self.set_count(ctx, op, i, done);
        self.memory(op).keys[i] = key;
        let innermost = i == self.innermost();
        if redelivery == Redelivery::Retry && done >= attempts {
            ctx.transition(op, OpState::Unknown);
            self.persist(ctx, op);
            return self.give_up(ctx, op, Verdict::Uncertain);
        }
        // A retry of an outer layer is one more call of the layer below; the innermost
        // layer's count is its sends, which the send itself counts. A resumed call keeps its
        // count.
        if redelivery == Redelivery::Retry && !innermost {
            self.set_count(ctx, op, i, done + 1);
        }
        if !innermost {
            self.call_anew(ctx, op, i + 1);
        }
        self.dispatch(ctx, op);
    }
}

impl<I: Identity + 'static> Executor for Stacked<I> {
    /// The identity's memory and each layer's counts and keys per operation (the stack is
    /// the model's).
    fn fingerprint(&self, mut h: &mut dyn Hasher) -> bool {
        let Stacked {
            identity,
            stack: _,
            calls,
            deadlines: _,
            durable: _,
        } = self;
        calls.hash(&mut h);
        identity.fingerprint(h)
    }

    /// Forgets the layers' counts and keys and the identity's memory; the stack is the
    /// model's.
    fn reset(&mut self) -> bool {
        let Stacked {
            identity,
            stack: _,
            calls,
            deadlines: _,
            durable: _,
        } = self;
        calls.clear();
        identity.reset()
    }

    fn snapshot(&self) -> Option<Box<dyn Executor>> {
        let identity = self.identity.copy()?;
        Some(Box::new(Stacked {
            identity,
            stack: self.stack.clone(),
            calls: self.calls.clone(),
            deadlines: self.deadlines,
            durable: self.durable,
        }))
    }

    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        let op = self.identity.operation(ctx, &call);
        let journal = ctx.journal();
        journal.set_call(op, call);
        let Some((o, s)) = journal.parts_mut(op) else {
            return;
        };
        s.owes_report = true;
        match o.state() {
            OpState::Confirmed => {
                // Already done: answer from the journal without a remote call.
                let resource = o.receipt;
                self.settle(
                    ctx,
                    op,
                    OpState::Confirmed,
                    ToolResult::Success { resource },
                );
            }
            // A send is out; its answer will be reported to this call.
            OpState::Dispatched => {}
            _ => {
                self.call_anew(ctx, op, 0);
                self.dispatch(ctx, op);
            }
        }
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        let Some((o, s)) = ctx.journal_ref().parts(op) else {
            return;
        };
        if o.state() != OpState::Dispatched || s.last_attempt != Some(attempt) {
            return;
        }
        let (verdict, class) = match (classify(response), ErrorClass::of(response)) {
            (Verdict::Done(result), _) => {
                return self.settle(ctx, op, OpState::Confirmed, result);
            }
            (verdict, Some(class)) => (verdict, class),
            // `classify` and `ErrorClass::of` agree on what a success is (a unit test
            // checks every reply).
            (_, None) => return,
        };
        let retry_after = match response {
            Response::Reply(Reply::Throttled { retry_after_ms }) => retry_after_ms,
            _ => None,
        };
        let Some(i) = self.retrying_layer(ctx, op, class, retry_after) else {
            return self.give_up(ctx, op, verdict);
        };
        ctx.transition(op, OpState::Unknown);
        let done = self.count(ctx, op, i);
        let layer = &self.stack.layers[i];
        let delay = match (retry_after, layer.retry_after) {
            (Some(asked), Some(spec)) if asked <= spec.max_ms => (asked, asked),
            _ => layer.backoff_after(class).range(done),
        };
        if i < self.innermost() {
            self.set_count(ctx, op, i, done + 1);
            self.call_anew(ctx, op, i + 1);
            self.persist(ctx, op);
        }
        self.arm(ctx, op, i, delay);
    }

    /// A layer's retry is due: the send it makes, with the layers below it called anew. A
    /// timer of an earlier call of the stack (the agent called again, or the worker
    /// restarted, before it was due) does nothing.
    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        let Retry { op, generation, .. } = Retry::of(tag);
        let Some(memory) = self.calls.get_mut(&op) else {
            return;
        };
        if !memory.armed || memory.generation != generation {
            return;
        }
        memory.armed = false;
        if ctx.journal_ref().get(op).map(|o| o.state()) == Some(OpState::Unknown) {
            self.dispatch(ctx, op);
        }
    }

    /// Re-runs, for every operation this worker still owed an answer, the call of the
    /// outermost layer that is redelivered ([`Redelivery`]).
    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        let worker = ctx.worker();
        for op in ctx.journal_ref().open_ops(worker) {
            if ctx.journal_ref().scratch(op).is_some_and(|s| s.owes_report) {
                self.redeliver(ctx, op);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::hash::StableHasher;
    use crate::vocab::ids::ResourceId;

    #[test]
    fn a_retry_reads_back_from_its_tag() {
        let layer = u8::try_from(crate::model::stack::MAX_LAYERS - 1).unwrap();
        for op in [OpId(0), OpId(9), OpId(u32::MAX)] {
            for generation in [0, 1, (1 << GENERATION_BITS) - 1] {
                for layer in [0, 1, layer] {
                    let retry = Retry {
                        op,
                        generation,
                        layer,
                    };
                    assert_eq!(Retry::of(retry.tag()), retry);
                }
            }
        }
    }

    fn every_response() -> Vec<Response> {
        let r = ResourceId(7);
        [
            Reply::Created {
                resource: r,
                replayed: false,
            },
            Reply::Accepted { handle: 1 },
            Reply::OperationFailed,
            Reply::AlreadyExists,
            Reply::InProgress,
            Reply::Mismatch,
            Reply::Expired,
            Reply::Rejected,
            Reply::MissingKey,
            Reply::ServerError { replayed: false },
            Reply::Found { resource: r },
            Reply::NotFound,
            Reply::Pending,
            Reply::Unsupported,
            Reply::Throttled {
                retry_after_ms: Some(1_000),
            },
            Reply::RequestTimeout,
        ]
        .into_iter()
        .map(Response::Reply)
        .chain([Response::Timeout, Response::Reset])
        .collect()
    }

    #[test]
    fn a_success_has_no_error_class_and_every_error_one() {
        for response in every_response() {
            let done = matches!(classify(response), Verdict::Done(_));
            assert_eq!(ErrorClass::of(response).is_none(), done, "{response:?}");
        }
    }

    #[test]
    fn what_an_honest_loop_retries_is_what_leaves_the_outcome_open() {
        for response in every_response() {
            let Some(class) = ErrorClass::of(response) else {
                continue;
            };
            let uncertain = classify(response) == Verdict::Uncertain;
            assert_eq!(
                RetryOn::UNCERTAIN.contains(class),
                uncertain,
                "{response:?}"
            );
            assert!(RetryOn::ANY.contains(class));
            assert!(!RetryOn::NOTHING.contains(class));
        }
        let some = RetryOn::of(&[ErrorClass::Timeout, ErrorClass::Refused]);
        let inside: Vec<_> = ErrorClass::ALL
            .into_iter()
            .filter(|c| some.contains(*c))
            .collect();
        assert_eq!(inside, [ErrorClass::Timeout, ErrorClass::Refused]);
    }

    #[test]
    fn the_shorthand_backoff_doubles_up_to_its_cap() {
        for (backoff_ms, max_backoff_ms) in [(0, 60_000), (500, 60_000), (1_000, 3_000)] {
            let config = ExecutorModel {
                backoff_ms,
                max_backoff_ms,
                ..ExecutorModel::default()
            };
            let b = shorthand_backoff(&config);
            for n in 0..40 {
                assert_eq!(b.before(n), config.backoff_before(n), "retry {n}");
            }
        }
        let b = Backoff::exponential(100, 3, 1_000);
        let waits: Vec<_> = (1..=5).map(|n| b.before(n)).collect();
        assert_eq!(waits, [100, 300, 900, 1_000, 1_000]);
        let table = Backoff {
            table_ms: vec![5, 50, 500],
            ..b.clone()
        };
        let waits: Vec<_> = (1..=5).map(|n| table.before(n)).collect();
        assert_eq!(waits, [5, 50, 500, 500, 500]);
    }

    #[test]
    fn jitter_spreads_each_wait_over_its_range() {
        let with = |jitter| Backoff {
            jitter,
            ..Backoff::exponential(1_000, 2, 3_000)
        };
        let ranges =
            |b: Backoff| -> Vec<(Millis, Millis)> { (1..=3).map(|n| b.range(n)).collect() };
        assert_eq!(
            ranges(with(Jitter::None)),
            [(1_000, 1_000), (2_000, 2_000), (3_000, 3_000)]
        );
        assert_eq!(
            ranges(with(Jitter::Full)),
            [(0, 1_000), (0, 2_000), (0, 3_000)]
        );
        assert_eq!(
            ranges(with(Jitter::Equal)),
            [(500, 1_000), (1_000, 2_000), (1_500, 3_000)]
        );
        assert_eq!(
            ranges(with(Jitter::Additive { max_ms: 250 })),
            [(1_000, 1_250), (2_000, 2_250), (3_000, 3_250)]
        );
        let openai = Jitter::Multiplicative {
            min_percent: 75,
            max_percent: 100,
        };
        assert_eq!(
            ranges(with(openai)),
            [(750, 1_000), (1_500, 2_000), (2_250, 3_000)]
        );
    }

    #[derive(Clone, Copy)]
    struct Plain;

    impl Identity for Plain {
        fn operation(&self, _ctx: &mut ExecCtx<'_>, _call: &ToolCall) -> OpId {
            unreachable!("not called by the fingerprint")
        }
        fn fingerprint(&self, _h: &mut dyn Hasher) -> bool {
            true
        }
    }

    #[test]
    fn each_layers_counts_keys_and_call_per_operation_are_in_the_fingerprint() {
        let layered = crate::design::preset::find("layered_retries")
            .unwrap()
            .stack(&ExecutorModel::default());
        let hash = |calls: &[(u32, Calls)]| {
            let mut e = Stacked::with_stack(Plain, layered.clone());
            e.calls = calls.iter().map(|(op, c)| (OpId(*op), c.clone())).collect();
            let mut h = StableHasher::new();
            assert!(e.fingerprint(&mut h));
            h.finish()
        };
        let calls = Calls {
            counts: vec![1, 1],
            keys: vec![None, None, Some(Key(3))],
            started: Vec::new(),
            armed: true,
            generation: 1,
        };
        let with = |f: &dyn Fn(&mut Calls)| {
            let mut c = calls.clone();
            f(&mut c);
            hash(&[(0, c)])
        };
        let base = hash(&[(0, calls.clone())]);
        assert_eq!(base, with(&|_| {}));
        assert_ne!(base, hash(&[]));
        assert_ne!(base, hash(&[(1, calls.clone())]));
        assert_ne!(base, with(&|c| c.counts[0] = 2));
        assert_ne!(base, with(&|c| c.counts[1] = 2));
        assert_ne!(base, with(&|c| c.keys[2] = Some(Key(4))));
        assert_ne!(base, with(&|c| c.armed = false));
        assert_ne!(base, with(&|c| c.generation = 2));
    }
}

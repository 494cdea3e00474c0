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
//! - the key of a send is the innermost layer's that is not [`KeyMode::Inherited`]; a layer
//!   keyed [`KeyMode::PerCall`] mints its key when it is called and reuses it for its own
//!   retries, so that a retry of a layer above it sends a new key. Past the outermost
//!   layer, the key is the application's: what the design's [`Identity`] binds to the
//!   operation (none, the tool call's, the authorization's, the arguments' hash);
//! - when no layer retries, the stack gives up ([`GiveUp`]): honestly as unknown, or as a
//!   failed tool result, the way a generic wrapper turns an exception into an error. A
//!   definite refusal (4xx) is a failure either way.
//!
//! The operation record, its scratch state and its recovery after a crash are the journal's,
//! as for every design: a restarted worker calls the whole stack anew for every operation it
//! still owed an answer (at-least-once redelivery from a durable queue), and a volatile
//! journal forgets them.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use super::Executor;
use super::context::ExecCtx;
use super::journal::OpState;
use super::retrying::{Identity, Verdict, classify};
use crate::model::ExecutorModel;
use crate::sim::Millis;
use crate::vocab::ids::{AttemptId, OpId};
use crate::vocab::protocol::{Reply, Request, Response, ToolCall, ToolResult};

/// An error a layer sees from the layer below, by the class a retry rule names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// No answer within the client timeout.
    Timeout,
    /// 409: a request under the key is in progress.
    InProgress,
    /// 5xx.
    ServerError,
    /// A "not found" or "pending" where the answer to a create was expected.
    Inconclusive,
    /// 422: the key was first used with other arguments.
    Mismatch,
    /// 412: the key is past its window.
    Expired,
    /// 400 or another 4xx: the request is refused (a missing key, an unsupported one, a
    /// rejected request).
    Refused,
    /// The provider reports the operation failed.
    Failed,
}

impl ErrorClass {
    /// Every class, in the order of their bits.
    pub const ALL: [ErrorClass; 8] = [
        ErrorClass::Timeout,
        ErrorClass::InProgress,
        ErrorClass::ServerError,
        ErrorClass::Inconclusive,
        ErrorClass::Mismatch,
        ErrorClass::Expired,
        ErrorClass::Refused,
        ErrorClass::Failed,
    ];

    /// The class of a response that is not a success; `None` for a success.
    pub fn of(response: Response) -> Option<ErrorClass> {
        Some(match response {
            Response::Timeout => ErrorClass::Timeout,
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
            | ErrorClass::Inconclusive.bit(),
    );
    /// Every error, as a generic "retry on exception" does.
    pub const ANY: RetryOn = RetryOn(0xff);

    /// The set of `classes`.
    pub fn of(classes: &[ErrorClass]) -> RetryOn {
        RetryOn(classes.iter().fold(0, |b, c| b | c.bit()))
    }

    pub fn contains(self, class: ErrorClass) -> bool {
        self.0 & class.bit() != 0
    }
}

/// Which key a layer's calls carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyMode {
    /// The key of the layer above (past the outermost layer, the application's).
    Inherited,
    /// No key, whatever the layers above hold.
    None,
    /// A key minted when this layer is called, the same on its own retries; a new call of
    /// this layer (a retry of a layer above it) mints a new one.
    PerCall,
    /// A new key for every send.
    PerAttempt,
}

/// The waits between one layer's attempts: before its `n`-th retry,
/// `initial_ms * factor^(n-1)`, at most `cap_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Backoff {
    pub initial_ms: Millis,
    pub factor: u32,
    pub cap_ms: Millis,
}

impl Backoff {
    /// The wait before retry number `n` (1-based).
    pub fn before(&self, n: u32) -> Millis {
        let steps = n.saturating_sub(1).min(31);
        self.initial_ms
            .saturating_mul(u64::from(self.factor).saturating_pow(steps))
            .min(self.cap_ms)
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
    pub retry_on: RetryOn,
    pub key: KeyMode,
}

/// How a stack reports an operation no layer retries any more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GiveUp {
    /// As unknown, unless the last answer was a definite refusal (then failed).
    Unknown,
    /// As a failed tool result, as a wrapper that turns the last exception into an error
    /// does: a claim that the effect does not exist, judged against the ledger.
    Failure,
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
            layers: vec![Layer {
                name: "http".into(),
                attempts: config.attempts,
                backoff: shorthand_backoff(config),
                retry_on: RetryOn::UNCERTAIN,
                key,
            }],
            gives_up: GiveUp::Unknown,
        }
    }

    /// The shorthand for `layered_retries`: a job queue (`executor.layers.queue` runs of
    /// the job) around a tool wrapper (`executor.layers.tool` calls) around the HTTP client
    /// (`executor.attempts` sends under the key it mints per call), each retrying any
    /// error, with the same backoff; giving up as a failed tool result.
    pub fn layered(config: &ExecutorModel) -> Stack {
        let layer = |name: &str, attempts, key| Layer {
            name: name.into(),
            attempts,
            backoff: shorthand_backoff(config),
            retry_on: RetryOn::ANY,
            key,
        };
        Stack {
            layers: vec![
                layer("queue", config.layers.queue, KeyMode::None),
                layer("tool", config.layers.tool, KeyMode::None),
                layer("http", config.attempts, KeyMode::PerCall),
            ],
            gives_up: GiveUp::Failure,
        }
    }

    /// The layer whose key a send carries: the innermost one that does not inherit it;
    /// `None` for the application's.
    fn key_layer(&self) -> Option<usize> {
        self.layers
            .iter()
            .rposition(|l| l.key != KeyMode::Inherited)
    }
}

fn shorthand_backoff(config: &ExecutorModel) -> Backoff {
    Backoff {
        initial_ms: config.backoff_ms,
        factor: 2,
        cap_ms: config.max_backoff_ms,
    }
}

/// Timer tags: the operation above, the retrying layer in the low bits.
const LAYER_BITS: u32 = 8;

/// An executor that runs a [`Stack`] over the operations an [`Identity`] binds calls to.
pub struct Stacked<I> {
    identity: I,
    stack: Stack,
    /// Per operation, the calls each layer but the innermost has made of the layer below in
    /// its current call (in memory: a crash forgets them, and the restarted worker calls the
    /// stack anew). The innermost layer's sends are the journal's `attempts`.
    outer: BTreeMap<OpId, Vec<u32>>,
}

impl<I: Identity> Stacked<I> {
    /// The one-layer stack of `config`'s shorthand ([`Stack::transport`]), keyed by the
    /// identity.
    pub fn new(identity: I, config: &ExecutorModel) -> Self {
        Self::with_stack(identity, Stack::transport(config, KeyMode::Inherited))
    }

    pub fn with_stack(identity: I, stack: Stack) -> Self {
        assert!(
            !stack.layers.is_empty() && stack.layers.len() < 1 << LAYER_BITS,
            "a stack has 1 to 255 layers"
        );
        Self {
            identity,
            stack,
            outer: BTreeMap::new(),
        }
    }

    fn innermost(&self) -> usize {
        self.stack.layers.len() - 1
    }

    /// Calls made by layer `i` in its current call, for operation `op`.
    fn calls(&self, ctx: &ExecCtx<'_>, op: OpId, i: usize) -> u32 {
        if i == self.innermost() {
            ctx.journal_ref().scratch(op).map_or(0, |s| s.attempts)
        } else {
            self.outer.get(&op).map_or(0, |c| c[i])
        }
    }

    /// Layers `from` and inward are called anew for `op`: their counts start again (each
    /// outer one has made its first call below).
    fn call_anew(&mut self, ctx: &mut ExecCtx<'_>, op: OpId, from: usize) {
        let inner = self.innermost();
        if inner > 0 {
            let counts = self.outer.entry(op).or_insert_with(|| vec![0; inner]);
            for c in counts.iter_mut().skip(from) {
                *c = 1;
            }
        }
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.attempts = 0;
        }
    }

    /// Sends `op` once more; layers `from` and inward were called anew for this send (0:
    /// a new call of the stack), so a per-call key among them is minted again.
    fn dispatch(&self, ctx: &mut ExecCtx<'_>, op: OpId, from: usize) {
        let key = match self.stack.key_layer() {
            None => self.identity.send_key(ctx, op),
            Some(i) => match self.stack.layers[i].key {
                KeyMode::PerAttempt => Some(ctx.new_key()),
                KeyMode::PerCall if i >= from => Some(ctx.new_key()),
                KeyMode::PerCall => ctx.journal_ref().get(op).and_then(|o| o.key),
                KeyMode::None | KeyMode::Inherited => None,
            },
        };
        let worker = ctx.worker();
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        // Whoever sends is responsible: a restart of this worker recovers it.
        o.owner = worker;
        s.attempts += 1;
        o.key = key;
        let request = Request::create(&o.call(), key);
        ctx.transition(op, OpState::Dispatched);
        let attempt = ctx.send(op, request);
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.last_attempt = Some(attempt);
        }
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

    /// The innermost layer that retries `class` with an attempt left, if any.
    fn retrying_layer(&self, ctx: &ExecCtx<'_>, op: OpId, class: ErrorClass) -> Option<usize> {
        (0..self.stack.layers.len()).rev().find(|&i| {
            let layer = &self.stack.layers[i];
            layer.retry_on.contains(class) && self.calls(ctx, op, i) < layer.attempts
        })
    }
}

impl<I: Identity + 'static> Executor for Stacked<I> {
    /// The identity's memory and each layer's counts per operation (the stack is the
    /// model's).
    fn fingerprint(&self, mut h: &mut dyn Hasher) -> bool {
        let Stacked {
            identity,
            stack: _,
            outer,
        } = self;
        outer.hash(&mut h);
        identity.fingerprint(h)
    }

    /// Forgets the layers' counts and the identity's memory; the stack is the model's.
    fn reset(&mut self) -> bool {
        let Stacked {
            identity,
            stack: _,
            outer,
        } = self;
        outer.clear();
        identity.reset()
    }

    fn snapshot(&self) -> Option<Box<dyn Executor>> {
        let identity = self.identity.copy()?;
        Some(Box::new(Stacked {
            identity,
            stack: self.stack.clone(),
            outer: self.outer.clone(),
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
                self.dispatch(ctx, op, 0);
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
        let retry = self.retrying_layer(ctx, op, class);
        let gives_up = self.stack.gives_up;
        // A refusal nobody retries settles the operation as failed at once.
        if retry.is_none() && verdict == Verdict::Failed && gives_up == GiveUp::Unknown {
            return self.settle(ctx, op, OpState::Failed, ToolResult::Failure);
        }
        ctx.transition(op, OpState::Unknown);
        if let Some(i) = retry {
            let done = self.calls(ctx, op, i);
            let delay = self.stack.layers[i].backoff.before(done);
            if i < self.innermost() {
                if let Some(c) = self.outer.get_mut(&op) {
                    c[i] += 1;
                }
                self.call_anew(ctx, op, i + 1);
            }
            ctx.set_timer(delay, u64::from(op.0) << LAYER_BITS | i as u64);
            return;
        }
        match (gives_up, verdict) {
            (GiveUp::Unknown, _) => self.report(ctx, op, ToolResult::Unknown),
            (GiveUp::Failure, Verdict::Failed) => {
                ctx.transition(op, OpState::Failed);
                self.report(ctx, op, ToolResult::Failure);
            }
            (GiveUp::Failure, _) => {
                // The wrapper turns the last exception into a failed tool result; it learned
                // nothing about the effect.
                ctx.abandon(op, OpState::Failed);
                self.report(ctx, op, ToolResult::Failure);
            }
        }
    }

    /// A layer's retry is due: the send it makes, with the layers below it called anew.
    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        let op = OpId((tag >> LAYER_BITS) as u32);
        let layer = (tag & ((1 << LAYER_BITS) - 1)) as usize;
        if ctx.journal_ref().get(op).map(|o| o.state()) == Some(OpState::Unknown) {
            self.dispatch(ctx, op, layer + 1);
        }
    }

    /// Calls the stack anew for every operation this worker still owed an answer, with its
    /// recorded identity: at-least-once redelivery, as a durable job queue does.
    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        let worker = ctx.worker();
        for op in ctx.journal_ref().open_ops(worker) {
            if ctx.journal_ref().scratch(op).is_some_and(|s| s.owes_report) {
                self.call_anew(ctx, op, 0);
                self.dispatch(ctx, op, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::ids::ResourceId;
    use crate::world::fingerprint::StableHasher;

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
        ]
        .into_iter()
        .map(Response::Reply)
        .chain([Response::Timeout])
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
        let b = Backoff {
            initial_ms: 100,
            factor: 3,
            cap_ms: 1_000,
        };
        let waits: Vec<_> = (1..=5).map(|n| b.before(n)).collect();
        assert_eq!(waits, [100, 300, 900, 1_000, 1_000]);
    }

    #[test]
    fn a_send_carries_the_innermost_key_that_is_not_inherited() {
        let config = ExecutorModel::default();
        assert_eq!(
            Stack::transport(&config, KeyMode::Inherited).key_layer(),
            None
        );
        assert_eq!(
            Stack::transport(&config, KeyMode::PerAttempt).key_layer(),
            Some(0)
        );
        let layered = Stack::layered(&config);
        assert_eq!(layered.key_layer(), Some(2));
        let mut over = layered.clone();
        over.layers[2].key = KeyMode::Inherited;
        over.layers[1].key = KeyMode::Inherited;
        assert_eq!(over.key_layer(), Some(0), "the queue's: none");
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
    fn each_layers_count_per_operation_is_in_the_fingerprint() {
        let hash = |outer: &[(u32, Vec<u32>)]| {
            let mut e = Stacked::with_stack(Plain, Stack::layered(&ExecutorModel::default()));
            e.outer = outer.iter().map(|(op, c)| (OpId(*op), c.clone())).collect();
            let mut h = StableHasher::new();
            assert!(e.fingerprint(&mut h));
            h.finish()
        };
        let base = hash(&[(0, vec![1, 1])]);
        assert_eq!(base, hash(&[(0, vec![1, 1])]));
        assert_ne!(base, hash(&[]));
        assert_ne!(base, hash(&[(1, vec![1, 1])]));
        assert_ne!(base, hash(&[(0, vec![2, 1])]));
        assert_ne!(base, hash(&[(0, vec![1, 2])]));
    }
}

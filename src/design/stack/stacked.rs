//! The one loop that runs a stack for one worker: a call goes down the layers, an error
//! comes up until a layer retries it, and the stack gives up when none does.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use super::calls::{Calls, GENERATION_BITS, Retry};
use super::{ErrorClass, GiveUp, KeyMode, MAX_LAYERS, Redelivery, Stack};
use crate::design::Executor;
use crate::design::context::ExecCtx;
use crate::design::journal::OpState;
use crate::design::retrying::{Identity, Verdict, classify};
use crate::model::ExecutorModel;
use crate::model::stack::AboveMax;
use crate::sim::Millis;
use crate::vocab::ids::{AttemptId, Key, OpId};
use crate::vocab::protocol::{Reply, Request, Response, ToolCall, ToolResult};

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

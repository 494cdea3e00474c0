//! `layered_retries`: independent retry loops at the HTTP, tool-wrapper and job-queue layers
//! (the agent's own replans are the fourth).
//!
//! Each layer retries the whole layer below when it sees anything but success, as a generic
//! "retry on exception" does: the HTTP client resends the same request with its key
//! (`executor.attempts`), the tool wrapper re-invokes the call with a new request and key
//! (`executor.layers.tool`), the job queue re-runs the job (`executor.layers.queue`), and the
//! agent replans (`agent.max_calls`). A persistent failure costs the product of the four in
//! remote calls; every layer above HTTP mints a new key, so each of its retries after a lost
//! reply is a new effect. When all layers give up, the wrapper reports a failure.

use std::collections::BTreeMap;

use super::context::ExecCtx;
use super::journal::OpState;
use super::retrying::{Verdict, classify};
use super::{Design, Executor};
use crate::model::ExecutorModel;
use crate::vocab::ids::{AttemptId, OpId};
use crate::vocab::protocol::{Request, Response, ToolCall, ToolResult};

pub struct LayeredRetries;

impl Design for LayeredRetries {
    fn parts(&self) -> crate::sim::Parts {
        crate::sim::Parts::EXECUTORS
    }
    fn symmetric(&self) -> bool {
        true
    }

    fn reads_settled_times(&self) -> bool {
        false
    }
    fn name(&self) -> &str {
        "layered_retries"
    }

    fn summary(&self) -> &str {
        "independent retries at HTTP, tool wrapper, job queue and agent: they multiply"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Layered {
            config: config.clone(),
            loops: BTreeMap::new(),
        })
    }
}

/// How far each layer has got for one operation (in memory: a crash forgets it).
#[derive(Clone, Copy, Debug, Default, Hash)]
struct Loops {
    http: u32,
    tool: u32,
    queue: u32,
}

#[derive(Clone)]
struct Layered {
    config: ExecutorModel,
    loops: BTreeMap<OpId, Loops>,
}

impl Layered {
    fn send(&mut self, ctx: &mut ExecCtx<'_>, op: OpId, new_key: bool) {
        let key = if new_key {
            Some(ctx.new_key())
        } else {
            ctx.journal_ref().get(op).and_then(|o| o.key)
        };
        let worker = ctx.worker();
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        o.owner = worker;
        o.key = key;
        s.attempts += 1;
        let request = Request::create(&o.call(), key);
        ctx.transition(op, OpState::Dispatched);
        let attempt = ctx.send(op, request);
        if let Some(s) = ctx.journal().scratch_mut(op) {
            s.last_attempt = Some(attempt);
        }
        self.loops.entry(op).or_default().http += 1;
    }

    /// The next retry, at the lowest layer that still has one, and which retry of its layer
    /// it is (its backoff counts its own retries: a layer called anew starts again); `None`
    /// when all gave up.
    fn next_retry(&mut self, op: OpId) -> Option<(bool, u32)> {
        let l = self.loops.entry(op).or_default();
        let layers = self.config.layers;
        if l.http < self.config.attempts {
            return Some((false, l.http));
        }
        l.http = 0;
        if l.tool + 1 < layers.tool {
            l.tool += 1;
            return Some((true, l.tool));
        }
        l.tool = 0;
        if l.queue + 1 < layers.queue {
            l.queue += 1;
            return Some((true, l.queue));
        }
        None
    }

    fn report(&self, ctx: &mut ExecCtx<'_>, op: OpId, state: OpState, result: ToolResult) {
        if state == OpState::Confirmed {
            // The receipt is written with the state: the claim the world records names it.
            if let ToolResult::Success { resource } = result
                && let Some((o, s)) = ctx.journal().parts_mut(op)
                && s.owes_report
            {
                o.receipt = resource;
            }
            ctx.transition(op, state);
        }
        if let Some((o, s)) = ctx.journal().parts_mut(op)
            && s.owes_report
        {
            s.owes_report = false;
            if let ToolResult::Success { resource } = result {
                o.receipt = resource;
            }
            let call = o.call();
            ctx.report(&call, result);
        }
    }
}

impl Executor for Layered {
    fn snapshot(&self) -> Option<Box<dyn Executor>> {
        Some(Box::new(self.clone()))
    }
    /// How far each layer has got, per operation (the configuration is the model's).
    fn fingerprint(&self, mut h: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        let Layered { config: _, loops } = self;
        loops.hash(&mut h);
        true
    }

    /// Forgets every layer's progress; the configuration is the model's and stays.
    fn reset(&mut self) -> bool {
        let Layered { config: _, loops } = self;
        loops.clear();
        true
    }

    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        // Every agent call is a new job: the agent layer is the fourth loop.
        let (worker, now) = (ctx.worker(), ctx.now());
        let op = ctx.journal().create(&call, None, worker, now);
        self.send(ctx, op, true);
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        let current = ctx.journal_ref().parts(op);
        if current.is_none_or(|(o, s)| {
            s.last_attempt != Some(attempt) || o.state() != OpState::Dispatched
        }) {
            return;
        }
        let verdict = classify(response);
        if let Verdict::Done(result) = verdict {
            return self.report(ctx, op, OpState::Confirmed, result);
        }
        // Retry on any exception, at whichever layer still has a retry left.
        ctx.transition(op, OpState::Unknown);
        match self.next_retry(op) {
            Some((new_key, n)) => {
                ctx.set_timer(
                    self.config.backoff_before(n),
                    u64::from(op.0) << 1 | u64::from(new_key),
                );
            }
            // The wrapper turns the last exception into a failed tool result; unless that
            // exception was a definite refusal, it learned nothing about the effect.
            None if verdict == Verdict::Failed => {
                ctx.transition(op, OpState::Failed);
                self.report(ctx, op, OpState::Failed, ToolResult::Failure)
            }
            None => {
                ctx.abandon(op, OpState::Failed);
                self.report(ctx, op, OpState::Failed, ToolResult::Failure)
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        let op = OpId((tag >> 1) as u32);
        if ctx.journal_ref().get(op).map(|o| o.state()) == Some(OpState::Unknown) {
            self.send(ctx, op, tag & 1 == 1);
        }
    }

    /// The job queue re-delivers unfinished jobs to the restarted worker: a new run.
    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        let worker = ctx.worker();
        for op in ctx.journal_ref().open_ops(worker) {
            if ctx.journal_ref().scratch(op).is_some_and(|s| s.owes_report) {
                self.send(ctx, op, true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::fingerprint::StableHasher;
    use std::hash::Hasher;

    fn with(change: impl FnOnce(&mut Layered)) -> u64 {
        let mut e = Layered {
            config: ExecutorModel::default(),
            loops: BTreeMap::new(),
        };
        change(&mut e);
        let mut h = StableHasher::new();
        assert!(e.fingerprint(&mut h));
        h.finish()
    }

    #[test]
    fn each_layers_count_per_operation_is_in_the_fingerprint() {
        let fresh = with(|_| {});
        assert_eq!(fresh, with(|_| {}));
        let count = |op, http, tool, queue| {
            with(move |e| {
                e.loops.insert(OpId(op), Loops { http, tool, queue });
            })
        };
        assert_ne!(fresh, count(0, 0, 0, 0));
        let base = count(0, 1, 0, 0);
        assert_ne!(base, count(1, 1, 0, 0));
        assert_ne!(base, count(0, 2, 0, 0));
        assert_ne!(base, count(0, 1, 1, 0));
        assert_ne!(base, count(0, 1, 0, 1));
    }
}

//! A custom executor design, written against the public API and run by the `retrylab`
//! command line as its own binary.
//!
//! `read_back_after_wait` keeps each authorized intent as one operation in the journal, under
//! one idempotency key for its whole life. When an answer is lost (a timeout, a 5xx, a 409),
//! it does not send again at once: it sets a timer, waits (`executor.poll_ms`, doubling),
//! and reads the outcome back by key. A hit confirms the operation with its receipt; a miss
//! lets it send again under the same key. A worker that restarts after a crash finds its
//! unfinished operations in the journal and reads each back before anything else.
//!
//! What it rests on: the journal is durable (a volatile one forgets the key, and the restarted
//! worker sends under a new one), the provider answers a lookup by key, and it keeps keys
//! longer than the design keeps retrying. `retrylab explore` certifies it on a lost reply and
//! on a crash after the send, and finds the duplicate on a volatile journal.
//!
//! Every command, with the design beside the built-in ones:
//!
//! ```text
//! cargo run --example custom_design -- designs
//! cargo run --example custom_design -- run models/ticket_chaos.json --design read_back_after_wait --design same_key
//! cargo run --example custom_design -- trace models/windows/crash_after_success.json --design read_back_after_wait
//! cargo run --example custom_design -- explore models/windows/reply_lost_after_commit.json --design read_back_after_wait
//! cargo run --example custom_design -- check my_model.json   # a model that lists it in `designs` and `expect`
//! ```
//!
//! `tests/custom_design_example.rs` runs this file's design through the same entry point and
//! pins its figures.

use std::collections::BTreeMap;
use std::process::ExitCode;

use retrylab::prelude::*;

/// The design: a name, a summary and a factory of executors (one per worker incarnation:
/// a crash drops the executor, the journal stays).
pub struct ReadBackAfterWait;

/// The design as the command line takes it: a `'static` value.
pub static READ_BACK_AFTER_WAIT: ReadBackAfterWait = ReadBackAfterWait;

impl Design for ReadBackAfterWait {
    fn name(&self) -> &str {
        "read_back_after_wait"
    }

    fn summary(&self) -> &str {
        "journal, one key per intent; on a lost answer or a restart: wait, read back by key, resend"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(ReadBackExecutor {
            config: config.clone(),
            pending: BTreeMap::new(),
        })
    }

    /// Stated, so that `check` and `report` say when a model breaks them; the checkers judge
    /// the design against the ledger whatever it states.
    fn assumptions(&self) -> Vec<Assumption> {
        use assumptions as a;
        vec![a::durable_journal()]
    }

    /// What this design promises beyond the built-in properties: judged on every run of it,
    /// and named in a model's `expect` like a built-in one.
    fn properties(&self) -> &'static [PropertyDef] {
        &PROPERTIES
    }
}

/// The design reads the outcome back by key, so every success it reports carries the
/// receipt of the resource its own operation created. `no_false_success` only asks that the
/// intent's effect exists, and the built-in `no_wrong_receipt` that a receipt, when one is
/// named, is the intent's own; this design promises more: a receipt on every success (a
/// bare "done" breaks it).
pub static PROPERTIES: [PropertyDef; 1] = [PropertyDef {
    name: "receipt_names_own_effect",
    meaning: "every step reported done names a receipt, and it is an effect of that intent and step",
    judge: Judge::Violated(wrong_receipt),
}];

/// Whether some step reported done names no receipt, or one that is not an effect of its
/// intent and step (judged against the ledger).
pub fn wrong_receipt(o: &Outcome<'_>) -> bool {
    o.intents.iter().zip(o.heard).any(|(intent, heard)| {
        heard.steps[..intent.steps as usize]
            .iter()
            .enumerate()
            .any(|(k, step)| {
                step.is_some_and(|s| {
                    !s.receipt.is_some_and(|r| {
                        o.effects
                            .iter()
                            .any(|e| e.resource == r && e.intent == intent.id && e.step == k as u32)
                    })
                })
            })
    })
}

/// What an outstanding request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Step {
    Create,
    Read,
}

struct ReadBackExecutor {
    config: ExecutorModel,
    /// Requests this incarnation has out (memory: lost on a crash; the journal is not).
    pending: BTreeMap<AttemptId, (OpId, Step)>,
}

impl ReadBackExecutor {
    /// Settles `op` as `state` and tells the agent `result`.
    fn settle(&self, ctx: &mut ExecCtx<'_>, op: OpId, state: OpState, result: ToolResult) {
        ctx.transition(op, state);
        self.tell(ctx, op, result);
    }

    /// Tells the call the operation now serves `result`, unless it was told already.
    fn tell(&self, ctx: &mut ExecCtx<'_>, op: OpId, result: ToolResult) {
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        if std::mem::take(&mut s.owes_report) {
            let call = o.call();
            ctx.report(&call, result);
        }
    }

    /// Sends `op`'s create again under its key, if the call's budget allows; else reports
    /// unknown (the operation stays open: a later call reads it back).
    fn create(&mut self, ctx: &mut ExecCtx<'_>, op: OpId) {
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        if s.attempts >= self.config.attempts {
            ctx.transition(op, OpState::Unknown);
            return self.tell(ctx, op, ToolResult::Unknown);
        }
        s.attempts += 1;
        let request = Request::create(&o.call(), o.key);
        ctx.transition(op, OpState::Dispatched);
        let attempt = ctx.send(op, request);
        self.pending.insert(attempt, (op, Step::Create));
    }

    /// Reads `op`'s outcome back by key now.
    fn read(&mut self, ctx: &mut ExecCtx<'_>, op: OpId) {
        let Some((o, s)) = ctx.journal().parts_mut(op) else {
            return;
        };
        let Some(key) = o.key else {
            return;
        };
        s.reads += 1;
        let request = Request::lookup(&o.call(), LookupQuery::Key(key));
        let attempt = ctx.send(op, request);
        self.pending.insert(attempt, (op, Step::Read));
    }

    /// Reads `op` back after the backoff its attempts have earned, if the call's read budget
    /// allows; else reports unknown.
    fn read_later(&mut self, ctx: &mut ExecCtx<'_>, op: OpId) {
        let Some(s) = ctx.journal_ref().scratch(op) else {
            return;
        };
        if s.reads >= self.config.reads {
            ctx.transition(op, OpState::Unknown);
            return self.tell(ctx, op, ToolResult::Unknown);
        }
        // `executor.poll_ms`, doubling with each read of the call, at most `max_backoff_ms`.
        let wait = self
            .config
            .poll_ms
            .saturating_mul(1 << s.reads.min(16))
            .min(self.config.max_backoff_ms);
        ctx.note(|| format!("{op}: outcome unknown, reading it back by key in {wait} ms"));
        ctx.transition(op, OpState::Unknown);
        ctx.set_timer(wait, u64::from(op.0));
    }
}

impl Executor for ReadBackExecutor {
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        // One operation per authorized intent, recorded before anything is sent.
        let op = match ctx.journal_ref().find_by_auth(call.auth) {
            Some(op) => op,
            None => {
                let key = Some(ctx.new_key());
                let (worker, now) = (ctx.worker(), ctx.now());
                let op = ctx.journal().create(&call, key, worker, now);
                ctx.transition(op, OpState::Authorized);
                op
            }
        };
        let o = ctx.journal_ref().get(op).expect("recorded");
        if o.fingerprint != call.params {
            // Other arguments under the same authorization: never sent under the old key.
            // Nothing is done for this call, but the operation may have acted: "failed"
            // only if it failed.
            let result = match o.state() {
                OpState::Failed => ToolResult::Failure,
                _ => ToolResult::Unknown,
            };
            ctx.note(|| {
                format!(
                    "{}: other arguments than its operation's: refused",
                    call.call
                )
            });
            return ctx.report(&call, result);
        }
        let (state, receipt) = (o.state(), o.receipt);
        // The record now serves this call, with a fresh budget.
        let journal = ctx.journal();
        journal.set_call(op, call);
        if let Some(s) = journal.scratch_mut(op) {
            s.attempts = 0;
            s.reads = 0;
            s.owes_report = true;
        }
        let busy = self.pending.values().any(|(o, _)| *o == op);
        match state {
            OpState::Confirmed => self.tell(ctx, op, ToolResult::Success { resource: receipt }),
            OpState::Failed => self.tell(ctx, op, ToolResult::Failure),
            OpState::Authorized => self.create(ctx, op),
            // Sent before: the answer decides, or a read-back does.
            _ if busy => {}
            _ => self.read(ctx, op),
        }
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        let Some((_, step)) = self.pending.remove(&attempt) else {
            return;
        };
        if ctx
            .journal_ref()
            .get(op)
            .is_none_or(|o| o.state().is_settled())
        {
            return;
        }
        match (step, response) {
            (_, Response::Reply(Reply::Created { resource, .. }))
            | (Step::Read, Response::Reply(Reply::Found { resource })) => {
                if let Some(o) = ctx.journal().get_mut(op) {
                    o.receipt = Some(resource);
                }
                let result = ToolResult::Success {
                    resource: Some(resource),
                };
                self.settle(ctx, op, OpState::Confirmed, result)
            }
            (
                Step::Create,
                Response::Reply(
                    Reply::Rejected | Reply::Mismatch | Reply::MissingKey | Reply::OperationFailed,
                ),
            ) => self.settle(ctx, op, OpState::Failed, ToolResult::Failure),
            // Not there (yet): send again under the same key; the provider's key record
            // absorbs it if the first send did commit.
            // A provider without lookups by key: the key alone must absorb it.
            (Step::Read, Response::Reply(Reply::NotFound | Reply::Unsupported)) => {
                self.create(ctx, op)
            }
            // Anything else leaves the outcome unknown: wait, then read back.
            _ => self.read_later(ctx, op),
        }
    }

    fn on_timer(&mut self, ctx: &mut ExecCtx<'_>, tag: u64) {
        let op = OpId(tag as u32);
        let open = ctx
            .journal_ref()
            .get(op)
            .is_some_and(|o| !o.state().is_settled());
        if open && !self.pending.values().any(|(o, _)| *o == op) {
            self.read(ctx, op);
        }
    }

    fn on_restart(&mut self, ctx: &mut ExecCtx<'_>) {
        // A new process: nothing in memory. The journal says what this worker left
        // unfinished; read each back before doing anything else.
        for op in ctx.journal_ref().open_ops(ctx.worker()) {
            ctx.note(|| format!("{op}: unfinished before the restart, reading it back"));
            self.read(ctx, op);
        }
    }

    fn fingerprint(&self, mut h: &mut dyn std::hash::Hasher) -> bool {
        use std::hash::Hash;
        self.pending.hash(&mut h);
        true
    }

    /// A new run on this worker: no request out. (Without it the world builds a new
    /// executor for every run; with it a sweep allocates none.)
    fn reset(&mut self) -> bool {
        self.pending.clear();
        true
    }
}

/// Every command of `retrylab`, with this design beside the built-in ones.
#[allow(dead_code)]
fn main() -> ExitCode {
    main_with(&[&READ_BACK_AFTER_WAIT])
}

//! A custom executor design, written against the public API and run under the simulator.
//!
//! `check_then_create` is a pattern often seen in agent tools: before creating, search for a
//! resource with the same arguments; if one exists, report it instead of creating. It looks
//! idempotent. The simulator shows its two flaws: a search cannot tell a genuine second
//! request from a retry (it merges repeats), and a search that lags behind the commit says
//! "not found" while the first ticket exists.
//!
//! Run it with `cargo run --example custom_design`. `tests/custom_design_example.rs` runs the
//! same code and pins its numbers.

use std::collections::BTreeMap;
use std::path::Path;

use retrylab::design::{Design, ExecCtx, Executor, OpState};
use retrylab::explore::{self, Comparison};
use retrylab::model::{ExecutorModel, Lookup, Model};
use retrylab::report::{ReplayCommand, Report, table};
use retrylab::vocab::ids::{AttemptId, OpId};
use retrylab::vocab::protocol::{LookupQuery, Reply, Request, Response, ToolCall, ToolResult};

/// The design: a name, a summary and a factory of executors (one per worker incarnation).
pub struct CheckThenCreate;

impl Design for CheckThenCreate {
    fn name(&self) -> &str {
        "check_then_create"
    }

    fn summary(&self) -> &str {
        "search for the same arguments first; create (with a per-intent key) if none"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(CheckThenCreateExecutor {
            attempts: config.attempts,
            searching: BTreeMap::new(),
        })
    }
}

struct CheckThenCreateExecutor {
    attempts: u32,
    /// Attempts that are searches rather than creates (executor memory: lost on a crash).
    searching: BTreeMap<AttemptId, ()>,
}

impl CheckThenCreateExecutor {
    fn finish(&self, ctx: &mut ExecCtx<'_>, op: OpId, state: OpState, result: ToolResult) {
        ctx.transition(op, state);
        let call = ctx.journal_ref().get(op).map(|o| o.call());
        if let Some(call) = call {
            ctx.report(&call, result);
        }
    }
}

impl Executor for CheckThenCreateExecutor {
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall) {
        // One operation per authorized intent, with its own key.
        let op = match ctx.journal_ref().find_by_auth(call.auth) {
            Some(op) => op,
            None => {
                let key = Some(ctx.new_key());
                let (worker, now) = (ctx.worker(), ctx.now());
                ctx.journal().create(&call, key, worker, now)
            }
        };
        // The record now serves this call (results go to it); the executor's scratch state
        // starts a fresh budget for it.
        let journal = ctx.journal();
        journal.set_call(op, call);
        if let Some(s) = journal.scratch_mut(op) {
            s.attempts = 0;
        }
        // Check first.
        let search = Request::lookup(
            &call,
            LookupQuery::Search {
                params: call.params,
            },
        );
        ctx.transition(op, OpState::Dispatched);
        let attempt = ctx.send(op, search);
        self.searching.insert(attempt, ());
    }

    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    ) {
        let was_search = self.searching.remove(&attempt).is_some();
        match (was_search, response) {
            (true, Response::Reply(Reply::Found { resource })) => {
                ctx.note(|| format!("{op}: found an existing resource, reporting it"));
                let result = ToolResult::Success {
                    resource: Some(resource),
                };
                self.finish(ctx, op, OpState::Confirmed, result)
            }
            (true, _)
            | (false, Response::Timeout)
            | (false, Response::Reply(Reply::ServerError { .. })) => {
                // Nothing found (or no answer): create, under the intent's key.
                let Some((o, s)) = ctx.journal().parts_mut(op) else {
                    return;
                };
                if s.attempts >= self.attempts {
                    return self.finish(ctx, op, OpState::Unknown, ToolResult::Unknown);
                }
                s.attempts += 1;
                let request = Request::create(&o.call(), o.key);
                ctx.send(op, request);
            }
            (false, Response::Reply(Reply::Created { resource, .. })) => {
                let result = ToolResult::Success {
                    resource: Some(resource),
                };
                self.finish(ctx, op, OpState::Confirmed, result)
            }
            (false, _) => self.finish(ctx, op, OpState::Failed, ToolResult::Failure),
        }
    }
}

/// Runs `check_then_create` and `same_key` on a bundled model, as a report.
pub fn compare(model_file: &str, seeds: u64) -> Report {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(model_file);
    let mut model = Model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    // Any model works; this design needs a search, so give the provider one.
    model.provider.lookup = Lookup::Search;
    let same_key = retrylab::design::find("same_key").expect("built in");
    let designs: [&dyn Design; 2] = [&CheckThenCreate, same_key];
    let comparison = Comparison {
        model: &model,
        designs: &designs,
        seeds: (0, seeds - 1),
        extra_properties: &[],
        keep_failures: 0,
    };
    explore::compare(&comparison, ReplayCommand::default(), &|_, _| {})
}

/// The models the example compares on: lost reply, genuine repeat, lagging search.
pub const MODELS: [&str; 3] = [
    "windows/reply_lost_after_commit.json",
    "windows/genuine_repeat.json",
    "windows/delayed_visibility.json",
];

#[allow(dead_code)]
fn main() {
    for file in MODELS {
        print!("{}", table::render(&compare(file, 100)));
        println!();
    }
}

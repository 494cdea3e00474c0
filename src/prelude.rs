//! What a program built on retrylab needs, in one import: `use retrylab::prelude::*;`.
//!
//! Two kinds of program use the library. A **custom design** (`examples/custom_design.rs`)
//! implements [`Design`] and [`Executor`] against the same contract as an external executor
//! process (`docs/executor-protocol.md`): callbacks for a tool call, a transport answer, a
//! timer and a restart; through its [`ExecCtx`] it sends requests, sets timers, reads and
//! writes the journal, moves operations between [`OpState`]s (each move a claim the
//! checkers judge against the ledger) and reports to the agent; it states the
//! [`Assumption`]s its guarantee rests on and may add [`PropertyDef`]s of its own; and
//! [`main_with`] gives it the whole command line. A **library user** loads a [`Model`],
//! runs designs over seeds ([`run_seeds`], [`compare`]), searches schedules ([`explore`])
//! and reads the [`Metrics`].
//!
//! Everything here is also at its own path (`retrylab::design::Design`...); the prelude is
//! the part of the public API that is meant to stay, and the listing of `api/retrylab.txt`
//! shows every change of it in review.

pub use crate::check::{Judge, Metrics, Outcome, Property, PropertyDef, Violations};
pub use crate::cli::{main_with, run_with};
pub use crate::design::assumptions;
pub use crate::design::{
    Assumption, Design, ExecCtx, Executor, Journal, OpState, Operation, Scratch, find,
};
pub use crate::explore::{Bound, Exploration, Reductions, Strategy, compare, explore};
pub use crate::model::{ExecutorModel, Model};
pub use crate::run::{run_seeds, run_traced};
pub use crate::sim::{Millis, RandomChooser};
pub use crate::vocab::ids::{
    AttemptId, AuthId, CallId, Endpoint, IntentId, Key, OpId, Params, ResourceId, Tenant, WorkerId,
};
pub use crate::vocab::protocol::{
    LookupQuery, Reply, Request, RequestKind, Response, ToolCall, ToolResult,
};

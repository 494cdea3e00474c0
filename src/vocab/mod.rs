//! The vocabulary shared by the world and the designs: identifiers, the messages that cross
//! the agent/executor/provider boundaries, and the trace.
//!
//! It sits below both `world` and `design`, so that neither imports the other's internals:
//! the world runs designs, designs see only their `ExecCtx` and these types.

pub(crate) mod event;
pub mod ids;
pub mod protocol;
pub mod record;
pub(crate) mod trace;

pub use event::{
    About, AgentEvent, CallStep, LedgerEvent, NetworkEvent, OpEvent, ProviderEvent, TraceEvent,
    WorkerEvent, WorkloadEvent,
};
pub use trace::{Component, Trace, TraceLine};

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

use super::single_use_token::PerIssue;
use super::stack::{Stack, Stacked};
use super::{Design, Executor};
use crate::model::ExecutorModel;

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

    /// Every agent call is a new job, without a key of its own: the stack of
    /// [`Stack::layered`], whose HTTP client mints a key per call.
    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Stacked::with_stack(PerIssue, Stack::layered(config)))
    }
}

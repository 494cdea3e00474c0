//! retrylab: a deterministic simulation testbed for the executors that let AI agents call
//! mutating tools.
//!
//! An agent asks a provider to create something; the provider commits, the reply is lost,
//! and the executor must decide what to do without knowing whether the effect exists.
//! retrylab simulates the agent, the executor design under test, its workers, the network
//! and the provider's idempotency contract from a seed, and counts what really happened:
//! completions, duplicate effects, false successes and failures, unresolved outcomes.
//!
//! - [`sim`]: virtual time, the event queue and the one choice point ([`sim::Chooser`]);
//! - [`model`]: JSON scenario files with path-precise errors;
//! - [`vocab`]: identifiers, protocol messages and the trace, shared by world and designs;
//! - [`world`]: the simulated components and the event loop;
//! - [`design`]: executor designs, the [`design::Design`] trait and the journal;
//! - [`check`]: metrics against the ground-truth ledger;
//! - [`report`]: tables and JSON;
//! - [`explore`]: parallel sweeps, shrinking and expectation checks;
//! - [`run`]: running seeds, or one traced run.

pub mod check;
pub mod cli;
pub mod design;
pub mod explore;
pub mod model;
pub mod report;
pub mod run;
pub mod sim;
pub mod sync;
pub mod vocab;
pub mod world;

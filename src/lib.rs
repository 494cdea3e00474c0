//! retrylab: a deterministic simulation testbed for the executors that let AI agents call
//! mutating tools.
//!
//! An agent asks a provider to create something; the provider commits, the reply is lost,
//! and the executor must decide what to do without knowing whether the effect exists.
//! retrylab simulates the agent, the executor design under test, its workers, the network
//! and the provider's idempotency contract from a seed, and counts what really happened:
//! completions, duplicate effects, false successes and failures, unresolved outcomes.
//!
//! # Quick start
//!
//! Load a model, run a design over seeds, read the metrics. On the bundled
//! `ticket_lost_response` the provider commits the ticket and the reply is lost; without a
//! key (`no_dedup`) the agent's retry creates a second ticket on every seed, under one key
//! per intent (`same_key`) the provider answers the retry from its key record:
//!
//! ```
//! use retrylab::model::Model;
//! use retrylab::run::run_seeds;
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/ticket_lost_response.json");
//! let model = Model::load(path.as_ref()).expect("a valid model");
//!
//! let no_dedup = retrylab::design::find("no_dedup").expect("built in");
//! let m = run_seeds(&model, no_dedup, 0..1000);
//! assert_eq!((m.intents, m.effects, m.duplicate_effects), (1000, 2000, 1000));
//!
//! let same_key = retrylab::design::find("same_key").expect("built in");
//! let m = run_seeds(&model, same_key, 0..1000);
//! assert_eq!((m.intents, m.effects, m.duplicate_effects), (1000, 1000, 0));
//! assert_eq!(m.completed, 1000);
//! ```
//!
//! The metrics are counted against the ground-truth ledger, never taken from the design.
//! One run with its timeline and the choices that replay it: [`run::run_traced`]. Every
//! design of a model, with intervals: [`explore::compare`]. A design of your own implements
//! [`design::Design`] and [`design::Executor`]; [`cli::main_with`] gives it every command of
//! the `retrylab` binary (`examples/custom_design.rs` is one, crash-safe).
//!
//! # Modules
//!
//! - [`sim`]: virtual time, the event queue and the one choice point ([`sim::Chooser`]);
//! - [`model`]: JSON scenario files with path-precise errors;
//! - [`vocab`]: identifiers, protocol messages and the trace, shared by world and designs;
//! - [`world`]: the simulated components and the event loop;
//! - [`design`]: executor designs, the [`design::Design`] trait and the journal;
//! - [`check`]: metrics against the ground-truth ledger;
//! - [`report`]: tables and JSON;
//! - [`explore`]: parallel sweeps, shrinking and expectation checks;
//! - [`run`]: running seeds, or one traced run;
//! - [`cli`]: the command line, and [`cli::main_with`] for a program with its own designs.

pub mod check;
pub mod cli;
pub mod design;
pub mod explore;
pub mod external;
pub mod model;
pub mod prelude;
pub mod report;
pub mod run;
pub mod sim;
pub(crate) mod sync;
pub mod vocab;
pub mod world;

//! Checkers: what happened, measured against ground truth.
//!
//! Checkers read only a run's [`Outcome`]: the ledger (every effect tagged with its intent),
//! what the user was told, each operation as the transport saw it, and the design's claims,
//! which they judge against the ledger. Designs never see any of this.

pub mod metrics;
pub mod outcome;

pub use metrics::{Metrics, Percentiles, RunSummary};
pub use outcome::Outcome;

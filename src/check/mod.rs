//! Checkers: what happened, measured against ground truth.
//!
//! Checkers read the ledger (every effect tagged with its intent), what the user was told,
//! and the journal. Designs never see any of this.

pub mod metrics;

pub use metrics::{Metrics, Percentiles};

//! Checkers: what happened, measured against ground truth.
//!
//! Checkers read only a run's [`Outcome`]: the ledger (every effect tagged with its intent),
//! what the user was told, each operation as the transport saw it, and the design's claims,
//! which they judge against the ledger. Designs never see any of this.

pub mod counters;
pub(crate) mod histogram;
pub(crate) mod metrics;
pub(crate) mod outcome;
pub(crate) mod properties;
pub(crate) mod verdict;

pub use histogram::{Histogram, Percentiles};
pub use metrics::{Metrics, RunSummary};
pub use outcome::Outcome;
pub use properties::{Judge, Property, PropertyDef, Violations};
pub use verdict::{IntentVerdict, Kind as VerdictKind, WrongReceipt, intent_verdicts};

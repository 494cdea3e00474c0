//! Reports of a comparison: one row per design, as a table or as JSON.

pub mod json;
pub mod table;

use crate::check::Metrics;

/// The result of running one design over a set of seeds.
#[derive(Clone, Debug)]
pub struct DesignResult {
    pub design: String,
    pub metrics: Metrics,
}

/// A comparison of designs on one model over the same seeds.
#[derive(Clone, Debug)]
pub struct Report {
    pub model: String,
    pub first_seed: u64,
    pub seed_count: u64,
    pub results: Vec<DesignResult>,
}

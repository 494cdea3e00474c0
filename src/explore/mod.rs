//! Search drivers above the world: sweeps over seeds (parallel, paired, deterministic),
//! shrinking of failing choice vectors, checking a model's expectations, and the
//! determinism self-check.

pub mod check;
pub mod determinism;
pub mod shrink;
pub mod sweep;

pub use shrink::{Shrunk, shrink_seed};
pub use sweep::{Comparison, Spec, Sweep, compare, sweep};

//! Search drivers above the world: sweeps over seeds (parallel, paired, deterministic),
//! shrinking of failing choice vectors, and checking a model's expectations.

pub mod check;
pub mod shrink;
pub mod sweep;

pub use shrink::{Shrunk, shrink_seed};
pub use sweep::{Comparison, Spec, Sweep, compare, sweep};

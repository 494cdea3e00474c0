//! Search drivers above the world: sweeps over seeds (parallel, paired, deterministic),
//! shrinking of failing choice vectors, checking a model's expectations, the determinism
//! self-check, and the finite menus of timing choices a search offers.

pub mod check;
pub mod determinism;
pub mod menu;
pub mod paired;
pub mod search;
pub mod shrink;
pub mod sweep;

pub use search::{Bound, Exploration, Reductions, Strategy, explore};
pub use shrink::{Shrunk, shrink_seed, shrink_values};
pub use sweep::{Comparison, Spec, Sweep, compare, sweep};

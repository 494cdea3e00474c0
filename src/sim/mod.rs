//! The engine: virtual time, the event queue and the one choice point.
//!
//! Nothing in here knows about agents or providers. The world (`crate::world`) is built on
//! these pieces; later search strategies (exhaustive, shrink) plug in behind [`Chooser`].

pub(crate) mod chooser;
pub(crate) mod hash;
pub(crate) mod moments;
pub(crate) mod named;
pub(crate) mod por;
pub(crate) mod queue;
pub(crate) mod random;
pub(crate) mod ratio;
pub(crate) mod replay;

pub use chooser::{Alternatives, Choice, Chooser, ChooserExt, Class, Purpose, Recorder};
pub use hash::{Fnv1a, StableHasher};
pub use moments::Moments;
pub(crate) use named::named_enum;
pub use por::{Parts, TieEvent};
pub use queue::{EventQueue, Handle};
pub use random::{Generator, RandomChooser};
pub use ratio::Ratio;
pub use replay::{ChoiceVector, ReplayChooser, ReplayError, ReplayKey};

/// Virtual time in milliseconds since the start of a run. Never read from a wall clock.
pub type Millis = u64;

//! Executor stacks: the retry layers of an executor as data, and the one loop that runs them.
//!
//! Most of an executor is configured, not written: an agent framework's retry policy around
//! a tool wrapper around an SDK with its own retries, each layer with its attempts, backoff,
//! the errors it retries and the key it sends. A [`Stack`] lists those layers outermost
//! first; [`Stacked`] runs it for one worker:
//!
//! - an error from below goes up the stack until a layer retries it: the innermost layer
//!   whose rule names the error's [`ErrorClass`] and that has attempts left. A retry at a
//!   layer calls the layer below anew, whose own counts start again;
//! - the key of a send is passed down the stack: past the outermost layer it is the
//!   application's (what the design's [`Identity`](crate::design::Identity) binds to the
//!   operation: none, the tool call's, the authorization's, the arguments' hash); each
//!   layer passes it on ([`KeyMode::Inherited`]), drops it ([`KeyMode::None`]), replaces
//!   it on every send ([`KeyMode::PerAttempt`]), or passes it on if it has one and
//!   otherwise mints its own when it is called, reused by its own retries
//!   ([`KeyMode::PerCall`], as an SDK sends a key it is given and generates one only when
//!   it is not);
//! - when no layer retries, the stack gives up ([`GiveUp`]): honestly as unknown, or as a
//!   failed tool result, the way a generic wrapper turns an exception into an error. A
//!   definite refusal (4xx) is a failure either way;
//! - a retry timer belongs to one call of the stack: if the agent calls again before it is
//!   due, it does nothing.
//!
//! The operation record, its scratch state and its recovery after a crash are the journal's,
//! as for every design. What a crash does to a call under way is each layer's
//! [`Redelivery`]: the restarted worker re-runs, for every operation it still owed an
//! answer, the call of the outermost layer that is redelivered (anew, as a retry of it, or
//! resumed), and a volatile journal forgets them. The application's key is the journal's
//! and never changes; what the layers mint is in memory, save for the count and key of a
//! layer redelivered with them, which the journal keeps.
//!
//! The stack as data is `layers`; what it remembers per operation, and the tag of its
//! retry timer, `calls`; the loop that runs it, `stacked`.

mod calls;
mod layers;
mod stacked;

pub use crate::model::stack::{
    ErrorClass, GiveUp, Jitter, KeyMode, MAX_LAYERS, Redelivery, StackSpec,
};
pub use layers::{Backoff, Layer, RetryOn, Stack};
pub use stacked::Stacked;

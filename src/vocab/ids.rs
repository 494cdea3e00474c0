//! Identifiers of the simulated world. Plain integers, assigned in order within a run.

use std::fmt;

macro_rules! id {
    ($(#[$doc:meta])* $name:ident($t:ty), $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub $t);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id!(
    /// Ground-truth identity of one intent of the user. Only the world and the checkers see
    /// it: no message a design receives or sends carries it (see [`CallId`]).
    IntentId(u32), "intent "
);
id!(
    /// One tool call proposed by the agent. A replan is a new call. The world knows which
    /// intent and step each call serves (the agent made it); a design knows only the call.
    CallId(u32), "call "
);
id!(
    /// The user's authorization of one action of an intent: the business identity a design
    /// may bind its operation to. A genuine repeat has its own, and so has an action the user
    /// authorized again after the agent lost the first authorization (`agent.authorization_loss`).
    /// Numbered in the order the user gives them: the number says nothing about the intent.
    AuthId(u32), "auth "
);
id!(
    /// An operation record in the executor's journal.
    OpId(u32), "op "
);
id!(
    /// One send to the provider, numbered from 1 across the run.
    AttemptId(u32), "attempt "
);
id!(
    /// One worker process of the executor.
    WorkerId(u32), "worker "
);
id!(
    /// An idempotency key (or client token) as the provider sees it.
    Key(u64), "k"
);
id!(
    /// A resource created by a committed effect.
    ResourceId(u32), "r"
);
id!(
    /// The account a request is made for.
    Tenant(u32), "tenant "
);
id!(
    /// The API operation (create ticket, book room...).
    Endpoint(u32), "endpoint "
);
id!(
    /// The region (or zone) endpoint a request is sent to.
    Region(u32), "region "
);
id!(
    /// The arguments of a request, as one value: equal params mean identical requests.
    Params(u64), "params "
);

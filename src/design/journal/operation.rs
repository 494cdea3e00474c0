//! The durable operation record: what a real executor writes to its database.
//!
//! Everything here would survive a process restart in a real deployment: the operation's
//! identity (its id, the authorization it is bound to, the tool call it serves), the provider
//! key, the parameter fingerprint, the owner, the state with its timestamps, and what the
//! provider gave back (a receipt, a status handle). The executor loop's working state is
//! elsewhere ([`Scratch`](super::Scratch)), and so are claims ([`Leases`](super::Leases)).

use super::OpState;
use crate::sim::Millis;
use crate::vocab::ids::*;
use crate::vocab::protocol::ToolCall;

/// One durable operation record.
///
/// The identity fields (`id`, `auth`, `call`) are read through methods: the journal indexes
/// them, so the call is changed only through [`Journal::set_call`](super::Journal::set_call).
/// The state and its times change only through the journal's transitions.
#[derive(Clone, Debug)]
pub struct Operation {
    pub(super) id: OpId,
    pub(super) auth: AuthId,
    /// The latest tool call this operation serves; results are reported to it.
    pub(super) call: ToolCall,
    /// The provider key, if the design uses one.
    pub key: Option<Key>,
    /// Parameters the operation was created with.
    pub fingerprint: Params,
    /// The worker that runs it.
    pub owner: WorkerId,
    /// The resource, once known.
    pub receipt: Option<ResourceId>,
    /// Status handle of accepted (202) work.
    pub handle: Option<u32>,
    /// When a create first left under `key`: the key's age is counted from it.
    pub key_sent_ms: Option<Millis>,
    pub(super) state: OpState,
    pub(super) created_ms: Millis,
    pub(super) updated_ms: Millis,
}

impl Operation {
    /// A new record for `call`, in state `Proposed`.
    pub(super) fn new(
        id: OpId,
        call: &ToolCall,
        key: Option<Key>,
        owner: WorkerId,
        now: Millis,
    ) -> Self {
        Self {
            id,
            auth: call.auth,
            call: *call,
            key,
            fingerprint: call.params,
            owner,
            receipt: None,
            handle: None,
            key_sent_ms: None,
            state: OpState::Proposed,
            created_ms: now,
            updated_ms: now,
        }
    }

    pub fn id(&self) -> OpId {
        self.id
    }

    /// The authorization the operation is bound to (fixed at creation).
    pub fn auth(&self) -> AuthId {
        self.auth
    }

    /// The latest tool call this operation serves; results are reported to it.
    pub fn call(&self) -> ToolCall {
        self.call
    }
}

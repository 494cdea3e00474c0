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
    /// The key this operation was first sent under, and when (what every retry under that
    /// key tells the provider as its first-sent time). Written by the send itself, so it is
    /// exactly as durable as the journal.
    pub(super) first_sent: Option<(Key, Millis)>,
}

/// Its times are hashed exactly, except those of a settled operation of a design that
/// declares it never reads them (`sim::moments::journal_exact`): whether each is
/// set still is. The first-sent moment is the provider's to read (a retry under the same
/// key carries it, and a design may send a failed operation again): it is hashed as the
/// provider's key moments are (`sim::moments::of_keys`), settled or not.
impl std::hash::Hash for Operation {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let Operation {
            id,
            auth,
            call,
            key,
            fingerprint,
            owner,
            receipt,
            handle,
            key_sent_ms,
            state,
            created_ms,
            updated_ms,
            first_sent,
        } = self;
        id.hash(h);
        auth.hash(h);
        call.hash(h);
        key.hash(h);
        fingerprint.hash(h);
        owner.hash(h);
        receipt.hash(h);
        handle.hash(h);
        state.hash(h);
        first_sent.map(|(k, _)| k).hash(h);
        if crate::sim::moments::journal_exact() {
            first_sent.map(|(_, t)| t).hash(h);
        } else {
            crate::sim::moments::of_keys_opt(h, first_sent.map(|(_, t)| t));
        }
        key_sent_ms.is_some().hash(h);
        if crate::sim::moments::journal_exact() || !state.is_settled() {
            key_sent_ms.hash(h);
            created_ms.hash(h);
            updated_ms.hash(h);
        }
    }
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
            first_sent: None,
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

    /// When this operation was first sent under its current key, if it has been.
    pub fn first_sent_ms(&self) -> Option<Millis> {
        match (self.first_sent, self.key) {
            (Some((k, at)), Some(key)) if k == key => Some(at),
            _ => None,
        }
    }

    /// The first-sent time of a send under `key` at `now`: the time of the first send under
    /// `key` if there was one, else `now`, recorded as such. A new key starts afresh.
    pub(crate) fn stamp_first_sent(&mut self, key: Key, now: Millis) -> Millis {
        match self.first_sent {
            Some((k, at)) if k == key => at,
            _ => {
                self.first_sent = Some((key, now));
                now
            }
        }
    }
}

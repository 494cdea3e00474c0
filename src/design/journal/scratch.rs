//! Executor scratch state: the per-operation working state of the executor loop.
//!
//! Budgets, the attempt whose reply is awaited, whether an action is under way: none of this
//! is part of the operation's durable record, yet the designs' recovery reads it (a restarted
//! worker resumes the operations that still owe a report). The simulator keeps it beside the
//! record, with the record's fate: a durable journal keeps both across a worker crash, a
//! volatile one forgets both.

use crate::sim::Millis;
use crate::vocab::ids::AttemptId;

/// The executor's working state for one operation. Three fields are any design's: the
/// call's budgets spent and whether the agent is owed a result. The others are the
/// built-in journal designs' loop (`design::journaled`), private to the crate: a custom
/// design keeps what else it needs in its own memory or in the journal's key-value store
/// (`Journal::kv_mut`), as an external executor does with `kv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scratch {
    /// Sends since the last agent call.
    pub attempts: u32,
    /// Reads since the last agent call.
    pub reads: u32,
    /// The attempt whose response is awaited.
    pub(crate) last_attempt: Option<AttemptId>,
    /// Whether the agent is still owed a result for the operation's call.
    pub owes_report: bool,
    /// An action (a send, a read, a poll or a wait before one) is under way.
    pub(crate) busy: bool,
    /// When a create was last sent.
    pub(crate) last_send_ms: Option<Millis>,
    /// When any request (create, read, poll) was last sent for it.
    pub(crate) last_action_ms: Option<Millis>,
    /// A read-back answered (a trusted "not found", or "unsupported"): the next create may go.
    pub(crate) cleared_to_send: bool,
    /// That answer proved the effect absent (a trusted "not found"), so the next create may
    /// go even under a key older than the assumed retention.
    pub(crate) absence_proved: bool,
}

impl Scratch {
    /// Hashes it for a fingerprint; its times only if `times` (whether each is set always).
    pub(crate) fn fingerprint<H: std::hash::Hasher>(&self, h: &mut H, times: bool) {
        use std::hash::Hash;
        let Scratch {
            attempts,
            reads,
            last_attempt,
            owes_report,
            busy,
            last_send_ms,
            last_action_ms,
            cleared_to_send,
            absence_proved,
        } = self;
        attempts.hash(h);
        reads.hash(h);
        last_attempt.hash(h);
        owes_report.hash(h);
        busy.hash(h);
        last_send_ms.is_some().hash(h);
        last_action_ms.is_some().hash(h);
        if times {
            last_send_ms.hash(h);
            last_action_ms.hash(h);
        }
        cleared_to_send.hash(h);
        absence_proved.hash(h);
    }

    /// The state of a new operation: nothing sent yet, and its call owed a report.
    pub fn new() -> Self {
        Self {
            attempts: 0,
            reads: 0,
            last_attempt: None,
            owes_report: true,
            busy: false,
            last_send_ms: None,
            last_action_ms: None,
            cleared_to_send: false,
            absence_proved: false,
        }
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

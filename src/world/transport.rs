//! The transport's side of a run: each send as the transport saw it, the request it put on
//! the wire, its timeout's handle in the queue, and the ids the executors minted.

use std::hash::{Hash, Hasher};

use crate::design::context::Minted;
use crate::sim::queue::Handle;
use crate::vocab::ids::{IntentId, OpId, WorkerId};
use crate::vocab::protocol::Request;

/// One send, as the transport sees it.
#[derive(Clone, Copy, Debug, Hash)]
pub(super) struct AttemptInfo {
    pub(super) worker: WorkerId,
    pub(super) op: OpId,
    /// Waiting for a reply: neither answered, timed out, nor orphaned by a crash.
    pub(super) open: bool,
    /// A create (a read or a poll leaves nothing unknown when it fails).
    pub(super) create: bool,
    /// The intent and step the send serves (ground truth, for the effect it may commit).
    pub(super) serves: Option<(IntentId, u32)>,
}

/// The sends of a run, by attempt (attempt `n` at index `n - 1`).
#[derive(Clone, Debug, Default)]
pub(super) struct Transport {
    pub(super) attempts: Vec<AttemptInfo>,
    /// The request of each attempt, as it went on the wire.
    pub(super) requests: Vec<Request>,
    /// The attempt ids and keys the executors' contexts have minted.
    pub(super) minted: Minted,
    /// Sends made (each a remote call), for the metrics.
    pub(super) remote_calls: u64,
    /// The queued timeout of each attempt, cancelled once the attempt closes. Not part of
    /// the state: a cancelled timer is a no-op that never pops, and which slot an event sits
    /// in says nothing.
    pub(super) attempt_timers: Vec<Option<Handle>>,
    /// The should-retry header of the reply about to be handed to an executor: set just
    /// before, taken by the executor's context (never kept past one callback).
    pub(super) answer_should_retry: Option<bool>,
}

impl Transport {
    /// As at the start of a run, keeping the memory.
    pub(super) fn clear(&mut self) {
        let Transport {
            attempts,
            requests,
            minted,
            remote_calls,
            attempt_timers,
            answer_should_retry,
        } = self;
        attempts.clear();
        requests.clear();
        *minted = Minted::default();
        *remote_calls = 0;
        attempt_timers.clear();
        *answer_should_retry = None;
    }

    pub(super) fn reserve(&mut self, n: usize) {
        self.attempts.reserve(n);
        self.requests.reserve(n);
    }

    /// Hashes the state (the requests are hashed with the events that carry them).
    pub(super) fn fingerprint<H: Hasher>(&self, h: &mut H) {
        let Transport {
            attempts,
            requests: _,
            minted,
            remote_calls,
            attempt_timers: _,
            answer_should_retry,
        } = self;
        debug_assert!(
            answer_should_retry.is_none(),
            "taken by the callback it was set for"
        );
        debug_assert_eq!(attempts.len(), self.requests.len());
        attempts.hash(h);
        minted.hash(h);
        remote_calls.hash(h);
    }
}

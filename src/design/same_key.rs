//! `same_key`: one operation and one key per authorized intent.
//!
//! The operation is bound to the user's authorization, so transport retries, re-runs of the
//! call *and* the agent's replans all go through the same record and present the same key.
//! Safe as far as the provider's key contract reaches (scope, retention, atomicity); a
//! changed argument under the same key is the provider's mismatch rule to judge. It has no
//! notion of a key's age: it sends the key for as long as the agent asks.
//!
//! Guarantee: no duplicate effect and no merged repeat, provided that the provider
//! deduplicates the caller's key atomically (`atomic_dedup`), within one scope
//! (`one_key_scope`); a concurrent same-key request is refused (409) or waits
//! (`in_flight_refused_or_held`); every outcome (5xx included) is stored
//! (`every_outcome_stored`); the key is kept for the whole retry horizon the model allows
//! (`retention_covers_retries`); a changed request under the key is refused or answered as
//! the original (`mismatch_refused_or_original`); and the journal is durable
//! (`durable_journal`). Changed arguments are refused only if the provider saw the original
//! request: when the first request was lost on the way, the changed one is simply new to
//! the provider, and it is applied.

use super::assumptions::{self as a, Resender};
use super::context::ExecCtx;
use super::retrying::{Identity, Retrying};
use super::{Assumption, Design, Executor};
use crate::model::ExecutorModel;
use crate::vocab::ids::OpId;
use crate::vocab::protocol::ToolCall;

pub struct SameKey;

impl Design for SameKey {
    fn parts(&self) -> crate::sim::Parts {
        crate::sim::Parts::EXECUTORS
    }
    fn symmetric(&self) -> bool {
        true
    }

    fn reads_settled_times(&self) -> bool {
        false
    }
    fn name(&self) -> &str {
        "same_key"
    }

    fn summary(&self) -> &str {
        "one key per authorized intent, reused by every retry and replan"
    }

    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        Box::new(Retrying::new(PerIntent, config))
    }

    fn guarantee(&self) -> Vec<crate::check::Property> {
        use crate::check::Property::*;
        vec![
            NoDuplicate,
            NoMergedRepeat,
            NoWrongReceipt,
            NoWrongCompensation,
        ]
    }

    fn assumptions(&self) -> Vec<Assumption> {
        let mut list = a::key_contract(Resender::Retrying);
        list.push(a::mismatch_refused_or_original());
        list.push(a::durable_journal());
        list.push(a::authorization_survives());
        list
    }
}

#[derive(Clone, Copy)]
pub(crate) struct PerIntent;

impl Identity for PerIntent {
    /// Stateless: a copy is itself.
    fn copy(&self) -> Option<Self> {
        Some(*self)
    }

    /// Stateless: everything it knows is in the journal.
    fn fingerprint(&self, _h: &mut dyn std::hash::Hasher) -> bool {
        true
    }

    /// Stateless: nothing to forget.
    fn reset(&mut self) -> bool {
        true
    }

    fn operation(&self, ctx: &mut ExecCtx<'_>, call: &ToolCall) -> OpId {
        if let Some(op) = ctx.journal_ref().find_by_auth(call.auth) {
            return op;
        }
        let key = Some(ctx.new_key());
        let (worker, now) = (ctx.worker(), ctx.now());
        ctx.journal().create(call, key, worker, now)
    }
}

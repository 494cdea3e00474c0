//! The user's intents, arriving over time.
//!
//! Intent `i` arrives `spacing_ms` after intent `i-1`. With probability `genuine_repeat` it
//! carries the same parameters as the previous intent: the user really wants a second,
//! identical resource, which a correct executor must not merge into the first. With
//! `repeat_across_tenants` the repeat comes from the next tenant in turn: two customers
//! asking for exactly the same thing.

/// The parts of the world an event of the workload reads or writes (`sim::por`): the next intent and when it arrives.
pub const PARTS: crate::sim::Parts = crate::sim::Parts::WORKLOAD;

use crate::model::WorkloadModel;
use crate::sim::{Chooser, ChooserExt, Millis, Purpose};
use crate::vocab::ids::*;
use crate::vocab::record::Intent;

#[derive(Clone, Debug)]
pub struct Workload {
    config: WorkloadModel,
    intents: Vec<Intent>,
}

impl Workload {
    pub fn new(config: WorkloadModel) -> Self {
        Self {
            config,
            intents: Vec::new(),
        }
    }

    pub(crate) fn clear(&mut self) {
        self.intents.clear();
    }

    pub(crate) fn reserve(&mut self, n: usize) {
        self.intents.reserve(n);
    }

    /// The next intent arrives now. Returns it and when the one after it arrives, if any.
    pub(crate) fn arrive(&mut self, now: Millis, ch: &mut dyn Chooser) -> (Intent, Option<Millis>) {
        let i = self.intents.len() as u32;
        let previous = self.intents.last().copied();
        let repeat_of = match previous {
            Some(p) if ch.chance(Purpose::Repeat, self.config.genuine_repeat) => Some(p),
            _ => None,
        };
        let tenant = Tenant(i % self.config.tenants);
        let intent = Intent {
            id: IntentId(i),
            arrival_ms: now,
            // A repeat is the same request again: for the same tenant, unless repeats come
            // from the tenant whose turn it is.
            tenant: match repeat_of {
                Some(p) if !self.config.repeat_across_tenants => p.tenant,
                _ => tenant,
            },
            endpoint: Endpoint(0),
            params: repeat_of.map_or(Params(u64::from(i) + 1), |p| p.params),
            repeat_of: repeat_of.map(|p| p.id),
            steps: self.config.steps,
        };
        self.intents.push(intent);
        let next = (i + 1 < self.config.intents).then(|| {
            let s = self.config.spacing_ms;
            now + ch.between(Purpose::Arrival, s.min, s.max)
        });
        (intent, next)
    }

    pub fn intents(&self) -> &[Intent] {
        &self.intents
    }

    /// Hashes the intents so far (the configuration is the model's).
    pub(crate) fn fingerprint<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        let Workload { config: _, intents } = self;
        intents.hash(h);
    }
}

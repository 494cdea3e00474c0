//! Metrics of runs, summed over seeds.
//!
//! Definitions, per intent `i` and workflow step `k` (one step unless the workload has
//! several), with `e(i, k)` effects of step `k` tagged with intent `i` in the ledger and
//! `u(i, k)` compensations of step `k`:
//! - `intents`: intents the workload produced.
//! - `effects`: committed effects of the intents' steps (compensations are counted apart).
//! - `completed`: the user was told success and `e(i, k) >= 1` for every step.
//! - `duplicate_effects`: the sum of `max(0, e(i, k) - 1)` and `max(0, u(i, k) - 1)`:
//!   effects beyond one per intent and step.
//! - `compensations`: committed compensating effects.
//! - `false_success`: told success but some step has `e(i, k) == 0`.
//! - `false_failure`: told failure but some step's effect exists (`e(i, k) >= 1`) and was
//!   not compensated (`u(i, k) == 0`).
//! - `drifted_effects`: effects whose arguments differ from the ones the user asked for (an
//!   agent's changed arguments, silently applied).
//! - `merged_repeats`: a genuine repeat (same parameters as the intent before it, which the
//!   user really wanted twice) told success with no effect of its own, on a receipt naming a
//!   resource another intent created: it was merged into that one. Every merged repeat is a
//!   false success. (A merge answered without a receipt, a bare "already exists", counts
//!   only as a false success.)
//! - `unresolved`: at the horizon the user was told nothing, or was told the outcome is
//!   unresolved.
//! - `unknown_ops`: operations that became unknown and were never resolved by the horizon.
//! - `remote_calls`: requests the executors sent to the provider (every attempt and lookup);
//!   divided by `intents` it is the retry amplification.
//! - `reconciliation_ms`: for each operation that became unknown and was later resolved, the
//!   time from its first unknown moment to its resolution.
//! - `time_to_outcome_ms`: for each intent the user was told success or failure about, the
//!   time from its arrival to that message.

use serde::Serialize;

use crate::sim::Millis;
use crate::vocab::protocol::COMPENSATION;
use crate::world::World;
use crate::world::agent::Told;
use crate::world::workload::{MAX_STEPS, step_params};

/// Totals over one or more runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    pub seeds: u64,
    pub intents: u64,
    pub effects: u64,
    pub completed: u64,
    pub duplicate_effects: u64,
    pub drifted_effects: u64,
    pub compensations: u64,
    pub false_success: u64,
    pub false_failure: u64,
    pub merged_repeats: u64,
    pub unresolved: u64,
    pub unknown_ops: u64,
    pub remote_calls: u64,
    pub reconciliation_ms: Vec<Millis>,
    pub time_to_outcome_ms: Vec<Millis>,
}

impl Metrics {
    /// Adds the outcome of the run `world` just finished.
    pub fn add_run(&mut self, world: &World<'_>) {
        self.seeds += 1;
        self.remote_calls += world.remote_calls();
        let intents = world.workload().intents();
        // Effects per (intent, slot): slot k for step k, MAX + k for its compensation. On
        // the stack for small workloads: no allocation per seed.
        const SLOTS: usize = 2 * MAX_STEPS as usize;
        let mut small = [0u32; 8 * SLOTS];
        let mut large = Vec::new();
        let counts: &mut [u32] = if intents.len() * SLOTS <= small.len() {
            &mut small[..intents.len() * SLOTS]
        } else {
            large.resize(intents.len() * SLOTS, 0);
            &mut large
        };
        for effect in world.ledger().effects() {
            let i = effect.intent.0 as usize;
            let slot = if effect.step >= COMPENSATION {
                self.compensations += 1;
                MAX_STEPS + effect.step - COMPENSATION
            } else {
                self.effects += 1;
                let asked = step_params(intents[i].params, effect.step);
                self.drifted_effects += u64::from(effect.params != asked);
                effect.step
            };
            counts[i * SLOTS + slot as usize] += 1;
        }
        for intent in intents {
            self.intents += 1;
            let c = &counts[intent.id.0 as usize * SLOTS..][..SLOTS];
            let (forward, undone) = c.split_at(MAX_STEPS as usize);
            self.duplicate_effects += c
                .iter()
                .map(|&n| u64::from(n.saturating_sub(1)))
                .sum::<u64>();
            let steps = intent.steps as usize;
            let all_done = forward[..steps].iter().all(|&n| n >= 1);
            // An effect left behind: more of a step's effects than compensations of it.
            let left_behind = (0..steps).any(|k| forward[k] > undone[k]);
            match world.agent().told(intent.id) {
                Some((Told::Success, at)) => {
                    self.time_to_outcome_ms.push(at - intent.arrival_ms);
                    if all_done {
                        self.completed += 1;
                    } else {
                        self.false_success += 1;
                        // Absorbed: the success named a resource another intent created.
                        let receipt = world.agent().receipt(intent.id, 0);
                        let merged = forward[0] == 0
                            && intent.repeat_of.is_some()
                            && receipt.is_some_and(|r| {
                                world.ledger().effects().iter().any(|e| {
                                    e.resource == r && e.intent != intent.id && e.step == 0
                                })
                            });
                        self.merged_repeats += u64::from(merged);
                    }
                }
                Some((Told::Failure, at)) => {
                    self.time_to_outcome_ms.push(at - intent.arrival_ms);
                    self.false_failure += u64::from(left_behind);
                }
                Some((Told::Unresolved, _)) | None => self.unresolved += 1,
            }
        }
        let journal = world.journal();
        self.unknown_ops += journal.unknown_count();
        self.reconciliation_ms
            .extend_from_slice(journal.reconciliation_ms());
    }

    /// Adds totals of other runs (for merging parallel or sharded results).
    pub fn merge(&mut self, other: &Metrics) {
        self.seeds += other.seeds;
        self.intents += other.intents;
        self.effects += other.effects;
        self.completed += other.completed;
        self.duplicate_effects += other.duplicate_effects;
        self.drifted_effects += other.drifted_effects;
        self.compensations += other.compensations;
        self.false_success += other.false_success;
        self.false_failure += other.false_failure;
        self.merged_repeats += other.merged_repeats;
        self.unresolved += other.unresolved;
        self.unknown_ops += other.unknown_ops;
        self.remote_calls += other.remote_calls;
        self.reconciliation_ms
            .extend_from_slice(&other.reconciliation_ms);
        self.time_to_outcome_ms
            .extend_from_slice(&other.time_to_outcome_ms);
    }

    /// Remote calls per intent.
    pub fn calls_per_intent(&self) -> f64 {
        if self.intents == 0 {
            0.0
        } else {
            self.remote_calls as f64 / self.intents as f64
        }
    }
}

/// Nearest-rank percentiles of a sample; all `None` when it is empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Percentiles {
    pub count: u64,
    pub p50: Option<Millis>,
    pub p90: Option<Millis>,
    pub p99: Option<Millis>,
    pub max: Option<Millis>,
}

impl Percentiles {
    /// Percentiles of `values` (order does not matter).
    pub fn of(values: &[Millis]) -> Percentiles {
        let mut v = values.to_vec();
        v.sort_unstable();
        let rank = |p: u64| -> Option<Millis> {
            let n = v.len() as u64;
            if n == 0 {
                return None;
            }
            // Nearest rank: the smallest value with at least p% of the sample at or below it.
            let r = (p * n).div_ceil(100).max(1);
            Some(v[(r - 1) as usize])
        };
        Percentiles {
            count: v.len() as u64,
            p50: rank(50),
            p90: rank(90),
            p99: rank(99),
            max: v.last().copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<Millis> = (1..=100).rev().collect();
        let p = Percentiles::of(&v);
        assert_eq!(
            (p.count, p.p50, p.p90, p.p99, p.max),
            (100, Some(50), Some(90), Some(99), Some(100))
        );
        let p = Percentiles::of(&[7]);
        assert_eq!((p.p50, p.p99, p.max), (Some(7), Some(7), Some(7)));
        assert_eq!(Percentiles::of(&[]).p50, None);
    }
}

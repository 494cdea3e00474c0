//! Metrics of runs, summed over seeds.
//!
//! Definitions, per intent `i` and workflow step `k` (one step unless the workload has
//! several), with `e(i, k)` effects of step `k` tagged with intent `i` in the ledger and
//! `u(i, k)` compensations that removed one of them. A compensation is judged by the
//! resource it names, not by the call that sent it: one an agent sent for intent 0 that
//! removed intent 1's ticket counts in `u(1, k)`, and as a wrong compensation.
//! - `intents`: intents the workload produced.
//! - `effects`: committed effects of the intents' steps (compensations are counted apart).
//! - `completed`: the user was told success and `e(i, k) > u(i, k)` for every step (an effect
//!   of it exists and was not removed).
//! - `duplicate_effects`: the sum of `max(0, e(i, k) - 1)` and `max(0, u(i, k) - 1)`:
//!   effects beyond one per intent and step.
//! - `compensations`: committed compensating effects.
//! - `false_success`: told success but some step has no effect left (`e(i, k) == u(i, k)`,
//!   none committed or every one removed).
//! - `false_failure`: told failure but some step's effect exists (`e(i, k) >= 1`) and was
//!   not compensated (`e(i, k) > u(i, k)`).
//! - `drifted_effects`: effects whose arguments differ from the ones the user asked for (an
//!   agent's changed arguments, silently applied).
//! - `merged_repeats`: a genuine repeat (same parameters as the intent before it, which the
//!   user really wanted twice) told success with no effect of its own, on a receipt naming a
//!   resource another intent created: it was merged into that one. Every merged repeat is a
//!   false success. (A merge answered without a receipt, a bare "already exists", counts
//!   only as a false success.)
//! - `wrong_receipts`: steps reported done on a receipt that is not an effect of that intent
//!   and step (another intent's resource, or none the ledger has). A step reported done
//!   without a receipt is not counted. Unlike `false_resolutions`, which judges what the
//!   design claims in its journal, this judges what the user was handed.
//! - `wrong_compensations`: compensations that did not remove an effect of the intent and
//!   step they were sent to undo (they removed another intent's or step's resource, or
//!   nothing).
//! - `true_failures`: told failure, and no effect was left behind.
//! - `masked_mismatches`: a step reported done for a call whose arguments the agent had
//!   changed, while no effect carries those arguments: the provider answered the changed call
//!   as the original (or the executor did), and the agent believes the changed action happened.
//! - `budget_runs`: seeds whose run was cut by the events budget
//!   ([`MAX_EVENTS`](crate::world::MAX_EVENTS)) before its horizon; their figures are those
//!   of the run so far, and no verdict trusts them (see [`RunSummary::budget`]).
//! - `unresolved`: at the horizon the user was told nothing, or was told the outcome is
//!   unresolved.
//!
//! Operations are judged from the run's [`Outcome`]: the transport's view of when each became
//! unknown, and the design's claims checked against the ledger.
//! - `unknown_ops`: operations that became unknown (a timeout, a 5xx, a 409, a 412, a crash
//!   with a create in flight) and were never truly resolved: no claim the ledger agrees with
//!   (confirmed with a receipt of this intent's effect, or failed with no effect of its own).
//! - `false_resolutions`: operations with a claim the ledger contradicts (confirmed on a
//!   resource that is not this intent's, confirmed with no effect at all, or failed although
//!   one of its sends committed).
//! - `remote_calls`: requests the executors sent to the provider (every attempt and lookup);
//!   divided by `intents` it is the retry amplification.
//! - `reconciliation_ms`: for each operation that became unknown and was later truly
//!   resolved, the time from its first unknown moment to the first true resolution.
//! - `time_to_outcome_ms`: for each intent the user was told success or failure about, the
//!   time from its arrival to that message.

pub use super::counters::{Metrics, RunSummary};
use super::outcome::{Claim, ClaimKind, End, Heard, Outcome, Told};
use super::properties::violated_bits;
use crate::sim::Millis;
use crate::vocab::ids::ResourceId;
use crate::vocab::protocol::MAX_STEPS;
use crate::vocab::protocol::{COMPENSATION, compensation_target};
use crate::vocab::record::Effect;
use crate::vocab::record::{Intent, step_params};

impl Metrics {
    /// Adds one run's outcome; returns what the properties are evaluated on.
    pub fn add_outcome(&mut self, o: &Outcome<'_>) -> RunSummary {
        let before = self.snapshot();
        self.seeds += 1;
        let budget = o.end == End::Budget;
        self.budget_runs += u64::from(budget);
        self.remote_calls += o.remote_calls;
        self.add_intents(o);
        let longest_unknown_ms = self.add_operations(o);
        RunSummary {
            longest_unknown_ms,
            budget,
            custom: o.properties,
            custom_violated: violated_bits(o.properties, o),
            ..self.since(&before)
        }
    }

    /// Per intent: its effects against what it asked for and what the user was told.
    fn add_intents(&mut self, o: &Outcome<'_>) {
        let intents = o.intents;
        // Per (intent, slot): slot k counts step k's effects, S + k the compensations that
        // removed one of them, 2S + k those of its effects no compensation removed, with S
        // the most steps an intent has. On the stack for small workloads: no allocation per
        // seed; for large ones as few slots as the workflow needs.
        let s = intents
            .iter()
            .map(|i| i.steps)
            .max()
            .unwrap_or(1)
            .clamp(1, MAX_STEPS) as usize;
        let slots = 3 * s;
        let mut small = [0u32; 96];
        let mut large = Vec::new();
        let counts: &mut [u32] = if intents.len() * slots <= small.len() {
            &mut small[..intents.len() * slots]
        } else {
            large.resize(intents.len() * slots, 0);
            &mut large
        };
        self.count_effects(o, counts, s);
        for (intent, heard) in intents.iter().zip(o.heard) {
            let c = &counts[intent.id.0 as usize * slots..][..slots];
            self.judge_intent(o, intent, heard, c, s);
        }
    }

    /// Counts each effect of the ledger into the (intent, slot) of `counts` it belongs to
    /// (see [`Self::add_intents`]), and the effects, compensations and duplicates as it goes.
    fn count_effects(&mut self, o: &Outcome<'_>, counts: &mut [u32], s: usize) {
        let slots = 3 * s;
        let any_compensation = o.effects.iter().any(|e| e.step >= COMPENSATION);
        for effect in o.effects {
            let mut i = effect.intent.0 as usize;
            let slot = if effect.step >= COMPENSATION {
                self.compensations += 1;
                // Judged by the resource it removed: it undoes that resource's intent and
                // step, whichever intent's call sent it.
                let undone = removed(o.effects, effect);
                let own = undone.is_some_and(|u| {
                    u.intent == effect.intent && u.step == effect.step - COMPENSATION
                });
                self.wrong_compensations += u64::from(!own);
                let Some(u) = undone else {
                    // It removed nothing: no step is undone by it.
                    continue;
                };
                i = u.intent.0 as usize;
                s + (u.step as usize).min(s - 1)
            } else {
                self.effects += 1;
                let asked = step_params(o.intents[i].params, effect.step);
                self.drifted_effects += u64::from(effect.params != asked);
                let k = (effect.step as usize).min(s - 1);
                let gone = any_compensation
                    && o.effects.iter().any(|c| {
                        c.step >= COMPENSATION && compensation_target(c.params) == effect.resource
                    });
                counts[i * slots + 2 * s + k] += u32::from(!gone);
                k
            };
            let n = &mut counts[i * slots + slot];
            // Every effect past the first of its intent and slot is a duplicate (an intent
            // with effects has started, so the loop of `add_intents` visits it).
            self.duplicate_effects += u64::from(*n > 0);
            *n += 1;
        }
    }

    /// Judges what the user was told about `intent` against its slots `c` of the counts: a
    /// completion or a false success, a true or a false failure, or nothing resolved.
    fn judge_intent(
        &mut self,
        o: &Outcome<'_>,
        intent: &Intent,
        heard: &Heard,
        c: &[u32],
        s: usize,
    ) {
        self.intents += 1;
        let (forward, live) = (&c[..s], &c[2 * s..]);
        let steps = intent.steps as usize;
        // A step is done while one of its effects exists that no compensation removed;
        // a failure with such an effect left it behind.
        let all_done = (0..steps).all(|k| live[k] > 0);
        let left_behind = (0..steps).any(|k| live[k] > 0);
        self.masked_mismatches += masked_steps(o, intent, heard);
        self.wrong_receipts += wrong_receipts(o, intent, heard);
        match heard.told {
            Some((Told::Success, at)) => {
                self.time_to_outcome_ms.record(at - intent.arrival_ms);
                if all_done {
                    self.completed += 1;
                } else {
                    self.false_success += 1;
                    let merged = forward[0] == 0 && merged_repeat(o, intent, heard);
                    self.merged_repeats += u64::from(merged);
                }
            }
            Some((Told::Failure, at)) => {
                self.time_to_outcome_ms.record(at - intent.arrival_ms);
                if left_behind {
                    self.false_failure += 1;
                } else {
                    self.true_failures += 1;
                }
            }
            Some((Told::Unresolved, _)) | None => self.unresolved += 1,
        }
    }

    /// Per operation: when it became unknown, and whether a true claim resolved it. Returns
    /// the run's longest unknown period (see [`RunSummary::longest_unknown_ms`]).
    fn add_operations(&mut self, o: &Outcome<'_>) -> Millis {
        // One pass over the claims: how many operations they name, and which facts of the
        // ledger they need. Which operations committed matters only to a failure claim, the
        // per intent step bits only to a confirmation without a receipt.
        let mut n_ops = o.ops.len();
        let (mut failed, mut bare) = (false, false);
        for c in o.claims {
            n_ops = n_ops.max(c.op.0 as usize + 1);
            failed |= c.kind == ClaimKind::Failed;
            bare |= c.kind == ClaimKind::Confirmed(None);
        }
        with_scratch(n_ops, |judged: &mut [Judged]| {
            if bare {
                with_scratch(o.intents.len(), |steps: &mut [u32]| {
                    self.judge(Facts::of(o, judged, steps, failed), o)
                })
            } else {
                self.judge(Facts::of(o, judged, &mut [], failed), o)
            }
        })
    }

    /// Judges every claim against `facts`, then counts each operation's outcome.
    fn judge(&mut self, facts: Facts<'_, '_>, o: &Outcome<'_>) -> Millis {
        for c in o.claims {
            let true_claim = facts.agrees(c);
            let j = &mut facts.judged[c.op.0 as usize];
            j.false_claim |= !true_claim;
            let since = o.ops.get(c.op.0 as usize).and_then(|r| r.first_unknown_ms);
            if !true_claim || since.is_none_or(|t| c.at_ms < t) {
                continue;
            }
            if c.kind != ClaimKind::Escalated && !j.resolved {
                j.resolved = true;
                j.resolved_at = c.at_ms;
            }
            if !j.settled {
                j.settled = true;
                j.settled_at = c.at_ms;
            }
        }
        let mut longest: Millis = 0;
        for (j, record) in facts
            .judged
            .iter()
            .zip(o.ops.iter().map(Some).chain(std::iter::repeat(None)))
        {
            self.false_resolutions += u64::from(j.false_claim);
            let Some(since) = record.and_then(|r| r.first_unknown_ms) else {
                continue;
            };
            if j.resolved {
                self.reconciliation_ms.record(j.resolved_at - since);
            } else {
                self.unknown_ops += 1;
            }
            let waited = if j.settled {
                j.settled_at - since
            } else if o.end == End::Quiescent {
                Millis::MAX
            } else {
                o.end_ms.saturating_sub(since).saturating_add(1)
            };
            longest = longest.max(waited);
        }
        longest
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

/// What the checker found about one operation. Flags and times rather than options: 24
/// bytes that start as zeros, so that a run's scratch of them is cheap to clear.
#[derive(Clone, Copy, Debug, Default)]
struct Judged {
    /// One of its sends committed an effect (known only when a failure claim needs it).
    committed: bool,
    false_claim: bool,
    /// A true claim of a resolution (confirmed or failed) came after it became unknown;
    /// `resolved_at` is the first one's time.
    resolved: bool,
    /// The same, escalations included.
    settled: bool,
    resolved_at: Millis,
    settled_at: Millis,
}

/// The ledger, indexed for judging claims in one pass.
struct Facts<'o, 's> {
    effects: &'o [Effect],
    judged: &'s mut [Judged],
    /// Per intent, a bit per forward step (0..8) and per compensation (8..16) with an effect
    /// (empty when no claim needs it).
    steps: &'s [u32],
}

impl<'o, 's> Facts<'o, 's> {
    /// Indexes the ledger: which operations committed (only if `committed` is asked, for a
    /// failure claim) and the step bits (only if `steps` is not empty).
    fn of(
        o: &Outcome<'o>,
        judged: &'s mut [Judged],
        steps: &'s mut [u32],
        committed: bool,
    ) -> Self {
        if committed || !steps.is_empty() {
            for e in o.effects {
                if committed
                    && let Some(op) = o.op_of(e.attempt)
                    && let Some(j) = judged.get_mut(op.0 as usize)
                {
                    j.committed = true;
                }
                if let Some(bits) = steps.get_mut(e.intent.0 as usize) {
                    *bits |= step_bit(e.step);
                }
            }
        }
        Facts {
            effects: o.effects,
            judged,
            steps,
        }
    }

    /// The effect that created resource `r`. The provider numbers resources in commit order,
    /// so it is found at its own index; a scan covers any other numbering.
    fn effect_of(&self, r: ResourceId) -> Option<&'o Effect> {
        let effects = self.effects;
        match effects.get(r.0 as usize) {
            Some(e) if e.resource == r => Some(e),
            _ => effects.iter().find(|e| e.resource == r),
        }
    }

    /// Whether the ledger agrees with `c` (the same rule as [`Outcome::claim_is_true`]).
    fn agrees(&self, c: &Claim) -> bool {
        let (intent, step) = (c.intent.0.0, c.intent.1);
        match c.kind {
            ClaimKind::Confirmed(Some(r)) => self
                .effect_of(r)
                .is_some_and(|e| e.intent.0 == intent && e.step == step),
            ClaimKind::Confirmed(None) => self
                .steps
                .get(intent as usize)
                .is_some_and(|bits| bits & step_bit(step) != 0),
            ClaimKind::Failed => !self.judged[c.op.0 as usize].committed,
            ClaimKind::Escalated => true,
        }
    }
}

fn step_bit(step: u32) -> u32 {
    if step >= COMPENSATION {
        1 << (MAX_STEPS + (step - COMPENSATION).min(MAX_STEPS - 1))
    } else {
        1 << step.min(MAX_STEPS - 1)
    }
}

/// Calls `f` with `n` default values: on the stack when few, so that small runs allocate
/// nothing per seed.
fn with_scratch<T: Copy + Default, R>(n: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    let mut small = [T::default(); 16];
    if n <= small.len() {
        f(&mut small[..n])
    } else {
        f(&mut vec![T::default(); n])
    }
}

/// Steps of `intent` reported done for a call with changed arguments of which no effect
/// carries those arguments.
/// The forward effect `compensation` removed: the one of the resource its parameters name
/// ([`crate::vocab::protocol::compensation_params`]), if the ledger has it.
pub(crate) fn removed<'e>(effects: &'e [Effect], compensation: &Effect) -> Option<&'e Effect> {
    let target = compensation_target(compensation.params);
    effects
        .iter()
        .find(|e| e.resource == target && e.step < COMPENSATION)
}

/// Whether a repeat told success without a first-step effect of its own was absorbed: the
/// success named a resource another intent created. (The caller has checked that the
/// intent has no first-step effect.)
fn merged_repeat(o: &Outcome<'_>, intent: &Intent, heard: &Heard) -> bool {
    let receipt = heard.steps[0].and_then(|s| s.receipt);
    intent.repeat_of.is_some()
        && receipt.is_some_and(|r| {
            o.effects
                .iter()
                .any(|e| e.resource == r && e.intent != intent.id && e.step == 0)
        })
}

/// Steps of `intent` reported done on a receipt that is not an effect of that intent and
/// step. A step reported done without a receipt names nothing and is not counted here
/// (whether its effect exists is `false_success`'s question).
pub(crate) fn wrong_receipts(o: &Outcome<'_>, intent: &Intent, heard: &Heard) -> u64 {
    let mut n = 0;
    for (k, s) in heard.steps[..intent.steps as usize].iter().enumerate() {
        let Some(r) = s.and_then(|s| s.receipt) else {
            continue;
        };
        let own = o
            .effects
            .iter()
            .any(|e| e.resource == r && e.intent == intent.id && e.step == k as u32);
        n += u64::from(!own);
    }
    n
}

fn masked_steps(o: &Outcome<'_>, intent: &Intent, heard: &Heard) -> u64 {
    let mut n = 0;
    for (k, s) in heard.steps[..intent.steps as usize].iter().enumerate() {
        let Some(s) = s else { continue };
        let asked = step_params(intent.params, k as u32);
        if s.params == asked {
            continue;
        }
        let applied = o
            .effects
            .iter()
            .any(|e| e.intent == intent.id && e.step == k as u32 && e.params == s.params);
        n += u64::from(!applied);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::ids::{AttemptId, Endpoint, IntentId, OpId, Params, Tenant};
    use crate::vocab::record::OpRecord;

    fn intent(i: u32) -> Intent {
        Intent {
            id: IntentId(i),
            arrival_ms: 0,
            tenant: Tenant(0),
            endpoint: Endpoint(0),
            params: Params(u64::from(i)),
            repeat_of: None,
            steps: 1,
        }
    }

    fn claim(op: u32, intent: u32, at_ms: Millis, kind: ClaimKind) -> Claim {
        Claim {
            op: OpId(op),
            intent: (IntentId(intent), 0),
            at_ms,
            kind,
        }
    }

    /// Judges `claims` on a fixed run: two intents; op 0 (intent 0) committed r0 with
    /// attempt 1; op 1 (intent 1) committed nothing; both became unknown at 100 ms; op 2
    /// (intent 0) never did. Returns the run's summary and totals.
    fn judge(claims: &[Claim]) -> (RunSummary, Metrics) {
        let intents = [intent(0), intent(1)];
        let heard = [Heard::default(); 2];
        let effects = [Effect {
            resource: ResourceId(0),
            attempt: AttemptId(1),
            intent: IntentId(0),
            step: 0,
            tenant: Tenant(0),
            endpoint: Endpoint(0),
            params: step_params(Params(0), 0),
            key: None,
            at_ms: 50,
        }];
        let unknown = OpRecord {
            intent: None,
            first_unknown_ms: Some(100),
        };
        let ops = [unknown, unknown, OpRecord::default()];
        let o = Outcome {
            intents: &intents,
            heard: &heard,
            effects: &effects,
            ops: &ops,
            attempt_ops: &[OpId(0)],
            claims,
            properties: &[],
            remote_calls: 1,
            end_ms: 1_000,
            end: End::Horizon,
        };
        let mut m = Metrics::default();
        let run = m.add_outcome(&o);
        // The indexed judge agrees with the plain rule, claim by claim.
        let mut false_ops: Vec<OpId> = claims
            .iter()
            .filter(|c| !o.claim_is_true(c))
            .map(|c| c.op)
            .collect();
        false_ops.dedup();
        assert_eq!(run.false_resolutions, false_ops.len() as u64, "{claims:?}");
        (run, m)
    }

    /// Failure claims need to know which operations committed, bare confirmations which
    /// intents have an effect; each kind is judged right alone and with the other.
    #[test]
    fn failure_claims_and_bare_confirmations_are_judged_against_the_ledger() {
        use ClaimKind::{Confirmed, Failed};
        // Op 0 committed: "failed" is false. Op 1 did not: true, and it resolves op 1.
        let failures = [claim(0, 0, 200, Failed), claim(1, 1, 300, Failed)];
        let (run, m) = judge(&failures);
        assert_eq!((run.false_resolutions, m.unknown_ops), (1, 1));
        assert_eq!(m.reconciliation_ms.single(), Some(200));
        // Intent 0 has an effect: a bare confirmation of it is true; of intent 1, false.
        let bare = [
            claim(2, 0, 400, Confirmed(None)),
            claim(1, 1, 500, Confirmed(None)),
        ];
        let (run, m) = judge(&bare);
        assert_eq!((run.false_resolutions, m.unknown_ops), (1, 2));
        assert!(m.reconciliation_ms.is_empty());
        let both: Vec<Claim> = failures.iter().chain(&bare).copied().collect();
        let (run, m) = judge(&both);
        // Op 1 has a true claim and a false one: one false resolution per operation.
        assert_eq!((run.false_resolutions, m.unknown_ops), (2, 1));
        assert_eq!(m.reconciliation_ms.single(), Some(200));
        // Op 0 never settles: unknown from 100 ms to the horizon at 1 000 ms, and one more.
        assert_eq!(run.longest_unknown_ms, 901);
    }

    /// Every effect past the first of its intent and step is a duplicate.
    #[test]
    fn duplicates_are_effects_past_the_first_of_each_intent_and_step() {
        let intents = [intent(0), intent(1)];
        let heard = [Heard::default(); 2];
        let effect = |r: u32, i: u32| Effect {
            resource: ResourceId(r),
            attempt: AttemptId(r + 1),
            intent: IntentId(i),
            step: 0,
            tenant: Tenant(0),
            endpoint: Endpoint(0),
            params: step_params(Params(u64::from(i)), 0),
            key: None,
            at_ms: 0,
        };
        let effects = [effect(0, 0), effect(1, 1), effect(2, 0), effect(3, 0)];
        let o = Outcome {
            intents: &intents,
            heard: &heard,
            effects: &effects,
            ops: &[],
            attempt_ops: &[],
            claims: &[],
            properties: &[],
            remote_calls: 4,
            end_ms: 0,
            end: End::Quiescent,
        };
        let mut m = Metrics::default();
        let run = m.add_outcome(&o);
        assert_eq!((run.duplicate_effects, m.effects, m.intents), (2, 4, 2));
    }
}

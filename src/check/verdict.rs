//! The verdict on each intent of one run, in words: what `trace` and `replay` print on
//! their `outcome:` line.
//!
//! The same judgement as [`super::Metrics`] (a test keeps the two in step), per intent and
//! naming the effects: which one is the duplicate and of which, which one a false failure
//! left behind, which one drifted from the arguments asked for.

use std::fmt::Write;

use super::metrics::removed;
use super::outcome::{Outcome, Told};
use crate::vocab::ids::{IntentId, OpId, ResourceId};
use crate::vocab::protocol::{COMPENSATION, compensation_target};
use crate::vocab::record::Effect;
use crate::vocab::record::step_params;
use crate::vocab::trace::TraceLine;

crate::sim::named_enum! {
    /// What the user was told about an intent, judged against the ledger.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Kind {
        /// Told success, and every step's effect exists.
        Completed => "completed",
        /// Told failure, and nothing is left behind.
        Failed => "failed",
        /// Told success, but a step's effect does not exist.
        FalseSuccess => "false success",
        /// Told failure, but an effect is left behind.
        FalseFailure => "false failure",
        /// Told nothing, or that the outcome is unknown.
        Unresolved => "unresolved",
    }
}

impl Kind {}

/// A step reported done on a receipt that is not an effect of its intent and step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrongReceipt {
    pub step: u32,
    pub receipt: ResourceId,
    /// The intent and step whose effect the receipt is, if any.
    pub owner: Option<(IntentId, u32)>,
}

/// The verdict on one intent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntentVerdict {
    pub intent: IntentId,
    pub kind: Kind,
    /// Forward effects that are not compensated, in commit order.
    pub left: Vec<ResourceId>,
    /// Steps without an effect, of an intent with more than one step (one step: `left` and
    /// the kind say it).
    pub missing: Vec<u32>,
    /// Each effect beyond the first of its step (or of its step's compensation), with the
    /// first.
    pub duplicates: Vec<(ResourceId, ResourceId)>,
    /// Effects committed with other arguments than the intent asked for.
    pub drifted: Vec<ResourceId>,
    /// Told success naming a resource another intent created (a merged repeat): that
    /// resource and its intent.
    pub merged_into: Option<(ResourceId, IntentId)>,
    /// Steps reported done on a receipt that is not an effect of this intent and step: the
    /// step, the receipt, and whose effect it is (`None`: no effect the ledger has).
    pub wrong_receipts: Vec<WrongReceipt>,
    /// Compensations this intent's calls committed that removed no effect of the step they
    /// undo: the compensation, and the resource it removed with its intent (`None`: it
    /// removed nothing).
    pub wrong_compensations: Vec<(ResourceId, Option<(ResourceId, IntentId)>)>,
    /// Effects of this intent that another intent's compensation removed: the effect, the
    /// compensation and its intent.
    pub removed_by_other: Vec<(ResourceId, ResourceId, IntentId)>,
}

impl std::fmt::Display for IntentVerdict {
    /// `intent 1: false failure (effect r3 exists)`,
    /// `intent 0: completed (duplicate effect r1 of r0)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut notes: Vec<String> = Vec::new();
        let list = |rs: &[ResourceId]| {
            rs.iter()
                .map(ResourceId::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.kind {
            Kind::FalseFailure | Kind::Unresolved if !self.left.is_empty() => notes.push(format!(
                "effect{} {} exist{}",
                if self.left.len() == 1 { "" } else { "s" },
                list(&self.left),
                if self.left.len() == 1 { "s" } else { "" }
            )),
            Kind::Unresolved => notes.push("no effect".into()),
            Kind::FalseSuccess if self.missing.is_empty() && self.removed_by_other.is_empty() => {
                notes.push("no effect".into())
            }
            _ => {}
        }
        if !self.missing.is_empty() {
            let steps: Vec<String> = self.missing.iter().map(u32::to_string).collect();
            notes.push(format!(
                "no effect for step{} {}",
                if steps.len() == 1 { "" } else { "s" },
                steps.join(", ")
            ));
        }
        if let Some((r, other)) = self.merged_into {
            notes.push(format!("merged into {r} of {other}"));
        }
        for (r, c, i) in &self.removed_by_other {
            notes.push(format!("effect {r} removed by compensation {c} of {i}"));
        }
        for WrongReceipt {
            step: k,
            receipt: r,
            owner: of,
        } in &self.wrong_receipts
        {
            if self.merged_into.is_some_and(|(m, _)| m == *r) {
                // Said already: "merged into r0 of intent 0".
                continue;
            }
            let step = if self.missing.is_empty() && self.wrong_receipts.len() == 1 {
                String::new()
            } else {
                format!(" for step {k}")
            };
            notes.push(match of {
                Some((i, j)) if *i == self.intent => format!("receipt {r}{step} is step {j}'s"),
                Some((i, _)) => format!("receipt {r}{step} is {i}'s"),
                None => format!("receipt {r}{step} names no effect"),
            });
        }
        for (c, undone) in &self.wrong_compensations {
            notes.push(match undone {
                Some((r, i)) if *i == self.intent => {
                    format!("compensation {c} removed {r}, another step's")
                }
                Some((r, i)) => format!("compensation {c} removed {r} of {i}"),
                None => format!("compensation {c} removed nothing"),
            });
        }
        for (dup, first) in &self.duplicates {
            notes.push(format!("duplicate effect {dup} of {first}"));
        }
        if !self.drifted.is_empty() {
            notes.push(format!(
                "effect{} {} with other arguments than asked",
                if self.drifted.len() == 1 { "" } else { "s" },
                list(&self.drifted)
            ));
        }
        write!(f, "{}: {}", self.intent, self.kind.name())?;
        if !notes.is_empty() {
            write!(f, " ({})", notes.join(", "))?;
        }
        Ok(())
    }
}

/// The verdict on every intent of the run, in intent order.
pub fn intent_verdicts(o: &Outcome<'_>) -> Vec<IntentVerdict> {
    o.intents
        .iter()
        .zip(o.heard)
        .map(|(intent, heard)| {
            let mine: Vec<&Effect> = o.effects.iter().filter(|e| e.intent == intent.id).collect();
            let forward = |k: u32| mine.iter().filter(move |e| e.step == k);
            // A compensation is judged by the resource it removed, whoever sent it.
            let removes = |c: &Effect, e: &Effect| {
                c.step >= COMPENSATION && compensation_target(c.params) == e.resource
            };
            let gone = |e: &Effect| o.effects.iter().any(|c| removes(c, e));
            let live = |k: u32| forward(k).filter(move |e| !gone(e));
            let steps = intent.steps;
            let all_done = (0..steps).all(|k| live(k).next().is_some());
            let missing = match steps {
                1 => Vec::new(),
                _ => (0..steps)
                    .filter(|&k| forward(k).next().is_none())
                    .collect(),
            };
            // Effects of this intent that another intent's compensation removed.
            let removed_by_other = mine
                .iter()
                .filter(|e| e.step < COMPENSATION)
                .filter_map(|e| {
                    let c = o
                        .effects
                        .iter()
                        .find(|c| removes(c, e) && c.intent != intent.id)?;
                    Some((e.resource, c.resource, c.intent))
                })
                .collect();
            let left: Vec<ResourceId> = mine
                .iter()
                .filter(|e| e.step < steps && !gone(e))
                .map(|e| e.resource)
                .collect();
            let mut duplicates = Vec::new();
            let mut seen: Vec<(u32, ResourceId)> = Vec::new();
            for e in mine.iter().filter(|e| e.step < COMPENSATION) {
                match seen.iter().find(|(step, _)| *step == e.step) {
                    Some(&(_, first)) => duplicates.push((e.resource, first)),
                    None => seen.push((e.step, e.resource)),
                }
            }
            // Compensations of this intent's effects, by the step they removed.
            for c in o.effects.iter().filter(|c| c.step >= COMPENSATION) {
                let Some(undone) = removed(o.effects, c) else {
                    continue;
                };
                if undone.intent != intent.id {
                    continue;
                }
                let slot = COMPENSATION + undone.step;
                match seen.iter().find(|(step, _)| *step == slot) {
                    Some(&(_, first)) => duplicates.push((c.resource, first)),
                    None => seen.push((slot, c.resource)),
                }
            }
            let owner = |r: ResourceId| {
                o.effects
                    .iter()
                    .find(|e| e.resource == r && e.step < COMPENSATION)
                    .map(|e| (e.intent, e.step))
            };
            let wrong_receipts = (0..steps)
                .filter_map(|k| {
                    let r = heard.steps[k as usize].and_then(|s| s.receipt)?;
                    let of = owner(r);
                    (of != Some((intent.id, k))).then_some(WrongReceipt {
                        step: k,
                        receipt: r,
                        owner: of,
                    })
                })
                .collect();
            let wrong_compensations = mine
                .iter()
                .filter(|c| c.step >= COMPENSATION)
                .filter_map(|c| {
                    let undone = removed(o.effects, c).map(|u| (u.resource, u.intent, u.step));
                    let own = undone
                        .is_some_and(|(_, i, k)| i == intent.id && k == c.step - COMPENSATION);
                    (!own).then_some((c.resource, undone.map(|(r, i, _)| (r, i))))
                })
                .collect();
            let drifted = mine
                .iter()
                .filter(|e| e.step < COMPENSATION && e.params != step_params(intent.params, e.step))
                .map(|e| e.resource)
                .collect();
            let mut merged_into = None;
            let kind = match heard.told.map(|(t, _)| t) {
                Some(Told::Success) if all_done => Kind::Completed,
                Some(Told::Success) => {
                    let receipt = heard.steps[0].and_then(|s| s.receipt);
                    if forward(0).next().is_none() && intent.repeat_of.is_some() {
                        merged_into = receipt.and_then(|r| {
                            o.effects
                                .iter()
                                .find(|e| e.resource == r && e.intent != intent.id && e.step == 0)
                                .map(|e| (r, e.intent))
                        });
                    }
                    Kind::FalseSuccess
                }
                Some(Told::Failure) if !left.is_empty() => Kind::FalseFailure,
                Some(Told::Failure) => Kind::Failed,
                Some(Told::Unresolved) | None => Kind::Unresolved,
            };
            IntentVerdict {
                intent: intent.id,
                kind,
                left,
                missing,
                duplicates,
                drifted,
                merged_into,
                wrong_receipts,
                wrong_compensations,
                removed_by_other,
            }
        })
        .collect()
}

/// The verdicts as one line's text: `intent 0: completed; intent 1: false failure (effect
/// r3 exists)`; `only`: just that intent's.
pub fn render(verdicts: &[IntentVerdict], only: Option<IntentId>) -> String {
    let mut s = String::new();
    for v in verdicts
        .iter()
        .filter(|v| only.is_none_or(|i| v.intent == i))
    {
        if !s.is_empty() {
            s.push_str("; ");
        }
        let _ = write!(s, "{v}");
    }
    if s.is_empty() {
        s.push_str("no intent");
    }
    s
}

/// The intent each timeline line is about, if any: the one its most telling identifier
/// belongs to (an intent, then a call, a send, an operation, a resource), by the run's
/// ground truth. A line that names none (a worker's crash or restart) is about no intent.
pub fn line_intents(lines: &[TraceLine], o: &Outcome<'_>) -> Vec<Option<IntentId>> {
    // Calls are numbered by the agent, which names the intent of each when it makes it.
    let mut calls: Vec<(u32, IntentId)> = Vec::new();
    let op_intent = |op: OpId| {
        o.ops
            .get(op.0 as usize)
            .and_then(|r| r.intent)
            .map(|(i, _)| i)
            .or_else(|| o.claims.iter().find(|c| c.op == op).map(|c| c.intent.0))
    };
    lines
        .iter()
        .map(|l| {
            let words: Vec<&str> = l
                .text
                .split(|c: char| c.is_whitespace() || ",;:()".contains(c))
                .filter(|w| !w.is_empty())
                .collect();
            let number = |i: usize| words.get(i + 1).and_then(|w| w.parse::<u32>().ok());
            let (mut intent, mut call, mut attempt, mut op, mut resource) =
                (None, None, None, None, None);
            for (i, w) in words.iter().enumerate() {
                match *w {
                    "intent" => intent = intent.or(number(i)),
                    "call" => call = call.or(number(i)),
                    "attempt" => attempt = attempt.or(number(i)),
                    "op" => op = op.or(number(i)),
                    _ => {
                        if let Some(n) = w.strip_prefix('r').and_then(|n| n.parse::<u32>().ok()) {
                            resource = resource.or(Some(n));
                        }
                    }
                }
            }
            if let (Some(c), Some(i)) = (call, intent) {
                if !calls.iter().any(|(k, _)| *k == c) {
                    calls.push((c, IntentId(i)));
                }
            }
            intent
                .map(IntentId)
                .or_else(|| call.and_then(|c| calls.iter().find(|(k, _)| *k == c).map(|(_, i)| *i)))
                .or_else(|| {
                    attempt
                        .and_then(|a| o.op_of(crate::vocab::ids::AttemptId(a)))
                        .and_then(op_intent)
                })
                .or_else(|| op.and_then(|n| op_intent(OpId(n))))
                .or_else(|| {
                    resource.and_then(|r| {
                        o.effects
                            .iter()
                            .find(|e| e.resource == ResourceId(r))
                            .map(|e| e.intent)
                    })
                })
        })
        .collect()
}

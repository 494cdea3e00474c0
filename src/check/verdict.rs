//! The verdict on each intent of one run, in words: what `trace` and `replay` print on
//! their `outcome:` line.
//!
//! The same judgement as [`super::Metrics`] (a test keeps the two in step), per intent and
//! naming the effects: which one is the duplicate and of which, which one a false failure
//! left behind, which one drifted from the arguments asked for.

use std::fmt::Write;

use super::metrics::removed;
use super::outcome::{Outcome, Told};
#[cfg(doc)]
use crate::vocab::event::TraceEvent;
use crate::vocab::ids::{CallId, IntentId, OpId, ResourceId};
use crate::vocab::protocol::{COMPENSATION, compensation_target};
use crate::vocab::record::step_params;
use crate::vocab::record::{Effect, Heard, Intent};
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

impl IntentVerdict {
    /// What a wrong receipt note says; `None` where the merge note said it already
    /// ("merged into r0 of intent 0").
    fn receipt_note(&self, w: &WrongReceipt) -> Option<String> {
        let (k, r) = (w.step, w.receipt);
        if self.merged_into.is_some_and(|(m, _)| m == r) {
            return None;
        }
        let step = if self.missing.is_empty() && self.wrong_receipts.len() == 1 {
            String::new()
        } else {
            format!(" for step {k}")
        };
        Some(match w.owner {
            Some((i, j)) if i == self.intent => format!("receipt {r}{step} is step {j}'s"),
            Some((i, _)) => format!("receipt {r}{step} is {i}'s"),
            None => format!("receipt {r}{step} names no effect"),
        })
    }

    /// What compensation `c` removed, when not its own step's effect.
    fn compensation_note(&self, c: ResourceId, undone: Option<(ResourceId, IntentId)>) -> String {
        match undone {
            Some((r, i)) if i == self.intent => {
                format!("compensation {c} removed {r}, another step's")
            }
            Some((r, i)) => format!("compensation {c} removed {r} of {i}"),
            None => format!("compensation {c} removed nothing"),
        }
    }
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
        notes.extend(
            self.wrong_receipts
                .iter()
                .filter_map(|w| self.receipt_note(w)),
        );
        notes.extend(
            self.wrong_compensations
                .iter()
                .map(|(c, undone)| self.compensation_note(*c, *undone)),
        );
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
        .map(|(intent, heard)| Judge::new(o, intent, heard).verdict())
        .collect()
}

/// One intent judged against the ledger: its own effects (`mine`), and what the user heard.
struct Judge<'a> {
    o: &'a Outcome<'a>,
    intent: &'a Intent,
    heard: &'a Heard,
    mine: Vec<&'a Effect>,
}

impl<'a> Judge<'a> {
    fn new(o: &'a Outcome<'a>, intent: &'a Intent, heard: &'a Heard) -> Self {
        let mine = o.effects.iter().filter(|e| e.intent == intent.id).collect();
        Self {
            o,
            intent,
            heard,
            mine,
        }
    }

    fn verdict(&self) -> IntentVerdict {
        let left = self.left();
        let (kind, merged_into) = self.kind(&left);
        IntentVerdict {
            intent: self.intent.id,
            kind,
            missing: self.missing(),
            duplicates: self.duplicates(),
            drifted: self.drifted(),
            merged_into,
            wrong_receipts: self.wrong_receipts(),
            wrong_compensations: self.wrong_compensations(),
            removed_by_other: self.removed_by_other(),
            left,
        }
    }

    /// This intent's effects of step `k`.
    fn forward(&self, k: u32) -> impl Iterator<Item = &&'a Effect> {
        self.mine.iter().filter(move |e| e.step == k)
    }

    /// A compensation is judged by the resource it removed, whoever sent it.
    fn removes(c: &Effect, e: &Effect) -> bool {
        c.step >= COMPENSATION && compensation_target(c.params) == e.resource
    }

    fn gone(&self, e: &Effect) -> bool {
        self.o.effects.iter().any(|c| Self::removes(c, e))
    }

    /// Whether every step has an effect no compensation removed.
    fn all_done(&self) -> bool {
        (0..self.intent.steps).all(|k| self.forward(k).any(|e| !self.gone(e)))
    }

    /// The steps of a workflow without any effect.
    fn missing(&self) -> Vec<u32> {
        match self.intent.steps {
            1 => Vec::new(),
            steps => (0..steps)
                .filter(|&k| self.forward(k).next().is_none())
                .collect(),
        }
    }

    /// Effects of this intent that another intent's compensation removed.
    fn removed_by_other(&self) -> Vec<(ResourceId, ResourceId, IntentId)> {
        self.mine
            .iter()
            .filter(|e| e.step < COMPENSATION)
            .filter_map(|e| {
                let c = self
                    .o
                    .effects
                    .iter()
                    .find(|c| Self::removes(c, e) && c.intent != self.intent.id)?;
                Some((e.resource, c.resource, c.intent))
            })
            .collect()
    }

    /// The effects of its steps still in place.
    fn left(&self) -> Vec<ResourceId> {
        self.mine
            .iter()
            .filter(|e| e.step < self.intent.steps && !self.gone(e))
            .map(|e| e.resource)
            .collect()
    }

    /// Every effect after the first of its step, and every compensation after the first of
    /// the step it removed: each with the first.
    fn duplicates(&self) -> Vec<(ResourceId, ResourceId)> {
        let mut duplicates = Vec::new();
        let mut seen: Vec<(u32, ResourceId)> = Vec::new();
        let mut see = |slot: u32, r: ResourceId| match seen.iter().find(|(s, _)| *s == slot) {
            Some(&(_, first)) => duplicates.push((r, first)),
            None => seen.push((slot, r)),
        };
        for e in self.mine.iter().filter(|e| e.step < COMPENSATION) {
            see(e.step, e.resource);
        }
        // Compensations of this intent's effects, by the step they removed.
        for c in self.o.effects.iter().filter(|c| c.step >= COMPENSATION) {
            if let Some(undone) = removed(self.o.effects, c)
                && undone.intent == self.intent.id
            {
                see(COMPENSATION + undone.step, c.resource);
            }
        }
        duplicates
    }

    /// Steps reported done on a receipt that is not an effect of this intent and step.
    fn wrong_receipts(&self) -> Vec<WrongReceipt> {
        let owner = |r: ResourceId| {
            self.o
                .effects
                .iter()
                .find(|e| e.resource == r && e.step < COMPENSATION)
                .map(|e| (e.intent, e.step))
        };
        (0..self.intent.steps)
            .filter_map(|k| {
                let r = self.heard.steps[k as usize].and_then(|s| s.receipt)?;
                let of = owner(r);
                (of != Some((self.intent.id, k))).then_some(WrongReceipt {
                    step: k,
                    receipt: r,
                    owner: of,
                })
            })
            .collect()
    }

    /// Compensations of this intent that removed no effect of the step they undo.
    fn wrong_compensations(&self) -> Vec<(ResourceId, Option<(ResourceId, IntentId)>)> {
        self.mine
            .iter()
            .filter(|c| c.step >= COMPENSATION)
            .filter_map(|c| {
                let undone = removed(self.o.effects, c).map(|u| (u.resource, u.intent, u.step));
                let own = undone
                    .is_some_and(|(_, i, k)| i == self.intent.id && k == c.step - COMPENSATION);
                (!own).then_some((c.resource, undone.map(|(r, i, _)| (r, i))))
            })
            .collect()
    }

    /// Effects committed with other arguments than the intent asked for.
    fn drifted(&self) -> Vec<ResourceId> {
        let params = self.intent.params;
        self.mine
            .iter()
            .filter(|e| e.step < COMPENSATION && e.params != step_params(params, e.step))
            .map(|e| e.resource)
            .collect()
    }

    /// What the user was told against the ledger; for a false success of a genuine repeat
    /// without its own effect, the earlier intent's resource its receipt names.
    fn kind(&self, left: &[ResourceId]) -> (Kind, Option<(ResourceId, IntentId)>) {
        let kind = match self.heard.told.map(|(t, _)| t) {
            Some(Told::Success) if self.all_done() => Kind::Completed,
            Some(Told::Success) => return (Kind::FalseSuccess, self.merged_into()),
            Some(Told::Failure) if !left.is_empty() => Kind::FalseFailure,
            Some(Told::Failure) => Kind::Failed,
            Some(Told::Unresolved) | None => Kind::Unresolved,
        };
        (kind, None)
    }

    fn merged_into(&self) -> Option<(ResourceId, IntentId)> {
        if self.forward(0).next().is_some() || self.intent.repeat_of.is_none() {
            return None;
        }
        let receipt = self.heard.steps[0].and_then(|s| s.receipt)?;
        self.o
            .effects
            .iter()
            .find(|e| e.resource == receipt && e.intent != self.intent.id && e.step == 0)
            .map(|e| (receipt, e.intent))
    }
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
/// ground truth. The identifiers are the line's event's ([`TraceEvent::about`]), never its
/// words. A line that names none (a worker's restart, a note about no operation) is about
/// no intent.
pub fn line_intents(lines: &[TraceLine], o: &Outcome<'_>) -> Vec<Option<IntentId>> {
    // Calls are numbered by the agent, which names the intent of each when it makes it.
    let mut calls: Vec<(CallId, IntentId)> = Vec::new();
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
            let a = l.event.about();
            if let (Some(c), Some(i)) = (a.call, a.intent)
                && !calls.iter().any(|(k, _)| *k == c)
            {
                calls.push((c, i));
            }
            a.intent
                .or_else(|| {
                    a.call
                        .and_then(|c| calls.iter().find(|(k, _)| *k == c).map(|(_, i)| *i))
                })
                .or_else(|| a.attempt.and_then(|a| o.op_of(a)).and_then(op_intent))
                .or_else(|| a.op.and_then(op_intent))
                .or_else(|| {
                    a.resource
                        .and_then(|r| o.effects.iter().find(|e| e.resource == r).map(|e| e.intent))
                })
        })
        .collect()
}

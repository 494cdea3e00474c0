//! The counters of a sweep, written once.
//!
//! Each counter is one line of `counters!` below: its name (the field of [`Metrics`] and
//! [`RunSummary`], the key of the JSON totals), its kind, what it means, and how the tables
//! and the trace show it. Everything that lists counters reads [`COUNTERS`]: the totals'
//! merge, a run's summary, the paired comparison's quantities, the JSON totals, the table
//! columns, the `counts:` line of a trace. A new counter is one line here and the code that
//! computes it in `check::metrics`.

use serde::{Deserialize, Serialize};

use super::histogram::Histogram;
use super::properties::PropertyDef;
use crate::sim::Millis;

/// What a counter counts, which decides where it is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// What the runs were made of (intents, effects): neither a harm nor a cost.
    Volume,
    /// One of the five outcomes of an intent; they add up to the intents. `rate` names its
    /// share (in the JSON rates and the paired comparison).
    Outcome { rate: &'static str },
    /// A count per intent that may exceed one (a harm, or remote calls): reported per intent
    /// with a seed-level interval, and compared seed by seed against a baseline.
    PerIntent,
    /// Of operations or runs rather than intents.
    Diagnostic,
}

/// How the `--wide` table shows a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wide {
    /// Not at all.
    Hidden,
    /// Its total, under this header.
    Total(&'static str),
    /// Divided by the intents, two decimals, under this header (the JSON totals then carry
    /// `NAME_per_intent` beside it).
    PerIntent(&'static str),
}

/// One counter of [`Metrics`]: data for everything that lists counters.
#[derive(Clone, Copy, Debug)]
pub struct Counter {
    /// The field name, as in the JSON totals.
    pub name: &'static str,
    pub kind: Kind,
    /// What it counts, for `--help` and the docs.
    pub meaning: &'static str,
    /// Its column in the `--wide` table.
    pub wide: Wide,
    /// Its header in the default table: an outcome as its share, a per-intent count divided
    /// by the intents.
    pub table: Option<&'static str>,
    /// Its label on a trace's `counts:` line.
    pub trace: Option<&'static str>,
    /// Its value in totals.
    pub total: fn(&Metrics) -> u64,
    /// Its value in one run's summary.
    pub of_run: fn(&RunSummary) -> u64,
}

impl Counter {
    /// The name the paired comparison and the JSON rates give it: an outcome's rate name,
    /// else its own.
    pub const fn quantity(&self) -> &'static str {
        match self.kind {
            Kind::Outcome { rate } => rate,
            _ => self.name,
        }
    }

    const fn is_outcome(&self) -> bool {
        matches!(self.kind, Kind::Outcome { .. })
    }

    const fn is_per_intent(&self) -> bool {
        matches!(self.kind, Kind::PerIntent)
    }
}

/// `Some(x)` for one token, `None` for none: the optional parts of a counter's line.
macro_rules! opt {
    () => {
        None
    };
    ($x:expr) => {
        Some($x)
    };
}

macro_rules! counters {
    ($(
        $(#[$doc:meta])*
        $name:ident: $kind:expr, $meaning:literal, wide $wide:expr
            $(, table $table:literal)? $(, trace $trace:literal)?;
    )*) => {
        /// Totals over one or more runs. Serialised field by field, histograms as their
        /// buckets: a sharded sweep's partial results carry them exactly.
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct Metrics {
            pub seeds: u64,
            $( $(#[$doc])* pub $name: u64, )*
            /// For each operation that became unknown and was later truly resolved, the
            /// time from its first unknown moment to the first true resolution.
            pub reconciliation_ms: Histogram,
            /// For each intent the user was told success or failure about, the time from its
            /// arrival to that message.
            pub time_to_outcome_ms: Histogram,
        }

        /// What one run did: its counters (the run's share of [`Metrics`]), for the
        /// properties (see [`crate::check::Property`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct RunSummary {
            $( $(#[$doc])* pub $name: u64, )*
            /// The longest any operation stayed unknown before a true resolution or an
            /// escalation. An operation still unknown at the end counts as unknown for
            /// longer than it was observed (one more than the time from its unknown moment
            /// to the horizon), or forever (`Millis::MAX`) when the run ended because
            /// nothing could change any more.
            pub longest_unknown_ms: Millis,
            /// The run was cut by the events budget ([`super::outcome::End::Budget`]): the
            /// counts above are those of the run so far. Properties are evaluated on them as
            /// they are (a violation seen is reported), but a property that holds on such a
            /// run is not shown to hold: `check` meets no expectation of a design with such
            /// a seed, `run --fail-on` fails, and an exhaustive search that met one
            /// certifies nothing.
            pub budget: bool,
            /// The properties the run's design brings ([`crate::design::Design::properties`]),
            /// and a bit per one of them that the run violates.
            pub custom: &'static [PropertyDef],
            pub custom_violated: u64,
        }

        impl Default for RunSummary {
            fn default() -> Self {
                Self {
                    $( $name: 0, )*
                    longest_unknown_ms: 0,
                    budget: false,
                    custom: &[],
                    custom_violated: 0,
                }
            }
        }

        /// Every counter, in the order of the fields, the JSON totals and the tables.
        pub const COUNTERS: &[Counter] = &[$(
            Counter {
                name: stringify!($name),
                kind: $kind,
                meaning: $meaning,
                wide: $wide,
                table: opt!($($table)?),
                trace: opt!($($trace)?),
                total: |m| m.$name,
                of_run: |r| r.$name,
            },
        )*];

        impl Metrics {
            /// Adds totals of other runs (for merging parallel or sharded results).
            pub fn merge(&mut self, other: &Metrics) {
                self.seeds += other.seeds;
                $( self.$name += other.$name; )*
                self.reconciliation_ms.merge(&other.reconciliation_ms);
                self.time_to_outcome_ms.merge(&other.time_to_outcome_ms);
            }

            /// The counters added since `before` (an earlier state of these totals), as one
            /// run's summary with the run's own fields still to fill.
            pub(super) fn since(&self, before: &RunSummary) -> RunSummary {
                RunSummary {
                    $( $name: self.$name - before.$name, )*
                    ..RunSummary::default()
                }
            }

            /// The counters as they are now, to take a run's share from with [`Self::since`].
            pub(super) fn snapshot(&self) -> RunSummary {
                RunSummary {
                    $( $name: self.$name, )*
                    ..RunSummary::default()
                }
            }
        }
    };
}

use Kind::{Diagnostic, Outcome, PerIntent, Volume};
use Wide::{Hidden, Total};

counters! {
    /// Intents the workload produced.
    intents: Volume, "intents the user expressed (all seeds)", wide Total("intents"),
        trace "intents";
    /// Committed effects of the intents' steps (compensations are counted apart).
    effects: Volume, "effects the provider committed (ground truth)", wide Total("effects"),
        trace "effects";
    /// The user was told success and every step's effect exists.
    completed: Outcome { rate: "completed" }, "told success, and the effect exists",
        wide Total("completed"), table "completed", trace "completed";
    /// Told failure, and no effect was left behind.
    true_failures: Outcome { rate: "true_failure" },
        "told failure, and no effect was left behind", wide Total("true_fail"),
        table "true_fail";
    /// Effects beyond one per intent and step (and per compensation of a step).
    duplicate_effects: PerIntent, "duplicate effects: effects beyond one per intent",
        wide Total("dup"), table "dup/int", trace "duplicate effects";
    /// Effects whose arguments differ from the ones the user asked for (an agent's changed
    /// arguments, silently applied).
    drifted_effects: PerIntent, "effects with arguments the user did not ask for",
        wide Total("drifted"), trace "drifted effects";
    /// Committed compensating effects.
    compensations: Volume, "compensating effects (undoing an earlier step)",
        wide Total("comp"), trace "compensations";
    /// Told success, but some step's effect is missing.
    false_success: Outcome { rate: "false_success" }, "told success, but no effect exists",
        wide Total("false_ok"), table "false_ok", trace "false success";
    /// Told failure, but some step's effect exists and was not compensated.
    false_failure: Outcome { rate: "false_failure" }, "told failure, but the effect exists",
        wide Total("false_fail"), table "false_fail", trace "false failure";
    /// A genuine repeat told success with no effect of its own, on a receipt naming a
    /// resource another intent created: merged into that one (every one is also a false
    /// success).
    merged_repeats: PerIntent, "genuine repeats suppressed (told success, no own effect)",
        wide Total("merged"), trace "merged repeats";
    /// A step reported done naming a resource that is not an effect of that intent and
    /// step (another intent's, or none at all): the user holds a receipt for something
    /// that is not theirs.
    wrong_receipts: PerIntent, "steps told done on a receipt not of their own effect",
        wide Total("wrong_rcpt"), trace "wrong receipts";
    /// A compensation that removed a resource other than an effect of the step it undoes
    /// (another intent's, or another step's).
    wrong_compensations: PerIntent, "compensations that removed another intent's or step's resource",
        wide Total("wrong_comp"), trace "wrong compensations";
    /// A step reported done for a call whose arguments the agent had changed, while no
    /// effect carries those arguments.
    masked_mismatches: PerIntent,
        "changed calls reported done, changed arguments never applied",
        wide Total("masked"), trace "masked mismatches";
    /// At the horizon the user was told nothing, or was told the outcome is unresolved.
    unresolved: Outcome { rate: "unresolved" }, "user told nothing or 'unresolved' at the end",
        wide Total("unresolved"), table "unresolved", trace "unresolved";
    /// Operations that became unknown and were never truly resolved.
    unknown_ops: Diagnostic, "operations unknown and never truly resolved",
        wide Total("unknown_ops"), trace "unknown ops";
    /// Operations with a claim the ledger contradicts.
    false_resolutions: Diagnostic, "operations with a claim the ledger contradicts",
        wide Total("false_res"), trace "false resolutions";
    /// Requests the executors sent to the provider (every attempt and lookup); per intent,
    /// the retry amplification.
    remote_calls: PerIntent, "remote calls per intent (retry amplification)",
        wide Wide::PerIntent("calls/intent"), table "calls", trace "remote calls";
    /// Seeds whose run was cut by the events budget before its horizon.
    budget_runs: Diagnostic, "seeds whose run was cut by the events budget", wide Hidden;
}

/// Which counters a const selection takes (a const fn cannot call a function pointer).
#[derive(Clone, Copy)]
enum Select {
    Outcomes,
    PerIntent,
}

const fn selected(c: &Counter, which: Select) -> bool {
    match which {
        Select::Outcomes => c.is_outcome(),
        Select::PerIntent => c.is_per_intent(),
    }
}

/// The number of counters `which` takes.
const fn count(which: Select) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < COUNTERS.len() {
        if selected(&COUNTERS[i], which) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// How many outcomes an intent can have.
pub const N_OUTCOMES: usize = count(Select::Outcomes);
/// How many quantities the paired comparison compares: the outcomes, then the per-intent
/// counts.
pub const N_QUANTITIES: usize = N_OUTCOMES + count(Select::PerIntent);

/// The indices of the counters `which` takes, in order (`N` must be their number).
const fn select<const N: usize>(which: Select) -> [usize; N] {
    let mut out = [0; N];
    let (mut n, mut i) = (0, 0);
    while i < COUNTERS.len() {
        if selected(&COUNTERS[i], which) {
            out[n] = i;
            n += 1;
        }
        i += 1;
    }
    out
}

/// The indices in [`COUNTERS`] of the outcomes, in order.
const OUTCOME_INDEX: [usize; N_OUTCOMES] = select(Select::Outcomes);

/// The indices in [`COUNTERS`] of the paired comparison's quantities.
const QUANTITY_INDEX: [usize; N_QUANTITIES] = {
    let per_intent: [usize; N_QUANTITIES - N_OUTCOMES] = select(Select::PerIntent);
    let mut out = [0; N_QUANTITIES];
    let mut i = 0;
    while i < N_QUANTITIES {
        out[i] = if i < N_OUTCOMES {
            OUTCOME_INDEX[i]
        } else {
            per_intent[i - N_OUTCOMES]
        };
        i += 1;
    }
    out
};

/// The five outcomes of an intent, in order (they add up to the intents).
pub fn outcomes() -> impl Iterator<Item = &'static Counter> {
    OUTCOME_INDEX.iter().map(|&i| &COUNTERS[i])
}

/// The per-intent counts (harms and remote calls), in order.
pub fn per_intent() -> impl Iterator<Item = &'static Counter> {
    COUNTERS.iter().filter(|c| c.is_per_intent())
}

/// The quantities the paired comparison compares: the outcomes, then the per-intent counts.
pub fn quantities() -> impl Iterator<Item = &'static Counter> {
    QUANTITY_INDEX.iter().map(|&i| &COUNTERS[i])
}

/// The counter called `name`.
pub fn find(name: &str) -> Option<&'static Counter> {
    COUNTERS.iter().find(|c| c.name == name)
}

impl Metrics {
    /// The outcome counts, in the order of [`outcomes`].
    pub fn outcome_counts(&self) -> [u64; N_OUTCOMES] {
        OUTCOME_INDEX.map(|i| (COUNTERS[i].total)(self))
    }

    /// The quantities of the paired comparison, in the order of [`quantities`].
    pub fn quantity_counts(&self) -> [u64; N_QUANTITIES] {
        QUANTITY_INDEX.map(|i| (COUNTERS[i].total)(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outcomes_and_quantities_are_the_documented_ones() {
        let names = |it: &mut dyn Iterator<Item = &'static Counter>| {
            it.map(Counter::quantity).collect::<Vec<_>>()
        };
        assert_eq!(
            names(&mut outcomes()),
            [
                "completed",
                "true_failure",
                "false_success",
                "false_failure",
                "unresolved"
            ]
        );
        assert_eq!(
            names(&mut quantities())[N_OUTCOMES..],
            [
                "duplicate_effects",
                "drifted_effects",
                "merged_repeats",
                "wrong_receipts",
                "wrong_compensations",
                "masked_mismatches",
                "remote_calls"
            ]
        );
    }

    /// Each counter's accessors read the field of its own name: set every field to a
    /// distinct value through serde (by name) and read it back through the list.
    #[test]
    fn each_counter_reads_its_own_field() {
        let mut v = serde_json::to_value(Metrics::default()).unwrap();
        for (i, c) in COUNTERS.iter().enumerate() {
            v[c.name] = serde_json::json!(i as u64 + 1);
        }
        let m: Metrics = serde_json::from_value(v).unwrap();
        let run = m.since(&Metrics::default().snapshot());
        for (i, c) in COUNTERS.iter().enumerate() {
            assert_eq!((c.total)(&m), i as u64 + 1, "{}", c.name);
            assert_eq!((c.of_run)(&run), i as u64 + 1, "{}", c.name);
        }
        let mut twice = m.clone();
        twice.merge(&m);
        for (i, c) in COUNTERS.iter().enumerate() {
            assert_eq!((c.total)(&twice), 2 * (i as u64 + 1), "{}", c.name);
        }
        let mut names: Vec<&str> = COUNTERS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COUNTERS.len(), "counter names are distinct");
    }
}

//! Named properties, evaluated per run on its [`RunSummary`] (itself computed from the run's
//! outcome against the ledger).
//!
//! Each is a safety or liveness statement about one run; a sweep counts the seeds that
//! violate it. Model files name them in `expect`, and `run --fail-on` takes them too.

use std::fmt;
use std::str::FromStr;

use super::metrics::RunSummary;
use crate::sim::Millis;

/// A property of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Property {
    /// No intent (or step, or compensation) has more than one effect.
    NoDuplicate,
    /// No intent was reported done without its effects.
    NoFalseSuccess,
    /// No intent was reported failed while an effect of it was left behind.
    NoFalseFailure,
    /// No genuine repeat was merged into another intent's resource.
    NoMergedRepeat,
    /// No effect carries arguments the user did not ask for.
    NoDrift,
    /// No call with changed arguments was reported done while no effect carries them.
    NoMaskedMismatch,
    /// No claim of the design (confirmed, failed) is contradicted by the ledger.
    NoFalseResolution,
    /// Every operation that became unknown was truly resolved or escalated within this many
    /// milliseconds of its first unknown moment.
    ResolvedWithin(Millis),
}

impl Property {
    /// The properties without a parameter, in the order they are listed.
    pub const PLAIN: [Property; 7] = [
        Property::NoDuplicate,
        Property::NoFalseSuccess,
        Property::NoFalseFailure,
        Property::NoMergedRepeat,
        Property::NoDrift,
        Property::NoMaskedMismatch,
        Property::NoFalseResolution,
    ];

    /// Whether `run` satisfies the property.
    pub fn holds(self, run: &RunSummary) -> bool {
        match self {
            Property::NoDuplicate => run.duplicate_effects == 0,
            Property::NoFalseSuccess => run.false_success == 0,
            Property::NoFalseFailure => run.false_failure == 0,
            Property::NoMergedRepeat => run.merged_repeats == 0,
            Property::NoDrift => run.drifted_effects == 0,
            Property::NoMaskedMismatch => run.masked_mismatches == 0,
            Property::NoFalseResolution => run.false_resolutions == 0,
            Property::ResolvedWithin(t) => run.longest_unknown_ms <= t,
        }
    }

    /// What the property says, for `--help` and the README.
    pub fn meaning(self) -> &'static str {
        match self {
            Property::NoDuplicate => "no intent, step or compensation has more than one effect",
            Property::NoFalseSuccess => "no intent is reported done without its effects",
            Property::NoFalseFailure => "no intent is reported failed with an effect left behind",
            Property::NoMergedRepeat => "no genuine repeat is merged into another intent",
            Property::NoDrift => "no effect carries arguments the user did not ask for",
            Property::NoMaskedMismatch => {
                "no call with changed arguments is reported done unless they were applied"
            }
            Property::NoFalseResolution => {
                "no claim of the design (confirmed, failed) is contradicted by the ledger"
            }
            Property::ResolvedWithin(_) => {
                "every operation that became unknown is truly resolved or escalated within T ms"
            }
        }
    }

    /// Every property name, as written (`resolved_within(T)` with its parameter).
    pub fn names() -> String {
        let mut names: Vec<String> = Self::PLAIN.iter().map(|p| p.to_string()).collect();
        names.push("resolved_within(T)".into());
        names.join(", ")
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Property::NoDuplicate => "no_duplicate",
            Property::NoFalseSuccess => "no_false_success",
            Property::NoFalseFailure => "no_false_failure",
            Property::NoMergedRepeat => "no_merged_repeat",
            Property::NoDrift => "no_drift",
            Property::NoMaskedMismatch => "no_masked_mismatch",
            Property::NoFalseResolution => "no_false_resolution",
            Property::ResolvedWithin(t) => return write!(f, "resolved_within({t})"),
        };
        f.write_str(name)
    }
}

impl FromStr for Property {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some(p) = Self::PLAIN.iter().find(|p| p.to_string() == s) {
            return Ok(*p);
        }
        if let Some(arg) = s
            .strip_prefix("resolved_within(")
            .and_then(|r| r.strip_suffix(')'))
        {
            return arg.trim().parse::<Millis>().map(Property::ResolvedWithin).map_err(|_| {
                format!(
                    "\"{s}\": resolved_within takes a whole number of milliseconds, as in resolved_within(60000)"
                )
            });
        }
        Err(format!(
            "unknown property \"{s}\"; known properties: {}",
            Self::names()
        ))
    }
}

/// Seeds that violated each of a list of properties.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Violations {
    /// `(property, seeds violating it)`, in the order the properties were asked for.
    pub counts: Vec<(Property, u64)>,
    /// Seeds violating at least one of them.
    pub any: u64,
}

impl Violations {
    pub fn new(properties: &[Property]) -> Self {
        Self {
            counts: properties.iter().map(|&p| (p, 0)).collect(),
            any: 0,
        }
    }

    /// Counts `run` against every property; returns whether any was violated.
    pub fn add(&mut self, run: &RunSummary) -> bool {
        let mut any = false;
        for (p, n) in &mut self.counts {
            let bad = !p.holds(run);
            *n += u64::from(bad);
            any |= bad;
        }
        self.any += u64::from(any);
        any
    }

    /// Adds another tally of the same properties.
    pub fn merge(&mut self, other: &Violations) {
        for ((p, n), (q, m)) in self.counts.iter_mut().zip(&other.counts) {
            debug_assert_eq!(p, q);
            *n += m;
        }
        self.any += other.any;
    }

    /// Seeds that violated `p` (0 if it was not tallied).
    pub fn of(&self, p: Property) -> u64 {
        self.counts
            .iter()
            .find(|(q, _)| *q == p)
            .map_or(0, |(_, n)| *n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in Property::PLAIN
            .into_iter()
            .chain([Property::ResolvedWithin(60_000)])
        {
            assert_eq!(p.to_string().parse::<Property>(), Ok(p));
        }
        assert!(
            "no_dup"
                .parse::<Property>()
                .unwrap_err()
                .contains("known properties: no_duplicate")
        );
        assert!(
            "resolved_within(1h)"
                .parse::<Property>()
                .unwrap_err()
                .contains("whole number")
        );
    }

    #[test]
    fn resolved_within_compares_the_longest_unknown_period() {
        let run = RunSummary {
            longest_unknown_ms: 5_000,
            ..RunSummary::default()
        };
        assert!(Property::ResolvedWithin(5_000).holds(&run));
        assert!(!Property::ResolvedWithin(4_999).holds(&run));
        assert!(Property::NoDuplicate.holds(&run));
    }
}

//! Named properties, evaluated per run on its [`RunSummary`] (itself computed from the run's
//! outcome against the ledger).
//!
//! Each is a safety or liveness statement about one run; a sweep counts the seeds that
//! violate it. Model files name them in `expect`, and `run --fail-on` takes them too.

use std::fmt;
use std::str::FromStr;

use super::metrics::RunSummary;
use super::outcome::Outcome;
use crate::sim::Millis;

/// How a property is judged on one run.
#[derive(Clone, Copy, Debug)]
pub enum Judge {
    /// It holds when this counter of the run (see [`crate::check::counters`]) is zero.
    Zero(fn(&RunSummary) -> u64),
    /// It holds when every operation that became unknown settled within the property's
    /// parameter (milliseconds).
    SettledWithin,
    /// A property a design brings ([`crate::design::Design::properties`]): whether the run
    /// violates it, judged on the run's outcome (the ledger, what the user was told, the
    /// design's claims) when the run ends.
    Violated(fn(&Outcome<'_>) -> bool),
}

/// A property as data: its name in model files and on the command line, what it says, and
/// how it is judged. The built-in ones are the statics below; a design brings its own with
/// [`crate::design::Design::properties`], and `check`, `explore`, `run --fail-on` and reports
/// treat them like the built-in ones.
#[derive(Clone, Copy, Debug)]
pub struct PropertyDef {
    /// The name, as written in `expect` (a parameter, if any, in parentheses after it).
    pub name: &'static str,
    /// What it says, for `--help` and the docs.
    pub meaning: &'static str,
    pub judge: Judge,
}

/// Definitions are told apart by name (a registry refuses two of one name).
impl PartialEq for PropertyDef {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for PropertyDef {}
impl PartialOrd for PropertyDef {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for PropertyDef {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name.cmp(other.name)
    }
}
impl std::hash::Hash for PropertyDef {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name.hash(h)
    }
}

static NO_DUPLICATE: PropertyDef = PropertyDef {
    name: "no_duplicate",
    meaning: "no intent, step or compensation has more than one effect",
    judge: Judge::Zero(|r| r.duplicate_effects),
};
static NO_FALSE_SUCCESS: PropertyDef = PropertyDef {
    name: "no_false_success",
    meaning: "no intent is reported done without its effects",
    judge: Judge::Zero(|r| r.false_success),
};
static NO_FALSE_FAILURE: PropertyDef = PropertyDef {
    name: "no_false_failure",
    meaning: "no intent is reported failed with an effect left behind",
    judge: Judge::Zero(|r| r.false_failure),
};
static NO_MERGED_REPEAT: PropertyDef = PropertyDef {
    name: "no_merged_repeat",
    meaning: "no genuine repeat is merged into another intent",
    judge: Judge::Zero(|r| r.merged_repeats),
};
static NO_DRIFT: PropertyDef = PropertyDef {
    name: "no_drift",
    meaning: "no effect carries arguments the user did not ask for",
    judge: Judge::Zero(|r| r.drifted_effects),
};
static NO_MASKED_MISMATCH: PropertyDef = PropertyDef {
    name: "no_masked_mismatch",
    meaning: "no call with changed arguments is reported done unless they were applied",
    judge: Judge::Zero(|r| r.masked_mismatches),
};
static NO_FALSE_RESOLUTION: PropertyDef = PropertyDef {
    name: "no_false_resolution",
    meaning: "no claim of the design (confirmed, failed) is contradicted by the ledger",
    judge: Judge::Zero(|r| r.false_resolutions),
};
static NO_WRONG_RECEIPT: PropertyDef = PropertyDef {
    name: "no_wrong_receipt",
    meaning: "every step reported done names a resource that is an effect of that intent and step \
              (judges the receipt the user is handed; no_false_resolution judges the design's own claims)",
    judge: Judge::Zero(|r| r.wrong_receipts),
};
static NO_WRONG_COMPENSATION: PropertyDef = PropertyDef {
    name: "no_wrong_compensation",
    meaning: "every compensation removes an effect of the intent and step it undoes, never another's",
    judge: Judge::Zero(|r| r.wrong_compensations),
};
static RESOLVED_WITHIN: PropertyDef = PropertyDef {
    name: "resolved_within",
    meaning: "every operation that became unknown is truly resolved or escalated within T ms",
    judge: Judge::SettledWithin,
};

/// A property of one run: a built-in one, or one a design brings.
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
    /// Every step reported done names a resource that is an effect of that intent and step.
    NoWrongReceipt,
    /// Every compensation removes an effect of the intent and step it undoes.
    NoWrongCompensation,
    /// Every operation that became unknown was truly resolved or escalated within this many
    /// milliseconds of its first unknown moment.
    ResolvedWithin(Millis),
    /// A property a design brings ([`crate::design::Design::properties`]).
    Custom(&'static PropertyDef),
}

impl Property {
    /// The properties without a parameter, in the order they are listed.
    pub const PLAIN: [Property; 9] = [
        Property::NoDuplicate,
        Property::NoFalseSuccess,
        Property::NoFalseFailure,
        Property::NoMergedRepeat,
        Property::NoDrift,
        Property::NoMaskedMismatch,
        Property::NoFalseResolution,
        Property::NoWrongReceipt,
        Property::NoWrongCompensation,
    ];

    /// Its definition: name, meaning and judgement.
    pub fn def(self) -> &'static PropertyDef {
        match self {
            Property::NoDuplicate => &NO_DUPLICATE,
            Property::NoFalseSuccess => &NO_FALSE_SUCCESS,
            Property::NoFalseFailure => &NO_FALSE_FAILURE,
            Property::NoMergedRepeat => &NO_MERGED_REPEAT,
            Property::NoDrift => &NO_DRIFT,
            Property::NoMaskedMismatch => &NO_MASKED_MISMATCH,
            Property::NoFalseResolution => &NO_FALSE_RESOLUTION,
            Property::NoWrongReceipt => &NO_WRONG_RECEIPT,
            Property::NoWrongCompensation => &NO_WRONG_COMPENSATION,
            Property::ResolvedWithin(_) => &RESOLVED_WITHIN,
            Property::Custom(def) => def,
        }
    }

    /// The standard set a design is judged on without being asked: the plain properties,
    /// then those the design brings.
    pub fn standard(custom: &'static [PropertyDef]) -> Vec<Property> {
        Self::PLAIN
            .into_iter()
            .chain(custom.iter().map(Property::Custom))
            .collect()
    }

    /// Whether `run` satisfies the property. A property a design brings holds vacuously on
    /// a run of a design that does not bring it (`run --fail-on` judges it only where it
    /// applies; a model's expectation must name a property its design brings).
    pub fn holds(self, run: &RunSummary) -> bool {
        match self.def().judge {
            Judge::Zero(count) => count(run) == 0,
            Judge::SettledWithin => match self {
                Property::ResolvedWithin(t) => run.longest_unknown_ms <= t,
                _ => true,
            },
            Judge::Violated(_) => run
                .custom
                .iter()
                .position(|d| d == self.def())
                .is_none_or(|i| run.custom_violated >> i & 1 == 0),
        }
    }

    /// What the property says, for `--help` and the docs.
    pub fn meaning(self) -> &'static str {
        self.def().meaning
    }

    /// The property as written in a list of names: with `(T)` for a parameter.
    pub fn pattern(self) -> String {
        match self {
            Property::ResolvedWithin(_) => "resolved_within(T)".to_string(),
            p => p.to_string(),
        }
    }

    /// Every built-in property name, as written (`resolved_within(T)` with its parameter).
    pub fn names() -> String {
        let mut names: Vec<String> = Self::PLAIN.iter().map(|p| p.to_string()).collect();
        names.push("resolved_within(T)".into());
        names.join(", ")
    }

    /// Parses a property name among the built-in ones and `custom` (those designs bring).
    pub fn parse_with(s: &str, custom: &[&'static PropertyDef]) -> Result<Property, String> {
        if let Some(def) = custom.iter().find(|d| d.name == s.trim()) {
            return Ok(Property::Custom(def));
        }
        s.parse().map_err(|e: String| {
            if custom.is_empty() {
                e
            } else {
                let names: Vec<&str> = custom.iter().map(|d| d.name).collect();
                format!("{e}; brought by designs: {}", names.join(", "))
            }
        })
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Property::ResolvedWithin(t) => write!(f, "resolved_within({t})"),
            p => f.write_str(p.def().name),
        }
    }
}

/// Evaluates the properties `custom` (a design brings them) on a finished run: a bit per
/// property it violates.
pub(crate) fn violated_bits(custom: &[PropertyDef], o: &Outcome<'_>) -> u64 {
    let mut bits = 0;
    for (i, def) in custom.iter().enumerate().take(64) {
        if let Judge::Violated(violated) = def.judge {
            bits |= u64::from(violated(o)) << i;
        }
    }
    bits
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

    static MINE: [PropertyDef; 2] = [
        PropertyDef {
            name: "first_mine",
            meaning: "a test property",
            judge: Judge::Violated(|o| o.remote_calls > 1),
        },
        PropertyDef {
            name: "second_mine",
            meaning: "another",
            judge: Judge::Violated(|o| o.remote_calls > 5),
        },
    ];

    /// A property a design brings is judged once, when the run ends, into a bit of the
    /// run's summary; `holds` reads that bit, and a run of a design that does not bring
    /// the property holds it vacuously.
    #[test]
    fn a_property_a_design_brings_is_read_from_its_bit() {
        let run = RunSummary {
            custom: &MINE,
            custom_violated: 0b10,
            ..RunSummary::default()
        };
        assert!(Property::Custom(&MINE[0]).holds(&run));
        assert!(!Property::Custom(&MINE[1]).holds(&run));
        assert!(Property::Custom(&MINE[1]).holds(&RunSummary::default()));
        let custom: Vec<&'static PropertyDef> = MINE.iter().collect();
        assert_eq!(
            Property::parse_with("second_mine", &custom),
            Ok(Property::Custom(&MINE[1]))
        );
        assert_eq!(Property::Custom(&MINE[1]).to_string(), "second_mine");
        assert!(
            Property::parse_with("third", &custom)
                .unwrap_err()
                .ends_with("brought by designs: first_mine, second_mine")
        );
        assert_eq!(
            Property::standard(&MINE),
            [
                &Property::PLAIN[..],
                &[Property::Custom(&MINE[0]), Property::Custom(&MINE[1])]
            ]
            .concat()
        );
    }
}

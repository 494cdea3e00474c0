//! Replay of a recorded choice vector: the universal reproduction format.
//!
//! A choice vector is the list of values a run's [`Chooser`] returned, written as decimal
//! numbers joined by commas (`"3,0,1"`; the empty string is a run of defaults). Replaying it
//! with the same model and design reproduces the run exactly. When the vector runs out, every
//! further decision takes its default (alternative 0), which is what lets a shrinker delete
//! entries. A value that is not a possible alternative is an error, reported after the run.
//!
//! Values are what the chooser answered: for a weighted decision, the index among its
//! possible (non-zero) alternatives; for a range, the offset from its minimum. A vector
//! recorded by a chooser that [orders ties](Chooser::orders_ties) holds the
//! [`Purpose::Order`] decisions too, and replays only with
//! [`ReplayChooser::ordering_ties`]`(true)` (`retrylab replay --ties`).

use std::fmt;
use std::str::FromStr;

use super::chooser::{Alternatives, Choice, Chooser, Purpose};

/// A recorded sequence of decisions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChoiceVector(pub Vec<u64>);

impl ChoiceVector {
    pub fn from_choices(choices: &[Choice]) -> Self {
        ChoiceVector(choices.iter().map(|c| c.value).collect())
    }
}

impl fmt::Display for ChoiceVector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

impl FromStr for ChoiceVector {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(ChoiceVector(Vec::new()));
        }
        s.split(',')
            .enumerate()
            .map(|(i, part)| {
                part.trim().parse::<u64>().map_err(|_| {
                    format!(
                        "choice {} is \"{}\": expected a non-negative integer",
                        i + 1,
                        part.trim()
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(ChoiceVector)
    }
}

/// Why a replay did not follow its vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayError {
    /// Entry `position` (1-based) is not a possible alternative of the decision it met.
    Impossible {
        position: usize,
        value: u64,
        purpose: Purpose,
        of: u64,
    },
    /// The run made `used` decisions but the vector has `len` entries: it was recorded for
    /// another model or design.
    Leftover { used: usize, len: usize },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Impossible {
                position,
                value,
                purpose,
                of,
            } => write!(
                f,
                "choice {position} is {value}, but decision {position} of this run ({}) has {of} alternatives and {value} is not a possible one; was the vector recorded for another model or design?",
                purpose.name()
            ),
            ReplayError::Leftover { used, len } => write!(
                f,
                "the run made {used} decisions but the vector has {len}; was it recorded for another model or design?"
            ),
        }
    }
}

impl std::error::Error for ReplayError {}

/// Answers each decision from a recorded vector.
pub struct ReplayChooser {
    values: Vec<u64>,
    position: usize,
    error: Option<ReplayError>,
    lenient: bool,
    ties: bool,
}

impl ReplayChooser {
    pub fn new(vector: ChoiceVector) -> Self {
        Self {
            values: vector.0,
            position: 0,
            error: None,
            lenient: false,
            ties: false,
        }
    }

    /// A replay that takes the default for any value that is not possible and never
    /// reports an error: what a shrinker runs its candidates with (record the run to get the
    /// vector it really followed).
    pub fn lenient(values: &[u64]) -> Self {
        Self {
            values: values.to_vec(),
            position: 0,
            error: None,
            lenient: true,
            ties: false,
        }
    }

    /// Whether the replay orders events due at the same instant by a choice, as the run it
    /// replays did (see [`Chooser::orders_ties`]); off by default.
    pub fn ordering_ties(self, on: bool) -> Self {
        Self { ties: on, ..self }
    }

    /// After the run: whether it followed the vector exactly.
    pub fn finish(&self) -> Result<(), ReplayError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.position < self.values.len() && !self.lenient {
            return Err(ReplayError::Leftover {
                used: self.position,
                len: self.values.len(),
            });
        }
        Ok(())
    }
}

impl Chooser for ReplayChooser {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        let Some(&value) = self.values.get(self.position) else {
            self.position += 1;
            return alternatives.default_value();
        };
        self.position += 1;
        if alternatives.allows(value) {
            return value;
        }
        if self.error.is_none() && !self.lenient {
            self.error = Some(ReplayError::Impossible {
                position: self.position,
                value,
                purpose,
                of: alternatives.len(),
            });
        }
        alternatives.default_value()
    }

    fn orders_ties(&self) -> bool {
        self.ties
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_round_trips_through_text() {
        let v: ChoiceVector = "3, 0,17".parse().unwrap();
        assert_eq!(v.0, vec![3, 0, 17]);
        assert_eq!(v.to_string(), "3,0,17");
        assert_eq!("".parse::<ChoiceVector>().unwrap().0, Vec::<u64>::new());
        assert!(
            "1,x"
                .parse::<ChoiceVector>()
                .unwrap_err()
                .contains("choice 2")
        );
    }

    #[test]
    fn replays_then_defaults() {
        let mut r = ReplayChooser::new(ChoiceVector(vec![2]));
        assert_eq!(r.choose(Purpose::Latency, Alternatives::Uniform(5)), 2);
        assert_eq!(r.choose(Purpose::Latency, Alternatives::Uniform(5)), 0);
        // Running past the end is allowed: that is how a shrinker deletes entries.
        assert_eq!(r.finish(), Ok(()));
    }

    #[test]
    fn tie_ordering_is_off_unless_asked_for() {
        assert!(!ReplayChooser::new(ChoiceVector::default()).orders_ties());
        assert!(!ReplayChooser::lenient(&[]).orders_ties());
        let r = ReplayChooser::new(ChoiceVector(vec![1])).ordering_ties(true);
        assert!(r.orders_ties());
        assert!(
            ReplayChooser::lenient(&[1])
                .ordering_ties(true)
                .orders_ties()
        );
        assert!(!r.ordering_ties(false).orders_ties());
    }

    #[test]
    fn a_span_replays_its_offset() {
        let mut r = ReplayChooser::new(ChoiceVector(vec![969, 1971]));
        let span = Alternatives::Span { min: 30, len: 1971 };
        assert_eq!(r.choose(Purpose::Latency, span), 969);
        // 1971 is one past the last offset.
        assert_eq!(r.choose(Purpose::Latency, span), 0);
        assert!(matches!(
            r.finish(),
            Err(ReplayError::Impossible {
                position: 2,
                of: 1971,
                ..
            })
        ));
    }

    #[test]
    fn reports_impossible_and_leftover_values() {
        let mut r = ReplayChooser::new(ChoiceVector(vec![9]));
        assert_eq!(r.choose(Purpose::Latency, Alternatives::Uniform(5)), 0);
        assert!(matches!(
            r.finish(),
            Err(ReplayError::Impossible {
                position: 1,
                value: 9,
                of: 5,
                ..
            })
        ));
        let r = ReplayChooser::new(ChoiceVector(vec![1, 1]));
        assert_eq!(r.finish(), Err(ReplayError::Leftover { used: 0, len: 2 }));
    }
}

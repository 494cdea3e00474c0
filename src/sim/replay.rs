//! Replay of a recorded choice vector: the universal reproduction format.
//!
//! A choice vector is the list of values a run's [`Chooser`] returned. Replaying it with the
//! same model and design reproduces the run exactly. When the vector runs out, every further
//! decision takes its default (alternative 0), which is what lets a shrinker delete entries.
//! A value that is not a possible alternative is an error, reported after the run.
//!
//! Values are what the chooser answered: for a weighted decision, the index among its
//! possible (non-zero) alternatives; for a range, the offset from its minimum. A vector
//! recorded by a chooser that [orders ties](Chooser::orders_ties) holds the
//! [`Purpose::Order`] decisions too, and replays only with
//! [`ReplayChooser::ordering_ties`]`(true)` (`retrylab replay --ties`).
//!
//! # Text forms
//!
//! A vector is written as comma-separated items. An item `V` is the value of the next
//! decision; an item `P=V` is the value of decision `P` (1-based, after every earlier
//! item's), the decisions skipped over taking their default. A vector prints in its shortest
//! such form: the defaults left out, `P=` only where a default was skipped (`0,0,1,0,5` prints
//! as `3=1,5=5`; the long form `0,0,1,0,5` is read as well). A default is always 0 where a
//! recorded value is 0 (a decision whose alternative 0 is possible defaults to it), so leaving
//! out zeros replays exactly.
//!
//! A [`ReplayKey`] carries what else a replay needs, in one word: the model's digest and
//! whether same-instant order was a choice, as `DIGEST+ties:ITEMS` (`+ties` only when it
//! was; `DIGEST` may be absent, as in `+ties:3=1`). It is what printed replay commands give
//! `--choices`.

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

    /// Every entry, comma-separated (`0,0,1`): the long form, as vectors were first printed.
    pub fn long_form(&self) -> String {
        let items: Vec<String> = self.0.iter().map(u64::to_string).collect();
        items.join(",")
    }
}

/// The short form: the non-default entries, `P=V` where defaults were skipped (module
/// docs). Parses back to a vector that replays the same run.
impl fmt::Display for ChoiceVector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `next`: the 1-based position a plain item would fill.
        let mut next = 1;
        let mut first = true;
        for (i, &v) in self.0.iter().enumerate() {
            if v == 0 {
                continue;
            }
            let position = i + 1;
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if position == next {
                write!(f, "{v}")?;
            } else {
                write!(f, "{position}={v}")?;
            }
            next = position + 1;
        }
        Ok(())
    }
}

impl FromStr for ChoiceVector {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let mut values = Vec::new();
        if s.is_empty() {
            return Ok(ChoiceVector(values));
        }
        for (i, item) in s.split(',').enumerate() {
            let item = item.trim();
            let number = |text: &str, what: &str| {
                text.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("item {} is \"{item}\": expected {what}", i + 1))
            };
            match item.split_once('=') {
                None => values.push(number(item, "a non-negative integer or POSITION=VALUE")?),
                Some((position, value)) => {
                    let position = number(position, "POSITION=VALUE with a 1-based position")?;
                    let value = number(value, "POSITION=VALUE with a non-negative integer value")?;
                    let next = values.len() as u64 + 1;
                    if position < next {
                        return Err(format!(
                            "item {} is \"{item}\": position {position} is not after the items before it (the next position is {next})",
                            i + 1
                        ));
                    }
                    // Positions are decisions of one run: far fewer than memory holds.
                    if position > 1 << 24 {
                        return Err(format!(
                            "item {} is \"{item}\": position {position} is past any run's decisions",
                            i + 1
                        ));
                    }
                    values.resize(position as usize - 1, 0);
                    values.push(value);
                }
            }
        }
        Ok(ChoiceVector(values))
    }
}

/// A choice vector with the model digest it was recorded against and whether same-instant
/// order was a choice: everything a replay needs besides the model and design, as one word
/// (`DIGEST+ties:ITEMS`, module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayKey {
    /// The [`Model::digest`](crate::model::Model::digest) of the model as run.
    pub digest: Option<String>,
    /// The run ordered same-instant events by choice (`--ties`).
    pub ties: bool,
    pub vector: ChoiceVector,
}

impl fmt::Display for ReplayKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(d) = &self.digest {
            f.write_str(d)?;
        }
        if self.ties {
            f.write_str("+ties")?;
        }
        write!(f, ":{}", self.vector)
    }
}

impl FromStr for ReplayKey {
    type Err = String;

    /// A key (`DIGEST+ties:ITEMS`) or a bare vector (no digest, no ties).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let Some((head, items)) = s.trim().split_once(':') else {
            return Ok(ReplayKey {
                vector: s.parse()?,
                ..ReplayKey::default()
            });
        };
        let head = head.trim();
        let (digest, ties) = match head.strip_suffix("+ties") {
            Some(d) => (d, true),
            None => (head, false),
        };
        let digest = if digest.is_empty() {
            None
        } else if digest.len() == 16 && digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            Some(digest.to_ascii_lowercase())
        } else {
            return Err(format!(
                "\"{head}\" before the colon: expected a model digest of 16 hex digits, optionally followed by +ties (as in 00cc67b16dc12c24+ties:3=1)"
            ));
        };
        Ok(ReplayKey {
            digest,
            ties,
            vector: items.parse()?,
        })
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
        assert_eq!(v.to_string(), "3,3=17");
        assert_eq!(v.long_form(), "3,0,17");
        assert_eq!("".parse::<ChoiceVector>().unwrap().0, Vec::<u64>::new());
        assert!(
            "1,x"
                .parse::<ChoiceVector>()
                .unwrap_err()
                .contains("item 2 is \"x\"")
        );
    }

    #[test]
    fn the_short_form_leaves_out_defaults() {
        let cases: [(&[u64], &str); 6] = [
            (&[], ""),
            (&[0, 0, 0], ""),
            (&[0, 0, 1], "3=1"),
            (&[5, 3, 0, 0, 1, 2], "5,3,5=1,2"),
            (&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1993, 0], "13=1993"),
            (
                &[1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                "1,7=1,16=1",
            ),
        ];
        for (values, short) in cases {
            let v = ChoiceVector(values.to_vec());
            assert_eq!(v.to_string(), short, "{values:?}");
            // The short form reads back as the vector without its trailing defaults.
            let mut trimmed = values.to_vec();
            while trimmed.last() == Some(&0) {
                trimmed.pop();
            }
            assert_eq!(short.parse::<ChoiceVector>().unwrap().0, trimmed, "{short}");
            // And the long form as the vector itself.
            assert_eq!(v.long_form().parse::<ChoiceVector>().unwrap(), v);
        }
    }

    #[test]
    fn positions_must_move_forward() {
        assert_eq!(
            "2,4=7,1".parse::<ChoiceVector>().unwrap().0,
            vec![2, 0, 0, 7, 1]
        );
        for (text, wrong) in [
            (
                "3,1=2",
                "position 1 is not after the items before it (the next position is 2)",
            ),
            ("0=1", "position 0 is not after"),
            ("x=1", "1-based position"),
            ("2=y", "non-negative integer value"),
            ("99999999999=1", "past any run's decisions"),
            // The bound is on the position, not the step: no run of items grows past it.
            (
                "16777216=1,16777217=1,33554434=1",
                "past any run's decisions",
            ),
        ] {
            let e = text.parse::<ChoiceVector>().unwrap_err();
            assert!(e.contains(wrong), "{text}: {e}");
        }
    }

    #[test]
    fn a_key_carries_digest_and_ties() {
        let key = ReplayKey {
            digest: Some("00cc67b16dc12c24".into()),
            ties: true,
            vector: ChoiceVector(vec![0, 0, 1]),
        };
        assert_eq!(key.to_string(), "00cc67b16dc12c24+ties:3=1");
        assert_eq!(
            "00cc67b16dc12c24+ties:3=1".parse::<ReplayKey>().unwrap(),
            key
        );
        let plain: ReplayKey = "00CC67B16DC12C24:".parse().unwrap();
        assert_eq!(plain.digest.as_deref(), Some("00cc67b16dc12c24"));
        assert!(!plain.ties && plain.vector.0.is_empty());
        // Spaces around the parts are read as in a bare vector.
        assert_eq!(
            " 00cc67b16dc12c24+ties : 3=1 "
                .parse::<ReplayKey>()
                .unwrap(),
            key
        );
        let no_digest: ReplayKey = "+ties:1".parse().unwrap();
        assert_eq!((no_digest.digest, no_digest.ties), (None, true));
        // A bare vector, long or short, is a key without digest or ties.
        let bare: ReplayKey = "0,0,1".parse().unwrap();
        assert_eq!(
            bare,
            ReplayKey {
                vector: ChoiceVector(vec![0, 0, 1]),
                ..ReplayKey::default()
            }
        );
        let e = "00cc67:1".parse::<ReplayKey>().unwrap_err();
        assert!(e.contains("16 hex digits"), "{e}");
        let e = "00cc67b16dc12c24+ties:1,q"
            .parse::<ReplayKey>()
            .unwrap_err();
        assert!(e.contains("item 2"), "{e}");
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

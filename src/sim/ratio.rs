//! Exact probabilities.
//!
//! A probability is a ratio of two integers, converted once when the model is read; the hot
//! path only compares integers (TigerBeetle's PRNG `Ratio` does the same). A model may write a
//! probability as `"1/20"`, as `0` or `1`, or as a decimal such as `0.05` (read as parts per
//! million, so `0.05` is exactly `50000/1000000`).

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A probability `num / den` with `num <= den` and `den > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio {
    num: u32,
    den: u32,
}

const PPM: u32 = 1_000_000;

impl Ratio {
    pub const ZERO: Ratio = Ratio { num: 0, den: 1 };
    pub const ONE: Ratio = Ratio { num: 1, den: 1 };

    /// `None` unless `den > 0` and `num <= den`.
    pub fn new(num: u32, den: u32) -> Option<Ratio> {
        (den > 0 && num <= den).then_some(Ratio { num, den })
    }

    pub fn num(self) -> u32 {
        self.num
    }

    pub fn den(self) -> u32 {
        self.den
    }

    pub fn is_zero(self) -> bool {
        self.num == 0
    }

    pub fn is_one(self) -> bool {
        self.num == self.den
    }

    fn parse(text: &str) -> Result<Ratio, String> {
        let (n, d) = text
            .split_once('/')
            .ok_or_else(|| format!("expected a probability such as \"1/20\", got \"{text}\""))?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("bad numerator in \"{text}\""))?;
        let d: u32 = d
            .trim()
            .parse()
            .map_err(|_| format!("bad denominator in \"{text}\""))?;
        Ratio::new(n, d).ok_or_else(|| {
            format!("probability \"{text}\" must have a denominator above 0 and be at most 1")
        })
    }
}

impl Default for Ratio {
    fn default() -> Self {
        Ratio::ZERO
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

impl Serialize for Ratio {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Ratio {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RatioVisitor)
    }
}

struct RatioVisitor;

impl Visitor<'_> for RatioVisitor {
    type Value = Ratio;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a probability: \"n/d\", 0, 1, or a decimal between 0 and 1")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Ratio, E> {
        Ratio::parse(v).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Ratio, E> {
        match v {
            0 => Ok(Ratio::ZERO),
            1 => Ok(Ratio::ONE),
            _ => Err(E::custom(format!("probability {v} is above 1"))),
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Ratio, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(E::custom(format!("probability {v} is negative"))),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Ratio, E> {
        if !(0.0..=1.0).contains(&v) {
            return Err(E::custom(format!("probability {v} is not between 0 and 1")));
        }
        // Converted once, here; parts per million keep two-to-six-decimal inputs exact.
        let num = (v * f64::from(PPM)).round() as u32;
        if num == 0 && v > 0.0 {
            return Err(E::custom(format!(
                "probability {v} is below one in a million; write it as a ratio such as \"1/10000000\""
            )));
        }
        Ok(Ratio { num, den: PPM })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Ratio, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_every_form() {
        assert_eq!(parse("\"1/20\"").unwrap(), Ratio::new(1, 20).unwrap());
        assert_eq!(parse("0").unwrap(), Ratio::ZERO);
        assert_eq!(parse("1").unwrap(), Ratio::ONE);
        assert_eq!(
            parse("0.05").unwrap(),
            Ratio::new(50_000, 1_000_000).unwrap()
        );
    }

    #[test]
    fn rejects_impossible_probabilities() {
        assert!(parse("\"3/2\"").unwrap_err().contains("at most 1"));
        assert!(parse("\"1/0\"").unwrap_err().contains("denominator"));
        assert!(parse("-1").unwrap_err().contains("negative"));
        assert!(parse("1.5").unwrap_err().contains("between 0 and 1"));
        assert!(parse("2").unwrap_err().contains("above 1"));
        assert!(
            parse("0.0000001")
                .unwrap_err()
                .contains("below one in a million")
        );
    }
}

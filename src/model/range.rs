//! A closed range of durations, `min..=max`, drawn uniformly through the chooser.
//!
//! Written in a model as a bare integer (a constant) or as `{"min": a, "max": b}`.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::sim::Millis;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Range {
    pub min: Millis,
    pub max: Millis,
}

impl Range {
    pub const fn constant(ms: Millis) -> Range {
        Range { min: ms, max: ms }
    }
}

impl Default for Range {
    fn default() -> Self {
        Range::constant(0)
    }
}

impl<'de> Deserialize<'de> for Range {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RangeVisitor)
    }
}

/// The keys of `{"min", "max"}`. Read as an identifier (not as a `String`) so that an
/// unknown key is refused while it is read, and its error path ends with that key, as it
/// does for the derived structs of the schema.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Bound {
    Min,
    Max,
}

struct RangeVisitor;

impl<'de> Visitor<'de> for RangeVisitor {
    type Value = Range;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a non-negative integer of milliseconds or {\"min\": .., \"max\": ..}")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Range, E> {
        Ok(Range::constant(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Range, E> {
        u64::try_from(v)
            .map(Range::constant)
            .map_err(|_| E::custom(format!("duration {v} is negative")))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Range, A::Error> {
        let (mut min, mut max) = (None, None);
        while let Some(bound) = map.next_key::<Bound>()? {
            let (slot, name) = match bound {
                Bound::Min => (&mut min, "min"),
                Bound::Max => (&mut max, "max"),
            };
            if slot.is_some() {
                return Err(de::Error::duplicate_field(name));
            }
            *slot = Some(map.next_value::<u64>()?);
        }
        let min = min.ok_or_else(|| de::Error::missing_field("min"))?;
        let max = max.ok_or_else(|| de::Error::missing_field("max"))?;
        // A reversed range is never valid; serde reports it at the range's position.
        if min > max {
            return Err(de::Error::custom(format!(
                "min {min} is greater than max {max}"
            )));
        }
        Ok(Range { min, max })
    }
}

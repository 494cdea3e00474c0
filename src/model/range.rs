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
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "min" => min = Some(map.next_value::<u64>()?),
                "max" => max = Some(map.next_value::<u64>()?),
                other => return Err(de::Error::unknown_field(other, &["min", "max"])),
            }
        }
        let min = min.ok_or_else(|| de::Error::missing_field("min"))?;
        let max = max.ok_or_else(|| de::Error::missing_field("max"))?;
        // Checked again by validation with the position, but a reversed range is never valid.
        if min > max {
            return Err(de::Error::custom(format!(
                "min {min} is greater than max {max}"
            )));
        }
        Ok(Range { min, max })
    }
}

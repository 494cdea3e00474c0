//! Distributions of durations in a mergeable histogram: memory stays flat in the number of
//! seeds, and merging is exact whatever the order (counts per bucket are added), so a sweep
//! split over threads or shards gives the same figures as one run.
//!
//! Precision: an HDR histogram with three significant digits. Every value below 2048 ms is
//! kept exactly; a larger one is reported as the highest value of its bucket, at most 0.1 %
//! above the true value. Count and maximum are exact.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::sim::Millis;

/// Significant decimal digits kept for each value.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// A mergeable histogram of durations in milliseconds.
#[derive(Clone, Debug)]
pub struct Histogram {
    hdr: hdrhistogram::Histogram<u64>,
    max: Millis,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            hdr: hdrhistogram::Histogram::new(SIGNIFICANT_DIGITS)
                .expect("3 significant digits is a valid precision"),
            max: 0,
        }
    }
}

impl PartialEq for Histogram {
    fn eq(&self, other: &Self) -> bool {
        self.max == other.max && self.hdr == other.hdr
    }
}

impl Eq for Histogram {}

/// A histogram serialises as its buckets and exact maximum (`{"buckets": [[value, count],
/// ...], "max": m}`, see [`Histogram::buckets`]): what a partial result of a sharded sweep
/// carries, and reads back exactly.
#[derive(Serialize, Deserialize)]
struct Buckets {
    buckets: Vec<(Millis, u64)>,
    max: Millis,
}

impl Serialize for Histogram {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (buckets, max) = self.buckets();
        Buckets { buckets, max }.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Histogram {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let b = Buckets::deserialize(deserializer)?;
        Histogram::from_buckets(&b.buckets, b.max).ok_or_else(|| {
            serde::de::Error::custom("a histogram whose buckets are not those of a histogram")
        })
    }
}

impl Histogram {
    /// Adds one value.
    pub fn record(&mut self, value: Millis) {
        // The histogram grows to fit any value; durations are capped far below u64::MAX.
        self.hdr
            .record(value)
            .expect("an auto-resizing histogram takes any value");
        self.max = self.max.max(value);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        self.hdr
            .add(&other.hdr)
            .expect("an auto-resizing histogram takes any value");
        self.max = self.max.max(other.max);
    }

    /// The value, when exactly one was recorded (exactly: the maximum is kept exactly).
    pub fn single(&self) -> Option<Millis> {
        (self.count() == 1).then_some(self.max)
    }

    pub fn count(&self) -> u64 {
        self.hdr.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hdr.is_empty()
    }

    /// The nearest-rank percentile `p` (1..=100): the smallest recorded value with at least
    /// `p` % of the values at or below it, to the histogram's precision.
    pub fn percentile(&self, p: u64) -> Option<Millis> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let rank = (p * n).div_ceil(100).max(1);
        let mut seen = 0;
        for v in self.hdr.iter_recorded() {
            seen += v.count_since_last_iteration();
            if seen >= rank {
                return Some(v.value_iterated_to().min(self.max));
            }
        }
        Some(self.max)
    }

    /// The cumulative distribution: for each recorded bucket in increasing order, its value
    /// (to the histogram's precision, never above the maximum) and the number of values at
    /// or below it. The last point's count is [`Histogram::count`].
    pub fn cdf(&self) -> Vec<(Millis, u64)> {
        let mut seen = 0;
        self.hdr
            .iter_recorded()
            .map(|v| {
                seen += v.count_since_last_iteration();
                (v.value_iterated_to().min(self.max), seen)
            })
            .collect()
    }

    /// Every recorded bucket in increasing order, as (its value to the histogram's
    /// precision, the values in it), and the exact maximum: enough to rebuild the histogram
    /// exactly with [`Histogram::from_buckets`] (a shard's partial result carries them).
    pub fn buckets(&self) -> (Vec<(Millis, u64)>, Millis) {
        let pairs = self
            .hdr
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        (pairs, self.max)
    }

    /// The histogram [`Histogram::buckets`] describes; `None` when a count is zero, a
    /// value is not its bucket's or the maximum lies outside the last bucket.
    pub fn from_buckets(pairs: &[(Millis, u64)], max: Millis) -> Option<Histogram> {
        let mut h = Histogram::default();
        for &(value, count) in pairs {
            if count == 0 || h.hdr.highest_equivalent(value) != value {
                return None;
            }
            h.hdr.record_n(value, count).ok()?;
        }
        match pairs.last() {
            None if max != 0 => return None,
            Some(&(last, _)) if h.hdr.lowest_equivalent(last) > max || max > last => {
                return None;
            }
            _ => {}
        }
        h.max = max;
        Some(h)
    }

    /// Count, p50, p90, p99 and max.
    pub fn percentiles(&self) -> Percentiles {
        Percentiles {
            count: self.count(),
            p50: self.percentile(50),
            p90: self.percentile(90),
            p99: self.percentile(99),
            max: (!self.is_empty()).then_some(self.max),
        }
    }
}

/// Nearest-rank percentiles of a sample; all `None` when it is empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Percentiles {
    pub count: u64,
    pub p50: Option<Millis>,
    pub p90: Option<Millis>,
    pub p99: Option<Millis>,
    pub max: Option<Millis>,
}

impl Percentiles {
    /// Percentiles of `values` (order does not matter).
    pub fn of(values: &[Millis]) -> Percentiles {
        let mut h = Histogram::default();
        for &v in values {
            h.record(v);
        }
        h.percentiles()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cdf_counts_every_value_at_or_below_each_point() {
        let mut h = Histogram::default();
        for v in [5, 1, 5, 9, 1, 1] {
            h.record(v);
        }
        assert_eq!(h.cdf(), vec![(1, 3), (5, 5), (9, 6)]);
        assert_eq!(Histogram::default().cdf(), vec![]);
        // Above 2048 a bucket is reported at most at the exact maximum.
        let mut big = Histogram::default();
        big.record(100_001);
        assert_eq!(big.cdf(), vec![(100_001, 1)]);
    }

    #[test]
    fn nearest_rank_percentiles_exact_below_2048() {
        let v: Vec<Millis> = (1..=100).rev().collect();
        let p = Percentiles::of(&v);
        assert_eq!(
            (p.count, p.p50, p.p90, p.p99, p.max),
            (100, Some(50), Some(90), Some(99), Some(100))
        );
        let p = Percentiles::of(&[7]);
        assert_eq!((p.p50, p.p99, p.max), (Some(7), Some(7), Some(7)));
        assert_eq!(Percentiles::of(&[]).p50, None);
    }

    #[test]
    fn large_values_within_a_tenth_of_a_percent_and_exact_max() {
        let h = {
            let mut h = Histogram::default();
            h.record(108_000_000);
            h
        };
        let p50 = h.percentile(50).unwrap();
        assert!((108_000_000..=108_108_000).contains(&p50), "{p50}");
        assert_eq!(h.percentiles().max, Some(108_000_000));
    }

    #[test]
    fn merging_is_exact_in_any_order() {
        let (mut a, mut b, mut all) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        for v in 0..5_000u64 {
            let x = v * v % 70_001;
            if v % 3 == 0 { &mut a } else { &mut b }.record(x);
            all.record(x);
        }
        let mut ab = a.clone();
        ab.merge(&b);
        let mut ba = b.clone();
        ba.merge(&a);
        assert_eq!(ab, all);
        assert_eq!(ba, all);
        assert_eq!(ab.percentiles(), all.percentiles());
    }

    #[test]
    fn buckets_rebuild_the_histogram_exactly() {
        let mut h = Histogram::default();
        for v in 0..5_000u64 {
            h.record(v * v % 170_001);
        }
        let (pairs, max) = h.buckets();
        let back = Histogram::from_buckets(&pairs, max).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.cdf(), h.cdf());
        assert_eq!(back.buckets(), (pairs.clone(), max));
        let empty = Histogram::default();
        assert_eq!(Histogram::from_buckets(&[], 0), Some(empty));
        // A value that is not its bucket's, a zero count, a maximum past the last bucket.
        assert_eq!(Histogram::from_buckets(&[(100_000, 1)], 100_000), None);
        assert_eq!(Histogram::from_buckets(&[(5, 0)], 5), None);
        assert_eq!(Histogram::from_buckets(&[(5, 1)], 6), None);
    }

    #[test]
    fn json_carries_a_histogram_exactly_and_refuses_one_that_is_not() {
        let mut h = Histogram::default();
        for v in [0, 7, 7, 2_049, 90_001, 3_600_000] {
            h.record(v);
        }
        let text = serde_json::to_string(&h).unwrap();
        assert!(text.starts_with("{\"buckets\":[[0,1],[7,2],"), "{text}");
        let back: Histogram = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.percentiles(), h.percentiles());
        // A count of zero, or a maximum beyond the last bucket, is no histogram's.
        for bad in [
            r#"{"buckets":[[7,0]],"max":7}"#,
            r#"{"buckets":[[7,1]],"max":9000}"#,
        ] {
            let e = serde_json::from_str::<Histogram>(bad).unwrap_err();
            assert!(e.to_string().contains("not those of a histogram"), "{e}");
        }
    }
}

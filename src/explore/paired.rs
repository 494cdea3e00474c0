//! Paired comparison of two designs on the same seeds.
//!
//! Every design meets the same faults on the same seed (as far as their paths agree: each
//! purpose draws from its own stream), so the difference of a rate between a design and a
//! baseline is best estimated seed by seed: per seed, the difference of the two counts over
//! the seed's intents; then the mean of those differences and a 95 % interval from their
//! spread (`mean ± t · sd / √seeds`, with the exact 95 % quantile of Student's t), and the number of seeds on
//! which the two disagree at all. Two independent intervals would be far wider: most of the
//! noise between seeds is the faults they draw, which the pair shares.
//!
//! The sums are kept as integers per number of intents in a seed, so that parts of a sweep
//! merge exactly in any grouping: the figures do not depend on the thread count.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::check::Metrics;
use crate::design::Design;
use crate::model::Model;
use crate::world::World;

// The per-intent quantities compared, in the order of `check::counters::quantities`: the
// outcomes, then the per-intent counts.
use crate::check::counters::N_QUANTITIES;

/// The counts of one run, in the order of [`crate::check::counters::quantities`], and its
/// intents.
fn counts(before: &Metrics, after: &Metrics) -> ([u64; N_QUANTITIES], u64) {
    let (b, a) = (before.quantity_counts(), after.quantity_counts());
    (
        std::array::from_fn(|i| a[i] - b[i]),
        after.intents - before.intents,
    )
}

/// Exact sums of per-seed differences of one quantity, for the seeds with `n` intents.
/// Serialised with the 128-bit sums as decimal strings, so that a JSON reader that keeps
/// numbers as 64-bit floats loses nothing (a shard's partial result carries them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Sums {
    seeds: u64,
    /// Σ (design − baseline).
    #[serde(with = "decimal")]
    diff: i128,
    /// Σ (design − baseline)².
    #[serde(with = "decimal")]
    square: u128,
    /// Seeds where the two counts differ.
    disagree: u64,
    /// Σ design, and Σ design²: the design's own per-seed spread.
    #[serde(with = "decimal")]
    value: u128,
    #[serde(with = "decimal")]
    value_square: u128,
}

/// A number as its decimal string.
mod decimal {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        String::deserialize(d)?.parse().map_err(D::Error::custom)
    }
}

/// The paired sums of every quantity, kept per number of intents in a seed: exact, and
/// serialisable without loss (a sharded report's partial results carry them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paired {
    by_intents: BTreeMap<u64, [Sums; N_QUANTITIES]>,
}

impl Paired {
    fn add(&mut self, design: &[u64; N_QUANTITIES], baseline: &[u64; N_QUANTITIES], intents: u64) {
        let sums = self.by_intents.entry(intents).or_default();
        for (i, s) in sums.iter_mut().enumerate() {
            let d = i128::from(design[i]) - i128::from(baseline[i]);
            s.seeds += 1;
            s.diff += d;
            s.square += d.unsigned_abs() * d.unsigned_abs();
            s.disagree += u64::from(d != 0);
            let x = u128::from(design[i]);
            s.value += x;
            s.value_square += x * x;
        }
    }

    /// Adds the sums of another part of the sweep.
    pub fn merge(mut self, other: Paired) -> Paired {
        for (n, sums) in other.by_intents {
            let mine = self.by_intents.entry(n).or_default();
            for (m, o) in mine.iter_mut().zip(sums) {
                m.seeds += o.seeds;
                m.diff += o.diff;
                m.square += o.square;
                m.disagree += o.disagree;
                m.value += o.value;
                m.value_square += o.value_square;
            }
        }
        self
    }

    /// The difference of quantity `i` (of [`crate::check::counters::quantities`]) per
    /// intent, design minus baseline.
    pub fn difference(&self, i: usize) -> Difference {
        // Per seed the difference is d / n; its mean and spread over all seeds.
        let (mean, low, high, seeds) = self.per_seed(i, |s| (s.diff as f64, s.square as f64));
        Difference {
            mean,
            low,
            high,
            seeds,
            disagree: self.by_intents.values().map(|s| s[i].disagree).sum(),
        }
    }

    /// The design's own mean of quantity `i` per intent, with a 95 % interval from the
    /// spread of the per-seed values (a seed is the independent unit: its intents share
    /// faults and workers). For counts that may exceed one per intent (duplicate effects,
    /// calls), where a proportion's interval does not apply.
    pub fn mean(&self, i: usize) -> Mean {
        let (mean, low, high, seeds) =
            self.per_seed(i, |s| (s.value as f64, s.value_square as f64));
        Mean {
            mean,
            low: low.max(0.0),
            high,
            seeds,
        }
    }

    /// Mean and interval over seeds of a per-intent value of quantity `i`, from each group's
    /// sum and sum of squares (`pick`), each seed's value being its count over its intents;
    /// and the number of seeds.
    fn per_seed(&self, i: usize, pick: impl Fn(&Sums) -> (f64, f64)) -> (f64, f64, f64, u64) {
        let (mut seeds, mut sum, mut square) = (0u64, 0f64, 0f64);
        for (&n, sums) in &self.by_intents {
            seeds += sums[i].seeds;
            if n > 0 {
                let n = n as f64;
                let (x, x2) = pick(&sums[i]);
                sum += x / n;
                square += x2 / (n * n);
            }
        }
        // One event over the fewest intents a seed had: the smallest change of a per-intent
        // value that a seed can make.
        let step = self
            .by_intents
            .keys()
            .find(|&&n| n > 0)
            .map_or(1.0, |&n| 1.0 / n as f64);
        let (mean, low, high) = mean_interval(seeds, sum, square, step);
        (mean, low, high, seeds)
    }
}

/// The two-sided 95 % quantile of Student's t with `df` degrees of freedom: its 0.975
/// quantile, within 1e-12 (a table rounded down to three decimals made intervals up to 1 %
/// too narrow). Infinite with no degree of freedom.
///
/// statrs inverts the regularized incomplete beta function, which is exact to about 1e-12
/// for few degrees of freedom but loses digits as they grow (3e-7 off at 50 000, 0.13 at ten
/// million: `1 - y` cancels); from [`EXPANSION_FROM`] on, the Cornish-Fisher expansion in
/// `1/df` to its fourth term (Abramowitz and Stegun 26.7.5) is used instead, whose error
/// there is below 3e-14 and shrinks as `df^-5`.
fn t95(df: u64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    match df {
        0 => f64::INFINITY,
        1..EXPANSION_FROM => StudentsT::new(0.0, 1.0, df as f64)
            .expect("a positive number of degrees of freedom")
            .inverse_cdf(0.975),
        _ => cornish_fisher(df as f64),
    }
}

/// Where [`t95`] takes the expansion instead of statrs's inversion.
const EXPANSION_FROM: u64 = 500;

/// The 0.975 quantile of Student's t with `v` degrees of freedom, from the normal quantile
/// `z` and four terms in `1/v`.
fn cornish_fisher(v: f64) -> f64 {
    const Z: f64 = 1.959_963_984_540_054;
    let z = |k: i32| Z.powi(k);
    let g1 = (z(3) + Z) / 4.0;
    let g2 = (5.0 * z(5) + 16.0 * z(3) + 3.0 * Z) / 96.0;
    let g3 = (3.0 * z(7) + 19.0 * z(5) + 17.0 * z(3) - 15.0 * Z) / 384.0;
    let g4 = (79.0 * z(9) + 776.0 * z(7) + 1482.0 * z(5) - 1920.0 * z(3) - 945.0 * Z) / 92_160.0;
    Z + (g1 + (g2 + (g3 + g4 / v) / v) / v) / v
}

/// Mean and 95 % interval of `seeds` per-seed values from their sum and sum of squares:
/// `mean ± t · sd / √seeds`. When every seed gave the same value the spread says nothing
/// about the seeds not run: the interval is then as wide as one seed in `3.84 / (seeds +
/// 3.84)` (the Wilson bound for none seen) differing by one event over `step` intents.
/// Fewer than two seeds: no interval (infinite bounds).
fn mean_interval(seeds: u64, sum: f64, square: f64, step: f64) -> (f64, f64, f64) {
    if seeds == 0 {
        return (0.0, f64::NEG_INFINITY, f64::INFINITY);
    }
    let k = seeds as f64;
    let mean = sum / k;
    if seeds == 1 {
        return (mean, f64::NEG_INFINITY, f64::INFINITY);
    }
    let variance = ((square - k * mean * mean) / (k - 1.0)).max(0.0);
    let half = if variance * k < 1e-12 {
        let z2 = 1.959_963_984_540_054f64.powi(2);
        z2 / (k + z2) * step
    } else {
        t95(seeds - 1) * (variance / k).sqrt()
    };
    (mean, mean - half, mean + half)
}

/// A design's own mean of a quantity per intent, with its 95 % interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mean {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    pub seeds: u64,
}

/// A paired difference per intent, design minus baseline.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Difference {
    pub mean: f64,
    /// The 95 % interval.
    pub low: f64,
    pub high: f64,
    pub seeds: u64,
    /// Seeds where the design and the baseline differ in this quantity.
    pub disagree: u64,
}

/// Runs `design` and `baseline` on every seed of `seeds` (all cores, merged in seed order)
/// and keeps the paired sums.
pub fn paired(
    model: &Model,
    design: &dyn Design,
    baseline: &dyn Design,
    seeds: RangeInclusive<u64>,
) -> Paired {
    const CHUNK: u64 = 256;
    let (first, last) = (*seeds.start(), *seeds.end());
    let count = last - first + 1;
    let chunks = count.div_ceil(CHUNK);
    (0..chunks)
        .into_par_iter()
        .map_init(
            || {
                (
                    World::new(model, design, false),
                    World::new(model, baseline, false),
                    model.chooser(0),
                )
            },
            |(a, b, ch), c| {
                let start = first + c * CHUNK;
                let end = start + (CHUNK.min(count - c * CHUNK) - 1);
                let mut part = Paired::default();
                let (mut ma, mut mb) = (Metrics::default(), Metrics::default());
                for seed in start..=end {
                    let (before_a, before_b) = (ma.clone(), mb.clone());
                    ch.reset(seed);
                    a.run(ch);
                    ma.add_outcome(&a.outcome());
                    ch.reset(seed);
                    b.run(ch);
                    mb.add_outcome(&b.outcome());
                    let (da, n) = counts(&before_a, &ma);
                    let (db, _) = counts(&before_b, &mb);
                    part.add(&da, &db, n);
                }
                part
            },
        )
        .reduce(Paired::default, Paired::merge)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_design_differs_from_itself_nowhere() {
        let model = crate::model::Model::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/models/ticket_chaos.json"
        )))
        .unwrap();
        let d = crate::design::find("same_key").unwrap();
        let p = paired(&model, d, d, 0..=199);
        // No seed differs: the interval is that of one seed in 3.84 / 203.84 differing by
        // one event over its five intents.
        let z2 = 1.959_963_984_540_054f64.powi(2);
        let half = z2 / (200.0 + z2) / 5.0;
        for i in 0..N_QUANTITIES {
            let x = p.difference(i);
            assert_eq!((x.mean, x.seeds, x.disagree), (0.0, 200, 0));
            assert!((x.high - half).abs() < 1e-15 && (x.low + half).abs() < 1e-15);
        }
    }

    /// The exact two-sided 95 % quantiles (the 0.975 quantile of Student's t), computed
    /// apart with mpmath at 40 digits (the root of the regularized incomplete beta form of
    /// the distribution function); the normal quantile is the limit.
    #[test]
    fn the_t_quantile_is_exact() {
        let exact = [
            (1, 12.706_204_736_174_705),
            (2, 4.302_652_729_749_464),
            (5, 2.570_581_835_636_315_5),
            (30, 2.042_272_456_301_238),
            (31, 2.039_513_446_396_408_5),
            (120, 1.979_930_405_082_441),
            (499, 1.964_729_390_987_689),
            (500, 1.964_719_837_467_367_8),
            (999, 1.962_341_461_133_45),
            (50_000, 1.960_011_431_093_68),
            (1_000_000, 1.959_966_356_814_107),
            (1_000_000_000, 1.959_963_986_912_325_5),
        ];
        for (df, t) in exact {
            assert!((t95(df) - t).abs() < 1e-12, "df {df}: {} != {t}", t95(df));
        }
        assert_eq!(t95(0), f64::INFINITY);
        // Decreasing in the degrees of freedom, across the change of method too, towards
        // the normal quantile.
        let normal = 1.959_963_984_540_054;
        for df in 1..2_000 {
            assert!(t95(df) > t95(df + 1) && t95(df + 1) > normal, "df {df}");
        }
        assert!((t95(u64::MAX) - normal).abs() < 1e-15);
    }

    #[test]
    fn few_seeds_take_students_t_and_one_seed_has_no_interval() {
        let mut two = Paired::default();
        two.add(&[0; N_QUANTITIES], &[0; N_QUANTITIES], 1);
        two.add(&[1; N_QUANTITIES], &[0; N_QUANTITIES], 1);
        // Values 0 and 1: mean 0.5, sd 0.7071, t(1) = 12.7062.
        let l = two.mean(0);
        assert!((l.mean - 0.5).abs() < 1e-12);
        assert!(
            (l.high - (0.5 + 12.706_204_736_174_698 * 0.5)).abs() < 1e-9,
            "{l:?}"
        );
        assert_eq!(l.low, 0.0, "a count per intent is never negative");
        let mut one = Paired::default();
        one.add(&[2; N_QUANTITIES], &[1; N_QUANTITIES], 1);
        let d = one.difference(0);
        assert_eq!(
            (d.mean, d.low, d.high),
            (1.0, f64::NEG_INFINITY, f64::INFINITY)
        );
    }

    #[test]
    fn sums_merge_exactly_in_any_grouping() {
        let mut a = Paired::default();
        let mut b = Paired::default();
        let mut whole = Paired::default();
        let runs = [
            (
                [3, 0, 0, 1, 1, 2, 0, 0, 0, 0, 0, 9],
                [5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5],
                5,
            ),
            (
                [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
                [2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 3],
                2,
            ),
        ];
        for (i, (x, y, n)) in runs.iter().enumerate() {
            whole.add(x, y, *n);
            if i == 0 { &mut a } else { &mut b }.add(x, y, *n);
        }
        assert_eq!(a.clone().merge(b.clone()), whole);
        assert_eq!(b.clone().merge(a.clone()), whole);
        // Through JSON (a shard's partial result), exactly, 128-bit sums included.
        let text = serde_json::to_string(&whole).unwrap();
        let back: Paired = serde_json::from_str(&text).unwrap();
        assert_eq!(back, whole);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::from_value::<Paired>(value).unwrap(), whole);
        // Completed: -2/5 and -1/2 per intent: mean -0.45.
        let c = whole.difference(0);
        assert!((c.mean + 0.45).abs() < 1e-12);
        assert_eq!((c.seeds, c.disagree), (2, 2));
    }
}

//! Numbers for people: rates with 95 % Wilson intervals, percentages that add up, and
//! durations in human units. Reporting only: nothing here feeds back into a simulation.

use crate::sim::Millis;

/// The normal quantile for a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// A proportion `k / n` with its 95 % Wilson score interval, all in 0..=1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

impl Rate {
    /// `k` of `n` (a rate of 0 with the interval 0..=1 when `n` is 0).
    pub fn wilson(k: u64, n: u64) -> Rate {
        if n == 0 {
            return Rate {
                rate: 0.0,
                low: 0.0,
                high: 1.0,
            };
        }
        let (all, none) = (k == n, k == 0);
        let (k, n) = (k as f64, n as f64);
        let p = k / n;
        let z2 = Z95 * Z95;
        let denom = 1.0 + z2 / n;
        let center = (p + z2 / (2.0 * n)) / denom;
        let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
        // At 0 and at n the bound on that side is exactly 0 or 1 (rounding would leave a
        // speck).
        Rate {
            rate: p,
            low: if none { 0.0 } else { (center - half).max(0.0) },
            high: if all { 1.0 } else { (center + half).min(1.0) },
        }
    }

    /// The interval as percentages with one decimal: `99.6-100`.
    pub fn interval_text(&self) -> String {
        format!("{}-{}", percent(self.low), percent(self.high))
    }
}

/// `x` (0..=1) as a percentage with at most one decimal, without a trailing `.0` at 0 and
/// 100: `0`, `12.5`, `100`.
fn percent(x: f64) -> String {
    let tenths = (x * 1000.0).round() as u64;
    match tenths {
        0 => "0".to_string(),
        1000 => "100".to_string(),
        t => format!("{}.{}", t / 10, t % 10),
    }
}

/// Counts as percentages in tenths that add up to exactly 1000 (100.0 %): each share rounded
/// down, then the tenths left over go to the largest remainders (ties to the first).
pub fn shares_in_tenths(counts: &[u64]) -> Vec<u64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return vec![0; counts.len()];
    }
    let exact: Vec<u128> = counts.iter().map(|&c| u128::from(c) * 1000).collect();
    let mut tenths: Vec<u64> = exact
        .iter()
        .map(|&e| (e / u128::from(total)) as u64)
        .collect();
    let mut left = 1000 - tenths.iter().sum::<u64>();
    let mut order: Vec<usize> = (0..counts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(exact[i] % u128::from(total)));
    for i in order {
        if left == 0 {
            break;
        }
        if exact[i] % u128::from(total) > 0 {
            tenths[i] += 1;
            left -= 1;
        }
    }
    tenths
}

/// Tenths of a percent as text: `99.7%`.
pub fn tenths_text(t: u64) -> String {
    format!("{}.{}%", t / 10, t % 10)
}

/// A duration in the unit a person would use: `958 ms`, `1.2 s`, `45 s`, `2.5 min`,
/// `30 h`, `3.1 d`.
pub fn human_ms(ms: Millis) -> String {
    const S: u64 = 1000;
    const MIN: u64 = 60 * S;
    const H: u64 = 60 * MIN;
    const D: u64 = 24 * H;
    let scaled = |unit: u64, name: &str| {
        let tenths = (u128::from(ms) * 10 + u128::from(unit) / 2) / u128::from(unit);
        if tenths < 100 {
            format!("{}.{} {name}", tenths / 10, tenths % 10)
        } else {
            format!("{} {name}", (tenths + 5) / 10)
        }
    };
    match ms {
        _ if ms < S => format!("{ms} ms"),
        _ if ms < MIN => scaled(S, "s"),
        _ if ms < H => scaled(MIN, "min"),
        _ if ms < 2 * D => scaled(H, "h"),
        _ => scaled(D, "d"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_the_textbook_values() {
        // 0 of 1000: 0 to 0.38 %; 1000 of 1000: 99.62 to 100 %; 50 of 100: 40.4 to 59.6 %.
        let r = Rate::wilson(0, 1000);
        assert_eq!((r.rate, r.low), (0.0, 0.0));
        assert!((r.high - 0.003_825).abs() < 1e-5, "{}", r.high);
        assert_eq!(Rate::wilson(1000, 1000).interval_text(), "99.6-100");
        assert_eq!(Rate::wilson(50, 100).interval_text(), "40.4-59.6");
        assert_eq!(Rate::wilson(0, 0).interval_text(), "0-100");
    }

    #[test]
    fn shares_add_up_to_a_hundred_percent() {
        assert_eq!(shares_in_tenths(&[1, 1, 1]), vec![334, 333, 333]);
        assert_eq!(shares_in_tenths(&[1000, 0, 0]), vec![1000, 0, 0]);
        assert_eq!(shares_in_tenths(&[2, 1]), vec![667, 333]);
        assert_eq!(shares_in_tenths(&[0, 0]), vec![0, 0]);
        for counts in [[7u64, 13, 0, 991, 5], [1, 1, 1, 1, 3]] {
            assert_eq!(shares_in_tenths(&counts).iter().sum::<u64>(), 1000);
        }
        assert_eq!(tenths_text(667), "66.7%");
    }

    #[test]
    fn durations_in_human_units() {
        let cases = [
            (0, "0 ms"),
            (958, "958 ms"),
            (1_200, "1.2 s"),
            (45_000, "45 s"),
            (150_000, "2.5 min"),
            (108_000_000, "30 h"),
            (3 * 86_400_000, "3.0 d"),
            (59_999, "60 s"),
        ];
        for (ms, text) in cases {
            assert_eq!(human_ms(ms), text, "{ms}");
        }
    }
}

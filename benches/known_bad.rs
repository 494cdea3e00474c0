//! How many runs each strategy needs to meet each bug of the known-bad corpus
//! (`tests/common/corpus.rs`, whose test `tests/known_bad.rs` only requires each within its
//! bound): the table of `tests/known_bad.rs`'s module doc, computed. Run with
//! `cargo bench --bench known_bad`.
//!
//! Random: plain seeds from 0, as `run` and `check` draw them (the sweep's first violating
//! seed + 1), one draw of a geometric variable; its expected figure, 1000 over the violating
//! seeds of 1000, is given beside it and the ratios divide that. Swarm: seeds from 0, each with
//! its own mix of fault probabilities and of timings drawn only at the ends of their range.
//! Dfs: runs of the whole search (every budget below K included, every pass of growing
//! deviation budget, runs cut at an explored state included), and K, the faults of the
//! counterexample. The figures are counts, not times: the same on every machine.

#[path = "../tests/common/bad.rs"]
mod bad;
#[path = "../tests/common/broken.rs"]
mod broken;
#[path = "../tests/common/corpus.rs"]
mod corpus;

use corpus::{CORPUS, SEEDS, catch};

/// A count of runs, or that the strategy did not meet the bug within its bound.
fn runs(n: Option<u64>) -> String {
    n.map_or_else(|| "none".to_string(), |n| n.to_string())
}

/// `expected / n` to one decimal, or `-`.
fn ratio(expected: f64, n: Option<u64>) -> String {
    n.map_or_else(
        || "-".to_string(),
        |n| format!("{:.1}", expected / n as f64),
    )
}

fn main() {
    let seeds = SEEDS.1 - SEEDS.0 + 1;
    println!(
        "| # | model | violating seeds of {seeds} | random (expected) | swarm | dfs (K) | \
         expected / swarm | expected / dfs |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (i, k) in CORPUS.iter().enumerate() {
        let c = catch(k);
        let expected = seeds as f64 / c.violating as f64;
        let random = c.first.map(|f| f + 1);
        assert_eq!(
            random,
            c.random_runs(),
            "{}: random draws the sweep's seeds",
            k.model
        );
        let dfs = match (c.dfs_runs(), c.dfs.violations.first()) {
            (Some(n), Some(v)) => format!("{n} ({})", v.faults),
            _ => "none".to_string(),
        };
        println!(
            "| {} | `{}` | {} | {} ({:.0}) | {} | {dfs} | {} | {} |",
            i + 1,
            k.model,
            c.violating,
            runs(random),
            expected,
            runs(c.swarm_runs()),
            ratio(expected, c.swarm_runs()),
            ratio(expected, c.dfs_runs()),
        );
    }
}

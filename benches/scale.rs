//! How exhaustive search scales with intents, workers and faults, and what each reduction
//! spares: the table of `docs/exhaustive-search.md`, computed.
//!
//! The models are the seeds' lost-response model turned into a race: N intents arriving 0
//! or 500 ms apart (the ends of a 0–500 ms spacing), W workers sharing a durable journal,
//! and a random reply loss of 1 in 10 instead of the scripted one, with no expectations;
//! searched for every plain property with `journal_reconcile_lease` (the design that
//! certifies there) within K faults. Each cell is searched with every reduction, with
//! none, and with each alone. A search that reaches the run cap is reported as `> runs`: a
//! lower bound, not a figure.
//!
//! Runs (leaf schedules, runs cut at an explored state included) and distinct states are
//! counts: the same on every machine. Wall times are of one search on this machine, one
//! core, and move with its load.
//!
//! `cargo bench --bench scale [-- --cap RUNS] [-- --quick]`: `--cap` sets the runs per
//! search (default 300 000); `--quick` searches only the cells with at most 2 intents and 2
//! workers.

use std::time::Instant;

#[path = "../tests/common/race.rs"]
mod race;

use race::race;
use retrylab::check::Property;
use retrylab::explore::{Bound, Exploration, Reductions, Strategy, explore};

/// `runs` or `> runs` when the search stopped at its cap; distinct states likewise.
fn cell(e: &Exploration, seconds: f64) -> String {
    let capped = !e.certified() && e.violations.is_empty();
    let states: u64 = e
        .levels
        .iter()
        .map(|l| l.distinct_states)
        .max()
        .unwrap_or(0);
    let mark = if capped { "> " } else { "" };
    format!("{mark}{} / {mark}{states} / {seconds:.2} s", e.runs())
}

fn main() {
    let mut cap = 300_000u64;
    let mut quick = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--cap" => {
                cap = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&n| n > 0)
                    .expect("--cap RUNS: a positive number")
            }
            "--quick" => quick = true,
            // cargo bench passes --bench; nothing else is ours.
            _ => {}
        }
    }
    let design = retrylab::design::find("journal_reconcile_lease").expect("built in");
    let mut modes = vec![("every", Reductions::ALL), ("none", Reductions::NONE)];
    modes.extend(Reductions::each_alone());
    println!(
        "runs / distinct states (the largest level's) / wall time per search; `>`: stopped at the cap of {cap} runs\n"
    );
    print!("| intents | workers | K |");
    for (name, _) in &modes {
        print!(" {name} |");
    }
    println!();
    print!("|---|---|---|");
    for _ in &modes {
        print!("---|");
    }
    println!();
    let (max_i, max_w) = if quick { (2, 2) } else { (4, 3) };
    for intents in 1..=max_i {
        for workers in 1..=max_w {
            let model = race(intents, workers);
            for k in 0..=2 {
                print!("| {intents} | {workers} | {k} |");
                for (_, reductions) in &modes {
                    let bound = Bound {
                        max_faults: k,
                        max_runs: cap,
                        reductions: *reductions,
                        ..Bound::default()
                    };
                    let start = Instant::now();
                    let found = explore(&model, design, &Property::PLAIN, Strategy::Dfs, bound);
                    let seconds = start.elapsed().as_secs_f64();
                    assert!(
                        found.violations.is_empty(),
                        "journal_reconcile_lease is safe on the race: {:?}",
                        found.violations
                    );
                    print!(" {} |", cell(&found, seconds));
                }
                println!();
            }
        }
    }
}

//! The peers benchmark: the lost-response scenario in retrylab, in a bare event loop written
//! here (the limit), in turmoil, and (exhaustive mode) in stateright, measured on one thread
//! in interleaved rounds; prints seeds (or states) per second and the ratios.
//!
//! `cargo run --release -p retrylab-peers -- [--seeds N] [--rounds R] [--quick]`

mod bare;
mod lab;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use retrylab::check::Metrics;
use retrylab::design::Design;
use retrylab::model::Model;

use bare::{Bare, Config, Totals};

/// Seeds of the cross-check.
const CHECK_SEEDS: u64 = 10_000;

/// Bare-loop seeds per retrylab seed in a round: the loop is fast, and a round of it must be
/// long enough to time.
const BARE_FACTOR: u64 = 4;

struct Args {
    seeds: u64,
    rounds: usize,
    quick: bool,
}

fn usage() -> ! {
    eprintln!(
        "usage: retrylab-peers [--seeds N] [--rounds R] [--quick]\n\
         \n\
         --seeds N   retrylab seeds per round and scenario (default 100000; the bare loop runs\n\
         \u{20}           {BARE_FACTOR} times as many)\n\
         --rounds R  interleaved rounds; the median is reported (default 9)\n\
         --quick     fewer seeds and rounds (about 20 s in all)"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        seeds: 0,
        rounds: 0,
        quick: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut number = |name: &str| -> u64 {
            let v = it.next().unwrap_or_else(|| {
                eprintln!("{name} needs a number");
                usage()
            });
            v.parse().ok().filter(|&n| n > 0).unwrap_or_else(|| {
                eprintln!("{name} {v}: not a positive number");
                usage()
            })
        };
        match a.as_str() {
            "--seeds" => args.seeds = number("--seeds"),
            "--rounds" => args.rounds = number("--rounds") as usize,
            "--quick" => args.quick = true,
            "-h" | "--help" => usage(),
            other => {
                eprintln!("unknown argument {other}");
                usage()
            }
        }
    }
    if args.seeds == 0 {
        args.seeds = if args.quick { 25_000 } else { 100_000 };
    }
    if args.rounds == 0 {
        args.rounds = if args.quick { 3 } else { 9 };
    }
    args
}

/// One scenario: a model, a design, and the bare loop's reading of them.
struct Scenario {
    name: String,
    model: Model,
    design: &'static dyn Design,
    cfg: Config,
}

impl Scenario {
    fn new(path: &Path, design: &str) -> Scenario {
        let model = Model::load(path).unwrap_or_else(|e| panic!("{e}"));
        let d = retrylab::design::find(design)
            .unwrap_or_else(|| panic!("retrylab has no design {design:?}"));
        let cfg = Config::of(&model, design).unwrap_or_else(|e| panic!("{e}"));
        Scenario {
            name: format!("{}/{design}", model.name),
            model,
            design: d,
            cfg,
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn main() {
    let args = parse_args();
    let ticket = root().join("../models/ticket_lost_response.json");
    let five = root().join("models/five_ops.json");
    let scenarios = [
        Scenario::new(&ticket, "same_key"),
        Scenario::new(&ticket, "no_dedup"),
        Scenario::new(&five, "same_key"),
        Scenario::new(&five, "no_dedup"),
    ];
    let threads = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "peers benchmark: one thread; available_parallelism {threads}; {} rounds (median), \
         {} retrylab seeds and {} bare-loop seeds per round and scenario",
        args.rounds,
        args.seeds,
        args.seeds * BARE_FACTOR
    );
    println!();
    println!("cross-check over {CHECK_SEEDS} seeds (bare loop against retrylab's run_seeds):");
    let mut all_ok = true;
    for s in &scenarios {
        all_ok &= cross_check(s);
    }
    if !all_ok {
        eprintln!("the bare loop does not match retrylab: no timing");
        std::process::exit(1);
    }
    println!();

    // Events per seed: retrylab's world counts them, in an untimed pass.
    let lab_events: Vec<f64> = scenarios
        .iter()
        .map(|s| lab::events(&s.model, s.design, 0..CHECK_SEEDS) as f64 / CHECK_SEEDS as f64)
        .collect();

    let n = scenarios.len();
    let mut bare_rates = vec![Vec::new(); n];
    let mut lab_rates = vec![Vec::new(); n];
    let mut bare_events = vec![0.0; n];
    let mut bares: Vec<Bare> = scenarios.iter().map(|s| Bare::new(s.cfg.clone())).collect();
    // Warm-up: one short pass of each, untimed.
    for (s, b) in scenarios.iter().zip(&mut bares) {
        b.run_seeds(0..1_000);
        black_box(lab::run(&s.model, s.design, 0..1_000));
    }
    for round in 0..args.rounds as u64 {
        for (i, s) in scenarios.iter().enumerate() {
            let start = round * args.seeds * BARE_FACTOR;
            let seeds = args.seeds * BARE_FACTOR;
            let b = &mut bares[i];
            b.totals = Totals::default();
            let t = Instant::now();
            b.run_seeds(start..start + seeds);
            let secs = t.elapsed().as_secs_f64();
            black_box(b.totals);
            bare_rates[i].push(seeds as f64 / secs);
            bare_events[i] = b.totals.events as f64 / seeds as f64;

            let start = round * args.seeds;
            let t = Instant::now();
            let m = lab::run(&s.model, s.design, start..start + args.seeds);
            let secs = t.elapsed().as_secs_f64();
            black_box(m);
            lab_rates[i].push(args.seeds as f64 / secs);
        }
    }

    println!(
        "{:<32} {:<10} {:>12} {:>12} {:>14}",
        "scenario", "tool", "seeds/s", "events/seed", "events/s"
    );
    let mut ratios = Vec::new();
    for (i, s) in scenarios.iter().enumerate() {
        let b = median(&mut bare_rates[i]);
        let l = median(&mut lab_rates[i]);
        println!(
            "{:<32} {:<10} {:>12.0} {:>12.1} {:>14.0}",
            s.name,
            "bare",
            b,
            bare_events[i],
            b * bare_events[i]
        );
        println!(
            "{:<32} {:<10} {:>12.0} {:>12.1} {:>14.0}",
            "",
            "retrylab",
            l,
            lab_events[i],
            l * lab_events[i]
        );
        ratios.push((format!("retrylab / bare, {}", s.name), l / b));
    }
    println!();
    println!("ratios (per seed):");
    for (what, r) in ratios {
        println!("  {what:<52} {r:>8.3}");
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Runs the bare loop and retrylab over the same number of seeds and compares their totals:
/// a figure the scenario makes exact (no variance from seed to seed in the bare loop) must
/// be equal; any other must agree within 4 standard errors of the difference of two means.
/// Prints one line per figure; returns whether all agree.
fn cross_check(s: &Scenario) -> bool {
    let lab = lab::run(&s.model, s.design, 0..CHECK_SEEDS);
    let mut b = Bare::new(s.cfg.clone());
    const FIGURES: usize = 10;
    let figures = |t: &Totals| -> [f64; FIGURES] {
        [
            t.intents as f64,
            t.effects as f64,
            t.completed as f64,
            t.duplicate_effects as f64,
            t.false_success as f64,
            t.false_failure as f64,
            t.true_failures as f64,
            t.unresolved as f64,
            t.remote_calls as f64,
            t.outcome_ms as f64,
        ]
    };
    let names = [
        "intents",
        "effects",
        "completed",
        "duplicate_effects",
        "false_success",
        "false_failure",
        "true_failures",
        "unresolved",
        "remote_calls",
        "time_to_outcome_ms (sum)",
    ];
    let mut sum = [0f64; FIGURES];
    let mut sq = [0f64; FIGURES];
    let mut before = figures(&b.totals);
    for seed in 0..CHECK_SEEDS {
        b.run(seed);
        let after = figures(&b.totals);
        for k in 0..FIGURES {
            let d = after[k] - before[k];
            sum[k] += d;
            sq[k] += d * d;
        }
        before = after;
    }
    let n = CHECK_SEEDS as f64;
    let lab_figures = lab_figures(&lab);
    let mut ok = true;
    println!("  {}", s.name);
    for k in 0..FIGURES {
        let mean = sum[k] / n;
        let var = (sq[k] / n - mean * mean).max(0.0);
        let (bare, labv) = (sum[k], lab_figures[k]);
        let (agree, how) = if var == 0.0 && k != FIGURES - 1 {
            (bare == labv, "exact".to_string())
        } else {
            // Both sides have (about) the bare loop's variance per seed.
            let se = (2.0 * var * n).sqrt();
            // The histogram keeps values to 0.1 %: allow that too for the time figure.
            let precision = if k == FIGURES - 1 { labv * 0.001 } else { 0.0 };
            let tol = 4.0 * se + precision;
            (
                (bare - labv).abs() <= tol,
                format!("|diff| {:.0} <= 4 SE {:.0}", (bare - labv).abs(), tol),
            )
        };
        ok &= agree;
        println!(
            "    {:<26} bare {:>10.0}  retrylab {:>10.0}  {} {}",
            names[k],
            bare,
            labv,
            if agree { "ok" } else { "MISMATCH" },
            how
        );
    }
    ok
}

fn lab_figures(m: &Metrics) -> [f64; 10] {
    [
        m.intents as f64,
        m.effects as f64,
        m.completed as f64,
        m.duplicate_effects as f64,
        m.false_success as f64,
        m.false_failure as f64,
        m.true_failures as f64,
        m.unresolved as f64,
        m.remote_calls as f64,
        lab::mean_outcome_ms(m) * m.time_to_outcome_ms.count() as f64,
    ]
}

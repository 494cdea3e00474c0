//! The peers benchmark: the lost-response scenario in retrylab, in a bare event loop written
//! here (the limit), in turmoil, and (exhaustive mode) in stateright, measured on one thread
//! in interleaved rounds; prints seeds (or states) per second and the ratios.
//!
//! `cargo run --release -p retrylab-peers -- [--seeds N] [--rounds R] [--quick]`

mod bare;
mod lab;
mod stateright_peer;
mod turmoil_peer;

use std::hint::black_box;
use std::path::{Path, PathBuf};

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
        args.seeds = if args.quick { 15_000 } else { 100_000 };
    }
    if args.rounds == 0 {
        args.rounds = if args.quick { 5 } else { 9 };
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
    let turmoil_seeds = if args.quick { 8 } else { 60 };
    println!(
        "peers benchmark: one thread; available_parallelism {threads}; {} interleaved rounds \
         (median reported); per round and scenario {} retrylab seeds, {} bare-loop seeds, \
         {turmoil_seeds} turmoil seeds",
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
    all_ok &= turmoil_check(&scenarios[..2], turmoil_seeds);
    println!();
    println!(
        "exhaustive mode (no_duplicate; retrylab dfs within the model's explore bound, stateright dfs):"
    );
    let variants = explore_variants(&scenarios[..2]);
    for v in &variants {
        all_ok &= v.print_verdicts();
    }
    if !all_ok {
        eprintln!("a peer does not match retrylab: no timing");
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
    let mut turmoil_rates = vec![Vec::new(); n];
    let mut bare_events = vec![0.0; n];
    let mut drain_rates = vec![Vec::new(); n];
    let mut drain_events = vec![0.0; n];
    let mut bares: Vec<Bare> = scenarios.iter().map(|s| Bare::new(s.cfg.clone())).collect();
    let mut drains: Vec<Bare> = scenarios
        .iter()
        .map(|s| {
            let mut b = Bare::new(s.cfg.clone());
            b.drain = true;
            b
        })
        .collect();
    // Warm-up: one short pass of each, untimed; and how many checks make an explore sample.
    for (s, b) in scenarios.iter().zip(&mut bares) {
        b.run_seeds(0..1_000);
        black_box(lab::run(&s.model, s.design, 0..1_000));
    }
    let target = if args.quick { 0.05 } else { 0.2 };
    let repeats: Vec<(u32, u32)> = variants
        .iter()
        .map(|v| (v.calibrate_lab(target), v.calibrate_sr(target)))
        .collect();
    let wall = std::time::Instant::now();
    let cpu = Clock::now();
    let mut lab_explore = vec![Vec::new(); variants.len()];
    let mut sr_explore = vec![Vec::new(); variants.len()];
    for round in 0..args.rounds as u64 {
        for (i, s) in scenarios.iter().enumerate() {
            let start = round * args.seeds * BARE_FACTOR;
            let seeds = args.seeds * BARE_FACTOR;
            let b = &mut bares[i];
            b.totals = Totals::default();
            let t = Clock::now();
            b.run_seeds(start..start + seeds);
            let secs = t.elapsed();
            black_box(b.totals);
            bare_rates[i].push(seeds as f64 / secs);
            bare_events[i] = b.totals.events as f64 / seeds as f64;

            let d = &mut drains[i];
            d.totals = Totals::default();
            let t = Clock::now();
            d.run_seeds(start..start + seeds);
            let secs = t.elapsed();
            black_box(d.totals);
            drain_rates[i].push(seeds as f64 / secs);
            drain_events[i] = d.totals.events as f64 / seeds as f64;

            let start = round * args.seeds;
            let t = Clock::now();
            let m = lab::run(&s.model, s.design, start..start + args.seeds);
            let secs = t.elapsed();
            black_box(m);
            lab_rates[i].push(args.seeds as f64 / secs);

            if i < 2 {
                let dedup = s.cfg.dedup;
                let start = round * turmoil_seeds;
                let t = Clock::now();
                for seed in start..start + turmoil_seeds {
                    black_box(turmoil_peer::run(seed, dedup));
                }
                let secs = t.elapsed();
                turmoil_rates[i].push(turmoil_seeds as f64 / secs);
            }
        }
        for (k, v) in variants.iter().enumerate() {
            let (lab_n, sr_n) = repeats[k];
            lab_explore[k].push(v.time_lab(lab_n));
            sr_explore[k].push(v.time_sr(sr_n));
        }
    }

    let (wall, cpu) = (wall.elapsed().as_secs_f64(), cpu.elapsed());
    println!(
        "timed rounds: {wall:.1} s wall, {cpu:.1} s CPU ({}); rates are per CPU second of this process",
        if cpu < 0.9 * wall {
            "the machine was busy"
        } else {
            "the machine was quiet"
        }
    );
    println!();
    println!(
        "{:<32} {:<10} {:>12} {:>12} {:>14} {:>9}",
        "scenario", "tool", "seeds/s", "events/seed", "events/s", "spread"
    );
    let mut ratios = Vec::new();
    for (i, s) in scenarios.iter().enumerate() {
        let b = median(&mut bare_rates[i]);
        let l = median(&mut lab_rates[i]);
        println!(
            "{:<32} {:<10} {:>12.0} {:>12.1} {:>14.0} {:>8.0}%",
            s.name,
            "bare",
            b,
            bare_events[i],
            b * bare_events[i],
            spread(&bare_rates[i])
        );
        let d = median(&mut drain_rates[i]);
        println!(
            "{:<32} {:<10} {:>12.0} {:>12.1} {:>14.0} {:>8.0}%",
            "",
            "bare-drain",
            d,
            drain_events[i],
            d * drain_events[i],
            spread(&drain_rates[i])
        );
        println!(
            "{:<32} {:<10} {:>12.0} {:>12.1} {:>14.0} {:>8.0}%",
            "",
            "retrylab",
            l,
            lab_events[i],
            l * lab_events[i],
            spread(&lab_rates[i])
        );
        ratios.push((format!("retrylab / bare, {}", s.name), l / b));
        ratios.push((format!("retrylab / bare-drain, {}", s.name), l / d));
        if i < 2 {
            let t = median(&mut turmoil_rates[i]);
            println!(
                "{:<32} {:<10} {:>12.1} {:>12} {:>14} {:>8.0}%",
                "",
                "turmoil",
                t,
                "",
                "",
                spread(&turmoil_rates[i])
            );
            ratios.push((format!("retrylab / turmoil, {}", s.name), l / t));
        }
    }
    println!();
    println!(
        "{:<44} {:<11} {:>10} {:>12} {:>14}",
        "exhaustive", "tool", "states", "time/check", "states/s"
    );
    for (k, v) in variants.iter().enumerate() {
        let l = median(&mut lab_explore[k]);
        let r = median(&mut sr_explore[k]);
        let lab_states = v.lab.levels.iter().map(|l| l.states_visited).sum::<u64>();
        println!(
            "{:<44} {:<11} {:>10} {:>10.1} us {:>14.0}",
            v.name,
            "retrylab",
            lab_states,
            l * 1e6,
            lab_states as f64 / l
        );
        println!(
            "{:<44} {:<11} {:>10} {:>10.1} us {:>14.0}",
            "",
            "stateright",
            v.sr.states,
            r * 1e6,
            v.sr.states as f64 / r
        );
        ratios.push((
            format!("stateright time / retrylab time, {}", v.name),
            r / l,
        ));
    }
    println!();
    println!("ratios:");
    for (what, r) in ratios {
        println!("  {what:<72} {r:>10.3}");
    }
}

/// One exhaustive comparison: retrylab's explore on a model and design, stateright's check
/// of the protocol with the same fault budget.
struct Variant<'a> {
    name: String,
    scenario: &'a Scenario,
    model: Model,
    max_faults: u8,
    lab: retrylab::explore::Exploration,
    sr: stateright_peer::Found,
}

fn explore_variants(ticket: &[Scenario]) -> Vec<Variant<'_>> {
    let mut out = Vec::new();
    for lossy in [false, true] {
        for s in ticket {
            let mut model = s.model.clone();
            let max_faults = if lossy {
                // Any request or reply may be lost, up to the model's fault budget.
                let tenth = retrylab::sim::Ratio::new(1, 10).expect("a ratio");
                model.network.request_loss = tenth;
                model.network.reply_loss = tenth;
                model.explore.map_or(2, |e| e.max_faults) as u8
            } else {
                // The model draws no fault: the scripted drop only.
                0
            };
            let lab = lab::explore(&model, s.design);
            let sr = stateright_peer::check(s.cfg.dedup, max_faults);
            let name = format!("{}{}", s.name, if lossy { " +losses" } else { "" });
            out.push(Variant {
                name,
                scenario: s,
                model,
                max_faults,
                lab,
                sr,
            });
        }
    }
    out
}

impl Variant<'_> {
    /// Prints both verdicts; returns whether they agree with each other and with the design
    /// (a duplicate exactly for `no_dedup`).
    fn print_verdicts(&self) -> bool {
        let expected = !self.scenario.cfg.dedup;
        let lab_dup = !self.lab.violations.is_empty();
        let lab_states: u64 = self.lab.levels.iter().map(|l| l.states_visited).sum();
        let lab_verdict = if lab_dup {
            "a duplicate (counterexample)".to_string()
        } else if self.lab.certified() {
            "no duplicate (certified)".to_string()
        } else {
            "no duplicate found, not certified".to_string()
        };
        let sr_verdict = if self.sr.duplicate {
            "a duplicate (counterexample)"
        } else {
            "no duplicate (state space exhausted)"
        };
        let ok = lab_dup == expected
            && self.sr.duplicate == expected
            && (lab_dup || self.lab.certified());
        println!(
            "  {:<44} retrylab: {lab_verdict}, {} runs, {lab_states} states; stateright (fault budget {}): {sr_verdict}, {} states ({} unique)  {}",
            self.name,
            self.lab.runs(),
            self.max_faults,
            self.sr.states,
            self.sr.unique_states,
            if ok { "ok" } else { "MISMATCH" }
        );
        ok
    }

    fn time_lab(&self, n: u32) -> f64 {
        let t = Clock::now();
        for _ in 0..n {
            black_box(lab::explore(&self.model, self.scenario.design));
        }
        t.elapsed() / f64::from(n)
    }

    fn time_sr(&self, n: u32) -> f64 {
        let t = Clock::now();
        for _ in 0..n {
            black_box(stateright_peer::check(
                self.scenario.cfg.dedup,
                self.max_faults,
            ));
        }
        t.elapsed() / f64::from(n)
    }

    /// Repeats that make a sample of about `target` seconds.
    fn calibrate_lab(&self, target: f64) -> u32 {
        let once = self.time_lab(3);
        (target / once).clamp(1.0, 1e6) as u32
    }

    fn calibrate_sr(&self, target: f64) -> u32 {
        let once = self.time_sr(3);
        (target / once).clamp(1.0, 1e6) as u32
    }
}

/// The turmoil peer on the lost-response scenario: every seed must make the tickets the
/// design makes in retrylab (1 with `same_key`, 2 with `no_dedup`) and complete.
fn turmoil_check(ticket: &[Scenario], seeds: u64) -> bool {
    let mut ok = true;
    for s in ticket {
        let (mut tickets, mut completed) = (0, 0);
        for seed in 0..seeds {
            let o = turmoil_peer::run(seed, s.cfg.dedup);
            tickets += u64::from(o.tickets);
            completed += u64::from(o.completed);
        }
        let want = seeds * if s.cfg.dedup { 1 } else { 2 };
        let agree = tickets == want && completed == seeds;
        ok &= agree;
        println!(
            "  turmoil {:<32} {seeds} seeds: {tickets} tickets (expected {want}), {completed} completed  {}",
            s.name,
            if agree { "ok" } else { "MISMATCH" }
        );
    }
    ok
}

/// The process's CPU time (every thread, user and system): on a machine shared with other
/// work, a measurement counts only what this process spent, not the time it waited for a
/// core. (It still shares caches and memory bandwidth with the rest.)
struct Clock(f64);

impl Clock {
    fn cpu() -> f64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant of the
        // platform.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    }

    fn now() -> Clock {
        Clock(Clock::cpu())
    }

    /// CPU seconds since `self`.
    fn elapsed(&self) -> f64 {
        Clock::cpu() - self.0
    }
}

/// (max - min) / median of the rounds, in percent: how much the machine moved the figure.
fn spread(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    let m = median(&mut v);
    let (lo, hi) = (v[0], v[v.len() - 1]);
    100.0 * (hi - lo) / m
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
    // The early stop changes nothing: running until the queue is empty gives the same totals.
    let mut d = Bare::new(s.cfg.clone());
    d.drain = true;
    d.run_seeds(0..CHECK_SEEDS);
    let same = Totals {
        events: b.totals.events,
        ..d.totals
    } == b.totals;
    ok &= same;
    println!(
        "    early stop: {} events without it, {} with it, the same totals: {}",
        d.totals.events,
        b.totals.events,
        if same { "ok" } else { "MISMATCH" }
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(design: &str) -> Scenario {
        Scenario::new(&root().join("../models/ticket_lost_response.json"), design)
    }

    #[test]
    fn the_bare_loop_makes_retrylabs_exact_figures_on_the_lost_response() {
        for (design, effects, duplicates) in [("same_key", 1000, 0), ("no_dedup", 2000, 1000)] {
            let s = ticket(design);
            let mut b = Bare::new(s.cfg.clone());
            b.run_seeds(0..1000);
            let lab = lab::run(&s.model, s.design, 0..1000);
            let t = b.totals;
            assert_eq!(
                (
                    t.intents,
                    t.effects,
                    t.completed,
                    t.duplicate_effects,
                    t.unresolved
                ),
                (1000, effects, 1000, duplicates, 0),
                "{design}"
            );
            assert_eq!(
                (t.effects, t.completed, t.duplicate_effects, t.remote_calls),
                (
                    lab.effects,
                    lab.completed,
                    lab.duplicate_effects,
                    lab.remote_calls
                ),
                "{design}"
            );
        }
    }

    #[test]
    fn stopping_early_changes_no_total_and_saves_the_stale_timers() {
        let s = ticket("same_key");
        let mut early = Bare::new(s.cfg.clone());
        let mut drain = Bare::new(s.cfg.clone());
        drain.drain = true;
        early.run_seeds(0..100);
        drain.run_seeds(0..100);
        assert_eq!(
            Totals {
                events: 0,
                ..early.totals
            },
            Totals {
                events: 0,
                ..drain.totals
            }
        );
        // Per seed: the answered attempt's timeout and the two calls' tool timeouts.
        assert_eq!((early.totals.events, drain.totals.events), (700, 1000));
    }

    #[test]
    fn the_bare_loop_refuses_what_it_does_not_implement() {
        let s = ticket("same_key");
        let err = Config::of(&s.model, "new_key_after_replan").unwrap_err();
        assert!(err.contains("new_key_after_replan"), "{err}");
        let mut model = s.model.clone();
        model.network.duplicate = retrylab::sim::Ratio::new(1, 2).unwrap();
        let err = Config::of(&model, "same_key").unwrap_err();
        assert!(err.contains("network.duplicate"), "{err}");
    }

    #[test]
    fn turmoil_makes_one_ticket_with_a_key_and_two_without() {
        for seed in 0..3 {
            assert_eq!(
                turmoil_peer::run(seed, true),
                turmoil_peer::Outcome {
                    tickets: 1,
                    completed: true
                }
            );
            assert_eq!(
                turmoil_peer::run(seed, false),
                turmoil_peer::Outcome {
                    tickets: 2,
                    completed: true
                }
            );
        }
    }

    #[test]
    fn stateright_finds_the_duplicate_only_without_a_key() {
        for budget in [0, 2] {
            assert!(!stateright_peer::check(true, budget).duplicate);
            assert!(stateright_peer::check(false, budget).duplicate);
        }
    }
}

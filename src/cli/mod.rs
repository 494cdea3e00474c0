//! The command line: `run`, `trace`, `replay`, `designs`.
//!
//! Exit codes: 0 success; 2 bad input (command line, model file, choice vector);
//! 1 anything else (an output error).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::design::{self, Design};
use crate::model::Model;
use crate::report::{DesignResult, Report, json, table};
use crate::run::{Traced, run_seeds, run_traced};
use crate::sim::{ChoiceVector, RandomChooser, ReplayChooser};

const AFTER_HELP: &str = "\
Exit codes: 0 success, 2 bad input (arguments, model file, choice vector), 1 other errors.

Examples:
  retrylab run models/ticket_lost_response.json
  retrylab run models/ticket_lost_response.json --design same_key --seeds 100000 --format json
  retrylab trace models/ticket_lost_response.json --design no_dedup --seed 3
  retrylab replay models/ticket_lost_response.json --design no_dedup --choices 12,40,7";

#[derive(Parser, Debug)]
#[command(
    name = "retrylab",
    version,
    about = "Deterministic simulation of AI-agent tool-call executors under lost replies, retries and idempotency contracts",
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compare executor designs on a model over many seeds: one row per design.
    #[command(after_help = run_after_help())]
    Run(RunArgs),
    /// Print the event timeline of one run, its outcome and its choice vector.
    Trace(TraceArgs),
    /// Rerun from a recorded choice vector and print the same timeline.
    Replay(ReplayArgs),
    /// List the built-in executor designs.
    Designs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Table,
    Json,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// Model file (JSON).
    model: PathBuf,
    /// Design to run; repeat for several. Default: the designs the model lists.
    #[arg(long = "design", value_name = "NAME")]
    designs: Vec<String>,
    /// Number of seeds, run as seeds FIRST..FIRST+N.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1000,
        conflicts_with = "seed"
    )]
    seeds: u64,
    /// First seed of the range.
    #[arg(
        long,
        value_name = "FIRST",
        default_value_t = 0,
        conflicts_with = "seed"
    )]
    first_seed: u64,
    /// Run exactly this one seed.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

#[derive(clap::Args, Debug)]
struct TraceArgs {
    /// Model file (JSON).
    model: PathBuf,
    /// Design to run.
    #[arg(long, value_name = "NAME")]
    design: String,
    /// Seed of the run.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
}

#[derive(clap::Args, Debug)]
struct ReplayArgs {
    /// Model file (JSON).
    model: PathBuf,
    /// Design to run.
    #[arg(long, value_name = "NAME")]
    design: String,
    /// Choice vector printed by `trace`: comma-separated integers (may be empty).
    #[arg(long, value_name = "C", allow_hyphen_values = true)]
    choices: String,
}

fn run_after_help() -> String {
    let mut s = String::from("Columns of the table:\n");
    for (name, meaning) in table::COLUMNS {
        s.push_str(&format!("  {name:<14} {meaning}\n"));
    }
    s.push_str("\nExit codes: 0 success, 2 bad input, 1 other errors.");
    s
}

/// An error with the exit code it deserves.
#[derive(Debug)]
pub enum CliError {
    /// Bad input: exit 2.
    Input(String),
    /// A refused model file, already one `FILE:LINE:COLUMN: PATH: message` line per
    /// problem: exit 2.
    Model(String),
    /// Anything else: exit 1.
    Other(String),
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Input(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Err(CliError::Model(lines)) => {
            eprintln!("{lines}");
            ExitCode::from(2)
        }
        Err(CliError::Other(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}

fn execute(command: Command) -> Result<(), CliError> {
    match command {
        Command::Run(a) => run(a),
        Command::Trace(a) => trace(a),
        Command::Replay(a) => replay(a),
        Command::Designs => {
            let mut text = String::new();
            for d in design::all() {
                text.push_str(&format!("{:<22} {}\n", d.name(), d.summary()));
            }
            emit(&text)
        }
    }
}

fn load(path: &Path) -> Result<Model, CliError> {
    Model::load(path).map_err(|e| CliError::Model(e.to_string()))
}

fn find_design(name: &str) -> Result<&'static dyn Design, CliError> {
    design::find(name).ok_or_else(|| {
        CliError::Input(format!(
            "--design {name}: unknown design; known designs: {}",
            design::names().join(", ")
        ))
    })
}

fn emit(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Other(format!("cannot write the output: {e}")))
}

/// Seeds per progress step on long runs.
const CHUNK: u64 = 1 << 16;

fn run(a: RunArgs) -> Result<(), CliError> {
    let model = load(&a.model)?;
    let names: Vec<String> = if a.designs.is_empty() {
        model.designs.clone()
    } else {
        a.designs.clone()
    };
    let designs = names
        .iter()
        .map(|n| find_design(n))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(twice) = names
        .iter()
        .enumerate()
        .find(|(i, n)| names[..*i].contains(n))
    {
        return Err(CliError::Input(format!(
            "--design {}: named twice",
            twice.1
        )));
    }
    let (first, count) = match a.seed {
        Some(s) => (s, 1),
        None => (a.first_seed, a.seeds),
    };
    if count == 0 {
        return Err(CliError::Input("--seeds 0: run at least one seed".into()));
    }
    first.checked_add(count - 1).ok_or_else(|| {
        CliError::Input(format!(
            "--first-seed {first} --seeds {count}: the seeds run past {}",
            u64::MAX
        ))
    })?;
    let progress = count > CHUNK && std::io::stderr().is_terminal();
    let results = designs
        .iter()
        .map(|d| {
            let mut metrics = crate::check::Metrics::default();
            let mut done = 0u64;
            while done < count {
                // Inclusive chunks, so that the last seed may be u64::MAX.
                let n = CHUNK.min(count - done);
                let start = first + done;
                metrics.merge(&run_seeds(&model, *d, start..=start + (n - 1)));
                done += n;
                if progress {
                    eprint!("\r{}: {}/{} seeds", d.name(), done, count);
                }
            }
            if progress {
                eprintln!();
            }
            DesignResult {
                design: d.name().to_string(),
                metrics,
            }
        })
        .collect();
    let report = Report {
        model: model.name.clone(),
        first_seed: first,
        seed_count: count,
        results,
    };
    emit(&match a.format {
        Format::Table => table::render(&report),
        Format::Json => json::render(&report),
    })
}

fn trace(a: TraceArgs) -> Result<(), CliError> {
    let model = load(&a.model)?;
    let d = find_design(&a.design)?;
    let traced = run_traced(&model, d, &mut RandomChooser::new(a.seed));
    let header = format!(
        "trace of {} on model {}, seed {}",
        d.name(),
        model.name,
        a.seed
    );
    emit(&render_run(&header, &a.model, d, &traced))
}

fn replay(a: ReplayArgs) -> Result<(), CliError> {
    let model = load(&a.model)?;
    let d = find_design(&a.design)?;
    let vector: ChoiceVector = a
        .choices
        .parse()
        .map_err(|e| CliError::Input(format!("--choices: {e}")))?;
    let mut chooser = ReplayChooser::new(vector.clone());
    let traced = run_traced(&model, d, &mut chooser);
    chooser
        .finish()
        .map_err(|e| CliError::Input(format!("--choices: {e}")))?;
    let header = format!(
        "replay of {} on model {}, choices {}",
        d.name(),
        model.name,
        vector
    );
    emit(&render_run(&header, &a.model, d, &traced))
}

/// The timeline, the outcome and the line that replays the run.
fn render_run(header: &str, path: &Path, d: &dyn Design, t: &Traced) -> String {
    let m = &t.metrics;
    let mut s = format!("{header}\n\n{}\n", t.timeline);
    s.push_str(&format!(
        "outcome: intents {}, effects {}, completed {}, duplicate effects {}, drifted effects {}, compensations {}, false success {}, false failure {}, merged repeats {}, unresolved {}, unknown ops {}, remote calls {}\n",
        m.intents, m.effects, m.completed, m.duplicate_effects, m.drifted_effects, m.compensations, m.false_success,
        m.false_failure, m.merged_repeats, m.unresolved, m.unknown_ops, m.remote_calls
    ));
    let named: Vec<String> = t
        .choices
        .iter()
        .map(|c| format!("{}:{}/{}", c.purpose.name(), c.value, c.of))
        .collect();
    s.push_str(&format!(
        "choices ({}, as purpose:alternative/number of alternatives): {}\n",
        t.choices.len(),
        if named.is_empty() {
            "none".to_string()
        } else {
            named.join(" ")
        }
    ));
    s.push_str(&format!(
        "replay: retrylab replay {} --design {} --choices '{}'\n",
        path.display(),
        d.name(),
        t.vector()
    ));
    s
}

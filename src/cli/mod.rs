//! The command line: `run`, `check`, `explore`, `report`, `merge`, `trace`, `replay`,
//! `designs`.
//!
//! [`main`] is the `retrylab` binary. A program with designs of its own gets every command
//! with them beside the built-in ones from [`main_with`]; [`run_with`] runs one command line
//! and returns what it printed, for tests:
//!
//! ```no_run
//! # use retrylab::design::Design;
//! # fn my_designs() -> Vec<&'static dyn Design> { Vec::new() }
//! fn main() -> std::process::ExitCode {
//!     // `my-binary run model.json --design my_design`, `my-binary trace ...`, ...
//!     retrylab::cli::main_with(&my_designs())
//! }
//! ```
//!
//! Exit codes: 0 success; 1 a property failed (`check`, `run --fail-on`, `explore`, and
//! `merge` of their shards) or an output error; 2 bad input (command line, model file,
//! choice vector, a vector recorded against another model); 3 not certified: `explore` or
//! `check` found no violation but stopped at a limit before covering its bound, or `check`
//! was given a model without expectations.

mod check;
mod check_out;
mod ctx;
mod diagram;
mod executors;
mod explore;
mod merge;
mod model_info;
mod progress;
mod report;
mod run;
mod shard;
mod trace;
mod warnings;

use check::{CheckArgs, CheckFormat, check_after_help};
use ctx::{Ctx, Io};
use executors::add_executors;
use explore::{EXPLORE_AFTER_HELP, ExploreArgs, parse_properties};
use merge::{MERGE_AFTER_HELP, MergeArgs};
use report::ReportArgs;
use run::{Format, RunArgs, run_after_help};
use shard::ShardArgs;
use trace::{ReplayArgs, TraceArgs};

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use clap::{Parser, Subcommand};

use crate::design::{Design, Registry};
use crate::model::Model;

const AFTER_HELP: &str = "\
Exit codes: 0 success, 1 an expectation or --fail-on property failed (or explore found a
violation), 2 bad input (arguments, model file, choice vector), 3 not certified: explore or
check found no violation but stopped at a limit (or check was given a model without
expectations).

Examples:
  retrylab run models/ticket_lost_response.json
  retrylab run models/ticket_chaos.json --fail-on no_duplicate --show-failures 3
  retrylab check models/*.json models/windows/*.json
  retrylab run models/ticket_chaos.json --seeds 100000 --shard 1/4 --out part1.json  # ... 4/4
  retrylab merge part1.json part2.json part3.json part4.json
  retrylab explore models/ticket_lost_response.json --design new_key_after_replan --max-faults 2
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
    /// An external executor: your executor program, in any language, run under the
    /// simulator through the executor protocol (docs/executor-protocol.md) as design NAME,
    /// one process per worker. COMMAND is split into words as a POSIX shell would, without
    /// running a shell. Repeat for several. `run` runs it beside the model's designs; the
    /// other commands take it by `--design NAME`.
    #[arg(long = "executor", value_name = "NAME=COMMAND", global = true)]
    executors: Vec<String>,
    /// The wall-clock watchdog of one turn of an external executor: a process that does not
    /// answer within it is an error (a busy loop, or real I/O), not a hang. A new process's
    /// `hello` is waited for 60 s, or this if longer (an interpreter importing its libraries).
    #[arg(
        long = "executor-turn-timeout-ms",
        value_name = "MS",
        default_value_t = 10_000,
        global = true
    )]
    executor_turn_timeout_ms: u64,
    /// Print every protocol message of external executors, and their stdout and stderr, on
    /// standard error.
    #[arg(long = "executor-output", global = true)]
    executor_output: bool,
    /// Which process each worker life of an external executor (a run's first, and each
    /// restart after a crash) runs in. `fork` (the default): a fork of a zygote that did its
    /// imports, `hello` and `init` and never ran a call, so nothing of an earlier life
    /// survives, as when a real process dies; a process whose hello does not declare
    /// `"fork": true` (Node, a program with a thread at import) gets `fresh` instead.
    /// `fresh`: a new process each life (slower: an interpreter's start each). `reuse`: a
    /// process whose worker is gone, told to reset by its `start` (fastest; true only as far
    /// as the executor's `on_reset` is, which the determinism check puts to the test).
    #[arg(
        long = "executor-lives",
        value_name = "LIVES",
        value_enum,
        default_value_t = ExecutorLives::Fork,
        global = true
    )]
    executor_lives: ExecutorLives,
    /// The same as `--executor-lives fresh` (the flag's former name).
    #[arg(
        long = "executor-fresh-restarts",
        global = true,
        hide = true,
        conflicts_with_all = ["executor_fork_restarts", "executor_lives"]
    )]
    executor_fresh_restarts: bool,
    /// The same as `--executor-lives fork` (the flag's former name).
    #[arg(
        long = "executor-fork-restarts",
        global = true,
        hide = true,
        conflicts_with = "executor_lives"
    )]
    executor_fork_restarts: bool,
    /// Run external executors without their determinism check. By default every command
    /// that runs one (run, check, report, trace, replay, explore, shards) first compares a
    /// few seeds' message streams in new processes with each other and with the worker
    /// lives the command uses, and refuses (exit 2) an executor that is not a function of its
    /// messages. Switched off, a warning says so and certificates' scopes say the
    /// executor's determinism was assumed.
    #[arg(long = "no-determinism-check", global = true)]
    no_determinism_check: bool,
    /// What an external executor's HTTP request that the provider's face cannot serve does:
    /// a request to another host than the provider's, or a create that matches no route of
    /// the face. `refuse` (the default) stops the command with exit 2, naming the model's
    /// `provider.http` field to set; `warn` answers it 404 with a warning and goes on. A
    /// lookup the face has no route for is answered 404 with a warning either way, as the
    /// real API answers.
    #[arg(
        long = "executor-unmapped",
        value_name = "WHAT",
        value_enum,
        default_value_t = UnmappedRequests::Refuse,
        global = true
    )]
    executor_unmapped: UnmappedRequests,
    /// Where external executors' files go. Every run gets empty directories of its own:
    /// `RETRYLAB_RUN_DIR`, shared by the run's workers, and `RETRYLAB_WORKER_DIR` per worker
    /// (its working directory and `HOME`; `TMPDIR` below it), in a private directory that
    /// the command makes in DIR (by default `TMPDIR`) and removes when it ends. Relative
    /// reads of the project's files keep working; writes land in the run's storage
    /// (docs/executor-protocol.md, section 9).
    #[arg(long = "executor-storage", value_name = "DIR", global = true)]
    executor_storage: Option<std::path::PathBuf>,
    /// The largest file an external executor may write, in MiB (its `RLIMIT_FSIZE`): a write
    /// beyond it fails (`EFBIG`).
    #[arg(
        long = "executor-storage-max-mb",
        value_name = "MIB",
        default_value_t = crate::external::storage::DEFAULT_MAX_FILE_MB,
        global = true
    )]
    executor_storage_max_mb: u64,
}

/// Which process a worker life of an external executor runs in (`--executor-lives`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ExecutorLives {
    /// A fork of a zygote that ran no call (new processes for one that cannot fork).
    Fork,
    /// A new process.
    Fresh,
    /// A process whose worker is gone, told to reset.
    Reuse,
}

/// What a request the provider's face cannot serve does (`--executor-unmapped`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum UnmappedRequests {
    /// Stop the command with exit 2.
    Refuse,
    /// Answer it 404 with a warning, and go on.
    Warn,
}

/// The model files (and directories) a command reads.
fn command_models(command: &Command) -> Vec<PathBuf> {
    match command {
        Command::Run(a) => vec![a.model.clone()],
        Command::Check(a) => a.models.clone(),
        Command::Explore(a) => vec![a.model.clone()],
        Command::Report(a) => a
            .models
            .iter()
            .chain(&a.matrix)
            .chain(&a.each_provider)
            .cloned()
            .collect(),
        Command::Trace(a) => vec![a.run.model.clone()],
        Command::Replay(a) => vec![a.run.model.clone()],
        Command::ShowModel(a) => vec![a.model.clone()],
        Command::Merge(_)
        | Command::Designs
        | Command::Presets
        | Command::Executors
        | Command::Schema(_) => Vec::new(),
    }
}

/// Runs the command of `cli`: its result, unless an external executor broke the protocol
/// on the way (then its figures mean nothing: the error, exit 2).
fn execute_cli(cli: Cli, ctx: &mut Ctx) -> Result<(), CliError> {
    ctx.determinism_check = !cli.no_determinism_check;
    add_executors(&cli, ctx)?;
    if !ctx.externals.is_empty() {
        ctx.held = Some(Mutex::new(Default::default()));
    }
    let result = execute(cli.command, ctx);
    let failures: Vec<String> = ctx.externals.iter().filter_map(|d| d.failure()).collect();
    for d in &ctx.externals {
        d.shutdown();
    }
    let held = ctx
        .held
        .take()
        .map(|h| h.into_inner().unwrap_or_else(|e| e.into_inner()));
    if !failures.is_empty() {
        return Err(CliError::Input(failures.join("\n")));
    }
    if let Some((out, err)) = held {
        ctx.eprint(&err);
        ctx.print(&out)?;
    }
    result
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compare executor designs on a model over many seeds: one row per design.
    #[command(after_help = run_after_help())]
    Run(RunArgs),
    /// Check the expectations in model files (`expect`): exit 0 when all are met, 1 when one
    /// is not, with a shrunk counterexample and the command that replays it, 3 when nothing
    /// failed but something is not certified. A model with an `explore` bound also has each
    /// design certified within it.
    #[command(after_help = check_after_help())]
    Check(CheckArgs),
    /// Search every schedule of one design within a fault budget (or sample seeds): exit 0
    /// certified, 1 a violation (shortest counterexample and its replay command), 3 the
    /// search stopped at a limit.
    #[command(after_help = EXPLORE_AFTER_HELP)]
    Explore(ExploreArgs),
    /// Write a comparison report of models (every design on paired seeds, with intervals and
    /// paired differences against a baseline) as JSON, Markdown and one self-contained HTML
    /// page with SVG charts into a directory.
    Report(ReportArgs),
    /// Print the event timeline of one run, its outcome and its choice vector.
    Trace(TraceArgs),
    /// Rerun from a recorded choice vector and print the same timeline.
    Replay(ReplayArgs),
    /// Add up the partial results of a command run with --shard I/N (every shard 1..N
    /// once, in any order) and print what the command prints unsharded, with its exit code.
    #[command(after_help = MERGE_AFTER_HELP)]
    Merge(MergeArgs),
    /// List the executor designs: the built-in ones, then the program's own.
    Designs,
    /// List the built-in provider presets: dedup, key scope, retention, source.
    Presets,
    /// List the executor presets (`executor.preset`): the retry stacks of agent frameworks,
    /// SDKs and retry libraries, each with its source.
    Executors,
    /// Print the effective model of a file: every field, and whether the file, the provider
    /// preset or the default sets it.
    ShowModel(model_info::ShowModelArgs),
    /// Print the JSON Schema of model files (committed as models/schema.json).
    Schema(model_info::SchemaArgs),
}

/// An error with the exit code it deserves.
#[derive(Debug)]
pub enum CliError {
    /// A property or an expectation failed; the report is already printed: exit 1.
    Failed(String),
    /// Bad input: exit 2.
    Input(String),
    /// A refused model file, already one `FILE:LINE:COLUMN: PATH: message` line per
    /// problem: exit 2.
    Model(String),
    /// Anything else: exit 1.
    Other(String),
    /// A search found nothing but did not cover its bound: exit 3.
    Incomplete(String),
}

/// Entry point of the `retrylab` binary: the built-in designs only.
pub fn main() -> ExitCode {
    main_with(&[])
}

/// Entry point of a program with designs of its own: every command, with `designs` beside
/// the built-in ones (model files may list them in `designs` and `expect`, and
/// `"designs": "all"` takes them in after the built-in ones; `--design` names them). A design whose name is a built-in design's (or another of `designs`) is an
/// error at start: exit 2, naming it.
pub fn main_with(designs: &[&'static dyn Design]) -> ExitCode {
    // Dropped last, on a return or a panic: no executor process or temporary directory
    // outlives the command; SIGINT and SIGTERM kill and remove them too, then exit 130 or
    // 143 (src/external/leftovers.rs).
    let _sweep = crate::external::leftovers::Sweep;
    crate::external::leftovers::on_signals();
    let registry = match Registry::with(designs) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let args: Vec<OsString> = std::env::args_os().collect();
    let cli = parse_named(&args).unwrap_or_else(|e| e.exit());
    let mut ctx = Ctx {
        designs: registry,
        program: std::env::args().next().unwrap_or_else(|| "retrylab".into()),
        flags: String::new(),
        externals: Vec::new(),
        from_flags: Vec::new(),
        held: None,
        deferred: Mutex::new(None),
        determinism_check: true,
        io: Io::Std,
    };
    let result = execute_cli(cli, &mut ctx);
    ExitCode::from(ctx.finish(result))
}

/// The command line parsed, its usage and help naming the program as it was invoked (the
/// file name of `args[0]`: `retrylab`, or a user's own binary of [`main_with`]).
fn parse_named(args: &[OsString]) -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let name = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .map_or_else(|| "retrylab".into(), |n| n.to_string_lossy().into_owned());
    let matches = Cli::command().bin_name(name).try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

/// What one command line printed, and its exit code: see [`run_with`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The exit code [`main_with`] would exit with.
    pub code: u8,
    /// Everything printed on standard output.
    pub stdout: String,
    /// Everything printed on standard error (no progress bar).
    pub stderr: String,
}

/// Runs one command line as [`main_with`] would, with `designs` beside the built-in ones,
/// and returns its exit code and output instead of printing them. `args` starts with the
/// program's name, as `std::env::args` does (replay commands name it).
///
/// ```
/// let out = retrylab::cli::run_with(["retrylab", "designs"], &[]);
/// assert_eq!(out.code, 0);
/// assert!(out.stdout.contains("same_key"));
/// ```
pub fn run_with<I, T>(args: I, designs: &[&'static dyn Design]) -> Outcome
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let mut ctx = Ctx {
        designs: Registry::builtin(),
        program: args
            .first()
            .map_or_else(|| "retrylab".into(), |p| p.to_string_lossy().into_owned()),
        flags: String::new(),
        externals: Vec::new(),
        from_flags: Vec::new(),
        held: None,
        deferred: Mutex::new(None),
        determinism_check: true,
        io: Io::Captured(Mutex::new((String::new(), String::new()))),
    };
    let code = match Registry::with(designs) {
        Err(e) => ctx.finish(Err(CliError::Input(e))),
        Ok(registry) => {
            ctx.designs = registry;
            match parse_named(&args) {
                Ok(cli) => {
                    let result = execute_cli(cli, &mut ctx);
                    ctx.finish(result)
                }
                Err(e) => {
                    let text = e.render().to_string();
                    if e.use_stderr() {
                        ctx.eprint(&text);
                    } else {
                        let _ = ctx.print(&text);
                    }
                    e.exit_code().clamp(0, 255) as u8
                }
            }
        }
    };
    ctx.into_outcome(code)
}

fn execute(command: Command, ctx: &Ctx) -> Result<(), CliError> {
    match command {
        Command::Run(a) => run::run(a, ctx),
        Command::Check(a) => check::check(a, ctx),
        Command::Explore(a) => explore::run(a, ctx),
        Command::Report(a) => report::report(a, ctx),
        Command::Merge(a) => merge::merge(a, ctx),
        Command::Trace(a) => trace::trace(a, ctx),
        Command::Replay(a) => trace::replay(a, ctx),
        Command::Designs => model_info::designs(ctx),
        Command::Presets => model_info::presets(ctx),
        Command::Executors => model_info::executors(ctx),
        Command::ShowModel(a) => model_info::show_model(a, ctx),
        Command::Schema(a) => model_info::schema(a, ctx),
    }
}

/// `model`, against `provider` instead of its own provider when one is given.
fn load_as(model: Model, provider: Option<&str>) -> Result<Model, CliError> {
    match provider {
        None => Ok(model),
        Some(name) => model.with_provider(name).map_err(|e| {
            CliError::Input(format!(
                "--provider {name}: {}",
                e.replace('\n', &format!("\n--provider {name}: "))
            ))
        }),
    }
}

/// Prints the line of a determinism self-check that passed; exit 1 for one that did not.
fn print_determinism(ctx: &Ctx, result: &Result<String, String>) -> Result<(), CliError> {
    match result {
        Ok(line) => {
            ctx.eprintln(line);
            Ok(())
        }
        Err(m) => Err(CliError::Input(m.clone())),
    }
}

/// Seeds `first..=first+count-1`, refused when empty or past `u64::MAX`.
fn seed_range(first: u64, count: u64) -> Result<(u64, u64), CliError> {
    if count == 0 {
        return Err(CliError::Input("--seeds 0: run at least one seed".into()));
    }
    let last = first.checked_add(count - 1).ok_or_else(|| {
        CliError::Input(format!(
            "--first-seed {first} --seeds {count}: the seeds run past {}",
            u64::MAX
        ))
    })?;
    Ok((first, last))
}

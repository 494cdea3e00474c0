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
mod diagram;
mod explore;
mod merge;
mod model_info;
mod progress;
mod report;
mod run;
mod shard;
mod warnings;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use clap::{Parser, Subcommand, ValueEnum};

use crate::check::Property;
use crate::design::{Design, Registry};
use crate::model::Model;
use crate::report::ReplayCommand;
use crate::run::{Traced, run_traced};
use crate::sim::{Class, RandomChooser, ReplayChooser, ReplayKey};
use crate::vocab::ids::IntentId;
use crate::vocab::trace::{Component, render_lines};

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
    /// answer within it is an error (a busy loop, or real I/O), not a hang.
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
    /// Give every restarted worker of an external executor a new process. By default a
    /// restart (and each new run) reuses a process whose worker is gone, reset by its
    /// `start`: the determinism check verifies that a reset process behaves as a fresh one.
    #[arg(long = "executor-fresh-restarts", global = true)]
    executor_fresh_restarts: bool,
    /// Run every worker life of an external executor (a run's first and each restart) in a
    /// process forked from a zygote that did its imports, `hello` and `init` and never ran
    /// a call: nothing of an earlier life can leak, at a cost near reuse. Needs
    /// `"fork": true` in the executor's hello; without it, new processes (with a warning).
    #[arg(
        long = "executor-fork-restarts",
        global = true,
        conflicts_with = "executor_fresh_restarts"
    )]
    executor_fork_restarts: bool,
}

/// Adds the `--executor` designs of `cli` to `ctx`: each is started once and its `hello`
/// read, so that a command that does not start or does not speak the protocol is refused
/// before any run. The replay commands `ctx` prints carry the same flags.
fn add_executors(cli: &Cli, ctx: &mut Ctx) -> Result<(), CliError> {
    // The external executors the command's models list, then those of the command line.
    let mut wanted: Vec<Wanted> = Vec::new();
    // The configured designs the models list: (name, the design it configures).
    let mut configured: Vec<(String, String)> = Vec::new();
    let files = report::model_files(&command_models(&cli.command)).unwrap_or_default();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for (_, e) in crate::model::designs::configured_entries(&text) {
            let Some(base) = e.design else {
                continue;
            };
            match configured.iter().find(|(n, _)| *n == e.name) {
                Some((_, b)) if *b == base => {}
                Some((_, b)) => {
                    return Err(CliError::Input(format!(
                        "configured design {}: {} configures {base}, another model {b}: give them different names",
                        e.name,
                        path.display()
                    )));
                }
                None => configured.push((e.name, base)),
            }
        }
        // A malformed entry is reported when the model is loaded, with its line.
        let Ok(entries) = crate::model::designs::external_entries(&text) else {
            continue;
        };
        for e in entries {
            match wanted.iter().find(|w| w.name == e.name) {
                Some(w) if w.command == e.command && w.params == e.params => {}
                Some(w) => {
                    return Err(CliError::Input(format!(
                        "external executor {}: {} runs `{}` with params {}, another model `{}` with params {}: give them different names",
                        e.name,
                        path.display(),
                        e.command.join(" "),
                        e.params,
                        w.command.join(" "),
                        w.params
                    )));
                }
                None => wanted.push(Wanted {
                    name: e.name,
                    command: e.command,
                    params: e.params,
                    spec: None,
                }),
            }
        }
    }
    for spec in &cli.executors {
        let (name, command) = crate::external::parse_spec(spec).map_err(CliError::Input)?;
        if wanted.iter().any(|w| w.name == name) {
            return Err(CliError::Input(format!(
                "--executor {name}: a design of that name is given twice (by --executor or by a model's designs)"
            )));
        }
        wanted.push(Wanted {
            name,
            command,
            params: serde_json::json!({}),
            spec: Some(spec.clone()),
        });
    }
    add_configured(ctx, &configured)?;
    if wanted.is_empty() {
        return Ok(());
    }
    if cli.executor_turn_timeout_ms == 0 {
        return Err(CliError::Input(
            "--executor-turn-timeout-ms: must be at least 1".into(),
        ));
    }
    let restarts = if cli.executor_fork_restarts {
        crate::external::Restarts::Fork
    } else if cli.executor_fresh_restarts {
        crate::external::Restarts::Fresh
    } else {
        crate::external::Restarts::Reuse
    };
    let mut added: Vec<&'static dyn Design> = ctx.designs.added().to_vec();
    for w in wanted {
        if crate::design::find(&w.name).is_some() {
            return Err(CliError::Input(format!(
                "design \"{}\": a built-in design has this name; give yours another",
                w.name
            )));
        }
        let design = crate::external::ExternalDesign::new(
            &w.name,
            w.command,
            w.params,
            std::time::Duration::from_millis(cli.executor_turn_timeout_ms),
            cli.executor_output,
            restarts,
        )
        .map_err(CliError::Input)?;
        // A design lives as long as the program, as the built-in ones do.
        let design: &'static crate::external::ExternalDesign = Box::leak(Box::new(design));
        added.push(design);
        ctx.externals.push(design);
        if let Some(spec) = w.spec {
            ctx.from_flags.push(design);
            let quoted = shlex::try_quote(&spec)
                .map_err(|e| CliError::Input(format!("--executor {spec:?}: {e}")))?;
            ctx.flags.push_str(&format!(" --executor {quoted}"));
        }
    }
    if cli.executor_fresh_restarts {
        ctx.flags.push_str(" --executor-fresh-restarts");
    }
    if cli.executor_fork_restarts {
        ctx.flags.push_str(" --executor-fork-restarts");
    }
    if cli.executor_turn_timeout_ms != 10_000 {
        ctx.flags.push_str(&format!(
            " --executor-turn-timeout-ms {}",
            cli.executor_turn_timeout_ms
        ));
    }
    ctx.designs = Registry::with(&added).map_err(CliError::Input)?;
    Ok(())
}

/// Registers each configured design (name, the design it configures) whose base the
/// registry knows; a model that names an unknown base is refused when it is loaded.
fn add_configured(ctx: &mut Ctx, configured: &[(String, String)]) -> Result<(), CliError> {
    let mut added: Vec<&'static dyn Design> = ctx.designs.added().to_vec();
    for (name, base) in configured {
        if ctx.designs.find(name).is_some() {
            continue;
        }
        if let Some(base) = ctx.designs.find(base).filter(|b| b.configures().is_none()) {
            added.push(crate::design::configured::Configured::leak(name, base));
        }
    }
    ctx.designs = Registry::with(&added).map_err(CliError::Input)?;
    Ok(())
}

/// An external executor a command runs.
struct Wanted {
    name: String,
    command: Vec<String>,
    params: serde_json::Value,
    /// Its `--executor` flag, when the command line gave it.
    spec: Option<String>,
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
        Command::Trace(a) => vec![a.model.clone()],
        Command::Replay(a) => vec![a.model.clone()],
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

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Table,
    Json,
}

const MERGE_AFTER_HELP: &str = "\
A sharded command: the same command line N times, each with --shard I/N --out FILE
(I = 1..N), anywhere (a Kubernetes Indexed Job, a CI matrix); then one merge of the N files.
retrylab schedules nothing. The merge refuses (exit 2) files of different commands, options
or model contents, a missing or repeated shard, and a file that is not a partial. It needs
no model file: the partials carry what the output names.

`run`, `check` and `report` shard their seeds; `explore` (dfs) shards its tree of choices,
and the merge gives the one-machine verdict, counterexample and certificate, with run and
state counts summed over the shards (--max-runs bounds each shard).

Example:
  for i in 1 2 3 4; do retrylab run models/ticket_chaos.json --seeds 100000 --shard $i/4 --out part$i.json; done
  retrylab merge part*.json
  for i in 1 2 3; do retrylab explore models/ticket_lost_response.json --design same_key --shard $i/3 --out ex$i.json; done
  retrylab merge ex*.json

Exit codes: as the unsharded command (run: 1 a --fail-on property was violated; check: 1 an
expectation is not met, 3 not certified; explore: 1 a violation, 3 not certified), 2 bad
input.";

#[derive(clap::Args, Debug)]
struct MergeArgs {
    /// Partial files written by `run`, `check`, `report` or `explore` with --shard I/N
    /// --out FILE.
    #[arg(required = true, value_name = "PART")]
    parts: Vec<PathBuf>,
    /// Output format of a merged `run` (default: the format the shards were given).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Directory to write a merged `report` into (report.json, report.md, report.html).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// Model file (JSON).
    model: PathBuf,
    /// Run the scenario against this built-in provider preset instead of the model's own
    /// provider section (the preset as it is).
    #[arg(long, value_name = "PRESET")]
    provider: Option<String>,
    /// Design to run; repeat for several. Default: the model's designs (`"all"`: every
    /// registered design).
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
    #[arg(long, value_name = "S", conflicts_with = "shard")]
    seed: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Exit 1 when any seed violates one of these properties (comma-separated).
    #[arg(long, value_name = "PROP,...", value_delimiter = ',')]
    fail_on: Vec<String>,
    /// Print the first N violating seeds per design and property, with the command that
    /// replays each.
    #[arg(long, value_name = "N", default_value_t = 0)]
    show_failures: usize,
    /// Keep every column of the table (it no longer fits 100 columns).
    #[arg(long)]
    wide: bool,
    /// Also rerun a sample of the seeds (16 per design) silent, traced twice and replayed,
    /// and exit 1 unless outcome and timeline hashes agree. With --shard, shard 1 does it
    /// (on the sample of the whole range).
    #[arg(long)]
    check_determinism: bool,
    #[command(flatten)]
    shard: ShardArgs,
}

/// `--shard I/N --out FILE`.
#[derive(clap::Args, Debug, Default)]
struct ShardArgs {
    /// Run only the I-th of N contiguous blocks of the seeds (I from 1) and write a
    /// partial result to --out instead of the output; `retrylab merge`
    /// of the N partials prints what the command prints unsharded. Work that is not per
    /// seed (the determinism sample, explore certification, the guarantee matrix) is done
    /// by shard 1 alone. A shard that wrote its partial exits 0; the merge has the verdict.
    #[arg(long, value_name = "I/N", value_parser = shard::parse_shard, requires = "out")]
    shard: Option<shard::Shard>,
    /// With --shard: the partial result file to write.
    #[arg(long = "out", value_name = "FILE", requires = "shard")]
    out: Option<PathBuf>,
}

/// Output format of `check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CheckFormat {
    /// The verdict lines, counterexamples and replay commands, for a person.
    Table,
    /// One JSON object (`"format": "retrylab-check"`), described in the README.
    Json,
    /// JUnit XML: one test case per expectation, and one per exhaustive search.
    Junit,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// Model files (JSON) with an `expect` section, or directories: a directory stands for
    /// its `*.json` files in byte order of their names (the JSON Schema left out).
    #[arg(required = true, value_name = "MODEL")]
    models: Vec<PathBuf>,
    /// Most runs of each design's exhaustive search within the model's `explore` bound, in
    /// place of the model's `expect.DESIGN.explore_max_runs` and `explore.max_runs`.
    #[arg(long, value_name = "N")]
    max_runs: Option<u64>,
    /// Exit 0, not 3, when a model has no expectations (it checks nothing; the output
    /// still says so).
    #[arg(long)]
    allow_no_expectations: bool,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value = "table")]
    format: CheckFormat,
    /// Also write the verdicts as JUnit XML to FILE (whatever --format), for a CI's test
    /// report; with --shard, the merge writes it.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Seeds per design, run as seeds FIRST..FIRST+N.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    seeds: u64,
    /// First seed of the range.
    #[arg(long, value_name = "FIRST", default_value_t = 0)]
    first_seed: u64,
    /// Also rerun a sample of the seeds (16 per design) silent, traced twice and replayed,
    /// and exit 1 unless outcome and timeline hashes agree. With --shard, shard 1 does it
    /// (on the sample of the whole range).
    #[arg(long)]
    check_determinism: bool,
    #[command(flatten)]
    shard: ShardArgs,
}

#[derive(clap::Args, Debug)]
struct ReportArgs {
    /// Model files (JSON), or directories: a directory stands for its `*.json` files in
    /// byte order of their names.
    #[arg(required_unless_present_any = ["each_provider", "matrix"], value_name = "MODEL")]
    models: Vec<PathBuf>,
    /// Directory to write report.json, report.md and report.html into (created if needed);
    /// with --shard, the partial result file to write.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Seeds per design, run as seeds FIRST..FIRST+N.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    seeds: u64,
    /// First seed of the range.
    #[arg(long, value_name = "FIRST", default_value_t = 0)]
    first_seed: u64,
    /// The design every other is compared with, seed by seed.
    #[arg(long, value_name = "NAME", default_value = "no_dedup")]
    baseline: String,
    /// Models of the guarantee matrix (files or directories, as MODEL): every design is
    /// searched exhaustively on each, within --max-faults. Columns: the model that breaks
    /// no assumption first, then in the order the designs declare what each breaks.
    #[arg(long, value_name = "MODEL")]
    matrix: Vec<PathBuf>,
    /// The fault budget of the guarantee matrix's exhaustive search.
    #[arg(long, value_name = "K", default_value_t = 2)]
    max_faults: u32,
    /// Also report this model (files or directories, as MODEL) once against every built-in
    /// provider preset, as `--provider` runs it: the provider comparison.
    #[arg(long, value_name = "MODEL")]
    each_provider: Vec<PathBuf>,
    /// Record this commit of the tool in the provenance (for example
    /// `--commit "$(git rev-parse HEAD)"`); left out by default, so that the report's bytes
    /// depend only on the tool's behaviour and the inputs.
    #[arg(long, value_name = "REV")]
    commit: Option<String>,
    /// Record the number of worker threads in the provenance (no figure depends on it;
    /// left out by default for the same reason as --commit).
    #[arg(long)]
    record_threads: bool,
    /// Run only the I-th of N contiguous blocks of the seeds (I from 1) and write a partial
    /// result to --out, which is then a file, not a directory; `retrylab merge PART... --out DIR` of the N
    /// partials writes the report the unsharded command writes. Shard 1 alone does the
    /// work that is not per seed (the guarantee matrix). A shard that wrote its partial
    /// exits 0.
    #[arg(long, value_name = "I/N", value_parser = shard::parse_shard)]
    shard: Option<shard::Shard>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum StrategyArg {
    /// Every choice sequence with at most K faults, fewest faults first.
    Dfs,
    /// Random seeds, each with its own mix of enabled faults.
    Swarm,
    /// Plain random seeds.
    Random,
}

impl From<StrategyArg> for crate::explore::Strategy {
    fn from(s: StrategyArg) -> Self {
        match s {
            StrategyArg::Dfs => crate::explore::Strategy::Dfs,
            StrategyArg::Swarm => crate::explore::Strategy::Swarm,
            StrategyArg::Random => crate::explore::Strategy::Random,
        }
    }
}

const EXPLORE_AFTER_HELP: &str = "\
The bound: at most K non-default fault choices per run (a lost request or reply, a duplicate,
a crash, a provider error, an async failure, a lost authorization); every agent reaction and
every schedule choice (which worker, the order of events due at the same instant); each
timing range over a menu (its ends, and just below and above each threshold of the model
it straddles). A run that reaches a state an earlier run already explored (with as many
faults left) is cut there. Checked: every plain property and those the model's expectations
name for the design, whether it expects them to hold or to be violated (a search reports
what it finds); --property checks only those named (check certifies the ones expected to
hold). Without --max-faults, the model's \"explore\" bound, else 2; at most 6.

Exit codes: 0 certified (dfs, complete, no violation), 1 a violation, 2 bad input, 3 no
violation but no certificate either (dfs stopped at a limit, or swarm/random sampled).";

#[derive(clap::Args, Debug)]
struct ExploreArgs {
    /// Model file (JSON).
    model: PathBuf,
    /// Run the scenario against this built-in provider preset instead of the model's own
    /// provider section (the preset as it is).
    #[arg(long, value_name = "PRESET")]
    provider: Option<String>,
    /// Design to explore.
    #[arg(long, value_name = "NAME")]
    design: String,
    /// Most non-default fault choices per run (dfs).
    #[arg(long, value_name = "K")]
    max_faults: Option<u32>,
    /// Most runs (dfs) or seeds (swarm, random). Default: the model's
    /// `expect.DESIGN.explore_max_runs`, else its `explore` bound's, else 1000000.
    #[arg(long, value_name = "N")]
    max_runs: Option<u64>,
    /// Most states remembered in the visited set (about 80 bytes each).
    #[arg(long, value_name = "S", default_value_t = 2_000_000)]
    max_states: usize,
    /// Check only these properties (comma-separated).
    #[arg(long = "property", value_name = "PROP,...", value_delimiter = ',')]
    properties: Vec<String>,
    /// How to search.
    #[arg(long, value_enum, default_value = "dfs")]
    strategy: StrategyArg,
    #[command(flatten)]
    reductions: ReductionArgs,
    /// Search only shard I of N of the tree (I from 1) and write a partial result to --out
    /// instead of the output; `retrylab merge` of the N partials prints the one-machine
    /// verdict and certificate. The tree is cut at the first choice points whose option
    /// counts multiply to 64·N; the subtrees below, in depth-first order, go round robin to
    /// the shards. --max-runs bounds each shard. dfs only. A shard that wrote its partial
    /// exits 0; the merge has the verdict.
    #[arg(long, value_name = "I/N", value_parser = shard::parse_shard, requires = "out")]
    shard: Option<shard::Shard>,
    /// With --shard: the partial result file to write.
    #[arg(long = "out", value_name = "FILE", requires = "shard")]
    out: Option<PathBuf>,
}

/// Switches for the reductions of an exhaustive search: each is on by default, and each
/// only spares runs whose outcome another run shows, so a search with one off must report
/// the same violations and the same certificate (the comparison is one command).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
struct ReductionArgs {
    /// Do not cut a state whose every continuation an earlier pass or fault budget already
    /// explored (each pass then starts from nothing).
    #[arg(long)]
    no_memo: bool,
    /// Explore every order of events due at the same instant, also of independent ones
    /// (partial-order reduction off).
    #[arg(long)]
    no_por: bool,
    /// Explore every one of interchangeable alternatives (symmetry reduction off): each
    /// worker that has run nothing yet, each order of identical intents arriving together.
    #[arg(long)]
    no_symmetry: bool,
    /// Re-run every run from its start instead of restoring the world saved where its
    /// path left the previous run's (the same runs; only slower).
    #[arg(long)]
    no_snapshots: bool,
    /// Hash every moment a state keeps exactly, instead of only as far as it can still
    /// change the run (timing equivalence off): states reached at the same moment by
    /// histories that differ only in when things happened are then told apart.
    #[arg(long)]
    no_timing: bool,
    /// Every reduction off: the plain depth-first search.
    #[arg(long)]
    no_reductions: bool,
}

impl ReductionArgs {
    fn reductions(self) -> crate::explore::Reductions {
        if self.no_reductions {
            return crate::explore::Reductions::NONE;
        }
        crate::explore::Reductions {
            memo: !self.no_memo,
            por: !self.no_por,
            symmetry: !self.no_symmetry,
            snapshots: !self.no_snapshots,
            timing: !self.no_timing,
        }
    }
}

impl ExploreArgs {
    /// The bound: the command line's, else the model's, else the defaults.
    fn bound(&self, model: &Model) -> Result<crate::explore::Bound, CliError> {
        let default = crate::explore::Bound::default();
        let from_model = model.explore;
        let max_faults = self
            .max_faults
            .or(from_model.map(|e| e.max_faults))
            .unwrap_or(default.max_faults);
        if max_faults > crate::model::MAX_EXPLORE_FAULTS {
            return Err(CliError::Input(format!(
                "--max-faults {max_faults}: more than the limit of {} for an exhaustive search; sample seeds with --strategy swarm or random instead",
                crate::model::MAX_EXPLORE_FAULTS
            )));
        }
        let max_runs = self
            .max_runs
            .or(model
                .expect
                .get(&self.design)
                .and_then(|e| e.explore_max_runs))
            .or(from_model.map(|e| e.max_runs))
            .unwrap_or(default.max_runs);
        if max_runs == 0 {
            return Err(CliError::Input("--max-runs 0: must be at least 1".into()));
        }
        if self.max_states == 0 {
            return Err(CliError::Input("--max-states 0: must be at least 1".into()));
        }
        Ok(crate::explore::Bound {
            max_faults,
            max_runs,
            max_states: self.max_states,
            reductions: self.reductions.reductions(),
        })
    }
}

/// The properties a flag names: built-in ones, or ones the registered designs bring.
fn parse_properties(
    flag: &str,
    names: &[String],
    designs: &Registry,
) -> Result<Vec<Property>, CliError> {
    let custom = designs.properties();
    names
        .iter()
        .map(|s| {
            Property::parse_with(s, &custom).map_err(|e| CliError::Input(format!("{flag}: {e}")))
        })
        .collect()
}

fn check_after_help() -> String {
    let mut s = String::from(
        "An expectation, in a model file:\n  \"expect\": {\"DESIGN\": {\"hold\": [\"no_duplicate\", \"resolved_within(60000)\"], \"violate\": [\"no_false_success\"]}}\n`hold`: no seed may violate the property; `violate`: at least one seed must.\n\nProperties:\n",
    );
    for p in Property::PLAIN
        .into_iter()
        .chain([Property::ResolvedWithin(0)])
    {
        s.push_str(&format!("  {:<22} {}\n", p.pattern(), p.meaning()));
    }
    s.push_str(
        "\nPer design, the first line says what happened to the user over the seeds (harm: duplicate
effects, false successes or failures, unresolved intents), then one line per expectation.

Exit codes: 0 every expectation met and every search certified; 1 an expectation is not
met, a search found a violation, or the determinism self-check failed; 3 nothing failed but
something is not certified: an exhaustive search stopped at its run limit (raise --max-runs)
or a model has no expectations (unless --allow-no-expectations); 2 bad input.

JUnit (--format junit, --junit FILE): a testsuite per model, a testcase per expectation
(classname the model, name `DESIGN WANT PROPERTY`) with a <failure> holding the shrunk
counterexample and its replay command; a search is `DESIGN explore` and, when not
certified, <skipped> with the reason (GitHub and GitLab list it as skipped; the exit code 3
fails the job).",
    );
    s
}

#[derive(clap::Args, Debug)]
struct TraceArgs {
    /// Model file (JSON).
    model: PathBuf,
    /// Run the scenario against this built-in provider preset instead of the model's own
    /// provider section (the preset as it is).
    #[arg(long, value_name = "PRESET")]
    provider: Option<String>,
    /// Design to run.
    #[arg(long, value_name = "NAME")]
    design: String,
    /// Seed of the run.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    filter: TimelineFilter,
    /// What to print: the timeline as text, the run's sequence diagram as SVG (one lane per
    /// component, messages as arrows, faults and duplicate effects marked, the verdicts at
    /// the end), or an HTML page with both.
    #[arg(long, value_enum, default_value = "text")]
    format: diagram::TraceFormat,
}

/// Which lines of the timeline to print.
#[derive(clap::Args, Debug, Default)]
struct TimelineFilter {
    /// Print only the timeline lines about this intent (its calls, operations, sends and
    /// effects) and those about no intent in particular (a worker's crash or restart); the
    /// outcome line gives only its verdict.
    #[arg(long, value_name = "N")]
    intent: Option<u32>,
    /// Print only the timeline lines of these components (comma-separated).
    #[arg(long, value_name = "C,...", value_delimiter = ',', value_enum)]
    component: Vec<ComponentArg>,
}

/// A component of the timeline, as its column names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ComponentArg {
    Workload,
    Agent,
    Executor,
    Network,
    Provider,
    Ledger,
}

impl ComponentArg {
    fn component(self) -> Component {
        match self {
            ComponentArg::Workload => Component::Workload,
            ComponentArg::Agent => Component::Agent,
            ComponentArg::Executor => Component::Executor,
            ComponentArg::Network => Component::Network,
            ComponentArg::Provider => Component::Provider,
            ComponentArg::Ledger => Component::Ledger,
        }
    }
}

impl TimelineFilter {
    /// Refused when the run has no intent `N`.
    fn check(&self, t: &Traced) -> Result<(), CliError> {
        match self.intent {
            Some(n) if n as usize >= t.intents.len() => Err(CliError::Input(format!(
                "--intent {n}: the run has {} intent{} (numbered from 0)",
                t.intents.len(),
                if t.intents.len() == 1 { "" } else { "s" }
            ))),
            _ => Ok(()),
        }
    }

    fn keeps(&self, component: Component, about: Option<IntentId>) -> bool {
        let by_intent = match (self.intent, about) {
            (Some(n), Some(i)) => i.0 == n,
            _ => true,
        };
        let by_component =
            self.component.is_empty() || self.component.iter().any(|c| c.component() == component);
        by_intent && by_component
    }

    /// What the header says of the filter, if any: `; only lines about intent 1 (and about
    /// no intent), of executor, provider`.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.intent {
            parts.push(format!("about intent {n} (and about no intent)"));
        }
        if !self.component.is_empty() {
            let names: Vec<&str> = self
                .component
                .iter()
                .map(|c| c.component().name())
                .collect();
            parts.push(format!("of {}", names.join(", ")));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("; timeline: only lines {}", parts.join(", "))
        }
    }
}

#[derive(clap::Args, Debug)]
struct ReplayArgs {
    /// Model file (JSON).
    model: PathBuf,
    /// Run the scenario against this built-in provider preset instead of the model's own
    /// provider section (the preset as it is).
    #[arg(long, value_name = "PRESET")]
    provider: Option<String>,
    /// Design to run.
    #[arg(long, value_name = "NAME")]
    design: String,
    /// The run to replay, as printed replay commands give it: `DIGEST+ties:ITEMS`, the
    /// model's digest (the replay is refused, exit 2, when the model, with --provider as
    /// run, has changed since in anything a run reads), `+ties` when same-instant order was
    /// a choice, and the choice vector's items: `V` for the next decision, `P=V` for
    /// decision P (1-based), every decision left out at its default (`3=1`: two defaults,
    /// then 1). A bare vector (`0,0,1` or `3=1`, may be empty) replays unchecked, as vectors
    /// printed before keys were.
    #[arg(long, value_name = "KEY", allow_hyphen_values = true)]
    choices: String,
    /// Order events due at the same instant by the vector's `order` choices, as the run
    /// that recorded it did: what `+ties` in the key says, for a bare vector.
    #[arg(long)]
    ties: bool,
    /// The digest of the model the vector was recorded against, for a bare vector (the key
    /// carries it): the replay is refused (exit 2) when the model has changed since.
    #[arg(long, value_name = "HEX")]
    model_digest: Option<String>,
    #[command(flatten)]
    filter: TimelineFilter,
    /// What to print: the timeline as text, the run's sequence diagram as SVG, or an HTML
    /// page with both (as `trace --format`).
    #[arg(long, value_enum, default_value = "text")]
    format: diagram::TraceFormat,
}

fn run_after_help() -> String {
    let mut s = String::from("Columns of the table:\n");
    for (name, meaning) in crate::report::table::columns() {
        s.push_str(&format!("  {name:<14} {meaning}\n"));
    }
    s.push_str(&format!(
        "\nProperties (for --fail-on): {}\n",
        Property::names()
    ));
    s.push_str("\nExit codes: 0 success, 1 a --fail-on property was violated, 2 bad input.");
    s
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

/// What a command runs with: the designs it knows, the program's name (for the replay
/// commands it prints) and where its output goes.
struct Ctx {
    designs: Registry,
    program: String,
    /// Flags the replay commands it prints carry (see [`ReplayCommand::flags`]).
    flags: String,
    /// The external executors of the command and its models (also in `designs`).
    externals: Vec<&'static crate::external::ExternalDesign>,
    /// Those of them given by `--executor`.
    from_flags: Vec<&'static dyn Design>,
    /// With external executors, the output is held until the command ends: an executor
    /// that broke the protocol gets its error alone, not figures that mean nothing.
    held: Option<Mutex<(String, String)>>,
    io: Io,
}

enum Io {
    /// Standard output and error, with a progress bar on a terminal.
    Std,
    /// Kept: (stdout, stderr).
    Captured(Mutex<(String, String)>),
}

impl Ctx {
    /// Writes `text` on standard output.
    fn print(&self, text: &str) -> Result<(), CliError> {
        if let Some(h) = &self.held {
            h.lock().unwrap_or_else(|e| e.into_inner()).0.push_str(text);
            return Ok(());
        }
        match &self.io {
            Io::Std => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())
                    .and_then(|()| out.flush())
                    .map_err(|e| CliError::Other(format!("cannot write the output: {e}")))
            }
            Io::Captured(m) => {
                m.lock().unwrap_or_else(|e| e.into_inner()).0.push_str(text);
                Ok(())
            }
        }
    }

    /// Writes `text` on standard error (a failure to is ignored, as `eprint!` would not).
    fn eprint(&self, text: &str) {
        if let Some(h) = &self.held {
            h.lock().unwrap_or_else(|e| e.into_inner()).1.push_str(text);
            return;
        }
        match &self.io {
            Io::Std => {
                let _ = std::io::stderr().lock().write_all(text.as_bytes());
            }
            Io::Captured(m) => m.lock().unwrap_or_else(|e| e.into_inner()).1.push_str(text),
        }
    }

    /// Writes `line` and a newline on standard error.
    fn eprintln(&self, line: &str) {
        self.eprint(&format!("{line}\n"));
    }

    /// A progress bar for `total` of `unit`; never shown when the output is kept.
    fn progress(&self, total: u64, unit: &str) -> progress::Progress {
        let bar = progress::Progress::counting(total, unit);
        match self.io {
            Io::Std => bar,
            Io::Captured(_) => bar.never_shown(),
        }
    }

    /// Prints the error of a command, if any, and returns the exit code it deserves.
    fn finish(&self, result: Result<(), CliError>) -> u8 {
        match result {
            Ok(()) => 0,
            Err(CliError::Input(msg)) => {
                self.eprintln(&format!("error: {msg}"));
                2
            }
            Err(CliError::Model(lines)) => {
                self.eprintln(&lines);
                2
            }
            Err(CliError::Failed(msg)) => {
                self.eprintln(&msg);
                1
            }
            Err(CliError::Other(msg)) => {
                self.eprintln(&format!("error: {msg}"));
                1
            }
            Err(CliError::Incomplete(msg)) => {
                self.eprintln(&msg);
                3
            }
        }
    }

    fn into_outcome(self, code: u8) -> Outcome {
        let (stdout, stderr) = match self.io {
            Io::Std => Default::default(),
            Io::Captured(m) => m.into_inner().unwrap_or_else(|e| e.into_inner()),
        };
        Outcome {
            code,
            stdout,
            stderr,
        }
    }

    /// Loads a model and warns on stderr about the values in it that make a component inert
    /// ([`crate::model::inert`]).
    fn load(&self, path: &Path) -> Result<Model, CliError> {
        self.warned(self.read(path)?)
    }

    fn read(&self, path: &Path) -> Result<Model, CliError> {
        Model::load_with(path, &self.designs).map_err(|e| CliError::Model(e.to_string()))
    }

    fn warned(&self, model: Model) -> Result<Model, CliError> {
        warnings::print(self, &warnings::inert(&model));
        Ok(model)
    }

    /// Loads a model, against `provider` instead of its own provider when one is given, and
    /// warns as [`Ctx::load`] does (about the model the commands run).
    fn load_as(&self, path: &Path, provider: Option<&str>) -> Result<Model, CliError> {
        self.warned(load_as(self.read(path)?, provider)?)
    }

    /// The external executors given by `--executor` (not those a model lists).
    fn command_line_executors(&self) -> Vec<&'static dyn Design> {
        self.from_flags.clone()
    }

    /// Their names.
    fn flagged(&self) -> Vec<String> {
        self.from_flags
            .iter()
            .map(|d| d.name().to_string())
            .collect()
    }

    fn find_design(&self, name: &str) -> Result<&'static dyn Design, CliError> {
        self.designs.find(name).ok_or_else(|| {
            CliError::Input(format!(
                "--design {name}: unknown design; known designs: {}",
                self.designs.names().join(", ")
            ))
        })
    }

    /// The command that replays runs of the model at `path`, as the user can paste it
    /// (`digest`: the model's, carried by a choice vector's replay command).
    fn replay_command(
        &self,
        path: &Path,
        provider: Option<&str>,
        digest: Option<String>,
    ) -> ReplayCommand {
        ReplayCommand {
            program: self.program.clone(),
            flags: self.flags.clone(),
            flagged: self.flagged(),
            model_path: path.display().to_string(),
            provider: provider.map(str::to_string),
            model_digest: digest,
        }
    }
}

fn execute(command: Command, ctx: &Ctx) -> Result<(), CliError> {
    match command {
        Command::Run(a) => run::run(a, ctx),
        Command::Check(a) => check::check(a, ctx),
        Command::Explore(a) => explore::run(a, ctx),
        Command::Report(a) => report::report(a, ctx),
        Command::Merge(a) => merge::merge(a, ctx),
        Command::Trace(a) => trace(a, ctx),
        Command::Replay(a) => replay(a, ctx),
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

/// The determinism self-check of `designs` on a sample of `first..=last`: the line printed
/// on stderr when it passes, the failure (exit 1) when it does not.
fn determinism(
    model: &Model,
    designs: &[&dyn Design],
    (first, last): (u64, u64),
) -> Result<String, String> {
    let seeds = crate::explore::determinism::sample(first, last);
    for d in designs {
        crate::explore::determinism::self_check(model, *d, &seeds)
            .map_err(|m| format!("{}: {m}", model.name))?;
    }
    for d in designs.iter().filter(|d| d.is_external()) {
        crate::external::determinism::check(model, *d, &seeds)?;
    }
    Ok(format!(
        "determinism: {}: {} seed{} x {} design{}: silent, traced twice and replayed runs agree",
        model.name,
        seeds.len(),
        if seeds.len() == 1 { "" } else { "s" },
        designs.len(),
        if designs.len() == 1 { "" } else { "s" }
    ))
}

/// Prints the line of a determinism self-check that passed; exit 1 for one that did not.
fn print_determinism(ctx: &Ctx, result: &Result<String, String>) -> Result<(), CliError> {
    match result {
        Ok(line) => {
            ctx.eprintln(line);
            Ok(())
        }
        Err(m) => Err(CliError::Failed(m.clone())),
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

fn trace(a: TraceArgs, ctx: &Ctx) -> Result<(), CliError> {
    let model = ctx.load_as(&a.model, a.provider.as_deref())?;
    let d = ctx.find_design(&a.design)?;
    let traced = run_traced(&model, d, &mut RandomChooser::for_model(&model, a.seed));
    a.filter.check(&traced)?;
    let header = format!(
        "trace of {} on model {}, seed {}{}",
        d.name(),
        model.name,
        a.seed,
        a.filter.describe()
    );
    let named = named_properties(&model, d.name());
    let text = render_run(
        &header,
        &ctx.replay_command(&a.model, a.provider.as_deref(), Some(model.digest())),
        d,
        &traced,
        false,
        &named,
        &a.filter,
    );
    ctx.print(&pictured(
        a.format, &header, &traced, &named, &a.filter, &text,
    )?)
}

/// What `--format` asks for: `text` as it is, or the run's diagram.
fn pictured(
    format: diagram::TraceFormat,
    header: &str,
    t: &Traced,
    named: &[Property],
    filter: &TimelineFilter,
    text: &str,
) -> Result<String, CliError> {
    if format == diagram::TraceFormat::Text {
        return Ok(text.to_string());
    }
    // A diagram pairs every message's two ends and judges every intent: drawn from part of
    // the timeline it would show requests never answered and users told nothing.
    if filter.intent.is_some() || !filter.component.is_empty() {
        return Err(CliError::Input(
            "--intent and --component filter the text timeline; --format svg and html draw the whole run (every message with both its ends), so they take neither".to_string(),
        ));
    }
    diagram::render(format, header, t, &violated_names(t, named), text)
        .map_err(|e| CliError::Other(format!("cannot draw the diagram: {e}")))
}

fn replay(a: ReplayArgs, ctx: &Ctx) -> Result<(), CliError> {
    let model = ctx.load_as(&a.model, a.provider.as_deref())?;
    let d = ctx.find_design(&a.design)?;
    let key: ReplayKey = a
        .choices
        .parse()
        .map_err(|e| CliError::Input(format!("--choices: {e}")))?;
    let recorded = match (&key.digest, &a.model_digest) {
        (Some(k), Some(flag)) if !flag.trim().eq_ignore_ascii_case(k) => {
            return Err(CliError::Input(format!(
                "--model-digest {flag} differs from the digest {k} in --choices: give one of them"
            )));
        }
        (Some(k), _) => Some(("--choices", k.clone())),
        (None, Some(flag)) => Some(("--model-digest", flag.trim().to_ascii_lowercase())),
        (None, None) => None,
    };
    if let Some((from, recorded)) = recorded {
        let now = model.digest();
        if recorded != now {
            return Err(CliError::Input(format!(
                "{from}: the model changed since the vector was recorded (its digest was {recorded}, is now {now}): its choices would make other decisions, not replay the recorded run; rerun the command that printed it (check, explore, trace) on the model as it is"
            )));
        }
    }
    // A key says whether the run ordered ties; --ties may not change what it says.
    if a.ties && key.digest.is_some() && !key.ties {
        return Err(CliError::Input(
            "--ties: the key in --choices was recorded without same-instant order choices (it has no +ties); --ties would replay another run".to_string(),
        ));
    }
    let ties = a.ties || key.ties;
    let vector = key.vector;
    let mut chooser = ReplayChooser::new(vector.clone()).ordering_ties(ties);
    let traced = run_traced(&model, d, &mut chooser);
    chooser
        .finish()
        .map_err(|e| CliError::Input(format!("--choices: {e}")))?;
    a.filter.check(&traced)?;
    let header = format!(
        "replay of {} on model {}, choices {}{}{}",
        d.name(),
        model.name,
        if vector.0.is_empty() {
            "(every decision at its default)".to_string()
        } else {
            vector.to_string()
        },
        if ties { ", ties ordered by choice" } else { "" },
        a.filter.describe()
    );
    let named = named_properties(&model, d.name());
    let text = render_run(
        &header,
        &ctx.replay_command(&a.model, a.provider.as_deref(), Some(model.digest())),
        d,
        &traced,
        ties,
        &named,
        &a.filter,
    );
    ctx.print(&pictured(
        a.format, &header, &traced, &named, &a.filter, &text,
    )?)
}

/// The timeline, the outcome and the line that replays the run (`ties`: the run ordered
/// same-instant events by choice, and so must its replay).
fn render_run(
    header: &str,
    replay: &ReplayCommand,
    d: &dyn Design,
    t: &Traced,
    ties: bool,
    named: &[Property],
    filter: &TimelineFilter,
) -> String {
    let timeline = render_lines(
        t.lines
            .iter()
            .filter(|(l, about)| filter.keeps(l.component, *about))
            .map(|(l, _)| l),
    );
    let mut s = format!("{header}\n\n{timeline}\n");
    s.push_str(&render_verdicts(t, filter.intent.map(IntentId)));
    s.push_str(&render_counts(t, named));
    let named: Vec<String> = t
        .choices
        .iter()
        .map(|c| format!("{}:{}/{}", c.purpose.name(), c.value, c.of))
        .collect();
    let classes: Vec<String> = Class::ALL
        .into_iter()
        .filter_map(|class| {
            let n = t.choices.iter().filter(|c| c.class() == class).count();
            (n > 0).then(|| format!("{n} {}", class.name()))
        })
        .collect();
    let count = if classes.is_empty() {
        "0".to_string()
    } else {
        format!("{}: {}", t.choices.len(), classes.join(", "))
    };
    s.push_str(&format!(
        "choices ({count}; as purpose:alternative/number of possible alternatives): {}\n",
        if named.is_empty() {
            "none".to_string()
        } else {
            named.join(" ")
        }
    ));
    let line = if ties {
        replay.choices_with_ties(d.name(), &t.vector().to_string())
    } else {
        replay.choices(d.name(), &t.vector().to_string())
    };
    s.push_str(&format!("replay: {line}\n"));
    s
}

/// The properties the model's expectations name for `design` beyond the plain ones (such
/// as `resolved_within(T)`): a run is judged on them too.
pub(super) fn named_properties(model: &Model, design: &str) -> Vec<Property> {
    model
        .expectations(design)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| !Property::PLAIN.contains(p))
        .collect()
}

/// The outcome of one run: the verdict on each intent, its counts and the properties it
/// violates (the plain ones and `named`).
fn render_outcome(t: &Traced, named: &[Property]) -> String {
    render_verdicts(t, None) + &render_counts(t, named)
}

/// The `outcome:` line: the verdict on each intent (`only`: on that one).
fn render_verdicts(t: &Traced, only: Option<IntentId>) -> String {
    format!(
        "outcome: {}\n",
        crate::check::verdict::render(&t.intents, only)
    )
}

/// The properties the run violates: the plain ones and `named`.
pub(super) fn violated_names(t: &Traced, named: &[Property]) -> Vec<String> {
    t.violated_with(named)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The `counts:` and `violates:` lines of the whole run.
fn render_counts(t: &Traced, named: &[Property]) -> String {
    let m = &t.metrics;
    let counts: Vec<String> = crate::check::counters::COUNTERS
        .iter()
        .filter_map(|c| Some(format!("{} {}", c.trace?, (c.total)(m))))
        .collect();
    let mut s = format!("counts: {}\n", counts.join(", "));
    let violated = violated_names(t, named);
    s.push_str(&format!(
        "violates: {}\n",
        if violated.is_empty() {
            "none".to_string()
        } else {
            violated.join(", ")
        }
    ));
    if t.summary.budget {
        s.push_str(&format!(
            "events budget: the run stopped after {} events, before the horizon; the outcome is the run so far, and no property is shown to hold on it\n",
            crate::world::MAX_EVENTS
        ));
    }
    s
}

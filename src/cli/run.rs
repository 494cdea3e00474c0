//! `retrylab run`: every design of a model over the same seeds, one row each.
//!
//! The command accumulates the sweep of its seeds ([`RunData`]) and renders it; with
//! `--shard` it writes the data of its block instead, and `retrylab merge` adds the blocks up
//! and renders them the same way.

use serde::{Deserialize, Serialize};

use super::ShardArgs;
use super::shard::{self, ModelFile, ResultData};
use super::{CliError, Ctx, print_determinism, seed_range, warnings};
use crate::check::Property;
use crate::design::Design;
use crate::explore::{Comparison, compare};
use crate::explore::{DesignResult, ReplayCommand, Report};
use crate::model::{Catalog, Model};
use crate::report::{json, table};
use clap::ValueEnum;
use std::path::PathBuf;

/// The options of `run` that determine its output (a partial records them).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct RunOptions {
    pub model: String,
    pub provider: Option<String>,
    pub design: Vec<String>,
    pub seeds: u64,
    pub first_seed: u64,
    pub format: String,
    pub fail_on: Vec<String>,
    pub show_failures: usize,
    pub wide: bool,
    pub check_determinism: bool,
}

/// What a sweep of some seeds gives: the results per design and what of the model the
/// output names, so that it renders without the model file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct RunData {
    /// The model's name.
    pub model: String,
    /// Its scripted faults, described.
    pub faults: Vec<String>,
    /// Per design, its result on the seeds; `None` for no seed (an empty shard).
    pub results: Option<Vec<ResultData>>,
    /// The determinism self-check's line or failure (shard 1 only, with
    /// --check-determinism).
    pub determinism: Option<Result<String, String>>,
}

impl RunData {
    /// Whether every result reads back (properties, histograms) and tallies the `seeds`
    /// of its block: none for an empty block, each design's count of seeds otherwise.
    pub fn check(&self, seeds: u64, props: shard::Props<'_>) -> Result<(), String> {
        match (&self.results, seeds) {
            (None, 0) | (Some(_), 1..) => {}
            (None, _) => return Err(format!("no result for a block of {seeds} seeds")),
            (Some(_), 0) => return Err("results for an empty block".into()),
        }
        for r in self.results.iter().flatten() {
            if r.metrics.seeds != seeds {
                return Err(format!(
                    "design {}: {} seeds tallied for a block of {seeds}",
                    r.design, r.metrics.seeds
                ));
            }
            r.result(props)?;
        }
        Ok(())
    }
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Table => "table",
        Format::Json => "json",
    }
}

pub(super) fn parse_format(s: &str) -> Result<Format, String> {
    match s {
        "table" => Ok(Format::Table),
        "json" => Ok(Format::Json),
        _ => Err(format!("unknown format {s}")),
    }
}

pub(super) fn run(a: RunArgs, ctx: &Ctx) -> Result<(), CliError> {
    ctx.defer_warnings_if(a.shard.shard.is_some());
    let fail_on = super::parse_properties("--fail-on", &a.fail_on, &ctx.designs)?;
    let model = ctx.load_as(&a.model, a.provider.as_deref())?;
    let names = design_names(&a, ctx, &model);
    let designs = names
        .iter()
        .map(|n| ctx.find_design(n))
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
    let (first, last) = match a.seed {
        Some(s) => (s, s),
        None => seed_range(a.first_seed, a.seeds)?,
    };
    let options = run_options(&a, &fail_on, (first, last));
    let (block, once) = shard::block_of(a.shard.shard, (first, last));
    ctx.check_externals(&model, &designs)?;
    // Before the sweep: a design that does not repeat itself gets no table.
    let determinism = (a.check_determinism && once)
        .then(|| crate::explore::determinism::check_model(&model, &designs, (first, last)));
    if let Some(Err(e)) = &determinism {
        return Err(CliError::Input(e.clone()));
    }
    let results = sweep(ctx, &model, &designs, &fail_on, block, a.show_failures);
    let data = RunData {
        model: model.name.clone(),
        faults: warnings::described_faults(&model),
        results,
        determinism,
    };
    match (a.shard.shard, &a.shard.out) {
        (Some(s), Some(out)) => {
            let models = vec![ModelFile::read(&a.model)?];
            shard::write_partial::<RunCommand>(ctx, out, s.info(block), &options, models, &data)
        }
        _ => render(ctx, &options, None, vec![data]),
    }
}

/// The designs to run: those `--design` names, or else the model's and the external
/// executors of the command line.
fn design_names(a: &RunArgs, ctx: &Ctx, model: &Model) -> Vec<String> {
    if a.designs.is_empty() {
        // The model's designs, and the external executors of the command line.
        let mut names = model.designs.clone();
        for d in ctx.command_line_executors() {
            let name = d.name();
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        return names;
    }
    // An executor of the command line that `--design` leaves out is not run: say so.
    for d in ctx.command_line_executors() {
        if !a.designs.iter().any(|n| n == d.name()) {
            ctx.eprintln(&format!(
                "warning: --executor {0}: not run, since --design names the designs to run \
                 (add --design {0})",
                d.name()
            ));
        }
    }
    a.designs.clone()
}

/// The options that determine the output, as a partial records them.
fn run_options(a: &RunArgs, fail_on: &[Property], (first, last): (u64, u64)) -> RunOptions {
    RunOptions {
        model: a.model.display().to_string(),
        provider: a.provider.clone(),
        design: a.designs.clone(),
        seeds: last - first + 1,
        first_seed: first,
        format: format_name(a.format).to_string(),
        fail_on: fail_on.iter().map(Property::to_string).collect(),
        show_failures: a.show_failures,
        wide: a.wide,
        check_determinism: a.check_determinism,
    }
}

/// Every design on the `block` of seeds (first, count), with progress; `None` for an
/// empty block.
fn sweep(
    ctx: &Ctx,
    model: &Model,
    designs: &[&'static dyn Design],
    fail_on: &[Property],
    block: (u64, u64),
    keep_failures: usize,
) -> Option<Vec<ResultData>> {
    let progress = ctx.progress(block.1.saturating_mul(designs.len() as u64), "seeds");
    let results = (block.1 > 0).then(|| {
        let report = compare(
            &Comparison {
                model,
                designs,
                seeds: (block.0, block.0 + (block.1 - 1)),
                extra_properties: fail_on,
                keep_failures,
            },
            ReplayCommand::default(),
            &|design, n| {
                progress.set_message(design);
                progress.advance(n);
            },
        );
        report.results.iter().map(ResultData::of).collect()
    });
    progress.finish();
    results
}

/// Renders the sweep of every block of seeds (in seed order, the first one carrying the
/// work done once) as `run` prints it: the table or JSON on stdout, warnings on stderr,
/// the exit code of --check-determinism and --fail-on. `format` overrides the options'.
pub(super) fn render(
    ctx: &Ctx,
    o: &RunOptions,
    format: Option<Format>,
    blocks: Vec<RunData>,
) -> Result<(), CliError> {
    let format = match format {
        Some(f) => f,
        None => parse_format(&o.format).map_err(CliError::Input)?,
    };
    let props: Vec<Property> = o
        .fail_on
        .iter()
        .map(|p| shard::property(p, &ctx.designs.properties()))
        .collect::<Result<_, _>>()
        .map_err(CliError::Input)?;
    let results = merged_results(ctx, o, &blocks)?;
    let first = &blocks[0];
    let report = Report {
        model: first.model.clone(),
        first_seed: o.first_seed,
        seed_count: o.seeds,
        results,
        replay: ReplayCommand {
            program: ctx.program.clone(),
            flags: ctx.flags.clone(),
            flagged: ctx.flagged(),
            model_path: o.model.clone(),
            provider: o.provider.clone(),
            // `run` prints seeds (`trace --seed`), never a choice vector.
            model_digest: None,
        },
    };
    let mut text = match format {
        Format::Table if o.wide => table::render_wide(&report),
        Format::Table => table::render(&report),
        Format::Json => json::render(&report),
    };
    if matches!(format, Format::Table) && o.show_failures > 0 {
        text.push_str(&table::render_failures(&report));
    }
    ctx.print(&text)?;
    for r in &report.results {
        warnings::print(
            ctx,
            &crate::design::assumptions::warnings(&first.model, &r.design, &r.assumptions),
        );
        warnings::print(
            ctx,
            &warnings::faults(&first.model, &first.faults, &r.design, &r.unfired, o.seeds),
        );
    }
    if o.check_determinism {
        let result = first.determinism.as_ref().ok_or_else(|| {
            CliError::Input(
                "a damaged partial result: shard 1 without its determinism check".into(),
            )
        })?;
        print_determinism(ctx, result)?;
    }
    fail_on(&report, &props)
}

/// The results of every block, added up per design (blocks without seeds add nothing); a
/// block that does not read back, or has other designs, is a damaged partial result.
fn merged_results(
    ctx: &Ctx,
    o: &RunOptions,
    blocks: &[RunData],
) -> Result<Vec<DesignResult>, CliError> {
    let mut results: Option<Vec<DesignResult>> = None;
    for block in blocks {
        let Some(part) = &block.results else { continue };
        let part: Vec<DesignResult> = part
            .iter()
            .map(|r| r.result(&ctx.designs.properties()))
            .collect::<Result<_, _>>()
            .map_err(|e| CliError::Input(format!("a damaged partial result: {e}")))?;
        match &mut results {
            None => results = Some(part),
            Some(rs) => {
                if rs.len() != part.len() {
                    return Err(CliError::Input(
                        "a damaged partial result: not the same designs".into(),
                    ));
                }
                for (r, later) in rs.iter_mut().zip(&part) {
                    shard::append(r, later, o.show_failures)
                        .map_err(|e| CliError::Input(format!("a damaged partial result: {e}")))?;
                }
            }
        }
    }
    Ok(results.unwrap_or_default())
}

/// Exit 1 when a seed violated a property named by `--fail-on`, or spent the events budget.
fn fail_on(report: &Report, props: &[Property]) -> Result<(), CliError> {
    let mut lines = Vec::new();
    for r in &report.results {
        let cut = r.metrics.budget_runs;
        if cut > 0 && !props.is_empty() {
            lines.push(format!(
                "--fail-on: {}: {cut} of {} seeds spent the events budget; an unfinished run is not judged",
                r.design, report.seed_count
            ));
        }
        for &p in props {
            let n = r.violations.of(p);
            if n > 0 {
                lines.push(format!(
                    "--fail-on: {}: {p} violated on {n} of {} seeds",
                    r.design, report.seed_count
                ));
            }
        }
    }
    if lines.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed(lines.join("\n")))
    }
}
/// `run --shard`: a block of seeds; `merge --format` renders the merged blocks in another
/// format.
pub(super) struct RunCommand;

impl shard::Sharded for RunCommand {
    const COMMAND: &'static str = "run";
    type Options = RunOptions;
    type Data = RunData;

    fn check(
        data: &RunData,
        info: &shard::ShardInfo,
        props: shard::Props<'_>,
    ) -> Result<(), String> {
        data.check(info.seeds, props)
    }

    fn render(
        ctx: &Ctx,
        options: &RunOptions,
        shards: Vec<(shard::ShardInfo, RunData)>,
        merge: &super::MergeArgs,
    ) -> Result<(), CliError> {
        render(
            ctx,
            options,
            merge.format,
            shards.into_iter().map(|(_, d)| d).collect(),
        )
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum Format {
    Table,
    Json,
}

#[derive(clap::Args, Debug)]
pub(super) struct RunArgs {
    /// Model file (JSON).
    pub(super) model: PathBuf,
    /// Run the scenario against this built-in provider preset instead of the model's own
    /// provider section (the preset as it is).
    #[arg(long, value_name = "PRESET")]
    pub(super) provider: Option<String>,
    /// Design to run; repeat for several. Default: the model's designs (`"all"`: every
    /// registered design).
    #[arg(long = "design", value_name = "NAME")]
    pub(super) designs: Vec<String>,
    /// Number of seeds, run as seeds FIRST..FIRST+N.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1000,
        conflicts_with = "seed"
    )]
    pub(super) seeds: u64,
    /// First seed of the range.
    #[arg(
        long,
        value_name = "FIRST",
        default_value_t = 0,
        conflicts_with = "seed"
    )]
    pub(super) first_seed: u64,
    /// Run exactly this one seed.
    #[arg(long, value_name = "S", conflicts_with = "shard")]
    pub(super) seed: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub(super) format: Format,
    /// Exit 1 when any seed violates one of these properties (comma-separated).
    #[arg(long, value_name = "PROP,...", value_delimiter = ',')]
    pub(super) fail_on: Vec<String>,
    /// Print the first N violating seeds per design and property, with the command that
    /// replays each.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(super) show_failures: usize,
    /// Keep every column of the table (it no longer fits 100 columns).
    #[arg(long)]
    pub(super) wide: bool,
    /// Also rerun a sample of the seeds (16 per design) silent, traced twice and replayed,
    /// and exit 1 unless outcome and timeline hashes agree. With --shard, shard 1 does it
    /// (on the sample of the whole range).
    #[arg(long)]
    pub(super) check_determinism: bool,
    #[command(flatten)]
    pub(super) shard: ShardArgs,
}

pub(super) fn run_after_help() -> String {
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

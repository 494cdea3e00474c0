//! `retrylab report`: the comparison report of one or more models, written to a directory as
//! JSON, Markdown and one self-contained HTML page.

use std::path::{Path, PathBuf};

use super::shard::{self, ModelFile};
use super::{CliError, Ctx, seed_range};
use crate::explore::ReplayCommand;
use crate::model::Catalog;
use crate::model::Model;
use crate::report::build::{
    Block, ReportData, ReportOptions, Scenario, assemble, matrix_columns, run_block, work, write,
};
use crate::report::research::PROGRAM;

/// The model files `paths` stand for: a file as it is, a directory as its `*.json` files in
/// byte order of their names.
pub(super) fn model_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path)
                .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
                .filter(|p| !crate::model::reference::is_schema_file(p))
                .collect();
            if files.is_empty() {
                return Err(CliError::Input(format!(
                    "{}: a directory without model files (*.json)",
                    path.display()
                )));
            }
            files.sort_by(|a, b| {
                a.as_os_str()
                    .as_encoded_bytes()
                    .cmp(b.as_os_str().as_encoded_bytes())
            });
            out.extend(files);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// Loads every model of `paths` (all of them, so that every bad file is reported at once),
/// with its file's hash.
pub(super) fn load_all(
    ctx: &Ctx,
    paths: &[PathBuf],
) -> Result<Vec<(PathBuf, Model, String)>, CliError> {
    let mut models = Vec::new();
    let mut refused = Vec::new();
    for path in model_files(paths)? {
        match ctx.load(&path) {
            Ok(model) => {
                let bytes = std::fs::read(&path)
                    .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
                models.push((path, model, crate::sim::hash::Fnv1a::hex(&bytes)));
            }
            Err(CliError::Model(lines)) => refused.push(lines),
            Err(e) => return Err(e),
        }
    }
    if !refused.is_empty() {
        return Err(CliError::Model(refused.join("\n")));
    }
    Ok(models)
}

/// The replay commands' program and flags in a report: `retrylab`, whatever the program was
/// invoked as, so that the report's bytes do not depend on it, and the `--executor` flags (a
/// replay of an external executor needs its command).
fn replay_template(ctx: &Ctx) -> ReplayCommand {
    ReplayCommand {
        program: PROGRAM.to_string(),
        flags: ctx.flags.clone(),
        flagged: ctx.flagged(),
        ..ReplayCommand::default()
    }
}

pub(super) fn report(a: ReportArgs, ctx: &Ctx) -> Result<(), CliError> {
    ctx.defer_warnings_if(a.shard.is_some());
    let (first, last) = seed_range(a.first_seed, a.seeds)?;
    let baseline = check_args(&a, ctx)?;
    // Read every model before running anything: a bad file is bad input, whatever its place.
    let (mut files, scenarios) = load_scenarios(&a, ctx)?;
    if a.max_faults > crate::model::MAX_EXPLORE_FAULTS {
        return Err(CliError::Input(format!(
            "--max-faults {}: more than the limit of {} for an exhaustive search",
            a.max_faults,
            crate::model::MAX_EXPLORE_FAULTS
        )));
    }
    let matrix_files = load_all(ctx, &a.matrix)?;
    files.extend(
        matrix_files
            .iter()
            .map(|(path, _, hash)| model_file(path, hash)),
    );
    let matrix = matrix_columns(
        matrix_files
            .into_iter()
            .map(|(path, model, _)| (path.display().to_string(), model))
            .collect(),
        ctx.designs.all(),
    );
    // Every external executor checked before any of its runs, on each model it runs on.
    for s in &scenarios {
        ctx.check_externals(&s.model, &s.designs)?;
    }
    for (_, model) in &matrix {
        ctx.check_externals(model, ctx.designs.all())?;
    }
    let options = report_options(&a, baseline, (first, last));
    let (block, once) = shard::block_of(a.shard, (first, last));
    let replay = replay_template(ctx);
    let b = Block {
        scenarios: &scenarios,
        matrix: &matrix,
        matrix_designs: ctx.designs.all(),
        baseline,
        max_faults: a.max_faults,
        first_seed: first,
        seeds: block,
        once,
        replay: &replay,
    };
    let progress = ctx.progress(work(&b), "seeds");
    let data = run_block(&b, &progress);
    progress.finish();
    match a.shard {
        Some(s) => shard::write_partial::<ReportCommand>(
            ctx,
            &a.out,
            s.info(block),
            &options,
            files,
            &data,
        ),
        None => render(ctx, &options, &a.out, vec![data]),
    }
}

/// The baseline design the arguments name, once the arguments that need no model are
/// found good: a known baseline, a non-empty `--commit`, an output directory that can be one.
fn check_args(a: &ReportArgs, ctx: &Ctx) -> Result<&'static dyn crate::design::Design, CliError> {
    let baseline = ctx.designs.find(&a.baseline).ok_or_else(|| {
        CliError::Input(format!(
            "--baseline {}: unknown design; known designs: {}",
            a.baseline,
            ctx.designs.names().join(", ")
        ))
    })?;
    if a.commit.as_deref().is_some_and(|c| c.trim().is_empty()) {
        return Err(CliError::Input(
            "--commit: empty; give the revision, or leave the option out".into(),
        ));
    }
    // The output directory first: a path that cannot be one is bad input, found before any
    // work is done. A shard writes a file there.
    if a.shard.is_none() {
        check_out_dir(&a.out)?;
    }
    Ok(baseline)
}

/// A model file as a partial records it: its path as shown, and its hash.
fn model_file(path: &Path, hash: &str) -> ModelFile {
    ModelFile {
        path: path.display().to_string(),
        hash: hash.to_string(),
    }
}

/// The scenarios of the models (one each) and of the `--each-provider` models (one per
/// provider preset), with the files they were read from.
fn load_scenarios(a: &ReportArgs, ctx: &Ctx) -> Result<(Vec<ModelFile>, Vec<Scenario>), CliError> {
    let mut files = Vec::new();
    let mut scenarios: Vec<Scenario> = Vec::new();
    for (path, model, hash) in load_all(ctx, &a.models)? {
        files.push(model_file(&path, &hash));
        let designs = designs_of(ctx, &model)?;
        scenarios.push(Scenario {
            path: path.display().to_string(),
            hash,
            model,
            provider: None,
            designs,
        });
    }
    for (path, model, hash) in load_all(ctx, &a.each_provider)? {
        files.push(model_file(&path, &hash));
        let shown = path.display().to_string();
        let designs = designs_of(ctx, &model)?;
        scenarios.extend(
            Scenario::each_provider(&shown, &hash, &model, &designs)
                .map_err(|e| CliError::Input(format!("--each-provider {shown}: {e}")))?,
        );
    }
    Ok((files, scenarios))
}

/// The options that determine the report's output, as a partial records them.
fn report_options(
    a: &ReportArgs,
    baseline: &dyn crate::design::Design,
    (first, last): (u64, u64),
) -> ReportOptions {
    ReportOptions {
        models: a.models.iter().map(|p| p.display().to_string()).collect(),
        each_provider: a
            .each_provider
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        matrix: a.matrix.iter().map(|p| p.display().to_string()).collect(),
        max_faults: a.max_faults,
        seeds: last - first + 1,
        first_seed: first,
        baseline: baseline.name().to_string(),
        commit: a.commit.clone(),
        record_threads: a.record_threads,
    }
}

/// The designs compared on `model`: its own, then the command line's external executors.
fn designs_of(
    ctx: &Ctx,
    model: &Model,
) -> Result<Vec<&'static dyn crate::design::Design>, CliError> {
    let mut designs = model
        .designs
        .iter()
        .map(|n| ctx.find_design(n))
        .collect::<Result<Vec<_>, _>>()?;
    for d in ctx.command_line_executors() {
        if !designs.iter().any(|x| x.name() == d.name()) {
            designs.push(d);
        }
    }
    Ok(designs)
}

/// Refused when `out` exists and is not a directory.
fn check_out_dir(out: &Path) -> Result<(), CliError> {
    if out.exists() && !out.is_dir() {
        return Err(CliError::Input(format!(
            "--out {}: not a directory",
            out.display()
        )));
    }
    Ok(())
}

/// Writes the report of every block of seeds (in seed order, the first one carrying the
/// work done once) into `out`, as `report` writes it.
pub(super) fn render(
    ctx: &Ctx,
    o: &ReportOptions,
    out: &Path,
    blocks: Vec<ReportData>,
) -> Result<(), CliError> {
    check_out_dir(out)?;
    let research = assemble(o, blocks, &ctx.designs.properties(), &replay_template(ctx))
        .map_err(|e| CliError::Input(format!("a damaged partial result: {e}")))?;
    let [json, md, html] = write(out, &research).map_err(CliError::Other)?;
    ctx.print(&format!(
        "wrote {}, {} and {}\n",
        json.display(),
        md.display(),
        html.display()
    ))
}

/// `report --shard`: a block of seeds (shard 1 also builds the guarantee matrix); `merge
/// --out DIR` writes the merged report.
pub(super) struct ReportCommand;

impl shard::Sharded for ReportCommand {
    const COMMAND: &'static str = "report";
    type Options = ReportOptions;
    type Data = ReportData;

    fn ready(merge: &super::MergeArgs) -> Result<(), CliError> {
        match merge.out {
            Some(_) => Ok(()),
            None => Err(CliError::Input(
                "--out DIR: required to merge partials of report (where to write it)".into(),
            )),
        }
    }

    fn check(
        data: &ReportData,
        _: &shard::ShardInfo,
        props: shard::Props<'_>,
    ) -> Result<(), String> {
        data.check(props)
    }

    fn render(
        ctx: &Ctx,
        options: &ReportOptions,
        shards: Vec<(shard::ShardInfo, ReportData)>,
        merge: &super::MergeArgs,
    ) -> Result<(), CliError> {
        let out = merge.out.as_deref().ok_or_else(|| {
            CliError::Input(
                "--out DIR: required to merge partials of report (where to write it)".into(),
            )
        })?;
        render(
            ctx,
            options,
            out,
            shards.into_iter().map(|(_, d)| d).collect(),
        )
    }
}

#[derive(clap::Args, Debug)]
pub(super) struct ReportArgs {
    /// Model files (JSON), or directories: a directory stands for its `*.json` files in
    /// byte order of their names.
    #[arg(required_unless_present_any = ["each_provider", "matrix"], value_name = "MODEL")]
    pub(super) models: Vec<PathBuf>,
    /// Directory to write report.json, report.md and report.html into (created if needed);
    /// with --shard, the partial result file to write.
    #[arg(long, value_name = "DIR")]
    pub(super) out: PathBuf,
    /// Seeds per design, run as seeds FIRST..FIRST+N.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub(super) seeds: u64,
    /// First seed of the range.
    #[arg(long, value_name = "FIRST", default_value_t = 0)]
    pub(super) first_seed: u64,
    /// The design every other is compared with, seed by seed.
    #[arg(long, value_name = "NAME", default_value = "no_dedup")]
    pub(super) baseline: String,
    /// Models of the guarantee matrix (files or directories, as MODEL): every design is
    /// searched exhaustively on each, within --max-faults. Columns: the model that breaks
    /// no assumption first, then in the order the designs declare what each breaks.
    #[arg(long, value_name = "MODEL")]
    pub(super) matrix: Vec<PathBuf>,
    /// The fault budget of the guarantee matrix's exhaustive search.
    #[arg(long, value_name = "K", default_value_t = 2)]
    pub(super) max_faults: u32,
    /// Also report this model (files or directories, as MODEL) once against every built-in
    /// provider preset, as `--provider` runs it: the provider comparison.
    #[arg(long, value_name = "MODEL")]
    pub(super) each_provider: Vec<PathBuf>,
    /// Record this commit of the tool in the provenance (for example
    /// `--commit "$(git rev-parse HEAD)"`); left out by default, so that the report's bytes
    /// depend only on the tool's behaviour and the inputs.
    #[arg(long, value_name = "REV")]
    pub(super) commit: Option<String>,
    /// Record the number of worker threads in the provenance (no figure depends on it;
    /// left out by default for the same reason as --commit).
    #[arg(long)]
    pub(super) record_threads: bool,
    /// Run only the I-th of N contiguous blocks of the seeds (I from 1) and write a partial
    /// result to --out, which is then a file, not a directory; `retrylab merge PART... --out DIR` of the N
    /// partials writes the report the unsharded command writes. Shard 1 alone does the
    /// work that is not per seed (the guarantee matrix). A shard that wrote its partial
    /// exits 0.
    #[arg(long, value_name = "I/N", value_parser = shard::parse_shard)]
    pub(super) shard: Option<shard::Shard>,
}

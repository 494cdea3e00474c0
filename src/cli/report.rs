//! `retrylab report`: the comparison report of one or more models, written to a directory as
//! JSON, Markdown and one self-contained HTML page.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::shard::{self, ModelFile, ResultData};
use super::{CliError, Ctx, ReportArgs, seed_range};
use crate::explore::check::counterexample;
use crate::explore::paired::{Paired, paired};
use crate::explore::{Comparison, compare};
use crate::model::Model;
use crate::report::html::{matrix_html, render_html};
use crate::report::matrix::{broken_assumptions, guarantee_matrix};
use crate::report::research::{
    MatrixView, ModelPart, PROGRAM, Provenance, Research, Shown, file_hash, render_json,
    render_markdown,
};
use crate::report::sequence::Diagram;
use crate::report::{ReplayCommand, Report};
use crate::run::run_traced;
use crate::sim::RandomChooser;

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
                models.push((path, model, file_hash(&bytes)));
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

/// The commands a report prints: `retrylab` and the model path as given, whatever the
/// program was invoked as, so that the report's bytes do not depend on it.
fn commands(
    ctx: &Ctx,
    path: &Path,
    provider: Option<&str>,
    model: Option<&Model>,
) -> ReplayCommand {
    ReplayCommand {
        program: PROGRAM.to_string(),
        // The `--executor` flags: a replay of an external executor needs its command.
        flags: ctx.flags.clone(),
        flagged: ctx.flagged(),
        model_path: path.display().to_string(),
        provider: provider.map(str::to_string),
        model_digest: model.map(Model::digest),
    }
}

/// One model of the report: its file, the model as run, the file's hash, and the provider
/// preset it is run against instead of its own, if any.
struct Entry {
    path: PathBuf,
    model: Model,
    hash: String,
    provider: Option<&'static str>,
}

/// The models of the guarantee matrix in column order: those that break no assumption
/// first, then by the first assumption each breaks, in the order the designs declare them
/// (the order of the input for equals).
fn matrix_columns(
    models: Vec<(PathBuf, Model, String)>,
    designs: &[&'static dyn crate::design::Design],
) -> Vec<(String, Model)> {
    let mut order: Vec<&'static str> = Vec::new();
    for d in designs {
        for a in d.assumptions() {
            if !order.contains(&a.name) {
                order.push(a.name);
            }
        }
    }
    let mut keyed: Vec<(usize, (String, Model))> = models
        .into_iter()
        .map(|(path, model, _)| {
            let broken = broken_assumptions(&model, designs);
            let key = broken.first().map_or(0, |b| {
                1 + order.iter().position(|o| o == b).unwrap_or(order.len())
            });
            (key, (path.display().to_string(), model))
        })
        .collect();
    keyed.sort_by_key(|(k, _)| *k);
    keyed.into_iter().map(|(_, m)| m).collect()
}

/// The options of `report` that determine its output (a partial records them).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ReportOptions {
    pub models: Vec<String>,
    pub each_provider: Vec<String>,
    pub matrix: Vec<String>,
    pub max_faults: u32,
    pub seeds: u64,
    pub first_seed: u64,
    pub baseline: String,
    pub commit: Option<String>,
    pub record_threads: bool,
}

/// What the seeds of a block show, per model, with the work done once (shard 1).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ReportData {
    pub parts: Vec<PartData>,
    /// The guarantee matrix (shard 1 only, when models for it were given).
    pub matrix: Option<MatrixData>,
}

/// [`MatrixView`], as data.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct MatrixData {
    pub json: serde_json::Value,
    pub markdown: String,
    pub html: String,
}

/// One model of the report on the seeds of a block.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct PartData {
    pub file: String,
    pub file_hash: String,
    pub description: String,
    pub provider: Option<String>,
    /// The model's name.
    pub model: String,
    /// Per design, its result on the block; `None` for no seed (an empty shard).
    pub results: Option<Vec<ResultData>>,
    /// Per design, the paired sums against the baseline.
    pub paired: Vec<Paired>,
    /// Per design and property tallied, the counterexample of the block's first violating
    /// seed (when its shrinking found one).
    pub shown: Vec<Vec<Option<ShownData>>>,
    /// Per design, whether its runs make no random choice (shard 1 only).
    pub deterministic: Option<Vec<bool>>,
}

/// [`Shown`], as data.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ShownData {
    pub property: String,
    pub expected: Option<String>,
    pub seed: u64,
    pub choices: String,
    pub choices_len: usize,
    pub original_len: usize,
    pub replay: String,
    pub trace: String,
    /// The shrunk run's sequence diagram (SVG).
    #[serde(default)]
    pub diagram: String,
}

impl ShownData {
    fn of(s: &Shown) -> Self {
        ShownData {
            property: s.property.to_string(),
            expected: s.expected.map(|w| w.name().to_string()),
            seed: s.seed,
            choices: s.choices.clone(),
            choices_len: s.choices_len,
            original_len: s.original_len,
            replay: s.replay.clone(),
            trace: s.trace.clone(),
            diagram: s.diagram.clone(),
        }
    }

    fn shown(&self, props: shard::Props<'_>) -> Result<Shown, String> {
        Ok(Shown {
            property: shard::property(&self.property, props)?,
            expected: self.expected.as_deref().map(shard::want).transpose()?,
            seed: self.seed,
            choices: self.choices.clone(),
            choices_len: self.choices_len,
            original_len: self.original_len,
            replay: self.replay.clone(),
            trace: self.trace.clone(),
            diagram: self.diagram.clone(),
        })
    }
}

impl ReportData {
    /// Whether every result and counterexample reads back.
    pub fn check(&self, props: shard::Props<'_>) -> Result<(), String> {
        for p in &self.parts {
            for r in p.results.iter().flatten() {
                r.result(props)?;
            }
            for s in p.shown.iter().flatten().flatten() {
                s.shown(props)?;
            }
        }
        Ok(())
    }
}

pub(super) fn report(a: ReportArgs, ctx: &Ctx) -> Result<(), CliError> {
    let (first, last) = seed_range(a.first_seed, a.seeds)?;
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
    // Read every model before running anything: a bad file is bad input, whatever its place.
    let mut files = Vec::new();
    let mut models: Vec<Entry> = Vec::new();
    for (path, model, hash) in load_all(ctx, &a.models)? {
        files.push(ModelFile {
            path: path.display().to_string(),
            hash: hash.clone(),
        });
        models.push(Entry {
            path,
            model,
            hash,
            provider: None,
        });
    }
    for (path, model, hash) in load_all(ctx, &a.each_provider)? {
        files.push(ModelFile {
            path: path.display().to_string(),
            hash: hash.clone(),
        });
        for preset in crate::model::provider::preset_names() {
            // Every preset passes the provider's checks and none is tied to the rest of a
            // model, so this refuses nothing today; it would name the preset if it did.
            let as_preset = model.with_provider(preset).map_err(|e| {
                CliError::Input(format!(
                    "--each-provider {}: against {preset}: {}",
                    path.display(),
                    e.replace('\n', "; ")
                ))
            })?;
            models.push(Entry {
                path: path.clone(),
                model: as_preset,
                hash: hash.clone(),
                provider: Some(preset),
            });
        }
    }
    if a.max_faults > crate::model::MAX_EXPLORE_FAULTS {
        return Err(CliError::Input(format!(
            "--max-faults {}: more than the limit of {} for an exhaustive search",
            a.max_faults,
            crate::model::MAX_EXPLORE_FAULTS
        )));
    }
    let matrix_files = load_all(ctx, &a.matrix)?;
    files.extend(matrix_files.iter().map(|(path, _, hash)| ModelFile {
        path: path.display().to_string(),
        hash: hash.clone(),
    }));
    let matrix_models = matrix_columns(matrix_files, ctx.designs.all());
    let mut designs_of = Vec::new();
    for Entry { model, .. } in &models {
        let mut designs = model
            .designs
            .iter()
            .map(|n| ctx.find_design(n))
            .collect::<Result<Vec<_>, _>>()?;
        // The external executors of the command line join every model's comparison.
        for d in ctx.command_line_executors() {
            if !designs.iter().any(|x| x.name() == d.name()) {
                designs.push(d);
            }
        }
        designs_of.push(designs);
    }
    let options = ReportOptions {
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
    };
    let (block, once) = match a.shard {
        Some(s) => (s.block(first, last - first + 1), s.is_first()),
        None => ((first, last - first + 1), true),
    };
    let total: u64 = designs_of
        .iter()
        .map(|d| 2 * d.len() as u64 * block.1)
        .sum();
    let progress = ctx.progress(total, "seeds");
    // The matrix first: a few seconds at most, and its searches use every core.
    let matrix = (once && !matrix_models.is_empty()).then(|| {
        progress.set_message("guarantee matrix");
        let m = guarantee_matrix(&matrix_models, ctx.designs.all(), a.max_faults);
        MatrixData {
            json: m.to_json(),
            markdown: m.to_markdown(),
            html: matrix_html(&m),
        }
    });
    let mut parts = Vec::new();
    for (entry, designs) in models.iter().zip(&designs_of) {
        let Entry {
            path,
            model,
            hash,
            provider,
        } = entry;
        let replay = commands(ctx, path, *provider, Some(model));
        let (results, paired, shown) = if block.1 == 0 {
            (None, vec![Paired::default(); designs.len()], Vec::new())
        } else {
            let seeds = (block.0, block.0 + (block.1 - 1));
            let report = compare(
                &Comparison {
                    model,
                    designs,
                    seeds,
                    extra_properties: &[],
                    keep_failures: 1,
                },
                replay.clone(),
                &|design, n| {
                    progress.set_message(design);
                    progress.advance(n);
                },
            );
            let paired = designs
                .iter()
                .map(|d| {
                    let p = paired(model, *d, baseline, seeds.0..=seeds.1);
                    progress.advance(block.1);
                    p
                })
                .collect();
            let shown = report
                .results
                .iter()
                .zip(designs)
                .map(|(r, d)| {
                    r.violations
                        .counts
                        .iter()
                        .zip(&r.failures)
                        .map(|(&(property, _), seeds)| {
                            let seed = *seeds.first()?;
                            let c = counterexample(model, *d, property, seed)?;
                            let choices = c.shrunk.vector.to_string();
                            let named = super::named_properties(model, &r.design);
                            let title = format!(
                                "{} violates {property} on {}: the shrunk run of seed {seed}",
                                r.design, model.name
                            );
                            let diagram = Diagram::of(
                                &title,
                                &c.traced,
                                &super::violated_names(&c.traced, &named),
                            )
                            .svg()
                            .unwrap_or_default();
                            Some(ShownData::of(&Shown {
                                diagram,
                                property,
                                expected: r.expect.iter().find(|e| e.0 == property).map(|e| e.1),
                                seed,
                                choices_len: c.shrunk.vector.0.len(),
                                original_len: c.shrunk.original.0.len(),
                                replay: replay.choices(&r.design, &choices),
                                trace: replay.seed(&r.design, seed),
                                choices,
                            }))
                        })
                        .collect()
                })
                .collect();
            (
                Some(report.results.iter().map(ResultData::of).collect()),
                paired,
                shown,
            )
        };
        // A design whose run makes no random choice runs the same way on every seed.
        let deterministic = once.then(|| {
            designs
                .iter()
                .map(|d| {
                    run_traced(model, *d, &mut RandomChooser::for_model(model, first))
                        .choices
                        .is_empty()
                })
                .collect()
        });
        parts.push(PartData {
            file: path.display().to_string(),
            file_hash: hash.clone(),
            description: model.description.clone(),
            provider: provider.map(str::to_string),
            model: model.name.clone(),
            results,
            paired,
            shown,
            deterministic,
        });
    }
    progress.finish();
    let data = ReportData { parts, matrix };
    match a.shard {
        Some(s) => {
            shard::write_partial(ctx, &a.out, "report", s.info(block), &options, files, &data)
        }
        None => render(ctx, &options, &a.out, vec![data]),
    }
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

/// Adds the data of `later` (the seeds after those of `d`) to `d`.
fn append(d: &mut ReportData, later: ReportData, props: shard::Props<'_>) -> Result<(), String> {
    if d.parts.len() != later.parts.len() {
        return Err("not the same models".into());
    }
    for (p, l) in d.parts.iter_mut().zip(later.parts) {
        if p.file != l.file || p.provider != l.provider || p.paired.len() != l.paired.len() {
            return Err(format!("not the same models ({} and {})", p.file, l.file));
        }
        let paired = std::mem::take(&mut p.paired);
        p.paired = paired
            .into_iter()
            .zip(l.paired)
            .map(|(a, b)| a.merge(b))
            .collect();
        let Some(theirs) = l.results else { continue };
        let Some(mine) = &mut p.results else {
            p.results = Some(theirs);
            p.shown = l.shown;
            continue;
        };
        if mine.len() != theirs.len() || p.shown.len() != l.shown.len() {
            return Err(format!("not the same designs of {}", p.file));
        }
        for (((r, t), shown), later_shown) in
            mine.iter_mut().zip(theirs).zip(&mut p.shown).zip(l.shown)
        {
            let (mut a, b) = (r.result(props)?, t.result(props)?);
            // The counterexample of each property is that of its first violating seed: of
            // the first block with one.
            for (i, s) in later_shown.into_iter().enumerate() {
                if a.failures.get(i).is_some_and(Vec::is_empty) && i < shown.len() {
                    shown[i] = s;
                }
            }
            shard::append(&mut a, &b, 1)?;
            *r = ResultData::of(&a);
        }
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
    let damaged = |e: String| CliError::Input(format!("a damaged partial result: {e}"));
    let mut blocks = blocks.into_iter();
    let mut all = blocks
        .next()
        .ok_or_else(|| CliError::Input("no partial result".into()))?;
    for later in blocks {
        append(&mut all, later, &ctx.designs.properties()).map_err(damaged)?;
    }
    let mut parts = Vec::new();
    for p in all.parts {
        let results = p
            .results
            .unwrap_or_default()
            .iter()
            .map(|r| r.result(&ctx.designs.properties()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(damaged)?;
        let counterexamples = p
            .shown
            .iter()
            .map(|per| {
                per.iter()
                    .flatten()
                    .map(|s| s.shown(&ctx.designs.properties()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(damaged)?;
        let deterministic = p
            .deterministic
            .ok_or_else(|| damaged("shard 1 without the work done once".into()))?;
        parts.push(ModelPart {
            report: Report {
                model: p.model,
                first_seed: o.first_seed,
                seed_count: o.seeds,
                results,
                replay: commands(ctx, Path::new(&p.file), p.provider.as_deref(), None),
            },
            file: p.file,
            file_hash: p.file_hash,
            description: p.description,
            provider: p.provider,
            baseline: o.baseline.clone(),
            paired: p.paired,
            counterexamples,
            deterministic,
        });
    }
    if !o.matrix.is_empty() && all.matrix.is_none() {
        return Err(damaged("shard 1 without the guarantee matrix".into()));
    }
    let matrix = all.matrix.map(|m| MatrixView {
        json: m.json,
        markdown: m.markdown,
        html: m.html,
    });
    let research = Research {
        provenance: Provenance {
            commit: o.commit.clone(),
            threads: o.record_threads.then(rayon::current_num_threads),
            first_seed: o.first_seed,
            seeds: o.seeds,
            baseline: o.baseline.clone(),
            models: o.models.clone(),
            each_provider: o.each_provider.clone(),
            matrix: o.matrix.clone(),
            max_faults: o.max_faults,
        },
        parts,
        matrix,
    };
    std::fs::create_dir_all(out)
        .map_err(|e| CliError::Other(format!("cannot create {}: {e}", out.display())))?;
    let files = [
        ("report.json", render_json(&research)),
        ("report.md", render_markdown(&research)),
        ("report.html", render_html(&research)),
    ];
    for (name, text) in &files {
        write(&out.join(name), text)?;
    }
    ctx.print(&format!(
        "wrote {}, {} and {}\n",
        out.join("report.json").display(),
        out.join("report.md").display(),
        out.join("report.html").display()
    ))
}

fn write(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::Other(format!("cannot write {}: {e}", path.display())))
}

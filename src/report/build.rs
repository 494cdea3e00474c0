//! A report from models, as a library call: what `retrylab report` does between reading its
//! arguments and writing its files. A program builds its [`Scenario`]s, runs one [`Block`]
//! of seeds (or several, as the shards of a sharded report do), [`assemble`]s the blocks
//! and renders the [`Research`] (or [`write()`]s the three files).
//!
//! The data of a block ([`ReportData`]) is what a shard writes into its partial result:
//! everything in it is serializable, properties by name.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::html::{matrix_html, render_html};
use super::matrix::{broken_assumptions, guarantee_matrix};
use super::research::{
    MatrixView, ModelPart, Provenance, Research, Shown, render_json, render_markdown,
};
use super::sequence::Diagram;
use crate::design::Design;
use crate::explore::check::counterexample;
use crate::explore::paired::{Paired, paired};
use crate::explore::result::{Props, ResultData, append as append_result, property, want};
use crate::explore::{Comparison, Progress, ReplayCommand, Report, compare};
use crate::model::Model;
use crate::run::run_traced;

/// One model of the report: its file, the model as run, and the designs compared on it.
pub struct Scenario {
    /// The model file as given.
    pub path: String,
    /// FNV-1a of the file's bytes ([`crate::sim::hash::Fnv1a::hex`]).
    pub hash: String,
    /// The model as run: the file's, or the file's against `provider`.
    pub model: Model,
    /// The provider preset the model is run against instead of its own, if any.
    pub provider: Option<&'static str>,
    pub designs: Vec<&'static dyn Design>,
}

impl Scenario {
    /// The model of `path` against each provider preset in turn (`--each-provider`), each
    /// comparing `designs`.
    pub fn each_provider(
        path: &str,
        hash: &str,
        model: &Model,
        designs: &[&'static dyn Design],
    ) -> Result<Vec<Scenario>, String> {
        crate::model::provider::preset_names()
            .iter()
            .map(|&preset| {
                // Every preset passes the provider's checks and none is tied to the rest of
                // a model, so this refuses nothing today; it would name the preset if it did.
                let as_preset = model
                    .with_provider(preset)
                    .map_err(|e| format!("against {preset}: {}", e.replace('\n', "; ")))?;
                Ok(Scenario {
                    path: path.to_string(),
                    hash: hash.to_string(),
                    model: as_preset,
                    provider: Some(preset),
                    designs: designs.to_vec(),
                })
            })
            .collect()
    }
}

/// The models of the guarantee matrix in column order: those that break no assumption
/// first, then by the first assumption each breaks, in the order the designs declare them
/// (the order of the input for equals).
pub fn matrix_columns(
    models: Vec<(String, Model)>,
    designs: &[&'static dyn Design],
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
        .map(|(path, model)| {
            let broken = broken_assumptions(&model, designs);
            let key = broken.first().map_or(0, |b| {
                1 + order.iter().position(|o| o == b).unwrap_or(order.len())
            });
            (key, (path, model))
        })
        .collect();
    keyed.sort_by_key(|(k, _)| *k);
    keyed.into_iter().map(|(_, m)| m).collect()
}

/// The options that determine a report's bytes (a partial result records them).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportOptions {
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
pub struct ReportData {
    pub parts: Vec<PartData>,
    /// The guarantee matrix (shard 1 only, when models for it were given).
    pub matrix: Option<MatrixData>,
}

/// [`MatrixView`], as data.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MatrixData {
    pub json: serde_json::Value,
    pub markdown: String,
    pub html: String,
}

/// One model of the report on the seeds of a block.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartData {
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
pub struct ShownData {
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

    fn shown(&self, props: Props<'_>) -> Result<Shown, String> {
        Ok(Shown {
            property: property(&self.property, props)?,
            expected: self.expected.as_deref().map(want).transpose()?,
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
    pub fn check(&self, props: Props<'_>) -> Result<(), String> {
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

/// One block of a report's seeds, and what to do with it.
pub struct Block<'a> {
    pub scenarios: &'a [Scenario],
    /// The guarantee matrix's models, in column order ([`matrix_columns`]), and the
    /// designs of its rows.
    pub matrix: &'a [(String, Model)],
    pub matrix_designs: &'a [&'static dyn Design],
    /// The design every other one is paired against.
    pub baseline: &'static dyn Design,
    /// The fault budget of the matrix's searches.
    pub max_faults: u32,
    /// The report's first seed: the seed a design is run on to tell whether it makes any
    /// random choice.
    pub first_seed: u64,
    /// This block's first seed and number of seeds.
    pub seeds: (u64, u64),
    /// Whether this block does the work done once per report (the matrix, determinism):
    /// the only block, or shard 1.
    pub once: bool,
    /// The replay commands' program and flags; each scenario fills in its model.
    pub replay: &'a ReplayCommand,
}

/// The replay commands of the runs of a model: `template`'s program and flags, the model's
/// path, provider preset and digest.
fn commands(
    template: &ReplayCommand,
    path: &str,
    provider: Option<&str>,
    model: Option<&Model>,
) -> ReplayCommand {
    ReplayCommand {
        model_path: path.to_string(),
        provider: provider.map(str::to_string),
        model_digest: model.map(Model::digest),
        ..template.clone()
    }
}

/// The units of work of `b` that [`run_block`] reports to its progress: two per design and
/// seed (the sweep, then the pairing against the baseline).
pub fn work(b: &Block<'_>) -> u64 {
    b.scenarios
        .iter()
        .map(|s| 2 * s.designs.len() as u64 * b.seeds.1)
        .sum()
}

/// Runs the seeds of block `b`: per scenario, every design's sweep, its pairing against the
/// baseline and a shrunk counterexample of each property it violates; with `b.once`, the
/// guarantee matrix and which designs make no random choice.
pub fn run_block(b: &Block<'_>, progress: &dyn Progress) -> ReportData {
    // The matrix first: a few seconds at most, and its searches use every core.
    let matrix = (b.once && !b.matrix.is_empty()).then(|| {
        progress.message("guarantee matrix");
        let m = guarantee_matrix(b.matrix, b.matrix_designs, b.max_faults);
        MatrixData {
            json: m.to_json(),
            markdown: m.to_markdown(),
            html: matrix_html(&m),
        }
    });
    let parts = b.scenarios.iter().map(|s| part(b, s, progress)).collect();
    ReportData { parts, matrix }
}

/// One scenario's part of block `b`.
fn part(b: &Block<'_>, s: &Scenario, progress: &dyn Progress) -> PartData {
    let (model, designs) = (&s.model, &s.designs);
    let replay = commands(b.replay, &s.path, s.provider, Some(model));
    let (results, paired, shown) = if b.seeds.1 == 0 {
        (None, vec![Paired::default(); designs.len()], Vec::new())
    } else {
        let seeds = (b.seeds.0, b.seeds.0 + (b.seeds.1 - 1));
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
                progress.message(design);
                progress.advance(n);
            },
        );
        let paired = designs
            .iter()
            .map(|d| {
                let p = paired(model, *d, b.baseline, seeds.0..=seeds.1);
                progress.advance(b.seeds.1);
                p
            })
            .collect();
        let shown = counterexamples(model, designs, &report, &replay);
        (
            Some(report.results.iter().map(ResultData::of).collect()),
            paired,
            shown,
        )
    };
    // A design whose run makes no random choice runs the same way on every seed.
    let deterministic = b.once.then(|| {
        designs
            .iter()
            .map(|d| {
                run_traced(model, *d, &mut model.chooser(b.first_seed))
                    .choices
                    .is_empty()
            })
            .collect()
    });
    PartData {
        file: s.path.clone(),
        file_hash: s.hash.clone(),
        description: model.description.clone(),
        provider: s.provider.map(str::to_string),
        model: model.name.clone(),
        results,
        paired,
        shown,
        deterministic,
    }
}

/// Per design and property tallied in `report`, the shrunk counterexample of its first
/// violating seed, with its sequence diagram.
fn counterexamples(
    model: &Model,
    designs: &[&'static dyn Design],
    report: &Report,
    replay: &ReplayCommand,
) -> Vec<Vec<Option<ShownData>>> {
    report
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
                    let named = model.named_properties(&r.design);
                    let title = format!(
                        "{} violates {property} on {}: the shrunk run of seed {seed}",
                        r.design, model.name
                    );
                    let diagram = Diagram::of(&title, &c.traced, &c.traced.violated_names(&named))
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
        .collect()
}

/// Adds the data of `later` (the seeds after those of `d`) to `d`.
fn append(d: &mut ReportData, later: ReportData, props: Props<'_>) -> Result<(), String> {
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
            append_result(&mut a, &b, 1)?;
            *r = ResultData::of(&a);
        }
    }
    Ok(())
}

/// The report of every block of seeds (in seed order, the first one carrying the work done
/// once); `replay`: the replay commands' program and flags. An error says what of the
/// blocks is damaged.
pub fn assemble(
    o: &ReportOptions,
    blocks: Vec<ReportData>,
    props: Props<'_>,
    replay: &ReplayCommand,
) -> Result<Research, String> {
    let mut blocks = blocks.into_iter();
    let mut all = blocks.next().ok_or("no partial result")?;
    for later in blocks {
        append(&mut all, later, props)?;
    }
    let mut parts = Vec::new();
    for p in all.parts {
        let results = p
            .results
            .unwrap_or_default()
            .iter()
            .map(|r| r.result(props))
            .collect::<Result<Vec<_>, _>>()?;
        let counterexamples = p
            .shown
            .iter()
            .map(|per| {
                per.iter()
                    .flatten()
                    .map(|s| s.shown(props))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let deterministic = p
            .deterministic
            .ok_or("shard 1 without the work done once")?;
        parts.push(ModelPart {
            report: Report {
                model: p.model,
                first_seed: o.first_seed,
                seed_count: o.seeds,
                results,
                replay: commands(replay, &p.file, p.provider.as_deref(), None),
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
        return Err("shard 1 without the guarantee matrix".into());
    }
    let matrix = all.matrix.map(|m| MatrixView {
        json: m.json,
        markdown: m.markdown,
        html: m.html,
    });
    Ok(Research {
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
    })
}

/// Writes `research` into directory `out` (made if missing) as `report.json`, `report.md`
/// and `report.html`; returns their paths.
pub fn write(out: &Path, research: &Research) -> Result<[PathBuf; 3], String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let files = [
        ("report.json", render_json(research)),
        ("report.md", render_markdown(research)),
        ("report.html", render_html(research)),
    ];
    let paths = files.each_ref().map(|(name, _)| out.join(name));
    for ((_, text), path) in files.iter().zip(&paths) {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(paths)
}

//! `retrylab report`: the comparison report of one or more models, written to a directory as
//! JSON, Markdown and one self-contained HTML page.

use std::path::{Path, PathBuf};

use super::{CliError, Ctx, ReportArgs, seed_range};
use crate::explore::check::counterexample;
use crate::explore::paired::paired;
use crate::explore::{Comparison, compare};
use crate::model::Model;
use crate::report::ReplayCommand;
use crate::report::html::{matrix_html, render_html};
use crate::report::matrix::{broken_assumptions, guarantee_matrix};
use crate::report::research::{
    MatrixView, ModelPart, PROGRAM, Provenance, Research, Shown, file_hash, render_json,
    render_markdown,
};
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
fn commands(path: &Path, provider: Option<&str>) -> ReplayCommand {
    ReplayCommand {
        program: PROGRAM.to_string(),
        model_path: path.display().to_string(),
        provider: provider.map(str::to_string),
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
    // work is done.
    if a.out.exists() && !a.out.is_dir() {
        return Err(CliError::Input(format!(
            "--out {}: not a directory",
            a.out.display()
        )));
    }
    // Read every model before running anything: a bad file is bad input, whatever its place.
    let mut models: Vec<Entry> = load_all(ctx, &a.models)?
        .into_iter()
        .map(|(path, model, hash)| Entry {
            path,
            model,
            hash,
            provider: None,
        })
        .collect();
    for (path, model, hash) in load_all(ctx, &a.each_provider)? {
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
    let matrix_models = matrix_columns(load_all(ctx, &a.matrix)?, ctx.designs.all());
    let mut designs_of = Vec::new();
    for Entry { model, .. } in &models {
        designs_of.push(
            model
                .designs
                .iter()
                .map(|n| ctx.find_design(n))
                .collect::<Result<Vec<_>, _>>()?,
        );
    }
    let total: u64 = models
        .iter()
        .map(|e| 2 * e.model.designs.len() as u64 * (last - first + 1))
        .sum();
    let progress = ctx.progress(total, "seeds");
    // The matrix first: a few seconds at most, and its searches use every core.
    let matrix = (!matrix_models.is_empty()).then(|| {
        progress.set_message("guarantee matrix");
        guarantee_matrix(&matrix_models, ctx.designs.all(), a.max_faults)
    });
    let mut parts = Vec::new();
    for (entry, designs) in models.iter().zip(&designs_of) {
        let Entry {
            path,
            model,
            hash,
            provider,
        } = entry;
        let replay = commands(path, *provider);
        let report = compare(
            &Comparison {
                model,
                designs,
                seeds: (first, last),
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
                let p = paired(model, *d, baseline, first..=last);
                progress.advance(last - first + 1);
                p
            })
            .collect();
        let counterexamples = report
            .results
            .iter()
            .zip(designs)
            .map(|(r, d)| {
                r.violations
                    .counts
                    .iter()
                    .zip(&r.failures)
                    .filter_map(|(&(property, _), seeds)| {
                        let seed = *seeds.first()?;
                        let c = counterexample(model, *d, property, seed)?;
                        let choices = c.shrunk.vector.to_string();
                        Some(Shown {
                            property,
                            expected: r.expect.iter().find(|e| e.0 == property).map(|e| e.1),
                            seed,
                            choices_len: c.shrunk.vector.0.len(),
                            original_len: c.shrunk.original.0.len(),
                            replay: replay.choices(&r.design, &choices),
                            trace: replay.seed(&r.design, seed),
                            choices,
                        })
                    })
                    .collect()
            })
            .collect();
        // A design whose run makes no random choice runs the same way on every seed.
        let deterministic = designs
            .iter()
            .map(|d| {
                run_traced(model, *d, &mut RandomChooser::for_model(model, first))
                    .choices
                    .is_empty()
            })
            .collect();
        parts.push(ModelPart {
            file: path.display().to_string(),
            file_hash: hash.clone(),
            description: model.description.clone(),
            provider: provider.map(str::to_string),
            report,
            baseline: baseline.name().to_string(),
            paired,
            counterexamples,
            deterministic,
        });
    }
    progress.finish();
    let matrix = matrix.map(|m| MatrixView {
        json: m.to_json(),
        markdown: m.to_markdown(),
        html: matrix_html(&m),
    });
    let research = Research {
        provenance: Provenance {
            commit: a.commit.clone(),
            threads: a.record_threads.then(rayon::current_num_threads),
            first_seed: first,
            seeds: last - first + 1,
            baseline: baseline.name().to_string(),
            models: a.models.iter().map(|p| p.display().to_string()).collect(),
            each_provider: a
                .each_provider
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            matrix: a.matrix.iter().map(|p| p.display().to_string()).collect(),
            max_faults: a.max_faults,
        },
        parts,
        matrix,
    };
    std::fs::create_dir_all(&a.out)
        .map_err(|e| CliError::Other(format!("cannot create {}: {e}", a.out.display())))?;
    let files = [
        ("report.json", render_json(&research)),
        ("report.md", render_markdown(&research)),
        ("report.html", render_html(&research)),
    ];
    for (name, text) in &files {
        write(&a.out.join(name), text)?;
    }
    ctx.print(&format!(
        "wrote {}, {} and {}\n",
        a.out.join("report.json").display(),
        a.out.join("report.md").display(),
        a.out.join("report.html").display()
    ))
}

fn write(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::Other(format!("cannot write {}: {e}", path.display())))
}

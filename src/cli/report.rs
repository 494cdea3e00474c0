//! `retrylab report`: the comparison report of one or more models, written to a directory.

use std::path::Path;

use super::progress::Progress;
use super::{CliError, ReportArgs, find_design, load, replay_command, seed_range};
use crate::explore::paired::paired;
use crate::explore::{Comparison, compare};
use crate::report::research::{ModelPart, file_hash, render_json, render_markdown};

pub(super) fn report(a: ReportArgs) -> Result<(), CliError> {
    let (first, last) = seed_range(a.first_seed, a.seeds)?;
    let baseline = crate::design::find(&a.baseline).ok_or_else(|| {
        CliError::Input(format!(
            "--baseline {}: unknown design; known designs: {}",
            a.baseline,
            crate::design::names().join(", ")
        ))
    })?;
    // Read every model before running anything: a bad file is bad input, whatever its place.
    let mut models = Vec::new();
    for path in &a.models {
        let model = load(path)?;
        let bytes =
            std::fs::read(path).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
        models.push((path, model, file_hash(&bytes)));
    }
    let total: u64 = models
        .iter()
        .map(|(_, m, _)| 2 * m.designs.len() as u64 * (last - first + 1))
        .sum();
    let progress = Progress::new(total);
    let mut parts = Vec::new();
    for (path, model, hash) in &models {
        let designs = model
            .designs
            .iter()
            .map(|n| find_design(n))
            .collect::<Result<Vec<_>, _>>()?;
        let report = compare(
            &Comparison {
                model,
                designs: &designs,
                seeds: (first, last),
                extra_properties: &[],
                keep_failures: 1,
            },
            replay_command(path),
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
        parts.push(ModelPart {
            file: path.display().to_string(),
            file_hash: hash.clone(),
            report,
            baseline: baseline.name().to_string(),
            paired,
        });
    }
    progress.finish();
    std::fs::create_dir_all(&a.out)
        .map_err(|e| CliError::Other(format!("cannot create {}: {e}", a.out.display())))?;
    write(&a.out.join("report.json"), &render_json(&parts))?;
    write(&a.out.join("report.md"), &render_markdown(&parts))?;
    println!(
        "wrote {} and {}",
        a.out.join("report.json").display(),
        a.out.join("report.md").display()
    );
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::Other(format!("cannot write {}: {e}", path.display())))
}

//! `retrylab run`: every design of a model over the same seeds, one row each.

use super::{CliError, Ctx, Format, RunArgs, check_determinism, seed_range, warnings};
use crate::check::Property;
use crate::explore::{Comparison, compare};
use crate::report::{Report, json, table};

pub(super) fn run(a: RunArgs, ctx: &Ctx) -> Result<(), CliError> {
    let model = ctx.load_as(&a.model, a.provider.as_deref())?;
    let names: Vec<String> = if a.designs.is_empty() {
        model.designs.clone()
    } else {
        a.designs.clone()
    };
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
    let count = last - first + 1;
    let progress = ctx.progress(count.saturating_mul(designs.len() as u64), "seeds");
    let report = compare(
        &Comparison {
            model: &model,
            designs: &designs,
            seeds: (first, last),
            extra_properties: &a.fail_on,
            keep_failures: a.show_failures,
        },
        ctx.replay_command(&a.model, a.provider.as_deref()),
        &|design, n| {
            progress.set_message(design);
            progress.advance(n);
        },
    );
    progress.finish();
    let mut text = match a.format {
        Format::Table if a.wide => table::render_wide(&report),
        Format::Table => table::render(&report),
        Format::Json => json::render(&report),
    };
    if matches!(a.format, Format::Table) && a.show_failures > 0 {
        text.push_str(&table::render_failures(&report));
    }
    ctx.print(&text)?;
    for r in &report.results {
        warnings::print(
            ctx,
            &warnings::assumptions(&model, &r.design, &r.assumptions),
        );
        warnings::print(ctx, &warnings::faults(&model, &r.design, &r.unfired, count));
    }
    if a.check_determinism {
        check_determinism(ctx, &model, &designs, (first, last))?;
    }
    fail_on(&report, &a.fail_on)
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

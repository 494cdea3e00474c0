//! `retrylab merge`: the partial results of a sharded `run`, `check`, `report` or
//! `explore`, added up and rendered as the unsharded command renders its own.

use super::shard::read_family;
use super::{CliError, Ctx, MergeArgs};

pub(super) fn merge(a: MergeArgs, ctx: &Ctx) -> Result<(), CliError> {
    let family = read_family(&a.parts)?;
    if family.command != "run" && a.format.is_some() {
        return Err(CliError::Input(format!(
            "--format: only for partials of run; these are of {}",
            family.command
        )));
    }
    if family.command != "report" && a.out.is_some() {
        return Err(CliError::Input(format!(
            "--out: only for partials of report (the directory to write it into); these are of {}",
            family.command
        )));
    }
    let props = ctx.designs.properties();
    match family.command.as_str() {
        "run" => super::run::render(
            ctx,
            &family.options()?,
            a.format,
            family.data(|d: &super::run::RunData, s| d.check(s.seeds, &props))?,
        ),
        "check" => super::check::render(
            ctx,
            &family.options()?,
            family.data(|d: &super::check::CheckData, s| d.check(s.first_seed, s.seeds, &props))?,
        ),
        "explore" => {
            let data = family.data(|d: &super::explore::ExploreData, _| d.check(&props))?;
            let shards = family.parts.iter().map(|(_, p)| p.shard);
            super::explore::render_merged(ctx, &family.options()?, shards.zip(data).collect())
        }
        "report" => {
            let out = a.out.as_deref().ok_or_else(|| {
                CliError::Input(
                    "--out DIR: required to merge partials of report (where to write it)".into(),
                )
            })?;
            super::report::render(
                ctx,
                &family.options()?,
                out,
                family.data(|d: &super::report::ReportData, _| d.check(&props))?,
            )
        }
        other => Err(CliError::Input(format!(
            "{}: a partial of {other}, which this program does not merge",
            family.parts[0].0.display()
        ))),
    }
}

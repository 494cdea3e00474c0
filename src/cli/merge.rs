//! `retrylab merge`: the partial results of a sharded `run`, `check`, `report` or
//! `explore`, added up and rendered as the unsharded command renders its own. Each command
//! says how, as a [`Sharded`] command; this module reads the partials and dispatches.

use super::check::CheckCommand;
use super::explore::ExploreCommand;
use super::report::ReportCommand;
use super::run::RunCommand;
use super::shard::{Family, Sharded, read_family};
use std::path::PathBuf;

use super::{CliError, Ctx, Format};
use crate::model::Catalog;

/// The merge options, each with what it is for, and the commands that take it.
fn merge_options(a: &MergeArgs) -> [(&'static str, bool, &'static str, &'static str); 2] {
    [
        (
            "--format",
            a.format.is_some(),
            "only for partials of run",
            RunCommand::COMMAND,
        ),
        (
            "--out",
            a.out.is_some(),
            "only for partials of report (the directory to write it into)",
            ReportCommand::COMMAND,
        ),
    ]
}

pub(super) fn merge(a: MergeArgs, ctx: &Ctx) -> Result<(), CliError> {
    let family = read_family(&a.parts, splits_tree)?;
    // A merge option given for partials of a command that does not take it (a command this
    // program does not merge included) is refused first.
    for (option, set, what, command) in merge_options(&a) {
        if set && family.command != command {
            return Err(CliError::Input(format!(
                "{option}: {what}; these are of {}",
                family.command
            )));
        }
    }
    match family.command.as_str() {
        RunCommand::COMMAND => merged::<RunCommand>(ctx, &family, &a),
        CheckCommand::COMMAND => merged::<CheckCommand>(ctx, &family, &a),
        ExploreCommand::COMMAND => merged::<ExploreCommand>(ctx, &family, &a),
        ReportCommand::COMMAND => merged::<ReportCommand>(ctx, &family, &a),
        other => Err(CliError::Input(format!(
            "{}: a partial of {other}, which this program does not merge",
            family.parts[0].0.display()
        ))),
    }
}

/// Whether the shards of `command` split a search tree, as its [`Sharded`] impl says.
fn splits_tree(command: &str) -> bool {
    [
        (RunCommand::COMMAND, RunCommand::SPLITS_TREE),
        (CheckCommand::COMMAND, CheckCommand::SPLITS_TREE),
        (ExploreCommand::COMMAND, ExploreCommand::SPLITS_TREE),
        (ReportCommand::COMMAND, ReportCommand::SPLITS_TREE),
    ]
    .contains(&(command, true))
}

/// The partials of `family`, of command `C`, merged and rendered: what the merge needs of
/// its options first ([`Sharded::ready`]), then the options and the data decoded (the
/// data first for a share of a tree: the order of their errors).
fn merged<C: Sharded>(ctx: &Ctx, family: &Family, a: &MergeArgs) -> Result<(), CliError> {
    C::ready(a)?;
    let props = ctx.designs.properties();
    let data = |family: &Family| family.data(|d: &C::Data, s| C::check(d, s, &props));
    let (options, data) = if C::SPLITS_TREE {
        let data = data(family)?;
        (family.options()?, data)
    } else {
        let options = family.options()?;
        (options, data(family)?)
    };
    // The models' warnings, printed where the unsharded command prints them: first.
    super::warnings::print(ctx, &family.parts[0].1.warnings);
    let shards = family.parts.iter().map(|(_, p)| p.shard);
    C::render(ctx, &options, shards.zip(data).collect(), a)
}
pub(super) const MERGE_AFTER_HELP: &str = "\
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
pub(super) struct MergeArgs {
    /// Partial files written by `run`, `check`, `report` or `explore` with --shard I/N
    /// --out FILE.
    #[arg(required = true, value_name = "PART")]
    pub(super) parts: Vec<PathBuf>,
    /// Output format of a merged `run` (default: the format the shards were given).
    #[arg(long, value_enum)]
    pub(super) format: Option<Format>,
    /// Directory to write a merged `report` into (report.json, report.md, report.html).
    #[arg(long, value_name = "DIR")]
    pub(super) out: Option<PathBuf>,
}

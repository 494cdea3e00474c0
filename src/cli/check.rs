//! `retrylab check`: the expectations of model files, as an exit code for CI.
//!
//! The library runs the check ([`crate::explore::suite`]) and accumulates what its seeds
//! show ([`CheckData`]); this module reads the arguments and renders the data; with
//! `--shard` it writes the data of its block instead, and `retrylab merge` adds the blocks
//! up and renders them the same way: as text, JSON or JUnit XML ([`super::check_out`]).
//!
//! Exit codes: 0 pass (every expectation met, every search certified), 1 fail, 3 not
//! certified (nothing failed, but a search stopped at its run limit or a model has no
//! expectations), 2 bad input.

use std::fmt::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::ShardArgs;
use super::shard::{self, ModelFile};
use super::{CliError, Ctx, seed_range, warnings};
use crate::check::{Metrics, Property};
use crate::explore::ReplayCommand;
use crate::explore::check::Judged;
pub(super) use crate::explore::suite::{
    Certification, CheckData, CounterexampleText, DesignCheck, ModelCheck, Tally, Verdict,
};
use crate::explore::suite::{Suite, determinism, judged, merge, run_block};
use crate::model::Catalog;
use crate::model::{Model, Want};
use clap::ValueEnum;

/// The options of `check` that determine its output (a partial records them).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct CheckOptions {
    pub models: Vec<String>,
    pub seeds: u64,
    pub first_seed: u64,
    pub check_determinism: bool,
    pub max_runs: Option<u64>,
    pub allow_no_expectations: bool,
    /// `table`, `json` or `junit`.
    pub format: String,
    /// Where to write JUnit XML besides.
    pub junit: Option<String>,
}

/// The models read (the files and directories of `check`'s arguments), each with its path,
/// and the lines about skipped files.
type Loaded = (Vec<(PathBuf, Model)>, Vec<String>);

fn load(ctx: &Ctx, a: &CheckArgs) -> Result<Loaded, CliError> {
    let mut models: Vec<(PathBuf, Model)> = Vec::new();
    let mut skipped = Vec::new();
    let mut refused = Vec::new();
    for path in &super::report::model_files(&a.models)? {
        if crate::model::reference::is_schema_file(path) {
            skipped.push(format!(
                "{}: the JSON Schema of model files, not a model: skipped",
                path.display()
            ));
            continue;
        }
        match ctx.load(path) {
            Ok(m) => models.push((path.clone(), m)),
            Err(CliError::Model(lines)) => refused.push(lines),
            Err(e) => return Err(e),
        }
    }
    if !refused.is_empty() {
        warnings::print(ctx, &skipped);
        return Err(CliError::Model(refused.join("\n")));
    }
    Ok((models, skipped))
}

pub(super) fn check(a: CheckArgs, ctx: &Ctx) -> Result<(), CliError> {
    ctx.defer_warnings_if(a.shard.shard.is_some());
    let (first, last) = seed_range(a.first_seed, a.seeds)?;
    // Read every model before running anything: a bad file is bad input, whatever its place.
    let (models, skipped) = load(ctx, &a)?;
    if a.max_runs == Some(0) {
        return Err(CliError::Input("--max-runs 0: must be at least 1".into()));
    }
    let options = CheckOptions {
        models: a.models.iter().map(|p| p.display().to_string()).collect(),
        seeds: last - first + 1,
        first_seed: first,
        check_determinism: a.check_determinism,
        max_runs: a.max_runs,
        allow_no_expectations: a.allow_no_expectations,
        format: match a.format {
            super::CheckFormat::Table => "table",
            super::CheckFormat::Json => "json",
            super::CheckFormat::Junit => "junit",
        }
        .to_string(),
        junit: a.junit.as_ref().map(|p| p.display().to_string()),
    };
    let (block, once) = shard::block_of(a.shard.shard, (first, last));
    let paths: Vec<PathBuf> = models.iter().map(|(path, _)| path.clone()).collect();
    let named: Vec<(String, Model)> = models
        .into_iter()
        .map(|(path, m)| (path.display().to_string(), m))
        .collect();
    let suite = Suite {
        models: &named,
        designs: &ctx.designs,
        range: (first, last),
        block,
        once,
        max_runs: a.max_runs,
        check_determinism: a.check_determinism,
        check_externals: ctx.determinism_check,
    };
    let progress = ctx.progress(suite.work(), "seeds");
    let run = run_block(&suite, &progress, &|line| ctx.eprintln(line));
    progress.finish();
    let mut data = run.map_err(CliError::Input)?;
    data.skipped = skipped;
    data.determinism = determinism(&suite);
    match (a.shard.shard, &a.shard.out) {
        (Some(s), Some(out)) => {
            let files = paths
                .iter()
                .map(|path| ModelFile::read(path))
                .collect::<Result<Vec<_>, _>>()?;
            shard::write_partial::<CheckCommand>(ctx, out, s.info(block), &options, files, &data)
        }
        _ => render(ctx, &options, vec![data]),
    }
}

/// Renders what every block of seeds showed (in seed order, the first one carrying the
/// work done once) as `check` prints it, in the format of the options, with its exit code.
pub(super) fn render(ctx: &Ctx, o: &CheckOptions, blocks: Vec<CheckData>) -> Result<(), CliError> {
    let damaged = |e: String| CliError::Input(format!("a damaged partial result: {e}"));
    let all = merge(blocks).map_err(damaged)?;
    let props = ctx.designs.properties();
    let views = all
        .models
        .iter()
        .map(|m| ModelView::of(ctx, m, o.seeds, &props))
        .collect::<Result<Vec<_>, String>>()
        .map_err(damaged)?;
    let determinism = if o.check_determinism {
        Some(all.determinism.as_ref().ok_or_else(|| {
            CliError::Input(
                "a damaged partial result: shard 1 without its determinism check".into(),
            )
        })?)
    } else {
        None
    };
    let tally = Tally::of(
        &all.models,
        o.seeds,
        o.allow_no_expectations,
        determinism,
        &props,
    )
    .map_err(damaged)?;
    // A design that does not repeat itself gets no table: its figures mean nothing.
    if let Some(Err(m)) = determinism.into_iter().flatten().find(|r| r.is_err()) {
        return Err(CliError::Input(m.clone()));
    }
    warnings::print(ctx, &all.skipped);
    let mut warned = Vec::new();
    for (model, view) in all.models.iter().zip(&views) {
        for d in &view.designs {
            warned.extend(d.data.assumption_warnings.iter().cloned());
            warned.extend(warnings::faults(
                &model.name,
                &model.faults,
                &d.data.design,
                &d.data.unfired,
                o.seeds,
            ));
        }
    }
    warnings::print(ctx, &warned);
    for line in determinism.into_iter().flatten().flatten() {
        ctx.eprintln(line);
    }
    let text = match o.format.as_str() {
        "table" => render_table(o, &views, &tally),
        "json" => super::check_out::json(o, &views, &tally, determinism),
        "junit" => super::check_out::junit(&views, &tally),
        f => {
            return Err(CliError::Input(format!(
                "a damaged partial result: format {f}"
            )));
        }
    };
    ctx.print(&text)?;
    if let Some(path) = &o.junit {
        std::fs::write(path, super::check_out::junit(&views, &tally))
            .map_err(|e| CliError::Other(format!("cannot write {path}: {e}")))?;
    }
    exit(&tally, determinism)
}

/// One model's data as rendered: each design with its expectations judged.
pub(super) struct ModelView<'a> {
    pub data: &'a ModelCheck,
    pub designs: Vec<DesignView<'a>>,
    /// The command that replays its runs (with the model's digest).
    pub replay: ReplayCommand,
}

/// One design's data as rendered.
pub(super) struct DesignView<'a> {
    pub data: &'a DesignCheck,
    pub judged: Vec<(Judged, Option<CounterexampleText>)>,
}

impl<'a> ModelView<'a> {
    fn of(
        ctx: &Ctx,
        m: &'a ModelCheck,
        seeds: u64,
        props: shard::Props<'_>,
    ) -> Result<Self, String> {
        let designs = m
            .designs
            .iter()
            .map(|d| {
                Ok(DesignView {
                    data: d,
                    judged: d
                        .judged
                        .iter()
                        .map(|j| judged(&d.design, j, seeds, props))
                        .collect::<Result<_, String>>()?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(ModelView {
            data: m,
            designs,
            replay: ctx.replay_command(std::path::Path::new(&m.path), None, Some(m.digest.clone())),
        })
    }

    /// Why an expectation failed, as the table prints it below the verdicts.
    pub fn explain(&self, j: &Judged, c: Option<&CounterexampleText>) -> String {
        explain(&self.replay, &self.data.name, j, c)
    }

    /// The replay line of a violation a search found (same-instant order is a choice
    /// there, hence `--ties`).
    pub fn search_replay(&self, design: &str, vector: &str) -> String {
        self.replay.choices_with_ties(design, vector)
    }
}

/// The exit code's error: 1 a failure (the determinism self-check's own message
/// first), 3 not certified, with why on stderr.
fn exit(tally: &Tally, determinism: Option<&Vec<Result<String, String>>>) -> Result<(), CliError> {
    if let Some(Err(m)) = determinism.into_iter().flatten().find(|r| r.is_err()) {
        return Err(CliError::Input(m.clone()));
    }
    match tally.verdict() {
        Verdict::Pass => Ok(()),
        Verdict::Fail => Err(CliError::Failed(format!(
            "check: {} expectation(s) not met",
            tally.unmet
        ))),
        Verdict::NotCertified => {
            let mut why = Vec::new();
            if tally.not_certified > 0 {
                why.push(format!(
                    "{} exhaustive search{} stopped at its run limit without a violation (raise --max-runs, or the model's expect.DESIGN.explore_max_runs)",
                    tally.not_certified,
                    if tally.not_certified == 1 { "" } else { "es" }
                ));
            }
            if tally.empty > 0 && !tally.allow_empty {
                why.push(format!(
                    "{} model{} without expectations checked nothing (add an \"expect\" section, or pass --allow-no-expectations)",
                    tally.empty,
                    if tally.empty == 1 { "" } else { "s" }
                ));
            }
            Err(CliError::Incomplete(format!(
                "check: not certified: {}",
                why.join("; ")
            )))
        }
    }
}

/// The text form: per model its verdict lines (per design, what happened to the user
/// first), then why each failure failed and why each search is not certified; the summary.
fn render_table(o: &CheckOptions, views: &[ModelView<'_>], tally: &Tally) -> String {
    let (count, first) = (o.seeds, o.first_seed);
    let last = first + (count - 1);
    let mut out = String::new();
    for view in views {
        let model = view.data;
        let _ = writeln!(
            out,
            "{} ({}): {count} seed{} per design (seeds {first}..={last})",
            model.path,
            model.name,
            if count == 1 { "" } else { "s" }
        );
        if view.designs.is_empty() {
            out.push_str(if o.allow_no_expectations {
                "  no expectations: nothing checked (allowed by --allow-no-expectations)\n"
            } else {
                "  no expectations: nothing checked (add an \"expect\" section to check this model)\n"
            });
        }
        let mut failed = Vec::new();
        let mut searched = Vec::new();
        for d in &view.designs {
            out.push_str(&harm_line(&d.data.design, &d.data.metrics));
            for (j, c) in &d.judged {
                out.push_str(&verdict_line(j));
                if !j.met() {
                    failed.push((j, c));
                }
            }
            if let Some(found) = &d.data.explore {
                out.push_str(&found.line);
                if found.status != Certification::Certified {
                    searched.push((&d.data.design, found));
                }
            }
            out.push_str(&d.data.assumptions_line);
        }
        for (j, c) in &failed {
            out.push_str(&view.explain(j, c.as_ref()));
        }
        for (design, found) in &searched {
            match found.status {
                Certification::NotCertified => {
                    let _ = writeln!(
                        out,
                        "\nNOT CERTIFIED {} {design}: {}",
                        model.name,
                        found
                            .reason
                            .as_deref()
                            .unwrap_or("the search did not cover its bound")
                    );
                }
                _ => {
                    for (text, vector) in &found.violations {
                        // "PROPERTY violated by a run with N faults (found after ...)": the
                        // verdict, said once, in the FAIL line.
                        let text = text.trim_start();
                        let (first, body) = text.split_once('\n').unwrap_or((text, ""));
                        let _ = writeln!(
                            out,
                            "\nFAIL {} {design} (explore, within the model's bound): {}",
                            model.name,
                            first.trim_end()
                        );
                        // A seed's shrunk counterexample printed above may be this very run.
                        let same = failed.iter().find_map(|(j, c)| {
                            c.as_ref().filter(|c| {
                                j.design == **design
                                    && !c.timeline.trim().is_empty()
                                    && body.contains(c.timeline.trim())
                            })
                        });
                        match same {
                            Some(c) => {
                                let _ = writeln!(
                                    out,
                                    "the same run as seed {}'s shrunk counterexample above",
                                    c.seed
                                );
                            }
                            None => out.push_str(body),
                        }
                        let _ = writeln!(out, "replay: {}", view.search_replay(design, vector));
                    }
                }
            }
        }
        out.push('\n');
    }
    out.push_str(&tally.line(views.len()));
    out
}

/// A design's first line: what happened to the user over the seeds, whatever the model
/// expects (`!` when something harmed the user).
fn harm_line(design: &str, m: &Metrics) -> String {
    format!(
        "  {:<4}  {design:<24} {}\n",
        if crate::report::table::harmed(m) {
            "!"
        } else {
            "-"
        },
        crate::report::table::harm(m)
    )
}

fn verdict_line(j: &Judged) -> String {
    format!(
        "  {:<4}  {:<24} {:<7}  {:<26} {} of {} seeds violate it{}\n",
        if j.met() { "ok" } else { "FAIL" },
        j.design,
        j.want.name(),
        j.property.to_string(),
        j.violating,
        j.seeds,
        if j.budget > 0 {
            format!("; {} cut by the events budget", j.budget)
        } else {
            String::new()
        }
    )
}

/// Why an expectation failed: for a `hold`, the first violating seed shrunk, its timeline
/// and the command that replays it.
fn explain(
    replay: &ReplayCommand,
    model: &str,
    j: &Judged,
    c: Option<&CounterexampleText>,
) -> String {
    let mut s = String::new();
    if j.budget > 0 {
        let _ = writeln!(
            s,
            "\nFAIL {model} {}: {} of {} seeds stopped after {} events, before the horizon; such a run is unfinished and shows nothing about {}; shorten the horizon or the workload to finish within the budget",
            j.design,
            j.budget,
            j.seeds,
            crate::world::MAX_EVENTS,
            j.property
        );
        return s;
    }
    match j.want {
        Want::Violate => {
            let _ = writeln!(
                s,
                "\nFAIL {model} {}: expected at least one seed to violate {}, but none of {} did",
                j.design, j.property, j.seeds
            );
        }
        Want::Hold => {
            let _ = writeln!(
                s,
                "\nFAIL {model} {}: {} must hold on every seed; {} of {} seeds violate it",
                j.design, j.property, j.violating, j.seeds
            );
            let Some(c) = c else {
                return s;
            };
            let _ = writeln!(s, "first violating seed: {}", c.seed);
            let _ = writeln!(s, "  {}", replay.seed(&j.design, c.seed));
            let _ = writeln!(
                s,
                "shrunk to {} choice{} (from {}, in {} runs): {}",
                c.choices_len,
                if c.choices_len == 1 { "" } else { "s" },
                c.original_len,
                c.runs,
                if c.choices_len == 0 {
                    "(every decision at its default)".to_string()
                } else {
                    c.choices.clone()
                }
            );
            let _ = writeln!(s, "timeline of the shrunk run:\n{}", c.timeline);
            s.push_str(&c.outcome);
            let _ = writeln!(s, "replay: {}", replay.choices(&j.design, &c.choices));
        }
    }
    s
}

/// `check --shard`: a block of seeds (shard 1 also searches and runs the determinism
/// self-check).
pub(super) struct CheckCommand;

impl shard::Sharded for CheckCommand {
    const COMMAND: &'static str = "check";
    type Options = CheckOptions;
    type Data = CheckData;

    fn check(
        data: &CheckData,
        info: &shard::ShardInfo,
        props: shard::Props<'_>,
    ) -> Result<(), String> {
        data.check(info.first_seed, info.seeds, props)
    }

    fn render(
        ctx: &Ctx,
        options: &CheckOptions,
        shards: Vec<(shard::ShardInfo, CheckData)>,
        _: &super::MergeArgs,
    ) -> Result<(), CliError> {
        render(ctx, options, shards.into_iter().map(|(_, d)| d).collect())
    }
}

/// Output format of `check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum CheckFormat {
    /// The verdict lines, counterexamples and replay commands, for a person.
    Table,
    /// One JSON object (`"format": "retrylab-check"`), described in docs/check.md.
    Json,
    /// JUnit XML: one test case per expectation, and one per exhaustive search.
    Junit,
}

#[derive(clap::Args, Debug)]
pub(super) struct CheckArgs {
    /// Model files (JSON) with an `expect` section, or directories: a directory stands for
    /// its `*.json` files in byte order of their names (the JSON Schema left out).
    #[arg(required = true, value_name = "MODEL")]
    pub(super) models: Vec<PathBuf>,
    /// Most runs of each design's exhaustive search within the model's `explore` bound, in
    /// place of the model's `expect.DESIGN.explore_max_runs` and `explore.max_runs`.
    #[arg(long, value_name = "N")]
    pub(super) max_runs: Option<u64>,
    /// Exit 0, not 3, when a model has no expectations (it checks nothing; the output
    /// still says so).
    #[arg(long)]
    pub(super) allow_no_expectations: bool,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value = "table")]
    pub(super) format: CheckFormat,
    /// Also write the verdicts as JUnit XML to FILE (whatever --format), for a CI's test
    /// report; with --shard, the merge writes it.
    #[arg(long, value_name = "FILE")]
    pub(super) junit: Option<PathBuf>,
    /// Seeds per design, run as seeds FIRST..FIRST+N.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub(super) seeds: u64,
    /// First seed of the range.
    #[arg(long, value_name = "FIRST", default_value_t = 0)]
    pub(super) first_seed: u64,
    /// Also rerun a sample of the seeds (16 per design) silent, traced twice and replayed,
    /// and exit 1 unless outcome and timeline hashes agree. With --shard, shard 1 does it
    /// (on the sample of the whole range).
    #[arg(long)]
    pub(super) check_determinism: bool,
    #[command(flatten)]
    pub(super) shard: ShardArgs,
}

pub(super) fn check_after_help() -> String {
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

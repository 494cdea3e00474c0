//! `retrylab check`: the expectations of model files, as an exit code for CI.
//!
//! The command accumulates what its seeds show ([`CheckData`]) and renders it; with
//! `--shard` it writes the data of its block instead, and `retrylab merge` adds the blocks up
//! and renders them the same way: as text, JSON or JUnit XML ([`super::check_out`]).
//!
//! Exit codes: 0 pass (every expectation met, every search certified), 1 fail, 3 not
//! certified (nothing failed, but a search stopped at its run limit or a model has no
//! expectations), 2 bad input.

use std::fmt::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::shard::{self, ModelFile};
use super::{CheckArgs, CliError, Ctx, determinism, render_outcome, seed_range, warnings};
use crate::check::{Metrics, Property};
use crate::design::{Judgement, assumptions};
use crate::explore::check::{Judged, expected_designs, judge_design};
use crate::explore::{Bound, Exploration, Strategy, explore};
use crate::model::{ExploreBound, Model, Want};
use crate::report::ReplayCommand;

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

/// What the seeds of a block show, with what of the models the output names.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct CheckData {
    /// The lines about skipped files (the JSON Schema given as a model).
    pub skipped: Vec<String>,
    pub models: Vec<ModelCheck>,
    /// Per model, the determinism self-check's line or failure, up to the first failure
    /// (shard 1 only, with --check-determinism).
    pub determinism: Option<Vec<Result<String, String>>>,
}

/// One model file's expectations on the seeds of a block.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ModelCheck {
    pub path: String,
    pub name: String,
    /// The model's digest, which its replay commands carry.
    pub digest: String,
    /// The model's scripted faults, described.
    pub faults: Vec<String>,
    pub designs: Vec<DesignCheck>,
}

/// One design's expectations on the seeds of a block.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct DesignCheck {
    pub design: String,
    /// What happened to the user over the block's seeds.
    pub metrics: Metrics,
    pub judged: Vec<JudgedData>,
    /// Scripted faults (indices) that fired on no seed of the block.
    pub unfired: Vec<usize>,
    /// The line on the design's contract assumptions, and their warnings.
    pub assumptions_line: String,
    pub assumption_warnings: Vec<String>,
    /// The certification within the model's `explore` bound (shard 1 only).
    pub explore: Option<Explored>,
}

/// One expectation on the seeds of a block.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct JudgedData {
    pub property: String,
    pub want: String,
    pub violating: u64,
    /// Seeds cut by the events budget.
    pub budget: u64,
    /// The counterexample of a `hold` from the block's first violating seed.
    pub counterexample: Option<CounterexampleText>,
}

/// A shrunk counterexample as `check` prints it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct CounterexampleText {
    pub seed: u64,
    pub choices: String,
    pub choices_len: usize,
    pub original_len: usize,
    pub runs: u64,
    /// The timeline, then the outcome lines, of the shrunk run.
    pub timeline: String,
    pub outcome: String,
}

/// What a design's search within the model's `explore` bound shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Certification {
    /// Every schedule within the bound, and none violates a property that must hold.
    Certified,
    /// A schedule violates one: a failure.
    Violated,
    /// No violation, but the search stopped (its run limit, or a run spent the events
    /// budget) before covering the bound: neither a pass nor a failure.
    NotCertified,
}

impl Certification {
    pub fn name(self) -> &'static str {
        match self {
            Certification::Certified => "certified",
            Certification::Violated => "violated",
            Certification::NotCertified => "not_certified",
        }
    }
}

/// A design's search within the model's `explore` bound.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Explored {
    pub line: String,
    pub status: Certification,
    pub max_faults: u32,
    /// The run limit it searched with (`--max-runs`, the design's override or the model's).
    pub max_runs: u64,
    pub runs: u64,
    /// Why it is not certified, for the explanation below the verdicts.
    pub reason: Option<String>,
    /// Each violation found: what `check` prints of it but the replay line, and the choice
    /// vector that line replays.
    pub violations: Vec<(String, String)>,
}

impl CheckData {
    /// Whether every expectation reads back and tallies with the block of `seeds` seeds from
    /// `first`: no more violating (or cut) seeds than the block has, and a counterexample's
    /// seed inside it.
    pub fn check(&self, first: u64, seeds: u64, props: shard::Props<'_>) -> Result<(), String> {
        for m in &self.models {
            for d in &m.designs {
                for j in &d.judged {
                    judged(&d.design, j, 0, props)?;
                    let what = || format!("{}: {} {}", d.design, j.want, j.property);
                    if j.violating.saturating_add(j.budget) > seeds {
                        return Err(format!(
                            "{}: {} violating and {} cut seeds tallied for a block of {seeds}",
                            what(),
                            j.violating,
                            j.budget
                        ));
                    }
                    if let Some(c) = &j.counterexample
                        && (c.seed < first || c.seed - first >= seeds)
                    {
                        return Err(format!(
                            "{}: a counterexample of seed {} outside the block's seeds",
                            what(),
                            c.seed
                        ));
                    }
                }
            }
        }
        Ok(())
    }
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
    let (block, once) = match a.shard.shard {
        Some(s) => (s.block(first, last - first + 1), s.is_first()),
        None => ((first, last - first + 1), true),
    };
    let total: u64 = models
        .iter()
        .map(|(_, m)| expected_designs(m, &ctx.designs).len() as u64 * block.1)
        .sum();
    let progress = ctx.progress(total, "seeds");
    let mut checked = Vec::new();
    for (path, model) in &models {
        let mut designs = Vec::new();
        for d in expected_designs(model, &ctx.designs) {
            progress.set_message(d.name());
            let (judged, unfired, metrics) = if block.1 == 0 {
                (
                    model
                        .expectations(d.name())
                        .into_iter()
                        .map(|(property, want)| JudgedData {
                            property: property.to_string(),
                            want: want.name().to_string(),
                            violating: 0,
                            budget: 0,
                            counterexample: None,
                        })
                        .collect(),
                    (0..model.faults.len()).collect(),
                    Metrics::default(),
                )
            } else {
                let seeds = (block.0, block.0 + (block.1 - 1));
                let (judged, unfired, metrics) =
                    judge_design(model, d, seeds, &|n| progress.advance(n));
                let named = super::named_properties(model, d.name());
                let judged = judged.iter().map(|j| judged_data(j, &named)).collect();
                (judged, unfired, metrics)
            };
            // A search of an external executor relies on its determinism: checked first.
            if once && model.explore.is_some() && d.is_external() {
                let line = crate::external::determinism::check(
                    model,
                    d,
                    &crate::external::determinism::SEEDS,
                )
                .map_err(CliError::Input)?;
                ctx.eprintln(&line);
            }
            let explore = if once {
                model
                    .explore
                    .map(|b| bound_for(model, d.name(), b, a.max_runs))
                    .and_then(|bound| {
                        certify(model, d, bound).map(|found| explored(model, d, bound, &found))
                    })
            } else {
                None
            };
            let assumed = assumptions::judge(d, model);
            designs.push(DesignCheck {
                design: d.name().to_string(),
                metrics,
                judged,
                unfired,
                assumptions_line: assumptions_line(d.name(), &assumed),
                assumption_warnings: warnings::assumptions(&model.name, d.name(), &assumed),
                explore,
            });
        }
        checked.push(ModelCheck {
            path: path.display().to_string(),
            name: model.name.clone(),
            digest: model.digest(),
            faults: warnings::described_faults(model),
            designs,
        });
    }
    progress.finish();
    let determinism = (a.check_determinism && once).then(|| {
        let mut results = Vec::new();
        for (_, model) in &models {
            let designs: Vec<&dyn crate::design::Design> = model
                .designs
                .iter()
                .filter_map(|d| ctx.designs.find(d))
                .collect();
            let r = determinism(model, &designs, (first, last));
            let failed = r.is_err();
            results.push(r);
            if failed {
                break;
            }
        }
        results
    });
    let data = CheckData {
        skipped,
        models: checked,
        determinism,
    };
    match (a.shard.shard, &a.shard.out) {
        (Some(s), Some(out)) => {
            let files = models
                .iter()
                .map(|(path, _)| ModelFile::read(path))
                .collect::<Result<Vec<_>, _>>()?;
            shard::write_partial(ctx, out, "check", s.info(block), &options, files, &data)
        }
        _ => render(ctx, &options, vec![data]),
    }
}

/// A judged expectation of a block as data.
fn judged_data(j: &Judged, named: &[Property]) -> JudgedData {
    JudgedData {
        property: j.property.to_string(),
        want: j.want.name().to_string(),
        violating: j.violating,
        budget: j.budget,
        counterexample: j.counterexample.as_ref().map(|c| CounterexampleText {
            seed: c.seed,
            choices: c.shrunk.vector.to_string(),
            choices_len: c.shrunk.vector.0.len(),
            original_len: c.shrunk.original.0.len(),
            runs: c.shrunk.runs,
            timeline: c.traced.timeline.clone(),
            outcome: render_outcome(&c.traced, named),
        }),
    }
}

/// Adds the data of `later` (the seeds after those of `d`) to `d`.
fn append(d: &mut CheckData, later: CheckData) -> Result<(), String> {
    if d.models.len() != later.models.len() {
        return Err("not the same models".into());
    }
    for (m, l) in d.models.iter_mut().zip(later.models) {
        if m.designs.len() != l.designs.len() {
            return Err(format!("not the same designs of {}", m.path));
        }
        for (x, y) in m.designs.iter_mut().zip(l.designs) {
            if x.design != y.design || x.judged.len() != y.judged.len() {
                return Err(format!("not the same expectations of {}", m.path));
            }
            for (j, k) in x.judged.iter_mut().zip(y.judged) {
                if j.property != k.property || j.want != k.want {
                    return Err(format!("not the same expectations of {}", m.path));
                }
                // The counterexample is that of the first violating seed: of the first
                // block with one.
                if j.violating == 0 {
                    j.counterexample = k.counterexample;
                }
                j.violating += k.violating;
                j.budget += k.budget;
            }
            x.unfired.retain(|i| y.unfired.contains(i));
            x.metrics.merge(&y.metrics);
        }
    }
    Ok(())
}

/// Renders what every block of seeds showed (in seed order, the first one carrying the
/// work done once) as `check` prints it, in the format of the options, with its exit code.
pub(super) fn render(ctx: &Ctx, o: &CheckOptions, blocks: Vec<CheckData>) -> Result<(), CliError> {
    let mut blocks = blocks.into_iter();
    let mut all = blocks
        .next()
        .ok_or_else(|| CliError::Input("no partial result".into()))?;
    for later in blocks {
        append(&mut all, later)
            .map_err(|e| CliError::Input(format!("a damaged partial result: {e}")))?;
    }
    let props = ctx.designs.properties();
    let views = all
        .models
        .iter()
        .map(|m| ModelView::of(ctx, m, o.seeds, &props))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| CliError::Input(format!("a damaged partial result: {e}")))?;
    let determinism = if o.check_determinism {
        Some(all.determinism.as_ref().ok_or_else(|| {
            CliError::Input(
                "a damaged partial result: shard 1 without its determinism check".into(),
            )
        })?)
    } else {
        None
    };
    let tally = Tally::of(&views, o.allow_no_expectations, determinism);
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
    tally.exit(determinism)
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

/// What the verdicts add up to, and so the exit code.
pub(super) struct Tally {
    pub met: u64,
    pub unmet: u64,
    /// Searches that stopped before covering their bound, without a violation.
    pub not_certified: u64,
    /// Models without expectations.
    pub empty: u64,
    /// Whether models without expectations are allowed (`--allow-no-expectations`).
    pub allow_empty: bool,
    /// Whether the determinism self-check found a difference.
    pub nondeterministic: bool,
}

/// The verdict of a whole `check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Pass,
    Fail,
    NotCertified,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::NotCertified => "not_certified",
        }
    }

    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::Fail => 1,
            Verdict::NotCertified => 3,
        }
    }
}

impl Tally {
    fn of(
        views: &[ModelView<'_>],
        allow_empty: bool,
        determinism: Option<&Vec<Result<String, String>>>,
    ) -> Tally {
        let mut t = Tally {
            met: 0,
            unmet: 0,
            not_certified: 0,
            empty: 0,
            allow_empty,
            nondeterministic: determinism.is_some_and(|r| r.iter().any(Result::is_err)),
        };
        for m in views {
            if m.designs.is_empty() {
                t.empty += 1;
            }
            for d in &m.designs {
                for (j, _) in &d.judged {
                    if j.met() {
                        t.met += 1;
                    } else {
                        t.unmet += 1;
                    }
                }
                match d.data.explore.as_ref().map(|e| e.status) {
                    None => {}
                    Some(Certification::Certified) => t.met += 1,
                    Some(Certification::Violated) => t.unmet += 1,
                    Some(Certification::NotCertified) => t.not_certified += 1,
                }
            }
        }
        t
    }

    pub fn verdict(&self) -> Verdict {
        if self.unmet > 0 || self.nondeterministic {
            Verdict::Fail
        } else if self.not_certified > 0 || (self.empty > 0 && !self.allow_empty) {
            Verdict::NotCertified
        } else {
            Verdict::Pass
        }
    }

    /// The summary line: how many expectations were met, not met, not certified.
    fn line(&self, models: usize) -> String {
        let n = self.met + self.unmet + self.not_certified;
        let mut s = format!(
            "{n} expectation{} in {models} model{}: {} met, {} not met",
            if n == 1 { "" } else { "s" },
            if models == 1 { "" } else { "s" },
            self.met,
            self.unmet
        );
        if self.not_certified > 0 {
            let _ = write!(s, ", {} not certified", self.not_certified);
        }
        if self.empty > 0 {
            let _ = write!(
                s,
                "; {} model{} without expectations{}",
                self.empty,
                if self.empty == 1 { "" } else { "s" },
                if self.allow_empty {
                    " (allowed by --allow-no-expectations)"
                } else {
                    ""
                }
            );
        }
        s.push('\n');
        s
    }

    /// The exit code's error: 1 a failure (the determinism self-check's own message
    /// first), 3 not certified, with why on stderr.
    fn exit(&self, determinism: Option<&Vec<Result<String, String>>>) -> Result<(), CliError> {
        if let Some(Err(m)) = determinism.into_iter().flatten().find(|r| r.is_err()) {
            return Err(CliError::Failed(m.clone()));
        }
        match self.verdict() {
            Verdict::Pass => Ok(()),
            Verdict::Fail => Err(CliError::Failed(format!(
                "check: {} expectation(s) not met",
                self.unmet
            ))),
            Verdict::NotCertified => {
                let mut why = Vec::new();
                if self.not_certified > 0 {
                    why.push(format!(
                        "{} exhaustive search{} stopped at its run limit without a violation (raise --max-runs, or the model's expect.DESIGN.explore_max_runs)",
                        self.not_certified,
                        if self.not_certified == 1 { "" } else { "es" }
                    ));
                }
                if self.empty > 0 && !self.allow_empty {
                    why.push(format!(
                        "{} model{} without expectations checked nothing (add an \"expect\" section, or pass --allow-no-expectations)",
                        self.empty,
                        if self.empty == 1 { "" } else { "s" }
                    ));
                }
                Err(CliError::Incomplete(format!(
                    "check: not certified: {}",
                    why.join("; ")
                )))
            }
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
                    let _ = writeln!(
                        out,
                        "\nFAIL {} {design}: not certified within the model's explore bound",
                        model.name,
                    );
                    for (text, vector) in &found.violations {
                        out.push_str(text);
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

/// An expectation of all the seeds, judged, and its counterexample.
fn judged(
    design: &str,
    j: &JudgedData,
    seeds: u64,
    props: shard::Props<'_>,
) -> Result<(Judged, Option<CounterexampleText>), String> {
    Ok((
        Judged {
            design: design.to_string(),
            property: shard::property(&j.property, props)?,
            want: shard::want(&j.want)?,
            violating: j.violating,
            seeds,
            budget: j.budget,
            counterexample: None,
        },
        j.counterexample.clone(),
    ))
}

/// The bound of a design's search: the model's, its run limit replaced by `--max-runs`,
/// else by the design's `expect.DESIGN.explore_max_runs`.
fn bound_for(model: &Model, design: &str, b: ExploreBound, cli: Option<u64>) -> ExploreBound {
    let own = model.expect.get(design).and_then(|e| e.explore_max_runs);
    ExploreBound {
        max_runs: cli.or(own).unwrap_or(b.max_runs),
        ..b
    }
}

/// Searches every schedule within `b` for a violation of the properties the model expects
/// `design` to hold; `None` when it expects none to hold.
fn certify(
    model: &Model,
    design: &dyn crate::design::Design,
    b: ExploreBound,
) -> Option<Exploration> {
    let hold: Vec<Property> = model
        .expectations(design.name())
        .into_iter()
        .filter(|(_, want)| *want == Want::Hold)
        .map(|(p, _)| p)
        .collect();
    if hold.is_empty() {
        return None;
    }
    let bound = Bound {
        max_faults: b.max_faults,
        max_runs: b.max_runs,
        ..Bound::default()
    };
    Some(explore(model, design, &hold, Strategy::Dfs, bound))
}

/// What a design's search within `b` shows, as data.
fn explored(
    model: &Model,
    d: &dyn crate::design::Design,
    b: ExploreBound,
    found: &Exploration,
) -> Explored {
    let status = if !found.violations.is_empty() {
        Certification::Violated
    } else if found.certified() {
        Certification::Certified
    } else {
        Certification::NotCertified
    };
    let k = b.max_faults;
    let reason = (status == Certification::NotCertified).then(|| {
        if found.budget_runs > 0 {
            format!(
                "no violation, but run {} stopped after {} events, before the horizon, and the search stopped there: nothing is certified; shorten the horizon or the workload to finish within the budget",
                found.runs(),
                crate::world::MAX_EVENTS
            )
        } else {
            format!(
                "no violation in {} runs, but the search stopped at its run limit ({}) before covering every schedule within {k} fault{}: this is neither a pass nor a failure; raise the limit (check --max-runs N, or \"expect\": {{\"{}\": {{\"explore_max_runs\": N}}}} in the model) or lower explore.max_faults",
                found.runs(),
                b.max_runs,
                if k == 1 { "" } else { "s" },
                d.name()
            )
        }
    });
    Explored {
        line: explore_line(d.name(), b, found, status),
        status,
        max_faults: k,
        max_runs: b.max_runs,
        runs: found.runs(),
        reason,
        violations: found
            .violations
            .iter()
            .map(|v| super::explore::explain_run(model, d, v, true))
            .collect(),
    }
}

/// One line for a design's exhaustive search: certified, a violation, or not certified.
fn explore_line(
    design: &str,
    b: ExploreBound,
    found: &Exploration,
    status: Certification,
) -> String {
    let k = b.max_faults;
    let what = match status {
        Certification::Certified => {
            let runs = found.runs();
            let covered = found.levels.len() as u32 - 1;
            format!(
                "certified within {k} fault{}: {runs} run{}{}",
                if k == 1 { "" } else { "s" },
                if runs == 1 { "" } else { "s" },
                match covered {
                    _ if covered >= k => String::new(),
                    0 => "; no fault choice in the model".to_string(),
                    c => format!("; at most {c} fault choices in a run"),
                }
            ) + &match found.scope.caveats.as_slice() {
                [] => String::new(),
                c => format!("; held fixed: {}", c.join(", and ")),
            }
        }
        Certification::Violated => {
            let v = &found.violations[0];
            format!(
                "{} violated by a run with {} fault{}",
                v.property,
                v.faults,
                if v.faults == 1 { "" } else { "s" }
            )
        }
        Certification::NotCertified if found.budget_runs > 0 => format!(
            "not certified: run {} spent the events budget ({} events) before the horizon",
            found.runs(),
            crate::world::MAX_EVENTS
        ),
        Certification::NotCertified => format!(
            "not certified: no violation, but stopped at its run limit ({} runs) within {k} fault{}",
            b.max_runs,
            if k == 1 { "" } else { "s" }
        ),
    };
    format!(
        "  {:<4}  {design:<24} {:<7}  {what}\n",
        match status {
            Certification::Certified => "ok",
            Certification::Violated => "FAIL",
            Certification::NotCertified => "?",
        },
        "explore"
    )
}

/// Whether the design's guarantee applies to the model: how many of its contract
/// assumptions hold, and which do not (nothing for a design that states none).
fn assumptions_line(design: &str, judged: &[Judgement]) -> String {
    if judged.is_empty() {
        return String::new();
    }
    let failed: Vec<&str> = judged
        .iter()
        .filter(|a| !a.holds)
        .map(|a| a.name.as_str())
        .collect();
    let n = judged.len();
    if failed.is_empty() {
        format!("  {:<4}  {design:<24} assumptions: all {n} hold\n", "")
    } else {
        format!(
            "  {:<4}  {design:<24} assumptions: {} of {n} hold; the guarantee does not apply: {} {} not hold\n",
            "*",
            n - failed.len(),
            failed.join(", "),
            if failed.len() == 1 { "does" } else { "do" }
        )
    }
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

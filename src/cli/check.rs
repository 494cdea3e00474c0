//! `retrylab check`: the expectations of model files, as an exit code for CI.
//!
//! The command accumulates what its seeds show ([`CheckData`]) and renders it; with
//! `--shard` it writes the data of its block instead, and `retrylab merge` adds the blocks up
//! and renders them the same way.

use std::fmt::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::shard::{self, ModelFile};
use super::{
    CheckArgs, CliError, Ctx, determinism, print_determinism, render_outcome, seed_range, warnings,
};
use crate::check::Property;
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
    /// The model's scripted faults, described.
    pub faults: Vec<String>,
    pub designs: Vec<DesignCheck>,
}

/// One design's expectations on the seeds of a block.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct DesignCheck {
    pub design: String,
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

/// A design's search within the model's `explore` bound.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Explored {
    pub line: String,
    pub certified: bool,
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

/// Reads the models of `a`: the model files, and the lines about skipped ones.
/// The models read, each with its path, and the lines about skipped files.
type Loaded = (Vec<(PathBuf, Model)>, Vec<String>);

fn load(ctx: &Ctx, a: &CheckArgs) -> Result<Loaded, CliError> {
    let mut models: Vec<(PathBuf, Model)> = Vec::new();
    let mut skipped = Vec::new();
    let mut refused = Vec::new();
    for path in &a.models {
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
    let options = CheckOptions {
        models: a.models.iter().map(|p| p.display().to_string()).collect(),
        seeds: last - first + 1,
        first_seed: first,
        check_determinism: a.check_determinism,
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
            let (judged, unfired) = if block.1 == 0 {
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
                )
            } else {
                let seeds = (block.0, block.0 + (block.1 - 1));
                let (judged, unfired) = judge_design(model, d, seeds, &|n| progress.advance(n));
                let named = super::named_properties(model, d.name());
                let judged = judged.iter().map(|j| judged_data(j, &named)).collect();
                (judged, unfired)
            };
            let explore = if once {
                model.explore.and_then(|bound| {
                    certify(model, d, bound).map(|found| Explored {
                        line: explore_line(d.name(), bound, &found),
                        certified: found.certified(),
                        violations: if found.certified() {
                            Vec::new()
                        } else {
                            found
                                .violations
                                .iter()
                                .map(|v| super::explore::explain_run(model, d, v, true))
                                .collect()
                        },
                    })
                })
            } else {
                None
            };
            let assumed = assumptions::judge(d, model);
            designs.push(DesignCheck {
                design: d.name().to_string(),
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
        }
    }
    Ok(())
}

/// Renders what every block of seeds showed (in seed order, the first one carrying the
/// work done once) as `check` prints it, with its exit code.
pub(super) fn render(ctx: &Ctx, o: &CheckOptions, blocks: Vec<CheckData>) -> Result<(), CliError> {
    let mut blocks = blocks.into_iter();
    let mut all = blocks
        .next()
        .ok_or_else(|| CliError::Input("no partial result".into()))?;
    for later in blocks {
        append(&mut all, later)
            .map_err(|e| CliError::Input(format!("a damaged partial result: {e}")))?;
    }
    let (count, first) = (o.seeds, o.first_seed);
    let last = first + (count - 1);
    warnings::print(ctx, &all.skipped);
    let mut out = String::new();
    let (mut met, mut unmet, mut empty) = (0, 0, 0);
    let mut warned = Vec::new();
    for model in &all.models {
        let _ = writeln!(
            out,
            "{} ({}): {count} seed{} per design (seeds {first}..={last})",
            model.path,
            model.name,
            if count == 1 { "" } else { "s" }
        );
        if model.designs.is_empty() {
            empty += 1;
            out.push_str("  no expectations (add an \"expect\" section to check this model)\n");
        }
        let mut failed = Vec::new();
        let mut searched = Vec::new();
        for d in &model.designs {
            for j in &d.judged {
                let j = judged(&d.design, j, count, &ctx.designs.properties())
                    .map_err(|e| CliError::Input(format!("a damaged partial result: {e}")))?;
                out.push_str(&verdict_line(&j.0));
                if j.0.met() {
                    met += 1;
                } else {
                    unmet += 1;
                    failed.push(j);
                }
            }
            if let Some(found) = &d.explore {
                out.push_str(&found.line);
                if found.certified {
                    met += 1;
                } else {
                    unmet += 1;
                    searched.push((&d.design, found));
                }
            }
            out.push_str(&d.assumptions_line);
            warned.extend(d.assumption_warnings.iter().cloned());
            warned.extend(warnings::faults(
                &model.name,
                &model.faults,
                &d.design,
                &d.unfired,
                count,
            ));
        }
        let replay = ctx.replay_command(std::path::Path::new(&model.path), None);
        for (j, c) in &failed {
            out.push_str(&explain(&replay, &model.name, j, c.as_ref()));
        }
        for (design, found) in &searched {
            let _ = writeln!(
                out,
                "\nFAIL {} {design}: not certified within the model's explore bound",
                model.name,
            );
            for (text, vector) in &found.violations {
                out.push_str(text);
                let _ = writeln!(out, "replay: {} --ties", replay.choices(design, vector));
            }
        }
        out.push('\n');
    }
    warnings::print(ctx, &warned);
    if o.check_determinism {
        let results = all.determinism.as_ref().ok_or_else(|| {
            CliError::Input(
                "a damaged partial result: shard 1 without its determinism check".into(),
            )
        })?;
        for r in results {
            print_determinism(ctx, r)?;
        }
    }
    let n_models = all.models.len();
    let _ = writeln!(
        out,
        "{} expectation{} in {} model{}: {met} met, {unmet} not met{}",
        met + unmet,
        if met + unmet == 1 { "" } else { "s" },
        n_models,
        if n_models == 1 { "" } else { "s" },
        if empty > 0 {
            format!("; {empty} model(s) without expectations")
        } else {
            String::new()
        }
    );
    ctx.print(&out)?;
    if unmet > 0 {
        return Err(CliError::Failed(format!(
            "check: {unmet} expectation(s) not met"
        )));
    }
    Ok(())
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

/// Searches every schedule within the model's `explore` bound for a violation of the
/// properties the model expects `design` to hold; `None` when it expects none to hold.
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

/// One line for a design's exhaustive search: certified, a violation, or stopped.
fn explore_line(design: &str, b: ExploreBound, found: &Exploration) -> String {
    let k = b.max_faults;
    let what = if found.certified() {
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
        )
    } else if found.budget_runs > 0 {
        format!(
            "incomplete: run {} spent the events budget ({} events) before the horizon",
            found.runs(),
            crate::world::MAX_EVENTS
        )
    } else if let Some(v) = found.violations.first() {
        format!(
            "{} violated by a run with {} fault{}",
            v.property,
            v.faults,
            if v.faults == 1 { "" } else { "s" }
        )
    } else {
        format!("incomplete: stopped at {} runs", found.runs())
    };
    format!(
        "  {:<4}  {design:<24} {:<7}  {what}\n",
        if found.certified() { "ok" } else { "FAIL" },
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

//! `retrylab check`: the expectations of model files, as an exit code for CI.

use std::fmt::Write;
use std::path::PathBuf;

use super::{CheckArgs, CliError, Ctx, check_determinism, render_outcome, seed_range, warnings};
use crate::check::Property;
use crate::design::{Judgement, assumptions};
use crate::explore::check::{Judged, expected_designs, judge_design};
use crate::explore::{Bound, Exploration, Strategy, explore};
use crate::model::{ExploreBound, Model, Want};

pub(super) fn check(a: CheckArgs, ctx: &Ctx) -> Result<(), CliError> {
    let (first, last) = seed_range(a.first_seed, a.seeds)?;
    // Read every model before running anything: a bad file is bad input, whatever its place.
    let mut models: Vec<(PathBuf, Model)> = Vec::new();
    let mut refused = Vec::new();
    for path in &a.models {
        if crate::model::reference::is_schema_file(path) {
            ctx.eprintln(&format!(
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
        return Err(CliError::Model(refused.join("\n")));
    }
    let count = last - first + 1;
    let total: u64 = models
        .iter()
        .map(|(_, m)| expected_designs(m, &ctx.designs).len() as u64 * count)
        .sum();
    let progress = ctx.progress(total, "seeds");
    let mut out = String::new();
    let (mut met, mut unmet, mut empty) = (0, 0, 0);
    let mut warned = Vec::new();
    for (path, model) in &models {
        let _ = writeln!(
            out,
            "{} ({}): {count} seed{} per design (seeds {first}..={last})",
            path.display(),
            model.name,
            if count == 1 { "" } else { "s" }
        );
        let designs = expected_designs(model, &ctx.designs);
        if designs.is_empty() {
            empty += 1;
            out.push_str("  no expectations (add an \"expect\" section to check this model)\n");
        }
        let mut failed = Vec::new();
        let mut searched = Vec::new();
        for d in designs {
            progress.set_message(d.name());
            let (judged, unfired) = judge_design(model, d, (first, last), &|n| progress.advance(n));
            for j in judged {
                out.push_str(&verdict_line(&j));
                if j.met() {
                    met += 1;
                } else {
                    unmet += 1;
                    failed.push(j);
                }
            }
            if let Some(bound) = model.explore {
                let found = certify(model, d, bound);
                if let Some(found) = found {
                    out.push_str(&explore_line(d.name(), bound, &found));
                    if found.certified() {
                        met += 1;
                    } else {
                        unmet += 1;
                        searched.push((d, found));
                    }
                }
            }
            let assumed = assumptions::judge(d, model);
            out.push_str(&assumptions_line(d.name(), &assumed));
            warned.extend(warnings::assumptions(model, d.name(), &assumed));
            warned.extend(warnings::faults(model, d.name(), &unfired, count));
        }
        for j in &failed {
            out.push_str(&explain(ctx, path, model, j));
        }
        let replay = ctx.replay_command(path, None);
        for (d, found) in &searched {
            let _ = writeln!(
                out,
                "\nFAIL {} {}: not certified within the model's explore bound",
                model.name,
                d.name()
            );
            for v in &found.violations {
                out.push_str(&super::explore::explain(model, *d, v, true, &replay));
            }
        }
        out.push('\n');
    }
    progress.finish();
    warnings::print(ctx, &warned);
    if a.check_determinism {
        for (_, model) in &models {
            let designs: Vec<&dyn crate::design::Design> = model
                .designs
                .iter()
                .filter_map(|d| ctx.designs.find(d))
                .collect();
            check_determinism(ctx, model, &designs, (first, last))?;
        }
    }
    let _ = writeln!(
        out,
        "{} expectation{} in {} model{}: {met} met, {unmet} not met{}",
        met + unmet,
        if met + unmet == 1 { "" } else { "s" },
        models.len(),
        if models.len() == 1 { "" } else { "s" },
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
fn explain(ctx: &Ctx, path: &std::path::Path, model: &Model, j: &Judged) -> String {
    let mut s = String::new();
    if j.budget > 0 {
        let _ = writeln!(
            s,
            "\nFAIL {} {}: {} of {} seeds stopped after {} events, before the horizon; such a run is unfinished and shows nothing about {}; shorten the horizon or the workload to finish within the budget",
            model.name,
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
                "\nFAIL {} {}: expected at least one seed to violate {}, but none of {} did",
                model.name, j.design, j.property, j.seeds
            );
        }
        Want::Hold => {
            let _ = writeln!(
                s,
                "\nFAIL {} {}: {} must hold on every seed; {} of {} seeds violate it",
                model.name, j.design, j.property, j.violating, j.seeds
            );
            let Some(c) = &j.counterexample else {
                return s;
            };
            let replay = ctx.replay_command(path, None);
            let _ = writeln!(s, "first violating seed: {}", c.seed);
            let _ = writeln!(s, "  {}", replay.seed(&j.design, c.seed));
            let _ = writeln!(
                s,
                "shrunk to {} choice{} (from {}, in {} runs): {}",
                c.shrunk.vector.0.len(),
                if c.shrunk.vector.0.len() == 1 {
                    ""
                } else {
                    "s"
                },
                c.shrunk.original.0.len(),
                c.shrunk.runs,
                if c.shrunk.vector.0.is_empty() {
                    "(every decision at its default)".to_string()
                } else {
                    c.shrunk.vector.to_string()
                }
            );
            let _ = writeln!(s, "timeline of the shrunk run:\n{}", c.traced.timeline);
            s.push_str(&render_outcome(
                &c.traced,
                &super::named_properties(model, &j.design),
            ));
            let _ = writeln!(
                s,
                "replay: {}",
                replay.choices(&j.design, &c.shrunk.vector.to_string())
            );
        }
    }
    s
}

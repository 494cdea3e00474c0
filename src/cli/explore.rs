//! `retrylab explore`: every schedule within a bound, or a sample of them, for one design.

use std::fmt::Write;

use super::{CliError, Ctx, ExploreArgs, render_outcome};
use crate::check::Property;
use crate::explore::search::{Exploration, Level, Strategy, Violation, explore_reporting};
use crate::explore::shrink::shrink_values;
use crate::model::Model;
use crate::run::run_traced;
use crate::sim::{ChoiceVector, ReplayChooser};

/// What one remembered state costs in the visited set, as measured (peak resident memory
/// over states remembered, on `ticket_chaos`): the 16-byte key and 4-byte value, the hash
/// table's control byte and free room, and the table's doubling as it grows.
const STATE_BYTES: u64 = 80;

pub(super) fn run(a: ExploreArgs, ctx: &Ctx) -> Result<(), CliError> {
    let asked = super::parse_properties("--property", &a.properties, &ctx.designs)?;
    let model = ctx.load_as(&a.model, a.provider.as_deref())?;
    let design = ctx.find_design(&a.design)?;
    let bound = a.bound(&model)?;
    let properties = if asked.is_empty() {
        properties(&model, design)
    } else {
        asked
    };
    let assumed = crate::design::assumptions::judge(design, &model);
    super::warnings::print(
        ctx,
        &super::warnings::assumptions(&model.name, design.name(), &assumed),
    );
    if design.is_external() {
        let line = crate::external::determinism::check(
            &model,
            design,
            &crate::external::determinism::SEEDS,
        )
        .map_err(CliError::Input)?;
        ctx.eprintln(&line);
    }
    let strategy = a.strategy.into();
    let progress = ctx.progress(bound.max_runs, "runs");
    progress.set_message(design.name());
    let found = explore_reporting(&model, design, &properties, strategy, bound, &|n| {
        progress.advance(n)
    });
    progress.finish();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "explore {} ({}), design {}: {}",
        a.model.display(),
        model.name,
        design.name(),
        describe(strategy, &found)
    );
    let _ = writeln!(
        out,
        "properties: {}",
        properties
            .iter()
            .map(Property::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (i, level) in found.levels.iter().enumerate() {
        // The search stops at the first run the events budget cut: in the last level.
        let cut = found.budget_runs > 0 && i + 1 == found.levels.len();
        out.push_str(&level_line(strategy, level, cut));
    }
    if found.strategy == Strategy::Dfs && !found.pruning {
        out.push_str("  (no pruning: an executor of this design cannot fingerprint its memory)\n");
    }
    if strategy == Strategy::Dfs && found.pruning {
        let peak = found
            .levels
            .iter()
            .map(|l| l.distinct_states)
            .max()
            .unwrap_or(0);
        let _ = writeln!(
            out,
            "  visited set: at most {peak} states at once, about {} KiB (bound: --max-states {})",
            (peak * STATE_BYTES).div_ceil(1024),
            bound.max_states
        );
    }
    if found.visited_full {
        let _ = writeln!(
            out,
            "  (the visited set reached --max-states {}: later states were not remembered)",
            bound.max_states
        );
    }
    if strategy == Strategy::Dfs {
        let on = bound.reductions.names();
        let _ = writeln!(
            out,
            "  reductions: {} (docs/exhaustive-search.md; each has a --no-... switch)",
            if on.is_empty() {
                "none".to_string()
            } else {
                on.join(", ")
            }
        );
    }
    let ties = strategy == Strategy::Dfs;
    let replay = ctx.replay_command(&a.model, a.provider.as_deref(), Some(model.digest()));
    for v in &found.violations {
        out.push_str(&explain(&model, design, v, ties, &replay));
    }
    let verdict = verdict(&found);
    out.push_str(&verdict);
    out.push('\n');
    ctx.print(&out)?;
    if !found.violations.is_empty() {
        return Err(CliError::Failed(format!(
            "explore: {} propert{} violated",
            found.violations.len(),
            if found.violations.len() == 1 {
                "y"
            } else {
                "ies"
            }
        )));
    }
    if !found.certified() {
        return Err(CliError::Incomplete(match strategy {
            _ if found.budget_runs > 0 => {
                "explore: a run spent the events budget; nothing is certified".into()
            }
            Strategy::Dfs => {
                "explore: no violation found, but the search stopped at its run limit".into()
            }
            _ => "explore: no violation in the sample (a sample is not a certificate)".into(),
        }));
    }
    Ok(())
}

/// The properties to check: every plain property and those the design brings, and those the model's expectations for
/// the design add (`resolved_within(T)`), whether it expects them to hold or not: a search
/// reports what it finds.
fn properties(model: &Model, design: &dyn crate::design::Design) -> Vec<Property> {
    let mut ps = Property::standard(design.properties());
    for (p, _) in model.expectations(design.name()) {
        if !ps.contains(&p) {
            ps.push(p);
        }
    }
    ps
}

fn describe(strategy: Strategy, found: &Exploration) -> String {
    let b = found.bound;
    match strategy {
        Strategy::Dfs => format!(
            "every schedule with at most {} fault{} (dfs, at most {} runs)",
            b.max_faults,
            if b.max_faults == 1 { "" } else { "s" },
            b.max_runs
        ),
        Strategy::Swarm => format!("swarm testing, at most {} seeds", b.max_runs),
        Strategy::Random => format!("random seeds, at most {}", b.max_runs),
    }
}

/// One level's line; `cut`: the level stopped at a run the events budget cut.
fn level_line(strategy: Strategy, l: &Level, cut: bool) -> String {
    match strategy {
        Strategy::Dfs => format!(
            "  {} fault{}: {} run{}, {} distinct states, {} pruned, depth {}, up to {} deviation{}: {}\n",
            l.max_faults,
            if l.max_faults == 1 { "" } else { "s" },
            l.runs,
            if l.runs == 1 { "" } else { "s" },
            l.distinct_states,
            l.pruned,
            l.max_depth,
            l.max_deviations,
            if l.max_deviations == 1 { "" } else { "s" },
            if l.found {
                "a violation"
            } else if cut {
                "stopped at a run the events budget cut"
            } else if !l.complete {
                "stopped at the run limit"
            } else if l.saturated {
                "complete; no run met a fault choice it had to refuse, so every larger budget runs the same"
            } else {
                "complete"
            }
        ),
        _ => format!(
            "  {} run{}, depth {}\n",
            l.runs,
            if l.runs == 1 { "" } else { "s" },
            l.max_depth
        ),
    }
}

fn verdict(found: &Exploration) -> String {
    if !found.violations.is_empty() {
        return String::new();
    }
    let runs = found.runs();
    let s = if runs == 1 { "" } else { "s" };
    if found.budget_runs > 0 {
        return format!(
            "incomplete: run {runs} stopped after {} events, before the horizon, and the search stopped there; shorten the horizon or the workload to finish within the budget",
            crate::world::MAX_EVENTS
        );
    }
    if found.certified() {
        let k = found.bound.max_faults;
        let covered = found.levels.len() as u32 - 1;
        let verdict = if covered < k {
            format!(
                "certified for {k} fault{}: no property is violated by any schedule within the bound ({runs} run{s}, complete); the model offers no fault choice beyond {covered}, so the bound is reached with {covered} fault{}",
                if k == 1 { "" } else { "s" },
                if covered == 1 { "" } else { "s" }
            )
        } else {
            format!(
                "certified for {k} fault{}: no property is violated by any schedule within the bound ({runs} run{s}, complete)",
                if k == 1 { "" } else { "s" }
            )
        };
        // What "every schedule" means: the timing values the search offered.
        return format!(
            "{verdict}\ncertificate scope: every schedule with at most {k} fault{} at these {}",
            if k == 1 { "" } else { "s" },
            found.scope.describe()
        );
    }
    match found.strategy {
        Strategy::Dfs => format!(
            "incomplete: no violation in {runs} run{s}, but the search stopped at its run limit before covering the bound"
        ),
        _ => format!("no violation in {runs} run{s} (a sample, not a certificate)"),
    }
}

/// The violation, shrunk, its timeline and the command that replays it.
pub(super) fn explain(
    model: &Model,
    design: &dyn crate::design::Design,
    v: &Violation,
    ties: bool,
    replay: &crate::report::ReplayCommand,
) -> String {
    let (mut out, vector) = explain_run(model, design, v, ties);
    let mut command = replay.choices(design.name(), &vector);
    if ties {
        command.push_str(" --ties");
    }
    let _ = writeln!(out, "replay: {command}");
    out
}

/// What [`explain`] prints but its replay line, and the choice vector that line replays.
pub(super) fn explain_run(
    model: &Model,
    design: &dyn crate::design::Design,
    v: &Violation,
    ties: bool,
) -> (String, String) {
    let mut out = String::new();
    let shrunk = shrink_values(model, design, v.property, &v.values, ties);
    let vector = shrunk
        .as_ref()
        .map_or_else(|| ChoiceVector(v.values.clone()), |s| s.vector.clone());
    let _ = writeln!(
        out,
        "\n{} violated by a run with {} fault{}{} (found after {} run{}){}",
        v.property,
        v.faults,
        if v.faults == 1 { "" } else { "s" },
        // Only dfs finds the run with the fewest faults; a sampled run has what it drew.
        if ties { "" } else { " before shrinking" },
        v.after_runs,
        if v.after_runs == 1 { "" } else { "s" },
        match &shrunk {
            Some(s) => format!(
                "; shrunk to {} choice{} (from {}, in {} run{})",
                s.vector.0.len(),
                if s.vector.0.len() == 1 { "" } else { "s" },
                v.values.len(),
                s.runs,
                if s.runs == 1 { "" } else { "s" }
            ),
            None => String::new(),
        }
    );
    let traced = run_traced(
        model,
        design,
        &mut ReplayChooser::new(vector.clone()).ordering_ties(ties),
    );
    out.push_str("timeline:\n");
    out.push_str(&traced.timeline);
    out.push_str(&render_outcome(
        &traced,
        &super::named_properties(model, design.name()),
    ));
    (out, vector.to_string())
}

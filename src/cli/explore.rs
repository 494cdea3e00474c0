//! `retrylab explore`: every schedule within a bound, or a sample of them, for one design.
//!
//! With `--shard I/N --out FILE` a `dfs` search runs shard I's share of the tree
//! ([`explore_shard`]) and writes what it did and found ([`ExploreData`]); `retrylab merge`
//! of the N partials ([`render_merged`]) prints what one machine prints: the same levels
//! (their figures summed), the same violation, shrunk, and its replay command, or the same
//! certificate, with the same exit code.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::shard::{self, ModelFile, ShardInfo};
use super::{CliError, Ctx, ExploreArgs, render_outcome};
use crate::check::Property;
use crate::explore::search::{
    self, Bound, Exploration, Level, Reductions, Strategy, TimingScope, Violation,
    explore_reporting, explore_shard,
};
use crate::explore::shrink::shrink_values;
use crate::model::Model;
use crate::report::ReplayCommand;
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
    let strategy: Strategy = a.strategy.into();
    if a.shard.is_some() && strategy != Strategy::Dfs {
        return Err(CliError::Input(format!(
            "--shard: splits an exhaustive search (--strategy dfs), not a sample of seeds (--strategy {}); run the seeds in parallel with --max-runs on each machine instead",
            strategy.name()
        )));
    }
    let properties = if asked.is_empty() {
        properties(&model, design)
    } else {
        asked
    };
    let assumed = crate::design::assumptions::judge(design, &model);
    let warnings = super::warnings::assumptions(&model.name, design.name(), &assumed);
    // A shard prints only the line naming its partial: the merge prints the warnings.
    if a.shard.is_none() {
        super::warnings::print(ctx, &warnings);
    }
    let mut determinism = None;
    if design.is_external() {
        let line = crate::external::determinism::check(
            &model,
            design,
            &crate::external::determinism::SEEDS,
        )
        .map_err(CliError::Input)?;
        if a.shard.is_none() {
            ctx.eprintln(&line);
        }
        determinism = Some(line);
    }
    let progress = ctx.progress(bound.max_runs, "runs");
    progress.set_message(design.name());
    let report = |n| progress.advance(n);
    let found = match a.shard {
        None => explore_reporting(&model, design, &properties, strategy, bound, &report),
        Some(s) => explore_shard(
            &model,
            design,
            &properties,
            bound,
            search::Shard {
                index: s.index - 1,
                count: s.count,
            },
            &report,
        ),
    };
    progress.finish();
    let ties = strategy == Strategy::Dfs;
    let shown = Shown {
        model_path: a.model.display().to_string(),
        model_name: model.name.clone(),
        design: design.name().to_string(),
        properties: properties.iter().map(Property::to_string).collect(),
        scope: found.scope.describe(),
        shards: None,
        budget_run: format!("run {}", found.runs()),
    };
    if let (Some(s), Some(out)) = (a.shard, &a.out) {
        let data = ExploreData::of(&model, design, &found, shown, warnings, determinism);
        let models = vec![ModelFile::read(&a.model)?];
        let options = ExploreOptions::of(&a, bound);
        return shard::write_partial(ctx, out, "explore", s.info((0, 0)), &options, models, &data);
    }
    let replay = ctx.replay_command(&a.model, a.provider.as_deref(), Some(model.digest()));
    let explanations = found
        .violations
        .iter()
        .map(|v| explain(&model, design, v, ties, &replay))
        .collect();
    shown.render(ctx, &found, explanations)
}

/// What the output of a search names besides the search itself: the same whether one
/// machine searched or the merge of its shards renders it.
struct Shown {
    model_path: String,
    model_name: String,
    design: String,
    properties: Vec<String>,
    /// The certificate's scope, described ([`crate::explore::search::TimingScope::describe`]).
    scope: String,
    /// What a merge of shards adds.
    shards: Option<Merged>,
    /// The run the events budget cut, as the verdict names it: `run 12`.
    budget_run: String,
}

/// The figures of a merge that one search does not have.
struct Merged {
    count: u64,
    /// Runs cut at a split point, summed over the shards.
    split_cut: u64,
    /// The most states one shard's visited set held at once.
    peak_states: u64,
}

impl Shown {
    /// Prints the search's output (each violation already explained), and returns its exit
    /// code.
    fn render(
        &self,
        ctx: &Ctx,
        found: &Exploration,
        explanations: Vec<String>,
    ) -> Result<(), CliError> {
        let strategy = found.strategy;
        let bound = found.bound;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "explore {} ({}), design {}: {}",
            self.model_path,
            self.model_name,
            self.design,
            describe(strategy, found)
        );
        let _ = writeln!(out, "properties: {}", self.properties.join(", "));
        for (i, level) in found.levels.iter().enumerate() {
            // The search stops at the first run the events budget cut: in the last level.
            let cut = found.budget_runs > 0 && i + 1 == found.levels.len();
            out.push_str(&level_line(strategy, level, cut));
        }
        if let Some(m) = &self.shards {
            let _ = writeln!(
                out,
                "  (merged from {} shard{}: runs, distinct states and pruned runs are summed over the shards, depth and deviations the most of any; the runs include {} cut at a split point, another shard's subtree; --max-runs bounds each shard)",
                m.count,
                if m.count == 1 { "" } else { "s" },
                m.split_cut
            );
        }
        if found.strategy == Strategy::Dfs && !found.pruning {
            out.push_str(
                "  (no pruning: an executor of this design cannot fingerprint its memory)\n",
            );
        }
        if strategy == Strategy::Dfs && found.pruning {
            let peak = match &self.shards {
                Some(m) => m.peak_states,
                None => found
                    .levels
                    .iter()
                    .map(|l| l.distinct_states)
                    .max()
                    .unwrap_or(0),
            };
            let _ = writeln!(
                out,
                "  visited set: at most {peak} states at once{}, about {} KiB (bound: --max-states {})",
                if self.shards.is_some() {
                    " in one shard"
                } else {
                    ""
                },
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
        for e in explanations {
            out.push_str(&e);
        }
        out.push_str(&verdict(found, &self.scope, &self.budget_run));
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

/// The verdict lines; `scope`: the certificate's scope, described; `budget_run`: the run
/// the events budget cut, named.
fn verdict(found: &Exploration, scope: &str, budget_run: &str) -> String {
    if !found.violations.is_empty() {
        return String::new();
    }
    let runs = found.runs();
    let s = if runs == 1 { "" } else { "s" };
    if found.budget_runs > 0 {
        return format!(
            "incomplete: {budget_run} stopped after {} events, before the horizon, and the search stopped there; shorten the horizon or the workload to finish within the budget",
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
            "{verdict}\ncertificate scope: every schedule with at most {k} fault{} at these {scope}",
            if k == 1 { "" } else { "s" },
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
    replay: &ReplayCommand,
) -> String {
    let e = Explained::of(model, design, v, ties);
    e.text(&runs(v.after_runs), design.name(), ties, replay)
}

/// What [`explain`] prints but its replay line, and the choice vector that line replays.
pub(super) fn explain_run(
    model: &Model,
    design: &dyn crate::design::Design,
    v: &Violation,
    ties: bool,
) -> (String, String) {
    let e = Explained::of(model, design, v, ties);
    (e.head_and_body(&runs(v.after_runs)), e.vector)
}

/// `1 run`, `12 runs`.
fn runs(n: u64) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

/// A violation as the output explains it: shrunk, with its timeline and outcome. A shard
/// explains its own (the merge has no model to replay), in the words the one-machine
/// search prints, so that a merge prints the same.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Explained {
    /// `no_duplicate violated by a run with 1 fault` (` before shrinking`, for a sample).
    pub head: String,
    /// `; shrunk to 3 choices (from 8, in 14 runs)`, or nothing.
    pub shrunk: String,
    /// `timeline:`, the timeline and the outcome of the (shrunk) run.
    pub body: String,
    /// The choice vector the replay line replays.
    pub vector: String,
}

impl Explained {
    pub fn of(
        model: &Model,
        design: &dyn crate::design::Design,
        v: &Violation,
        ties: bool,
    ) -> Self {
        let shrunk = shrink_values(model, design, v.property, &v.values, ties);
        let vector = shrunk
            .as_ref()
            .map_or_else(|| ChoiceVector(v.values.clone()), |s| s.vector.clone());
        let head = format!(
            "{} violated by a run with {} fault{}{}",
            v.property,
            v.faults,
            if v.faults == 1 { "" } else { "s" },
            // Only dfs finds the run with the fewest faults; a sampled run has what it drew.
            if ties { "" } else { " before shrinking" },
        );
        let shrunk = match &shrunk {
            Some(s) => format!(
                "; shrunk to {} choice{} (from {}, in {})",
                s.vector.0.len(),
                if s.vector.0.len() == 1 { "" } else { "s" },
                v.values.len(),
                runs(s.runs)
            ),
            None => String::new(),
        };
        let traced = run_traced(
            model,
            design,
            &mut ReplayChooser::new(vector.clone()).ordering_ties(ties),
        );
        let mut body = String::from("timeline:\n");
        body.push_str(&traced.timeline);
        body.push_str(&render_outcome(
            &traced,
            &super::named_properties(model, design.name()),
        ));
        Explained {
            head,
            shrunk,
            body,
            vector: vector.to_string(),
        }
    }

    /// The explanation without its replay line; `found_after`: the runs before it was found,
    /// as `12 runs`.
    fn head_and_body(&self, found_after: &str) -> String {
        format!(
            "\n{} (found after {found_after}){}\n{}",
            self.head, self.shrunk, self.body
        )
    }

    /// The explanation and the line that replays the run with `design`.
    fn text(&self, found_after: &str, design: &str, ties: bool, replay: &ReplayCommand) -> String {
        let mut out = self.head_and_body(found_after);
        let command = if ties {
            replay.choices_with_ties(design, &self.vector)
        } else {
            replay.choices(design, &self.vector)
        };
        let _ = writeln!(out, "replay: {command}");
        out
    }
}

/// The options of a sharded `explore` that determine its output (a partial records them;
/// the bound as the search used it, whether from the command line or the model).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ExploreOptions {
    pub model: String,
    pub provider: Option<String>,
    pub design: String,
    /// `--property`, as given.
    pub property: Vec<String>,
    pub max_faults: u32,
    /// Per shard.
    pub max_runs: u64,
    pub max_states: usize,
    pub memo: bool,
    pub por: bool,
    pub symmetry: bool,
    pub snapshots: bool,
    pub timing: bool,
}

impl ExploreOptions {
    fn of(a: &ExploreArgs, bound: Bound) -> Self {
        ExploreOptions {
            model: a.model.display().to_string(),
            provider: a.provider.clone(),
            design: a.design.clone(),
            property: a.properties.clone(),
            max_faults: bound.max_faults,
            max_runs: bound.max_runs,
            max_states: bound.max_states,
            memo: bound.reductions.memo,
            por: bound.reductions.por,
            symmetry: bound.reductions.symmetry,
            snapshots: bound.reductions.snapshots,
            timing: bound.reductions.timing,
        }
    }
}

/// What one shard's search did and found, with what of the model and design the output
/// names, so that the merge renders it without the model file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ExploreData {
    /// The model's name.
    pub model: String,
    /// The design's name.
    pub design: String,
    /// The model's digest, which the replay command carries.
    pub model_digest: String,
    /// The properties checked.
    pub properties: Vec<String>,
    /// The warnings of assumptions that do not hold.
    pub warnings: Vec<String>,
    /// The determinism check's line of an external executor.
    pub determinism: Option<String>,
    pub levels: Vec<Level>,
    pub pruning: bool,
    pub visited_full: bool,
    pub budget_runs: u64,
    /// The violations of the shard's first violating run (every property it violates).
    pub violations: Vec<ViolationData>,
    pub scope: ScopeData,
}

/// A violation a shard found, explained.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ViolationData {
    pub property: String,
    pub faults: u32,
    /// The run's choice values: in its pass, a run's place in depth-first order.
    pub values: Vec<u64>,
    /// The shard's runs before it was found, this one included.
    pub after_runs: u64,
    pub explained: Explained,
}

/// The certificate's scope: the model's and design's named thresholds (the same in every
/// shard), and the thresholds the shard's runs learned (the merge takes their union).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ScopeData {
    /// The scope described without learned thresholds and caveats.
    pub named: String,
    pub learned: Vec<u64>,
    pub caveats: Vec<String>,
}

impl ScopeData {
    fn of(scope: &TimingScope) -> Self {
        let named = TimingScope {
            learned: Vec::new(),
            caveats: Vec::new(),
            ..scope.clone()
        };
        ScopeData {
            named: named.describe(),
            learned: scope.learned.clone(),
            caveats: scope.caveats.clone(),
        }
    }

    /// [`TimingScope::describe`] of the scope with `learned`: the named part as a shard
    /// described it, the rest described by `describe` itself (so the two cannot drift).
    fn describe(&self, learned: &[u64]) -> Result<String, String> {
        let rest = TimingScope {
            named: Vec::new(),
            learned: learned.to_vec(),
            caveats: self.caveats.clone(),
        }
        .describe();
        let bare = TimingScope::default().describe();
        let tail = rest
            .strip_prefix(&bare)
            .ok_or_else(|| format!("a scope description that does not start with {bare:?}"))?;
        Ok(format!("{}{tail}", self.named))
    }
}

impl ExploreData {
    /// The data of a shard's search `found` (its violations explained), as `shown`.
    fn of(
        model: &Model,
        design: &dyn crate::design::Design,
        found: &Exploration,
        shown: Shown,
        warnings: Vec<String>,
        determinism: Option<String>,
    ) -> Self {
        ExploreData {
            model: shown.model_name,
            design: shown.design,
            model_digest: model.digest(),
            properties: shown.properties,
            warnings,
            determinism,
            levels: found.levels.clone(),
            pruning: found.pruning,
            visited_full: found.visited_full,
            budget_runs: found.budget_runs,
            violations: found
                .violations
                .iter()
                .map(|v| ViolationData {
                    property: v.property.to_string(),
                    faults: v.faults,
                    values: v.values.clone(),
                    after_runs: v.after_runs,
                    explained: Explained::of(model, design, v, true),
                })
                .collect(),
            scope: ScopeData::of(&found.scope),
        }
    }

    /// Whether the data reads back (properties) and is the result of one search: levels
    /// 0, 1, ... in order, violations only in the last level, found there.
    pub fn check(&self, props: shard::Props<'_>) -> Result<(), String> {
        for p in &self.properties {
            shard::property(p, props)?;
        }
        if self.levels.is_empty() {
            return Err("no level searched".into());
        }
        for (k, l) in self.levels.iter().enumerate() {
            if l.max_faults as usize != k {
                return Err(format!("level {k} has fault budget {}", l.max_faults));
            }
        }
        let last = &self.levels[self.levels.len() - 1];
        if self.violations.is_empty() == last.found {
            return Err("violations and the level that found them disagree".into());
        }
        for v in &self.violations {
            shard::property(&v.property, props)?;
        }
        Ok(())
    }

    /// The shard's search as [`Exploration`] (no timing scope: see [`ScopeData`]).
    fn exploration(&self, bound: Bound, props: shard::Props<'_>) -> Result<Exploration, String> {
        Ok(Exploration {
            strategy: Strategy::Dfs,
            bound,
            levels: self.levels.clone(),
            pruning: self.pruning,
            visited_full: self.visited_full,
            violations: self
                .violations
                .iter()
                .map(|v| {
                    Ok(Violation {
                        property: shard::property(&v.property, props)?,
                        faults: v.faults,
                        values: v.values.clone(),
                        after_runs: v.after_runs,
                    })
                })
                .collect::<Result<_, String>>()?,
            budget_runs: self.budget_runs,
            scope: TimingScope::default(),
        })
    }

    /// The level the shard's search stopped in.
    fn last(&self) -> &Level {
        &self.levels[self.levels.len() - 1]
    }

    /// The shard stopped short of covering its share: a limit, or the events budget.
    fn unfinished(&self) -> bool {
        self.violations.is_empty() && (self.budget_runs > 0 || !self.last().complete)
    }
}

/// Prints what the unsharded `explore` prints for the partials of its N shards (in shard
/// order), with its exit code.
///
/// The violation shown is the one the one-machine search finds: the shard's whose run has
/// the fewest faults, then the smallest deviation budget, then comes first in depth-first
/// order (the choice values compare as the paths do, every menu being in increasing
/// order). A one-machine search stops at the first violating run of the first pass of the
/// first fault budget that has one; every leaf of that pass is in one shard, and a shard
/// finds the first violating leaf of its own share of it (a state met past the split
/// point that cuts a run there stands for continuations in the same share). Ties cannot
/// happen (every leaf has one owner); they would go to the lower shard.
///
/// A level is complete when every shard's share of it is (or the shard's search saturated
/// in an earlier level), saturated when every shard's is; the certificate needs every
/// shard certified: every level up to K complete (or saturated), no run cut by the events
/// budget, no violation.
pub(super) fn render_merged(
    ctx: &Ctx,
    o: &ExploreOptions,
    parts: Vec<(ShardInfo, ExploreData)>,
) -> Result<(), CliError> {
    let damaged = |e: String| CliError::Input(format!("a damaged partial result: {e}"));
    let props = ctx.designs.properties();
    let first = &parts[0].1;
    for (s, d) in &parts {
        if d.levels.len() > o.max_faults as usize + 1 {
            return Err(damaged(format!(
                "shard {}/{} searched {} fault budgets within --max-faults {}",
                s.index,
                s.count,
                d.levels.len(),
                o.max_faults
            )));
        }
    }
    for (s, d) in &parts[1..] {
        if d.model != first.model
            || d.design != first.design
            || d.model_digest != first.model_digest
            || d.properties != first.properties
            || d.scope.named != first.scope.named
            || d.scope.caveats != first.scope.caveats
        {
            return Err(damaged(format!(
                "shard {}/{} searched another model, design or scope than shard 1",
                s.index, s.count
            )));
        }
    }
    let bound = Bound {
        max_faults: o.max_faults,
        max_runs: o.max_runs,
        max_states: o.max_states,
        reductions: Reductions {
            memo: o.memo,
            por: o.por,
            symmetry: o.symmetry,
            snapshots: o.snapshots,
            timing: o.timing,
        },
    };
    let explorations = parts
        .iter()
        .map(|(_, d)| d.exploration(bound, &props))
        .collect::<Result<Vec<_>, _>>()
        .map_err(damaged)?;
    // The winning shard: fewest faults, smallest deviation budget, first in depth-first order.
    let winner = parts
        .iter()
        .enumerate()
        .filter(|(_, (_, d))| !d.violations.is_empty())
        .min_by(|(i, (_, a)), (j, (_, b))| {
            let key = |d: &ExploreData| {
                let l = d.last();
                (
                    l.max_faults,
                    l.deviation_budget,
                    d.violations[0].values.clone(),
                )
            };
            key(a).cmp(&key(b)).then(i.cmp(j))
        })
        .map(|(i, _)| i);
    // The last level the one-machine search reaches.
    let end = match winner {
        Some(w) => parts[w].1.last().max_faults,
        None => match parts
            .iter()
            .filter(|(_, d)| d.unfinished())
            .min_by_key(|(_, d)| d.last().max_faults)
        {
            Some((_, d)) => d.last().max_faults,
            None => parts
                .iter()
                .map(|(_, d)| d.last().max_faults)
                .max()
                .unwrap_or(0),
        },
    };
    let mut levels = Vec::new();
    for k in 0..=end {
        let mut level = Level {
            max_faults: k,
            complete: true,
            saturated: true,
            ..Level::default()
        };
        for (_, d) in &parts {
            let Some(l) = d.levels.get(k as usize) else {
                // A shard that stopped before level k either covered every larger budget
                // (its last level saturated) or did not cover its share.
                let covered = d.violations.is_empty() && !d.unfinished() && d.last().saturated;
                level.complete &= covered;
                level.saturated &= covered;
                continue;
            };
            level.runs += l.runs;
            level.pruned += l.pruned;
            level.distinct_states += l.distinct_states;
            level.states_visited += l.states_visited;
            level.split_cut += l.split_cut;
            level.max_depth = level.max_depth.max(l.max_depth);
            level.max_deviations = level.max_deviations.max(l.max_deviations);
            level.deviation_budget = level.deviation_budget.max(l.deviation_budget);
            level.complete &= l.complete;
            level.saturated &= l.saturated;
        }
        level.found = winner.is_some() && k == end;
        levels.push(level);
    }
    // The events budget cut a run in a shard that stopped in the last level shown.
    let budget = parts
        .iter()
        .find(|(_, d)| d.budget_runs > 0 && d.last().max_faults == end);
    let violations = match winner {
        Some(w) => explorations[w].violations.clone(),
        None => Vec::new(),
    };
    let merged = Exploration {
        strategy: Strategy::Dfs,
        bound,
        levels,
        pruning: parts.iter().all(|(_, d)| d.pruning),
        visited_full: parts.iter().any(|(_, d)| d.visited_full),
        violations,
        budget_runs: budget.map_or(0, |(_, d)| d.budget_runs),
        scope: TimingScope::default(),
    };
    // What the merged levels say must be what the shards say.
    if winner.is_none() && merged.certified() != explorations.iter().all(Exploration::certified) {
        return Err(damaged(
            "the shards' levels do not add up to one search".into(),
        ));
    }
    let mut learned: Vec<u64> = parts
        .iter()
        .flat_map(|(_, d)| d.scope.learned.clone())
        .collect();
    learned.sort_unstable();
    learned.dedup();
    let n = parts[0].0.count;
    let shown = Shown {
        model_path: o.model.clone(),
        model_name: first.model.clone(),
        design: first.design.clone(),
        properties: first.properties.clone(),
        scope: first.scope.describe(&learned).map_err(damaged)?,
        shards: Some(Merged {
            count: n,
            split_cut: merged.levels.iter().map(|l| l.split_cut).sum(),
            // The visited set is one machine's: the most states one shard held at once.
            peak_states: parts
                .iter()
                .flat_map(|(_, d)| d.levels.iter().map(|l| l.distinct_states))
                .max()
                .unwrap_or(0),
        }),
        budget_run: budget.map_or_else(String::new, |(s, _)| {
            let runs = explorations[(s.index - 1) as usize].runs();
            format!("run {runs} of shard {}/{n}", s.index)
        }),
    };
    super::warnings::print(ctx, &first.warnings);
    if let Some(line) = &first.determinism {
        ctx.eprintln(line);
    }
    let replay = ReplayCommand {
        program: ctx.program.clone(),
        flags: ctx.flags.clone(),
        flagged: ctx.flagged(),
        model_path: o.model.clone(),
        provider: o.provider.clone(),
        model_digest: Some(first.model_digest.clone()),
    };
    let explanations = match winner {
        Some(w) => parts[w]
            .1
            .violations
            .iter()
            .map(|v| {
                v.explained.text(
                    &format!("{} in shard {}/{n}", runs(v.after_runs), w + 1),
                    &first.design,
                    true,
                    &replay,
                )
            })
            .collect(),
        None => Vec::new(),
    };
    shown.render(ctx, &merged, explanations)
}

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
use super::{CliError, Ctx};
use crate::check::Property;
use crate::design::Registry;
use crate::explore::ReplayCommand;
use crate::explore::explained::{Explained, explain, runs};
use crate::explore::search::{
    self, Bound, Exploration, Level, MergeError, Reductions, Strategy, TimingScope, Violation,
    check_levels, explore_reporting, explore_shard, merge_shards,
};
use crate::model::Catalog;
use crate::model::Model;
use clap::ValueEnum;
use std::path::PathBuf;

/// What one remembered state costs in the visited set, as measured (peak resident memory
/// over states remembered, on `ticket_chaos`): the 16-byte key and 4-byte value, the hash
/// table's control byte and free room, and the table's doubling as it grows.
const STATE_BYTES: u64 = 80;

pub(super) fn run(a: ExploreArgs, ctx: &Ctx) -> Result<(), CliError> {
    ctx.defer_warnings_if(a.shard.is_some());
    let asked = parse_properties("--property", &a.properties, &ctx.designs)?;
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
    let (warnings, determinism) = preamble(&a, ctx, &model, design)?;
    let found = search(&a, ctx, &model, design, &properties, bound);
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
        return shard::write_partial::<ExploreCommand>(
            ctx,
            out,
            s.info((0, 0)),
            &options,
            models,
            &data,
        );
    }
    let replay = ctx.replay_command(&a.model, a.provider.as_deref(), Some(model.digest()));
    let ties = strategy == Strategy::Dfs;
    let explanations = found
        .violations
        .iter()
        .map(|v| explain(&model, design, v, ties, &replay))
        .collect();
    shown.render(ctx, &found, explanations)
}

/// What comes before the search: the warnings of the design's assumptions that do not
/// hold on the model, and an external executor's determinism check. Printed unsharded; a
/// shard prints only the line naming its partial, and the merge prints these.
fn preamble(
    a: &ExploreArgs,
    ctx: &Ctx,
    model: &Model,
    design: &dyn crate::design::Design,
) -> Result<(Vec<String>, Option<String>), CliError> {
    let assumed = crate::design::assumptions::judge(design, model);
    let warnings = crate::design::assumptions::warnings(&model.name, design.name(), &assumed);
    if a.shard.is_none() {
        super::warnings::print(ctx, &warnings);
    }
    let determinism = design
        .check_determinism(model, ctx.determinism_check)
        .map_err(CliError::Input)?;
    if let (None, Some(line)) = (a.shard, &determinism) {
        ctx.eprintln(line);
    }
    Ok((warnings, determinism))
}

/// The search itself, with a progress bar: the whole search, or the shard's share.
fn search(
    a: &ExploreArgs,
    ctx: &Ctx,
    model: &Model,
    design: &dyn crate::design::Design,
    properties: &[Property],
    bound: Bound,
) -> Exploration {
    let progress = ctx.progress(bound.max_runs, "runs");
    progress.set_message(design.name());
    let report = |n| progress.advance(n);
    let found = match a.shard {
        None => explore_reporting(model, design, properties, a.strategy.into(), bound, &report),
        Some(s) => explore_shard(
            model,
            design,
            properties,
            bound,
            search::Shard {
                index: s.index - 1,
                count: s.count,
            },
            &report,
        ),
    };
    progress.finish();
    found
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
        let mut out = String::new();
        let _ = writeln!(
            out,
            "explore {} ({}), design {}: {}",
            self.model_path,
            self.model_name,
            self.design,
            describe(found.strategy, found)
        );
        let _ = writeln!(out, "properties: {}", self.properties.join(", "));
        out.push_str(&self.levels(found));
        out.push_str(&self.notes(found));
        for e in explanations {
            out.push_str(&e);
        }
        out.push_str(&verdict(found, &self.scope, &self.budget_run));
        out.push('\n');
        ctx.print(&out)?;
        status(found)
    }

    /// A line per level, and what a merge of shards adds to them.
    fn levels(&self, found: &Exploration) -> String {
        let mut out = String::new();
        for (i, level) in found.levels.iter().enumerate() {
            // The search stops at the first run the events budget cut: in the last level.
            let cut = found.budget_runs > 0 && i + 1 == found.levels.len();
            out.push_str(&level_line(found.strategy, level, cut));
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
        out
    }

    /// The notes on how a `dfs` search went: pruning, the visited set and its bound, the
    /// reductions on.
    fn notes(&self, found: &Exploration) -> String {
        let mut out = String::new();
        let bound = found.bound;
        let dfs = found.strategy == Strategy::Dfs;
        if dfs && !found.pruning {
            out.push_str(
                "  (no pruning: an executor of this design cannot fingerprint its memory)\n",
            );
        }
        if dfs && found.pruning {
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
        if dfs {
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
        out
    }
}

/// The exit code of a search: 1 a violation, 3 no certificate, 0 certified.
fn status(found: &Exploration) -> Result<(), CliError> {
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
        return Err(CliError::Incomplete(match found.strategy {
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
    /// The bound the shards searched.
    fn bound(&self) -> Bound {
        Bound {
            max_faults: self.max_faults,
            max_runs: self.max_runs,
            max_states: self.max_states,
            reductions: Reductions {
                memo: self.memo,
                por: self.por,
                symmetry: self.symmetry,
                snapshots: self.snapshots,
                timing: self.timing,
            },
        }
    }

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

    /// The shard's search as [`Exploration`] (of the timing scope only the thresholds the
    /// shard learned: see [`ScopeData`]).
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
            scope: TimingScope {
                learned: self.scope.learned.clone(),
                ..TimingScope::default()
            },
        })
    }
}

/// Prints what the unsharded `explore` prints for the partials of its N shards (in shard
/// order), with its exit code. Which shard's violation is the one-machine search's, and
/// which levels are complete and certified, the library decides
/// ([`crate::explore::merge_shards`]); this renders it.
pub(super) fn render_merged(
    ctx: &Ctx,
    o: &ExploreOptions,
    parts: Vec<(ShardInfo, ExploreData)>,
) -> Result<(), CliError> {
    let damaged = |e: String| CliError::Input(format!("a damaged partial result: {e}"));
    let props = ctx.designs.properties();
    let bound = o.bound();
    let refused = |e: MergeError| damaged(merge_error(e, o, &parts));
    check_levels(bound, parts.iter().map(|(_, d)| d.levels.len())).map_err(refused)?;
    same_search(&parts).map_err(damaged)?;
    let explorations = parts
        .iter()
        .map(|(_, d)| d.exploration(bound, &props))
        .collect::<Result<Vec<_>, _>>()
        .map_err(damaged)?;
    let merged = merge_shards(bound, &explorations).map_err(refused)?;
    let first = &parts[0].1;
    let n = parts[0].0.count;
    let shown = Shown {
        model_path: o.model.clone(),
        model_name: first.model.clone(),
        design: first.design.clone(),
        properties: first.properties.clone(),
        scope: (first.scope)
            .describe(&merged.exploration.scope.learned)
            .map_err(damaged)?,
        shards: Some(Merged {
            count: n,
            split_cut: merged.split_cut,
            peak_states: merged.peak_states,
        }),
        budget_run: merged.budget_shard.map_or_else(String::new, |b| {
            let runs = explorations[b].runs();
            format!("run {runs} of shard {}/{n}", parts[b].0.index)
        }),
    };
    super::warnings::print(ctx, &first.warnings);
    if let Some(line) = &first.determinism {
        ctx.eprintln(line);
    }
    let explanations = match merged.winner {
        Some(w) => explained_in_shard(ctx, o, first, &parts[w].1, w as u64 + 1, n),
        None => Vec::new(),
    };
    shown.render(ctx, &merged.exploration, explanations)
}

/// Why the shards' searches do not merge, as the merge says it.
fn merge_error(e: MergeError, o: &ExploreOptions, parts: &[(ShardInfo, ExploreData)]) -> String {
    match e {
        MergeError::Levels { shard, levels } => format!(
            "shard {}/{} searched {levels} fault budgets within --max-faults {}",
            parts[shard].0.index, parts[shard].0.count, o.max_faults
        ),
        MergeError::DoNotAddUp => "the shards' levels do not add up to one search".into(),
    }
}

/// Whether every shard searched what shard 1 did: the same model, design, properties and
/// named scope.
fn same_search(parts: &[(ShardInfo, ExploreData)]) -> Result<(), String> {
    let first = &parts[0].1;
    for (s, d) in &parts[1..] {
        if d.model != first.model
            || d.design != first.design
            || d.model_digest != first.model_digest
            || d.properties != first.properties
            || d.scope.named != first.scope.named
            || d.scope.caveats != first.scope.caveats
        {
            return Err(format!(
                "shard {}/{} searched another model, design or scope than shard 1",
                s.index, s.count
            ));
        }
    }
    Ok(())
}

/// The violations of `winner`, shard `index` of `n`, explained as the one-machine search
/// explains them, with the run named in its shard; `first`: shard 1's data (the model and
/// design, the same in every shard).
fn explained_in_shard(
    ctx: &Ctx,
    o: &ExploreOptions,
    first: &ExploreData,
    winner: &ExploreData,
    index: u64,
    n: u64,
) -> Vec<String> {
    let replay = ReplayCommand {
        program: ctx.program.clone(),
        flags: ctx.flags.clone(),
        flagged: ctx.flagged(),
        model_path: o.model.clone(),
        provider: o.provider.clone(),
        model_digest: Some(first.model_digest.clone()),
    };
    (winner.violations)
        .iter()
        .map(|v| {
            v.explained.text(
                &format!("{} in shard {index}/{n}", runs(v.after_runs)),
                &first.design,
                true,
                &replay,
            )
        })
        .collect()
}

/// `explore --shard`: a share of the search tree.
pub(super) struct ExploreCommand;

impl shard::Sharded for ExploreCommand {
    const COMMAND: &'static str = "explore";
    const SPLITS_TREE: bool = true;
    type Options = ExploreOptions;
    type Data = ExploreData;

    fn check(data: &ExploreData, _: &ShardInfo, props: shard::Props<'_>) -> Result<(), String> {
        data.check(props)
    }

    fn render(
        ctx: &Ctx,
        options: &ExploreOptions,
        shards: Vec<(ShardInfo, ExploreData)>,
        _: &super::MergeArgs,
    ) -> Result<(), CliError> {
        render_merged(ctx, options, shards)
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum StrategyArg {
    /// Every choice sequence with at most K faults, fewest faults first.
    Dfs,
    /// Random seeds, each with its own mix of enabled faults.
    Swarm,
    /// Plain random seeds.
    Random,
}

impl From<StrategyArg> for crate::explore::Strategy {
    fn from(s: StrategyArg) -> Self {
        match s {
            StrategyArg::Dfs => crate::explore::Strategy::Dfs,
            StrategyArg::Swarm => crate::explore::Strategy::Swarm,
            StrategyArg::Random => crate::explore::Strategy::Random,
        }
    }
}

pub(super) const EXPLORE_AFTER_HELP: &str = "\
The bound: at most K non-default fault choices per run (a lost request or reply, a duplicate,
a crash, a provider error, an async failure, a lost authorization); every agent reaction and
every schedule choice (which worker, the order of events due at the same instant); each
timing range over a menu (its ends, and just below and above each threshold of the model
it straddles). A run that reaches a state an earlier run already explored (with as many
faults left) is cut there. Checked: every plain property and those the model's expectations
name for the design, whether it expects them to hold or to be violated (a search reports
what it finds); --property checks only those named (check certifies the ones expected to
hold). Without --max-faults, the model's \"explore\" bound, else 2; at most 6.

Exit codes: 0 certified (dfs, complete, no violation), 1 a violation, 2 bad input, 3 no
violation but no certificate either (dfs stopped at a limit, or swarm/random sampled).";

#[derive(clap::Args, Debug)]
pub(super) struct ExploreArgs {
    /// Model file (JSON).
    pub(super) model: PathBuf,
    /// Run the scenario against this built-in provider preset instead of the model's own
    /// provider section (the preset as it is).
    #[arg(long, value_name = "PRESET")]
    pub(super) provider: Option<String>,
    /// Design to explore.
    #[arg(long, value_name = "NAME")]
    pub(super) design: String,
    /// Most non-default fault choices per run (dfs).
    #[arg(long, value_name = "K")]
    pub(super) max_faults: Option<u32>,
    /// Most runs (dfs) or seeds (swarm, random). Default: the model's
    /// `expect.DESIGN.explore_max_runs`, else its `explore` bound's, else 1000000.
    #[arg(long, value_name = "N")]
    pub(super) max_runs: Option<u64>,
    /// Most states remembered in the visited set (about 80 bytes each).
    #[arg(long, value_name = "S", default_value_t = 2_000_000)]
    pub(super) max_states: usize,
    /// Check only these properties (comma-separated).
    #[arg(long = "property", value_name = "PROP,...", value_delimiter = ',')]
    pub(super) properties: Vec<String>,
    /// How to search.
    #[arg(long, value_enum, default_value = "dfs")]
    pub(super) strategy: StrategyArg,
    #[command(flatten)]
    pub(super) reductions: ReductionArgs,
    /// Search only shard I of N of the tree (I from 1) and write a partial result to --out
    /// instead of the output; `retrylab merge` of the N partials prints the one-machine
    /// verdict and certificate. The tree is cut at the first choice points whose option
    /// counts multiply to 64·N; the subtrees below, in depth-first order, go round robin to
    /// the shards. --max-runs bounds each shard. dfs only. A shard that wrote its partial
    /// exits 0; the merge has the verdict.
    #[arg(long, value_name = "I/N", value_parser = shard::parse_shard, requires = "out")]
    pub(super) shard: Option<shard::Shard>,
    /// With --shard: the partial result file to write.
    #[arg(long = "out", value_name = "FILE", requires = "shard")]
    pub(super) out: Option<PathBuf>,
}

/// Switches for the reductions of an exhaustive search: each is on by default, and each
/// only spares runs whose outcome another run shows, so a search with one off must report
/// the same violations and the same certificate (the comparison is one command).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub(super) struct ReductionArgs {
    /// Do not cut a state whose every continuation an earlier pass or fault budget already
    /// explored (each pass then starts from nothing).
    #[arg(long)]
    pub(super) no_memo: bool,
    /// Explore every order of events due at the same instant, also of independent ones
    /// (partial-order reduction off).
    #[arg(long)]
    pub(super) no_por: bool,
    /// Explore every one of interchangeable alternatives (symmetry reduction off): each
    /// worker that has run nothing yet, each order of identical intents arriving together.
    #[arg(long)]
    pub(super) no_symmetry: bool,
    /// Re-run every run from its start instead of restoring the world saved where its
    /// path left the previous run's (the same runs; only slower).
    #[arg(long)]
    pub(super) no_snapshots: bool,
    /// Hash every moment a state keeps exactly, instead of only as far as it can still
    /// change the run (timing equivalence off): states reached at the same moment by
    /// histories that differ only in when things happened are then told apart.
    #[arg(long)]
    pub(super) no_timing: bool,
    /// Every reduction off: the plain depth-first search.
    #[arg(long)]
    pub(super) no_reductions: bool,
}

impl ReductionArgs {
    pub(super) fn reductions(self) -> crate::explore::Reductions {
        if self.no_reductions {
            return crate::explore::Reductions::NONE;
        }
        crate::explore::Reductions {
            memo: !self.no_memo,
            por: !self.no_por,
            symmetry: !self.no_symmetry,
            snapshots: !self.no_snapshots,
            timing: !self.no_timing,
        }
    }
}

impl ExploreArgs {
    /// The bound: the command line's, else the model's, else the defaults.
    pub(super) fn bound(&self, model: &Model) -> Result<crate::explore::Bound, CliError> {
        let default = crate::explore::Bound::default();
        let from_model = model.explore;
        let max_faults = self
            .max_faults
            .or(from_model.map(|e| e.max_faults))
            .unwrap_or(default.max_faults);
        if max_faults > crate::model::MAX_EXPLORE_FAULTS {
            return Err(CliError::Input(format!(
                "--max-faults {max_faults}: more than the limit of {} for an exhaustive search; sample seeds with --strategy swarm or random instead",
                crate::model::MAX_EXPLORE_FAULTS
            )));
        }
        let max_runs = self
            .max_runs
            .or(model
                .expect
                .get(&self.design)
                .and_then(|e| e.explore_max_runs))
            .or(from_model.map(|e| e.max_runs))
            .unwrap_or(default.max_runs);
        if max_runs == 0 {
            return Err(CliError::Input("--max-runs 0: must be at least 1".into()));
        }
        if self.max_states == 0 {
            return Err(CliError::Input("--max-states 0: must be at least 1".into()));
        }
        Ok(crate::explore::Bound {
            max_faults,
            max_runs,
            max_states: self.max_states,
            reductions: self.reductions.reductions(),
        })
    }
}

/// The properties a flag names: built-in ones, or ones the registered designs bring.
pub(super) fn parse_properties(
    flag: &str,
    names: &[String],
    designs: &Registry,
) -> Result<Vec<Property>, CliError> {
    let custom = designs.properties();
    names
        .iter()
        .map(|s| {
            Property::parse_with(s, &custom).map_err(|e| CliError::Input(format!("{flag}: {e}")))
        })
        .collect()
}

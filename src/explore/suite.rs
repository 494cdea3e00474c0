//! A check of models' expectations, as a library call: what `retrylab check` does between
//! reading its arguments and printing its verdicts. Per model and per design it names in
//! `expect`: the expectations judged over a block of seeds (each failed `hold` with its
//! shrunk counterexample), the scripted faults that never fired, the contract assumptions
//! judged; once per check (the only block, or shard 1), each design's exhaustive search
//! within the model's `explore` bound and the determinism self-check. [`merge`] adds the
//! blocks of a sharded check up, and [`Tally`] says what they add up to.
//!
//! Everything a block gives ([`CheckData`]) is serializable: a shard writes it into its
//! partial result, properties by name.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::check::{Judged, expected_designs, judge_design};
use super::explained::explain_run;
use super::result::{Props, property, want};
use super::{Bound, Exploration, Progress, Strategy, explore};
use crate::check::{Metrics, Property};
use crate::design::{Design, Judgement, Registry, assumptions};
use crate::model::{ExploreBound, Model, Want};

/// What the seeds of a block show, with what of the models the output names.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckData {
    /// The lines about skipped files (the JSON Schema given as a model).
    pub skipped: Vec<String>,
    pub models: Vec<ModelCheck>,
    /// Per model, the determinism self-check's line or failure, up to the first failure
    /// (shard 1 only, with --check-determinism).
    pub determinism: Option<Vec<Result<String, String>>>,
}

/// One model file's expectations on the seeds of a block.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModelCheck {
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
pub struct DesignCheck {
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
pub struct JudgedData {
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
pub struct CounterexampleText {
    pub seed: u64,
    pub choices: String,
    pub choices_len: usize,
    pub original_len: usize,
    pub runs: u64,
    /// The timeline, then the outcome lines, of the shrunk run.
    pub timeline: String,
    pub outcome: String,
}

crate::sim::named_enum! {
    /// What a design's search within the model's `explore` bound shows.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Certification {
        /// Every schedule within the bound, and none violates a property that must hold.
        Certified => "certified",
        /// A schedule violates one: a failure.
        Violated => "violated",
        /// No violation, but the search stopped (its run limit, or a run spent the events
        /// budget) before covering the bound: neither a pass nor a failure.
        NotCertified => "not_certified",
    }
}

impl Certification {}

/// A design's search within the model's `explore` bound.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Explored {
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
    pub fn check(&self, first: u64, seeds: u64, props: Props<'_>) -> Result<(), String> {
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

/// One block of a check's seeds, and what to do with it.
pub struct Suite<'a> {
    /// The models, each with its path as given.
    pub models: &'a [(String, Model)],
    /// The designs the models' names resolve to.
    pub designs: &'a Registry,
    /// The check's seeds, first and last.
    pub range: (u64, u64),
    /// This block's first seed and number of seeds.
    pub block: (u64, u64),
    /// Whether this block does the work done once per check (the searches, the determinism
    /// self-check): the only block, or shard 1.
    pub once: bool,
    /// The run limit of every search, in place of the model's and the design's.
    pub max_runs: Option<u64>,
    /// Whether to run the determinism self-check (with `once`).
    pub check_determinism: bool,
    /// Whether external executors' determinism is checked before their runs (every block;
    /// not with `--no-determinism-check`).
    pub check_externals: bool,
}

impl Suite<'_> {
    /// The units of work [`run_block`] reports to its progress: the seeds of every design
    /// checked.
    pub fn work(&self) -> u64 {
        self.models
            .iter()
            .map(|(_, m)| expected_designs(m, self.designs).len() as u64 * self.block.1)
            .sum()
    }
}

/// Runs block `s` but its determinism self-check ([`determinism`]); `note` receives the lines to show the user as they come (an external
/// executor's determinism check, before its search). An error is a failure to run (an
/// external executor that cannot be checked), not a failed expectation.
pub fn run_block(
    s: &Suite<'_>,
    progress: &dyn Progress,
    note: &dyn Fn(&str),
) -> Result<CheckData, String> {
    let mut checked = Vec::new();
    for (path, model) in s.models {
        let mut designs = Vec::new();
        for d in expected_designs(model, s.designs) {
            progress.message(d.name());
            designs.push(design_check(s, model, d, progress, note)?);
        }
        checked.push(ModelCheck {
            path: path.clone(),
            name: model.name.clone(),
            digest: model.digest(),
            faults: model
                .faults
                .iter()
                .map(crate::model::Fault::describe)
                .collect(),
            designs,
        });
    }
    let data = CheckData {
        skipped: Vec::new(),
        models: checked,
        determinism: None,
    };
    Ok(data)
}

/// The determinism self-check of block `s` (with `s.check_determinism` and `s.once`; `None`
/// otherwise): per model, its line, up to the first failure. It goes into the block's data
/// ([`CheckData::determinism`]) beside what [`run_block`] gives.
pub fn determinism(s: &Suite<'_>) -> Option<Vec<Result<String, String>>> {
    (s.check_determinism && s.once).then(|| {
        let mut results = Vec::new();
        for (_, model) in s.models {
            let designs: Vec<&dyn Design> = model
                .designs
                .iter()
                .filter_map(|d| s.designs.find(d))
                .collect();
            let r = super::determinism::check_model(model, &designs, s.range);
            let failed = r.is_err();
            results.push(r);
            if failed {
                break;
            }
        }
        results
    })
}

/// One design's expectations of `model` on the block of `s`.
fn design_check(
    s: &Suite<'_>,
    model: &Model,
    d: &'static dyn Design,
    progress: &dyn Progress,
    note: &dyn Fn(&str),
) -> Result<DesignCheck, String> {
    // An external executor's runs, and a search of it, rely on its determinism: checked
    // first (once per command and `init` line).
    if let Some(line) = d.check_determinism(model, s.check_externals)? {
        note(&line);
    }
    let (judged, unfired, metrics) = if s.block.1 == 0 {
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
        let seeds = (s.block.0, s.block.0 + (s.block.1 - 1));
        let (judged, unfired, metrics) = judge_design(model, d, seeds, &|n| progress.advance(n));
        let named = model.named_properties(d.name());
        let judged = judged.iter().map(|j| judged_data(j, &named)).collect();
        (judged, unfired, metrics)
    };
    let explore = if s.once {
        model
            .explore
            .map(|b| bound_for(model, d.name(), b, s.max_runs))
            .and_then(|bound| {
                certify(model, d, bound).map(|found| explored(model, d, bound, &found))
            })
    } else {
        None
    };
    let assumed = assumptions::judge(d, model);
    Ok(DesignCheck {
        design: d.name().to_string(),
        metrics,
        judged,
        unfired,
        assumptions_line: assumptions_line(d.name(), &assumed),
        assumption_warnings: assumptions::warnings(&model.name, d.name(), &assumed),
        explore,
    })
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
            outcome: c.traced.outcome_text(named),
        }),
    }
}

/// The data of every block (in seed order, the first one carrying the work done once),
/// added up.
pub fn merge(blocks: Vec<CheckData>) -> Result<CheckData, String> {
    let mut blocks = blocks.into_iter();
    let mut all = blocks.next().ok_or("no partial result")?;
    for later in blocks {
        append(&mut all, later)?;
    }
    Ok(all)
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

/// An expectation of all the seeds, judged, and its counterexample.
pub fn judged(
    design: &str,
    j: &JudgedData,
    seeds: u64,
    props: Props<'_>,
) -> Result<(Judged, Option<CounterexampleText>), String> {
    Ok((
        Judged {
            design: design.to_string(),
            property: property(&j.property, props)?,
            want: want(&j.want)?,
            violating: j.violating,
            seeds,
            budget: j.budget,
            counterexample: None,
        },
        j.counterexample.clone(),
    ))
}

/// What the verdicts add up to, and so the exit code.
pub struct Tally {
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

crate::sim::named_enum! {
    /// The verdict of a whole `check`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Verdict {
        Pass => "pass",
        Fail => "fail",
        NotCertified => "not_certified",
    }
}

impl Verdict {
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::Fail => 1,
            Verdict::NotCertified => 3,
        }
    }
}

impl Tally {
    /// What the expectations of `models` (over `seeds` seeds) add up to.
    pub fn of(
        models: &[ModelCheck],
        seeds: u64,
        allow_empty: bool,
        determinism: Option<&Vec<Result<String, String>>>,
        props: Props<'_>,
    ) -> Result<Tally, String> {
        let mut t = Tally {
            met: 0,
            unmet: 0,
            not_certified: 0,
            empty: 0,
            allow_empty,
            nondeterministic: determinism.is_some_and(|r| r.iter().any(Result::is_err)),
        };
        for m in models {
            if m.designs.is_empty() {
                t.empty += 1;
            }
            for d in &m.designs {
                for j in &d.judged {
                    if judged(&d.design, j, seeds, props)?.0.met() {
                        t.met += 1;
                    } else {
                        t.unmet += 1;
                    }
                }
                match d.explore.as_ref().map(|e| e.status) {
                    None => {}
                    Some(Certification::Certified) => t.met += 1,
                    Some(Certification::Violated) => t.unmet += 1,
                    Some(Certification::NotCertified) => t.not_certified += 1,
                }
            }
        }
        Ok(t)
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
    pub fn line(&self, models: usize) -> String {
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
            .map(|v| explain_run(model, d, v, true))
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
pub fn assumptions_line(design: &str, judged: &[Judgement]) -> String {
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

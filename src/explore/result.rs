//! What a sweep of seeds gives per design ([`DesignResult`]), a comparison of designs on one
//! model ([`Report`]), and the command lines that replay its runs ([`ReplayCommand`]): the
//! data the renderers of [`crate::report`] turn into tables, JSON and pages.

use serde::{Deserialize, Serialize};

use crate::check::{Metrics, Property, Violations};
use crate::design::Judgement;
use crate::model::Want;

/// The result of running one design over a set of seeds.
#[derive(Clone, Debug)]
pub struct DesignResult {
    pub design: String,
    pub metrics: Metrics,
    /// Seeds violating each property evaluated.
    pub violations: Violations,
    /// Per property (same order), the first violating seeds kept (`--show-failures`).
    pub failures: Vec<Vec<u64>>,
    /// What the model expects of this design.
    pub expect: Vec<(Property, Want)>,
    /// The design's contract assumptions, judged against the model: where one does not
    /// hold, the design's guarantee does not apply.
    pub assumptions: Vec<Judgement>,
    /// The properties the design promises where every assumption holds
    /// ([`Design::guarantee`](crate::design::Design::guarantee)); empty for a design that
    /// promises nothing.
    pub guarantee: Vec<Property>,
    /// Scripted faults of the model (indices in its list) that fired on no seed.
    pub unfired: Vec<usize>,
}

impl DesignResult {
    /// The assumptions that do not hold on the model.
    pub fn failed_assumptions(&self) -> impl Iterator<Item = &Judgement> {
        self.assumptions.iter().filter(|a| !a.holds)
    }

    /// Whether this sweep meets the expectation that `p` holds or is violated. None is met
    /// when a seed's run was cut by the events budget: such a run is unfinished, and what it
    /// shows proves nothing either way.
    pub fn met(&self, p: Property, want: Want) -> bool {
        let n = self.violations.of(p);
        self.metrics.budget_runs == 0
            && match want {
                Want::Hold => n == 0,
                Want::Violate => n > 0,
            }
    }

    /// The expectations that this sweep did not meet.
    pub fn unmet(&self) -> Vec<(Property, Want)> {
        self.expect
            .iter()
            .copied()
            .filter(|&(p, want)| !self.met(p, want))
            .collect()
    }
}

/// A comparison of designs on one model over the same seeds.
#[derive(Clone, Debug)]
pub struct Report {
    pub model: String,
    pub first_seed: u64,
    pub seed_count: u64,
    pub results: Vec<DesignResult>,
    /// How to replay a seed: the command prefix and model path as the user gave them.
    pub replay: ReplayCommand,
}

/// The command line that replays runs, as the user can paste it: the program as it was
/// invoked (so that it works from a clone without `cargo install`) and the model path as
/// given.
#[derive(Clone, Debug, Default)]
pub struct ReplayCommand {
    pub program: String,
    /// Flags a replay of one of `flagged` needs, already quoted, each with a leading space:
    /// the external executors of the command line (`--executor NAME=COMMAND`).
    pub flags: String,
    /// The designs the command line gave with `--executor`.
    pub flagged: Vec<String>,
    pub model_path: String,
    /// The provider preset the model was run against instead of its own (`--provider`).
    pub provider: Option<String>,
    /// The [`Model::digest`](crate::model::Model::digest) of the model as run: a choice
    /// vector's replay command carries it (`--model-digest`), and `replay` refuses it
    /// against a model edited since.
    pub model_digest: Option<String>,
}

impl ReplayCommand {
    /// The command that traces `seed` of `design`.
    pub fn seed(&self, design: &str, seed: u64) -> String {
        format!(
            "{}{} trace {}{} --design {design} --seed {seed}",
            shell_word(&self.program),
            self.flags_for(design),
            shell_word(&self.model_path),
            self.provider_flag()
        )
    }

    /// The flags a command of `design` needs: those of the command line's external
    /// executors if it is one of them, else none.
    fn flags_for(&self, design: &str) -> &str {
        if self.flagged.iter().any(|d| d == design) {
            &self.flags
        } else {
            ""
        }
    }

    /// ` --provider NAME`, or nothing.
    fn provider_flag(&self) -> String {
        self.provider
            .as_ref()
            .map(|p| format!(" --provider {}", shell_word(p)))
            .unwrap_or_default()
    }

    /// The command that replays a choice vector of `design` (its short form, as
    /// [`ChoiceVector`](crate::sim::ChoiceVector) prints it), with the model's digest when
    /// known, as one [`ReplayKey`](crate::sim::ReplayKey).
    pub fn choices(&self, design: &str, choices: &str) -> String {
        self.replay_line(design, choices, false)
    }

    /// The command that replays a choice vector of `design` recorded with same-instant
    /// order as a choice (its key says `+ties`).
    pub fn choices_with_ties(&self, design: &str, choices: &str) -> String {
        self.replay_line(design, choices, true)
    }

    fn replay_line(&self, design: &str, choices: &str, ties: bool) -> String {
        format!(
            "{}{} replay {}{} --design {design} --choices {}",
            shell_word(&self.program),
            self.flags_for(design),
            shell_word(&self.model_path),
            self.provider_flag(),
            shell_word(&replay_key(self.model_digest.as_deref(), ties, choices))
        )
    }
}

/// The text of a [`ReplayKey`](crate::sim::ReplayKey) from its parts (`choices`: a vector's
/// text): a bare vector when there is neither digest nor ties.
pub fn replay_key(digest: Option<&str>, ties: bool, choices: &str) -> String {
    if digest.is_none() && !ties {
        return choices.to_string();
    }
    format!(
        "{}{}:{choices}",
        digest.unwrap_or(""),
        if ties { "+ties" } else { "" }
    )
}

/// `word` quoted for a POSIX shell when it needs to be.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

// The results as partial results of a sharded command write them: properties by name.

/// A property as a partial result names it (`no_duplicate`, `resolved_within(60000)`): a built-in one, or one of `props` (those the designs
/// of the program's registry bring).
pub fn property(s: &str, props: Props<'_>) -> Result<Property, String> {
    Property::parse_with(s, props)
}

/// The properties the registered designs bring, by which partials name them.
pub type Props<'a> = &'a [&'static crate::check::PropertyDef];

/// An expectation's `hold` or `violate`.
pub fn want(s: &str) -> Result<Want, String> {
    match s {
        "hold" => Ok(Want::Hold),
        "violate" => Ok(Want::Violate),
        _ => Err(format!("expected hold or violate, got {s}")),
    }
}

/// A contract assumption judged against the model.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JudgementData {
    pub name: String,
    pub holds: bool,
    pub why: String,
}

/// [`DesignResult`] of one block of seeds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResultData {
    pub design: String,
    pub metrics: Metrics,
    /// `(property, seeds violating it)`.
    pub violations: Vec<(String, u64)>,
    pub any: u64,
    pub failures: Vec<Vec<u64>>,
    pub expect: Vec<(String, String)>,
    pub assumptions: Vec<JudgementData>,
    /// The design's guarantee, by property name.
    #[serde(default)]
    pub guarantee: Vec<String>,
    pub unfired: Vec<usize>,
}

impl ResultData {
    pub fn of(r: &DesignResult) -> Self {
        ResultData {
            design: r.design.clone(),
            metrics: r.metrics.clone(),
            violations: r
                .violations
                .counts
                .iter()
                .map(|(p, n)| (p.to_string(), *n))
                .collect(),
            any: r.violations.any,
            failures: r.failures.clone(),
            expect: r
                .expect
                .iter()
                .map(|(p, w)| (p.to_string(), w.name().to_string()))
                .collect(),
            assumptions: r
                .assumptions
                .iter()
                .map(|j| JudgementData {
                    name: j.name.clone(),
                    holds: j.holds,
                    why: j.why.clone(),
                })
                .collect(),
            guarantee: r.guarantee.iter().map(ToString::to_string).collect(),
            unfired: r.unfired.clone(),
        }
    }

    pub fn result(&self, props: Props<'_>) -> Result<DesignResult, String> {
        Ok(DesignResult {
            design: self.design.clone(),
            metrics: self.metrics.clone(),
            violations: Violations {
                counts: self
                    .violations
                    .iter()
                    .map(|(p, n)| Ok((property(p, props)?, *n)))
                    .collect::<Result<_, String>>()?,
                any: self.any,
            },
            failures: self.failures.clone(),
            expect: self
                .expect
                .iter()
                .map(|(p, w)| Ok((property(p, props)?, want(w)?)))
                .collect::<Result<_, String>>()?,
            assumptions: self
                .assumptions
                .iter()
                .map(|j| Judgement {
                    name: j.name.clone(),
                    holds: j.holds,
                    why: j.why.clone(),
                })
                .collect(),
            guarantee: self
                .guarantee
                .iter()
                .map(|p| property(p, props))
                .collect::<Result<_, String>>()?,
            unfired: self.unfired.clone(),
        })
    }
}

/// Appends `later` (the result of the seeds after those of `r`) to `r`: counts add up,
/// histograms merge, the first `keep` violating seeds are kept, a fault is unfired when it
/// fired in neither.
pub fn append(r: &mut DesignResult, later: &DesignResult, keep: usize) -> Result<(), String> {
    if r.design != later.design
        || r.violations.counts.len() != later.violations.counts.len()
        || r.violations
            .counts
            .iter()
            .zip(&later.violations.counts)
            .any(|(a, b)| a.0 != b.0)
    {
        return Err(format!(
            "the results of design {} do not tally the same properties",
            r.design
        ));
    }
    r.metrics.merge(&later.metrics);
    r.violations.merge(&later.violations);
    for (mine, theirs) in r.failures.iter_mut().zip(&later.failures) {
        let room = keep.saturating_sub(mine.len());
        mine.extend(theirs.iter().take(room));
    }
    r.unfired.retain(|i| later.unfired.contains(i));
    Ok(())
}

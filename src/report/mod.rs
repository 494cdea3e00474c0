//! Reports of a comparison: one row per design, as a table or as JSON.

pub mod charts;
pub mod html;
pub mod json;
pub mod matrix;
pub mod recommend;
pub mod research;
pub mod sequence;
pub mod stats;
pub mod table;

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

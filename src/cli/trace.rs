//! `retrylab trace` and `retrylab replay`: one run's timeline, outcome and choice vector,
//! from a seed or from a recorded choice vector (or a sequence diagram of it).

use std::path::PathBuf;

use clap::ValueEnum;

use super::{CliError, Ctx, diagram};
use crate::check::Property;
use crate::design::Design;
use crate::explore::ReplayCommand;
use crate::run::{Traced, run_traced};
use crate::sim::{Class, ReplayChooser, ReplayKey};
use crate::vocab::ids::IntentId;
use crate::vocab::trace::{Component, render_lines};

/// The one run `trace` and `replay` show: a design on a model, against its provider or a
/// preset.
#[derive(clap::Args, Debug)]
pub(super) struct OneRun {
    /// Model file (JSON).
    pub(super) model: PathBuf,
    /// Run the scenario against this built-in provider preset instead of the model's own
    /// provider section (the preset as it is).
    #[arg(long, value_name = "PRESET")]
    pub(super) provider: Option<String>,
    /// Design to run.
    #[arg(long, value_name = "NAME")]
    pub(super) design: String,
}

#[derive(clap::Args, Debug)]
pub(super) struct TraceArgs {
    #[command(flatten)]
    pub(super) run: OneRun,
    /// Seed of the run.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub(super) seed: u64,
    #[command(flatten)]
    pub(super) filter: TimelineFilter,
    /// What to print: the timeline as text, the run's sequence diagram as SVG (one lane per
    /// component, messages as arrows, faults and duplicate effects marked, the verdicts at
    /// the end), or an HTML page with both.
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: diagram::TraceFormat,
}

/// Which lines of the timeline to print.
#[derive(clap::Args, Debug, Default)]
pub(super) struct TimelineFilter {
    /// Print only the timeline lines about this intent (its calls, operations, sends and
    /// effects) and those about no intent in particular (a worker's crash or restart); the
    /// outcome line gives only its verdict.
    #[arg(long, value_name = "N")]
    pub(super) intent: Option<u32>,
    /// Print only the timeline lines of these components (comma-separated).
    #[arg(long, value_name = "C,...", value_delimiter = ',', value_enum)]
    pub(super) component: Vec<ComponentArg>,
}

/// A component of the timeline, as its column names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum ComponentArg {
    Workload,
    Agent,
    Executor,
    Network,
    Provider,
    Ledger,
}

impl ComponentArg {
    pub(super) fn component(self) -> Component {
        match self {
            ComponentArg::Workload => Component::Workload,
            ComponentArg::Agent => Component::Agent,
            ComponentArg::Executor => Component::Executor,
            ComponentArg::Network => Component::Network,
            ComponentArg::Provider => Component::Provider,
            ComponentArg::Ledger => Component::Ledger,
        }
    }
}

impl TimelineFilter {
    /// Refused when the run has no intent `N`.
    pub(super) fn check(&self, t: &Traced) -> Result<(), CliError> {
        match self.intent {
            Some(n) if n as usize >= t.intents.len() => Err(CliError::Input(format!(
                "--intent {n}: the run has {} intent{} (numbered from 0)",
                t.intents.len(),
                if t.intents.len() == 1 { "" } else { "s" }
            ))),
            _ => Ok(()),
        }
    }

    pub(super) fn keeps(&self, component: Component, about: Option<IntentId>) -> bool {
        let by_intent = match (self.intent, about) {
            (Some(n), Some(i)) => i.0 == n,
            _ => true,
        };
        let by_component =
            self.component.is_empty() || self.component.iter().any(|c| c.component() == component);
        by_intent && by_component
    }

    /// What the header says of the filter, if any: `; only lines about intent 1 (and about
    /// no intent), of executor, provider`.
    pub(super) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.intent {
            parts.push(format!("about intent {n} (and about no intent)"));
        }
        if !self.component.is_empty() {
            let names: Vec<&str> = self
                .component
                .iter()
                .map(|c| c.component().name())
                .collect();
            parts.push(format!("of {}", names.join(", ")));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("; timeline: only lines {}", parts.join(", "))
        }
    }
}

#[derive(clap::Args, Debug)]
pub(super) struct ReplayArgs {
    #[command(flatten)]
    pub(super) run: OneRun,
    /// The run to replay, as printed replay commands give it: `DIGEST+ties:ITEMS`, the
    /// model's digest (the replay is refused, exit 2, when the model, with --provider as
    /// run, has changed since in anything a run reads), `+ties` when same-instant order was
    /// a choice, and the choice vector's items: `V` for the next decision, `P=V` for
    /// decision P (1-based), every decision left out at its default (`3=1`: two defaults,
    /// then 1). A bare vector (`0,0,1` or `3=1`, may be empty) replays unchecked, as vectors
    /// printed before keys were.
    #[arg(long, value_name = "KEY", allow_hyphen_values = true)]
    pub(super) choices: String,
    /// Order events due at the same instant by the vector's `order` choices, as the run
    /// that recorded it did: what `+ties` in the key says, for a bare vector.
    #[arg(long)]
    pub(super) ties: bool,
    /// The digest of the model the vector was recorded against, for a bare vector (the key
    /// carries it): the replay is refused (exit 2) when the model has changed since.
    #[arg(long, value_name = "HEX")]
    pub(super) model_digest: Option<String>,
    #[command(flatten)]
    pub(super) filter: TimelineFilter,
    /// What to print: the timeline as text, the run's sequence diagram as SVG, or an HTML
    /// page with both (as `trace --format`).
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: diagram::TraceFormat,
}

pub(super) fn trace(a: TraceArgs, ctx: &Ctx) -> Result<(), CliError> {
    let model = ctx.load_as(&a.run.model, a.run.provider.as_deref())?;
    let d = ctx.find_design(&a.run.design)?;
    ctx.check_externals(&model, &[d])?;
    let traced = run_traced(&model, d, &mut model.chooser(a.seed));
    a.filter.check(&traced)?;
    let header = format!(
        "trace of {} on model {}, seed {}{}",
        d.name(),
        model.name,
        a.seed,
        a.filter.describe()
    );
    let named = model.named_properties(d.name());
    let text = render_run(
        &header,
        &ctx.replay_command(
            &a.run.model,
            a.run.provider.as_deref(),
            Some(model.digest()),
        ),
        d,
        &traced,
        false,
        &named,
        &a.filter,
    );
    ctx.print(&pictured(
        a.format, &header, &traced, &named, &a.filter, &text,
    )?)
}

/// What `--format` asks for: `text` as it is, or the run's diagram.
pub(super) fn pictured(
    format: diagram::TraceFormat,
    header: &str,
    t: &Traced,
    named: &[Property],
    filter: &TimelineFilter,
    text: &str,
) -> Result<String, CliError> {
    if format == diagram::TraceFormat::Text {
        return Ok(text.to_string());
    }
    // A diagram pairs every message's two ends and judges every intent: drawn from part of
    // the timeline it would show requests never answered and users told nothing.
    if filter.intent.is_some() || !filter.component.is_empty() {
        return Err(CliError::Input(
            "--intent and --component filter the text timeline; --format svg and html draw the whole run (every message with both its ends), so they take neither".to_string(),
        ));
    }
    diagram::render(format, header, t, &t.violated_names(named), text)
        .map_err(|e| CliError::Other(format!("cannot draw the diagram: {e}")))
}

pub(super) fn replay(a: ReplayArgs, ctx: &Ctx) -> Result<(), CliError> {
    let model = ctx.load_as(&a.run.model, a.run.provider.as_deref())?;
    let d = ctx.find_design(&a.run.design)?;
    ctx.check_externals(&model, &[d])?;
    let key: ReplayKey = a
        .choices
        .parse()
        .map_err(|e| CliError::Input(format!("--choices: {e}")))?;
    let recorded = match (&key.digest, &a.model_digest) {
        (Some(k), Some(flag)) if !flag.trim().eq_ignore_ascii_case(k) => {
            return Err(CliError::Input(format!(
                "--model-digest {flag} differs from the digest {k} in --choices: give one of them"
            )));
        }
        (Some(k), _) => Some(("--choices", k.clone())),
        (None, Some(flag)) => Some(("--model-digest", flag.trim().to_ascii_lowercase())),
        (None, None) => None,
    };
    if let Some((from, recorded)) = recorded {
        let now = model.digest();
        if recorded != now {
            return Err(CliError::Input(format!(
                "{from}: the model changed since the vector was recorded (its digest was {recorded}, is now {now}): its choices would make other decisions, not replay the recorded run; rerun the command that printed it (check, explore, trace) on the model as it is"
            )));
        }
    }
    // A key says whether the run ordered ties; --ties may not change what it says.
    if a.ties && key.digest.is_some() && !key.ties {
        return Err(CliError::Input(
            "--ties: the key in --choices was recorded without same-instant order choices (it has no +ties); --ties would replay another run".to_string(),
        ));
    }
    let ties = a.ties || key.ties;
    let vector = key.vector;
    let mut chooser = ReplayChooser::new(vector.clone()).ordering_ties(ties);
    let traced = run_traced(&model, d, &mut chooser);
    chooser
        .finish()
        .map_err(|e| CliError::Input(format!("--choices: {e}")))?;
    a.filter.check(&traced)?;
    let header = format!(
        "replay of {} on model {}, choices {}{}{}",
        d.name(),
        model.name,
        if vector.0.is_empty() {
            "(every decision at its default)".to_string()
        } else {
            vector.to_string()
        },
        if ties { ", ties ordered by choice" } else { "" },
        a.filter.describe()
    );
    let named = model.named_properties(d.name());
    let text = render_run(
        &header,
        &ctx.replay_command(
            &a.run.model,
            a.run.provider.as_deref(),
            Some(model.digest()),
        ),
        d,
        &traced,
        ties,
        &named,
        &a.filter,
    );
    ctx.print(&pictured(
        a.format, &header, &traced, &named, &a.filter, &text,
    )?)
}

/// The timeline, the outcome and the line that replays the run (`ties`: the run ordered
/// same-instant events by choice, and so must its replay).
pub(super) fn render_run(
    header: &str,
    replay: &ReplayCommand,
    d: &dyn Design,
    t: &Traced,
    ties: bool,
    named: &[Property],
    filter: &TimelineFilter,
) -> String {
    let timeline = render_lines(
        t.lines
            .iter()
            .filter(|(l, about)| filter.keeps(l.component, *about))
            .map(|(l, _)| l),
    );
    let mut s = format!("{header}\n\n{timeline}\n");
    s.push_str(&t.verdicts_text(filter.intent.map(IntentId)));
    s.push_str(&t.counts_text(named));
    let named: Vec<String> = t
        .choices
        .iter()
        .map(|c| format!("{}:{}/{}", c.purpose.name(), c.value, c.of))
        .collect();
    let classes: Vec<String> = Class::ALL
        .into_iter()
        .filter_map(|class| {
            let n = t.choices.iter().filter(|c| c.class() == class).count();
            (n > 0).then(|| format!("{n} {}", class.name()))
        })
        .collect();
    let count = if classes.is_empty() {
        "0".to_string()
    } else {
        format!("{}: {}", t.choices.len(), classes.join(", "))
    };
    s.push_str(&format!(
        "choices ({count}; as purpose:alternative/number of possible alternatives): {}\n",
        if named.is_empty() {
            "none".to_string()
        } else {
            named.join(" ")
        }
    ));
    let line = if ties {
        replay.choices_with_ties(d.name(), &t.vector().to_string())
    } else {
        replay.choices(d.name(), &t.vector().to_string())
    };
    s.push_str(&format!("replay: {line}\n"));
    s
}

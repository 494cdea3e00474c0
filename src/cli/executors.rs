//! External executors on the command line (`--executor NAME=COMMAND`) and in models
//! (`designs[i].executor.command`): started, registered as designs, shut down.

use std::path::Path;

use super::{Cli, CliError, Ctx, command_models, report};
use crate::design::{Design, Registry};

/// Adds the `--executor` designs of `cli` to `ctx`: each is started once and its `hello`
/// read, so that a command that does not start or does not speak the protocol is refused
/// before any run. The replay commands `ctx` prints carry the same flags.
pub(super) fn add_executors(cli: &Cli, ctx: &mut Ctx) -> Result<(), CliError> {
    // The external executors the command's models list, then those of the command line.
    let (mut wanted, configured) = models_designs(cli)?;
    add_flag_executors(cli, &mut wanted)?;
    add_configured(ctx, &configured)?;
    if wanted.is_empty() {
        return Ok(());
    }
    if cli.executor_turn_timeout_ms == 0 {
        return Err(CliError::Input(
            "--executor-turn-timeout-ms: must be at least 1".into(),
        ));
    }
    crate::external::storage::configure(
        cli.executor_storage.as_deref(),
        cli.executor_storage_max_mb,
    )
    .map_err(CliError::Input)?;
    let mut added: Vec<&'static dyn Design> = ctx.designs.added().to_vec();
    for w in wanted {
        start(cli, ctx, w, &mut added)?;
    }
    replay_flags(cli, ctx);
    ctx.designs = Registry::with(&added).map_err(CliError::Input)?;
    Ok(())
}

/// Configured designs by name: (name, the design it configures).
type ConfiguredNames = Vec<(String, String)>;

/// The external executors and the configured designs (name, the design it configures)
/// that the command's models list. One name means one thing across the models: a name
/// given two meanings is refused, since a replay names the design only by it.
fn models_designs(cli: &Cli) -> Result<(Vec<Wanted>, ConfiguredNames), CliError> {
    let mut wanted: Vec<Wanted> = Vec::new();
    let mut configured: ConfiguredNames = Vec::new();
    let files = report::model_files(&command_models(&cli.command)).unwrap_or_default();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        add_model_configured(&path, &text, &mut configured)?;
        add_model_executors(&path, &text, &mut wanted)?;
    }
    Ok((wanted, configured))
}

/// Adds the configured designs of the model at `path` (its `text`) to `configured`.
fn add_model_configured(
    path: &Path,
    text: &str,
    configured: &mut ConfiguredNames,
) -> Result<(), CliError> {
    for (_, e) in crate::model::designs::configured_entries(text) {
        let Some(base) = e.design else {
            continue;
        };
        match configured.iter().find(|(n, _)| *n == e.name) {
            Some((_, b)) if *b == base => {}
            Some((_, b)) => {
                return Err(CliError::Input(format!(
                    "configured design {}: {} configures {base}, another model {b}: give them different names",
                    e.name,
                    path.display()
                )));
            }
            None => configured.push((e.name, base)),
        }
    }
    Ok(())
}

/// Adds the external executors of the model at `path` (its `text`) to `wanted`.
fn add_model_executors(path: &Path, text: &str, wanted: &mut Vec<Wanted>) -> Result<(), CliError> {
    // A malformed entry is reported when the model is loaded, with its line.
    let Ok(entries) = crate::model::designs::external_entries(text) else {
        return Ok(());
    };
    for e in entries {
        match wanted.iter().find(|w| w.name == e.name) {
            Some(w) if w.command == e.command && w.params == e.params => {}
            Some(w) => {
                return Err(CliError::Input(format!(
                    "external executor {}: {} runs `{}` with params {}, another model `{}` with params {}: give them different names",
                    e.name,
                    path.display(),
                    e.command.join(" "),
                    e.params,
                    w.command.join(" "),
                    w.params
                )));
            }
            None => wanted.push(Wanted {
                name: e.name,
                command: e.command,
                params: e.params,
                spec: None,
            }),
        }
    }
    Ok(())
}

/// Adds the `--executor NAME=COMMAND` flags to `wanted`; a name may not repeat one a
/// model or another flag gave.
fn add_flag_executors(cli: &Cli, wanted: &mut Vec<Wanted>) -> Result<(), CliError> {
    for spec in &cli.executors {
        let (name, command) = crate::external::parse_spec(spec).map_err(CliError::Input)?;
        if wanted.iter().any(|w| w.name == name) {
            return Err(CliError::Input(format!(
                "--executor {name}: a design of that name is given twice (by --executor or by a model's designs)"
            )));
        }
        wanted.push(Wanted {
            name,
            command,
            params: serde_json::json!({}),
            spec: Some(spec.clone()),
        });
    }
    Ok(())
}

/// Which process a worker life runs in, as the flags choose (a fork by default).
fn lives(cli: &Cli) -> crate::external::Lives {
    use super::ExecutorLives as L;
    use crate::external::Lives;
    if cli.executor_fresh_restarts {
        return Lives::Fresh;
    }
    match cli.executor_lives {
        L::Fork => Lives::Fork,
        L::Fresh => Lives::Fresh,
        L::Reuse => Lives::Reuse,
    }
}

/// Starts the executor `w` (its `hello` read) and adds it to `added` and `ctx`; one given
/// by a flag also goes into the flags the replay commands carry.
fn start(
    cli: &Cli,
    ctx: &mut Ctx,
    w: Wanted,
    added: &mut Vec<&'static dyn Design>,
) -> Result<(), CliError> {
    if crate::design::find(&w.name).is_some() {
        return Err(CliError::Input(format!(
            "design \"{}\": a built-in design has this name; give yours another",
            w.name
        )));
    }
    let design = crate::external::ExternalDesign::new(
        &w.name,
        w.command,
        w.params,
        std::time::Duration::from_millis(cli.executor_turn_timeout_ms),
        cli.executor_output,
        lives(cli),
    )
    .map_err(CliError::Input)?;
    // A design lives as long as the program, as the built-in ones do.
    let design: &'static crate::external::ExternalDesign = Box::leak(Box::new(design));
    design.set_lenient_unmapped(cli.executor_unmapped == super::UnmappedRequests::Warn);
    added.push(design);
    ctx.externals.push(design);
    if let Some(spec) = w.spec {
        ctx.from_flags.push(design);
        let quoted = shlex::try_quote(&spec)
            .map_err(|e| CliError::Input(format!("--executor {spec:?}: {e}")))?;
        ctx.flags.push_str(&format!(" --executor {quoted}"));
    }
    Ok(())
}

/// The executor flags other than `--executor` that a replay needs to run the same way
/// (those left at their default are left out).
fn replay_flags(cli: &Cli, ctx: &mut Ctx) {
    let lives = lives(cli);
    if lives != crate::external::Lives::Fork {
        ctx.flags
            .push_str(&format!(" --executor-lives {}", lives.name()));
    }
    if cli.no_determinism_check {
        ctx.flags.push_str(" --no-determinism-check");
    }
    if cli.executor_unmapped == super::UnmappedRequests::Warn {
        ctx.flags.push_str(" --executor-unmapped warn");
    }
    if cli.executor_storage_max_mb != crate::external::storage::DEFAULT_MAX_FILE_MB {
        ctx.flags.push_str(&format!(
            " --executor-storage-max-mb {}",
            cli.executor_storage_max_mb
        ));
    }
    if cli.executor_turn_timeout_ms != 10_000 {
        ctx.flags.push_str(&format!(
            " --executor-turn-timeout-ms {}",
            cli.executor_turn_timeout_ms
        ));
    }
}

/// Registers each configured design (name, the design it configures) whose base the
/// registry knows; a model that names an unknown base is refused when it is loaded.
pub(super) fn add_configured(
    ctx: &mut Ctx,
    configured: &[(String, String)],
) -> Result<(), CliError> {
    let mut added: Vec<&'static dyn Design> = ctx.designs.added().to_vec();
    for (name, base) in configured {
        if ctx.designs.find(name).is_some() {
            continue;
        }
        if let Some(base) = ctx.designs.find(base).filter(|b| b.configures().is_none()) {
            added.push(crate::design::configured::Configured::leak(name, base));
        }
    }
    ctx.designs = Registry::with(&added).map_err(CliError::Input)?;
    Ok(())
}

/// An external executor a command runs.
pub(super) struct Wanted {
    pub(super) name: String,
    pub(super) command: Vec<String>,
    pub(super) params: serde_json::Value,
    /// Its `--executor` flag, when the command line gave it.
    pub(super) spec: Option<String>,
}

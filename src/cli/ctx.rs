//! The context every command runs in: the designs known, where output goes (the terminal,
//! or a buffer for tests), the external executors of the command line, and the warnings
//! and progress bar on stderr.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use super::{CliError, Outcome, load_as, progress, warnings};
use crate::design::{Design, Registry};
use crate::explore::ReplayCommand;
use crate::model::Catalog;
use crate::model::Model;

/// What a command runs with: the designs it knows, the program's name (for the replay
/// commands it prints) and where its output goes.
pub(super) struct Ctx {
    pub(super) designs: Registry,
    pub(super) program: String,
    /// Flags the replay commands it prints carry (see [`ReplayCommand::flags`]).
    pub(super) flags: String,
    /// The external executors of the command and its models (also in `designs`).
    pub(super) externals: Vec<&'static crate::external::ExternalDesign>,
    /// Those of them given by `--executor`.
    pub(super) from_flags: Vec<&'static dyn Design>,
    /// With external executors, the output is held until the command ends: an executor
    /// that broke the protocol gets its error alone, not figures that mean nothing.
    pub(super) held: Option<Mutex<(String, String)>>,
    /// In a shard, the warnings about the models it loads, kept for its partial: the merge
    /// prints them, as the unsharded command prints them when it loads the models.
    pub(super) deferred: Mutex<Option<Vec<String>>>,
    /// Whether external executors' determinism is checked before their runs (not with
    /// `--no-determinism-check`).
    pub(super) determinism_check: bool,
    pub(super) io: Io,
}

pub(super) enum Io {
    /// Standard output and error, with a progress bar on a terminal.
    Std,
    /// Kept: (stdout, stderr).
    Captured(Mutex<(String, String)>),
}

impl Ctx {
    /// Writes `text` on standard output.
    pub(super) fn print(&self, text: &str) -> Result<(), CliError> {
        if let Some(h) = &self.held {
            h.lock().unwrap_or_else(|e| e.into_inner()).0.push_str(text);
            return Ok(());
        }
        match &self.io {
            Io::Std => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())
                    .and_then(|()| out.flush())
                    .map_err(|e| CliError::Other(format!("cannot write the output: {e}")))
            }
            Io::Captured(m) => {
                m.lock().unwrap_or_else(|e| e.into_inner()).0.push_str(text);
                Ok(())
            }
        }
    }

    /// Writes `text` on standard error (a failure to is ignored, as `eprint!` would not).
    pub(super) fn eprint(&self, text: &str) {
        if let Some(h) = &self.held {
            h.lock().unwrap_or_else(|e| e.into_inner()).1.push_str(text);
            return;
        }
        match &self.io {
            Io::Std => {
                let _ = std::io::stderr().lock().write_all(text.as_bytes());
            }
            Io::Captured(m) => m.lock().unwrap_or_else(|e| e.into_inner()).1.push_str(text),
        }
    }

    /// The determinism check of every external executor among `designs` on `model`, before
    /// any of its runs (once per executor and `init` line in a command): its line on
    /// stderr; a refusal is bad input (exit 2). With `--no-determinism-check`, a warning
    /// that says so instead.
    pub(super) fn check_externals(
        &self,
        model: &Model,
        designs: &[&dyn Design],
    ) -> Result<(), CliError> {
        for d in designs.iter().filter(|d| d.is_external()) {
            if let Some(line) = d
                .check_determinism(model, self.determinism_check)
                .map_err(CliError::Input)?
            {
                self.eprintln(&line);
            }
        }
        Ok(())
    }

    /// Writes `line` and a newline on standard error.
    pub(super) fn eprintln(&self, line: &str) {
        self.eprint(&format!("{line}\n"));
    }

    /// A progress bar for `total` of `unit`; never shown when the output is kept.
    pub(super) fn progress(&self, total: u64, unit: &str) -> progress::Progress {
        let bar = progress::Progress::counting(total, unit);
        match self.io {
            Io::Std => bar,
            Io::Captured(_) => bar.never_shown(),
        }
    }

    /// Prints the error of a command, if any, and returns the exit code it deserves.
    pub(super) fn finish(&self, result: Result<(), CliError>) -> u8 {
        if result.is_err() {
            // A shard that stops writes no partial: its warnings are printed here.
            let kept = self.take_deferred();
            warnings::print(self, &kept);
        }
        match result {
            Ok(()) => 0,
            Err(CliError::Input(msg)) => {
                self.eprintln(&format!("error: {msg}"));
                2
            }
            Err(CliError::Model(lines)) => {
                self.eprintln(&lines);
                2
            }
            Err(CliError::Failed(msg)) => {
                self.eprintln(&msg);
                1
            }
            Err(CliError::Other(msg)) => {
                self.eprintln(&format!("error: {msg}"));
                1
            }
            Err(CliError::Incomplete(msg)) => {
                self.eprintln(&msg);
                3
            }
        }
    }

    pub(super) fn into_outcome(self, code: u8) -> Outcome {
        let (stdout, stderr) = match self.io {
            Io::Std => Default::default(),
            Io::Captured(m) => m.into_inner().unwrap_or_else(|e| e.into_inner()),
        };
        Outcome {
            code,
            stdout,
            stderr,
        }
    }

    /// Loads a model and warns on stderr about the values in it that make a component inert
    /// ([`crate::design::inert`]).
    pub(super) fn load(&self, path: &Path) -> Result<Model, CliError> {
        self.warned(self.read(path)?)
    }

    pub(super) fn read(&self, path: &Path) -> Result<Model, CliError> {
        Model::load_with(path, &self.designs).map_err(|e| CliError::Model(e.to_string()))
    }

    pub(super) fn warned(&self, model: Model) -> Result<Model, CliError> {
        let lines = warnings::inert(&model);
        match self
            .deferred
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            Some(kept) => kept.extend(lines),
            None => warnings::print(self, &lines),
        }
        Ok(model)
    }

    /// From now on the warnings about the models loaded are kept, not printed, for a
    /// shard's partial ([`Ctx::take_deferred`]). A no-op unless `shard`.
    pub(super) fn defer_warnings_if(&self, shard: bool) {
        if shard {
            *self.deferred.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
        }
    }

    /// The warnings kept since [`Ctx::defer_warnings_if`], in the order the models were
    /// loaded; printing them is the merge's.
    pub(super) fn take_deferred(&self) -> Vec<String> {
        self.deferred
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Loads a model, against `provider` instead of its own provider when one is given, and
    /// warns as [`Ctx::load`] does (about the model the commands run).
    pub(super) fn load_as(&self, path: &Path, provider: Option<&str>) -> Result<Model, CliError> {
        self.warned(load_as(self.read(path)?, provider)?)
    }

    /// The external executors given by `--executor` (not those a model lists).
    pub(super) fn command_line_executors(&self) -> Vec<&'static dyn Design> {
        self.from_flags.clone()
    }

    /// Their names.
    pub(super) fn flagged(&self) -> Vec<String> {
        self.from_flags
            .iter()
            .map(|d| d.name().to_string())
            .collect()
    }

    pub(super) fn find_design(&self, name: &str) -> Result<&'static dyn Design, CliError> {
        self.designs.find(name).ok_or_else(|| {
            CliError::Input(format!(
                "--design {name}: unknown design; known designs: {}",
                self.designs.names().join(", ")
            ))
        })
    }

    /// The command that replays runs of the model at `path`, as the user can paste it
    /// (`digest`: the model's, carried by a choice vector's replay command).
    pub(super) fn replay_command(
        &self,
        path: &Path,
        provider: Option<&str>,
        digest: Option<String>,
    ) -> ReplayCommand {
        ReplayCommand {
            program: self.program.clone(),
            flags: self.flags.clone(),
            flagged: self.flagged(),
            model_path: path.display().to_string(),
            provider: provider.map(str::to_string),
            model_digest: digest,
        }
    }
}

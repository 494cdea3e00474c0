//! External executors: a user's executor program, in any language, run as one process per
//! simulated worker and driven through the executor protocol (docs/executor-protocol.md).
//!
//! An [`ExternalDesign`] is a [`Design`] like the built-in ones, so every command takes it:
//! `--executor NAME=COMMAND` on the command line, or `{"name": .., "command": [..]}` in a
//! model's `designs`. Its executors (`executor::External`) translate the world's callbacks
//! into protocol messages and the process's requests into the world's commands; the world
//! does not know the difference.
//!
//! A process that breaks the protocol cannot be judged: the first such error is kept in the
//! design ([`ExternalDesign::failure`]), its executors stop acting, and the command that
//! ran it exits 2 with the error instead of a verdict.

mod capability;
pub(crate) mod code;
pub(crate) mod determinism;
pub(crate) mod executor;
pub(crate) mod face;
mod fork;
pub(crate) mod leftovers;
pub(crate) mod message;
pub(crate) mod process;
mod schema;
pub(crate) mod shim;
pub(crate) mod storage;
pub(crate) mod to_exec;

pub use capability::{Capability, capabilities, capabilities_markdown};
pub use message::Mode;
pub use process::{Process, RecvError};
pub use schema::{protocol_schema, protocol_schema_text};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::design::{Assumption, Design, Executor};
use crate::model::ExecutorModel;

/// The protocol version this retrylab speaks.
pub const PROTOCOL: u32 = 1;

/// The default wall-clock watchdog of one turn.
pub const DEFAULT_TURN_TIMEOUT: Duration = Duration::from_secs(10);

/// What the process said about itself in its `hello`.
#[derive(Clone, Debug, Default)]
pub struct Hello {
    pub mode: message::Mode,
    pub client: Option<String>,
    pub tools: Vec<String>,
    pub assumptions: Vec<String>,
    pub guarantee: Vec<crate::check::Property>,
    /// It can be a zygote (`hello.fork`).
    pub fork: bool,
}

/// Which process a worker life runs in (`--executor-lives`; docs/executor-protocol.md,
/// section 7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lives {
    /// Every worker life (a run's first and each restart) a fork of a zygote that ran its
    /// imports, `hello` and `init` and no call; a process whose hello does not declare
    /// `fork` gets [`Lives::Fresh`] instead. The default: no life sees another's memory, as
    /// when a real process dies.
    #[default]
    Fork,
    /// Every worker life a new process (`--executor-lives fresh`).
    Fresh,
    /// A process whose worker is gone, told to reset by its `start` (`--executor-lives
    /// reuse`): faster, and true only as far as the executor's reset is.
    Reuse,
}

impl Lives {
    /// The flag's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Lives::Fork => "fork",
            Lives::Fresh => "fresh",
            Lives::Reuse => "reuse",
        }
    }
}

/// A zygote (initialized with its `init`), and the fork it was told for the next worker
/// life, begun ahead of need (fork.rs).
struct Zygote {
    process: process::Process,
    ahead: Option<fork::Pending>,
    watchdog: Duration,
    /// Where its children's FIFOs are made: removed after it (fields drop in order).
    fifos: fork::FifoDir,
}

impl Drop for Zygote {
    /// The child forked ahead is killed first, for its zygote to reap before it is killed.
    fn drop(&mut self) {
        if let Some(p) = self.ahead.take() {
            fork::abandon(p, &mut self.process, self.watchdog);
        }
    }
}

/// What the executors of one external design share: the command, the first protocol error,
/// and the processes started ahead for the next worker that needs one.
pub struct Shared {
    pub name: String,
    pub command: Vec<String>,
    /// The design entry's own parameters, handed to the process in `init`.
    pub params: serde_json::Value,
    pub turn_timeout: Duration,
    /// Print every protocol line and the process's output on stderr.
    pub echo: bool,
    failure: Mutex<Option<String>>,
    /// Processes started (their imports under way) but not yet handed to a worker.
    spare: Mutex<Vec<process::Process>>,
    /// Processes of workers that are gone, to be reset and reused.
    idle: Mutex<Vec<process::Process>>,
    /// Which process a worker life (a run's first, or a restart) gets.
    pub lives: Lives,
    /// With fork lives: one zygote per `init` line, each with the next life's fork begun.
    zygotes: Mutex<Vec<Zygote>>,
    /// The determinism check's outcome per `init` line: it runs once per command.
    checked: Mutex<Vec<(String, Result<String, String>)>>,
    /// The check was switched off (`--no-determinism-check`): certificates say so.
    unchecked: std::sync::atomic::AtomicBool,
    /// What the first process said in its `hello`.
    hello: Mutex<Option<Hello>>,
    /// Requests the face could not map, warned once each.
    warned: Mutex<std::collections::BTreeSet<String>>,
    /// Requests the face cannot serve (another host, a create of no route) are warned on
    /// and answered 404, not refused (`--executor-unmapped warn`).
    lenient_unmapped: std::sync::atomic::AtomicBool,
}

impl Shared {
    /// Records the first protocol error; later ones are consequences of it.
    pub fn fail(&self, error: String) {
        let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            *f = Some(error);
        }
    }

    pub fn failed(&self) -> bool {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// A process for a worker: one a finished worker left (it resets at its next `start`),
    /// else a spare started ahead, with another started in its place, so that a restart
    /// does not wait for an interpreter's imports. Only fresh processes while `fresh` (the
    /// determinism check's fresh runs) or with `--executor-lives fresh`.
    /// A reused process is one initialized with `init` (a process keeps the model it was
    /// initialized for: another model's world, in `report`, starts its own).
    /// With fork lives, a fork of the zygote for `init` (started first if none).
    pub fn take_process(&self, init: &str) -> Result<process::Process, String> {
        let fresh = self.lives == Lives::Fresh || determinism::fresh_only();
        if !fresh && self.lives == Lives::Fork && !init.is_empty() {
            return self.fork(init);
        }
        if !fresh {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            // The determinism check's reused runs pass processes between workers: the
            // second of those left (worker i takes worker i + 1's), else the last.
            let mut matching = idle.iter().enumerate().filter(|(_, p)| p.init == init);
            let at = if determinism::rotating() {
                let first = matching.next().map(|(i, _)| i);
                matching.next().map(|(i, _)| i).or(first)
            } else {
                matching.next_back().map(|(i, _)| i)
            };
            if let Some(i) = at {
                return Ok(idle.remove(i));
            }
            // None initialized for this model: those of other models (a report moves from
            // one model to the next) are stopped rather than kept for a model that is done.
            idle.clear();
        }
        let spare = self.spare.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let p = match spare {
            Some(p) => p,
            None => self.spawn()?,
        };
        if let Ok(next) = self.spawn() {
            self.spare
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(next);
        }
        Ok(p)
    }

    /// Takes back the process of a worker that is gone (a crash, the end of a sweep): the
    /// next worker resets it with its `start`, which the determinism check has verified is
    /// the same as a fresh process. Killed instead unless lives are `reuse`.
    pub fn give_back(&self, p: process::Process) {
        // The determinism check's new processes are its reference: none is reused, so that
        // its reused runs take processes that last served another seed.
        if self.lives != Lives::Reuse || !p.initialized || determinism::fresh_only() {
            drop(p);
            return;
        }
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(p);
    }

    /// A child of the zygote for `init`, which is started (a spare, its `hello` and `init`)
    /// when there is none yet: the one forked ahead, if any, and the next one's fork begun.
    fn fork(&self, init: &str) -> Result<process::Process, String> {
        let mut zygotes = self.zygotes.lock().unwrap_or_else(|e| e.into_inner());
        let watchdog = executor::HELLO_TIMEOUT.max(self.turn_timeout);
        let i = match zygotes.iter().position(|z| z.process.init == init) {
            Some(i) => i,
            None => {
                zygotes.push(Zygote {
                    process: self.zygote(init)?,
                    ahead: None,
                    watchdog,
                    fifos: fork::FifoDir::new()?,
                });
                zygotes.len() - 1
            }
        };
        let z = &mut zygotes[i];
        let forked = match z.ahead.take() {
            Some(pending) => Ok(pending),
            None => fork::begin(&mut z.process, &mut z.fifos),
        }
        .and_then(|pending| fork::finish(pending, &mut z.process, init, watchdog));
        match forked {
            Ok(p) => {
                // The next life's process: forked while this one runs. A zygote that cannot
                // be told `fork` now fails the next life's own begin, which says why.
                z.ahead = fork::begin(&mut z.process, &mut z.fifos).ok();
                Ok(p)
            }
            Err(e) => {
                let (pid, tail) = (z.process.pid(), z.process.tail());
                // Killed: a later worker starts another.
                zygotes.remove(i);
                Err(format!("its zygote (pid {pid}): {e}\n{tail}"))
            }
        }
    }

    /// A process greeted and initialized with `init`, to fork from.
    fn zygote(&self, init: &str) -> Result<process::Process, String> {
        let spare = self.spare.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut z = match spare {
            Some(p) => p,
            None => self.spawn()?,
        };
        z.zygote = true;
        if !z.greeted {
            let hello = executor::read_hello(self, &mut z)?;
            if !hello.fork {
                return Err(
                    "a process started as a zygote did not declare \"fork\": true in its hello"
                        .into(),
                );
            }
        }
        z.send(init)?;
        let watchdog = executor::HELLO_TIMEOUT.max(self.turn_timeout);
        match z.recv(watchdog).map(|l| (message::parse(&l), l)) {
            Ok((Ok(message::FromExec::InitOk {}), _)) => {}
            Ok((_, line)) => {
                return Err(format!(
                    "a zygote: expected init_ok after init\n  the line: {line}\n{}",
                    z.tail()
                ));
            }
            Err(e) => return Err(format!("a zygote did not answer init: {e:?}\n{}", z.tail())),
        }
        z.initialized = true;
        z.init = init.to_string();
        Ok(z)
    }

    fn spawn(&self) -> Result<process::Process, String> {
        process::Process::spawn(&self.command, &[], self.echo)
    }

    /// Warns once on stderr about a request the face could not map.
    pub fn warn_unmapped(&self, what: &str) {
        self.warn_once(&format!(
            "{what}; answered 404 (docs/executor-protocol.md, section 6)"
        ));
    }

    /// Whether a request the face cannot serve is only warned on (`--executor-unmapped warn`).
    pub fn lenient_unmapped(&self) -> bool {
        self.lenient_unmapped
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Warns once on stderr, whatever the number of runs that meet the same thing.
    pub fn warn_once(&self, what: &str) {
        let mut w = self.warned.lock().unwrap_or_else(|e| e.into_inner());
        if w.insert(what.to_string()) {
            eprintln!("warning: executor {}: {what}", self.name);
        }
    }

    pub fn hello(&self) -> Option<Hello> {
        self.hello.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_hello(&self, h: Hello) {
        let mut slot = self.hello.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(h);
        }
    }
}

/// A user's executor program, as a design.
pub struct ExternalDesign {
    shared: Arc<Shared>,
    summary: String,
    assumptions: Vec<String>,
    guarantee: Vec<crate::check::Property>,
}

impl ExternalDesign {
    /// The design `name` running `command`: starts one process and reads its `hello`, so
    /// that a command that does not start, or does not speak the protocol, is refused now
    /// (with what it printed), not in the middle of a run.
    pub fn new(
        name: &str,
        command: Vec<String>,
        params: serde_json::Value,
        turn_timeout: Duration,
        echo: bool,
        lives: Lives,
    ) -> Result<Self, String> {
        if name.is_empty()
            || name
                .chars()
                .any(|c| c.is_whitespace() || c == ',' || c == '=')
        {
            return Err(format!(
                "executor {name:?}: a name must be non-empty, without spaces, commas or '='"
            ));
        }
        if command.is_empty() {
            return Err(format!("executor {name}: the command is empty"));
        }
        let mut shared = Arc::new(Shared {
            name: name.to_string(),
            command,
            params,
            turn_timeout,
            echo,
            failure: Mutex::new(None),
            spare: Mutex::new(Vec::new()),
            idle: Mutex::new(Vec::new()),
            lives,
            zygotes: Mutex::new(Vec::new()),
            checked: Mutex::new(Vec::new()),
            unchecked: std::sync::atomic::AtomicBool::new(false),
            hello: Mutex::new(None),
            warned: Mutex::new(Default::default()),
            lenient_unmapped: Default::default(),
        });
        let mut probe = shared
            .spawn()
            .map_err(|e| format!("executor {name}: {e}"))?;
        // A next worker's process, its imports under way beside the probe's; with fork lives
        // only once the probe's hello says it cannot be a zygote: one that can becomes the
        // zygote, and every life a fork of it (the fresh runs of a determinism check start
        // their own processes).
        let early = (lives != Lives::Fork)
            .then(|| shared.spawn().ok())
            .flatten();
        let hello = executor::read_hello(&shared, &mut probe)?;
        let next = early.or_else(|| (!hello.fork).then(|| shared.spawn().ok()).flatten());
        // The probe has read nothing but its hello: it goes back as a spare, handshake done,
        // the first to be taken.
        let mut spare = shared.spare.lock().unwrap_or_else(|e| e.into_inner());
        spare.extend(next);
        spare.push(probe);
        drop(spare);
        for a in &hello.assumptions {
            if crate::design::assumptions::by_name(a).is_none() {
                return Err(format!(
                    "executor {name}: hello.assumptions: unknown assumption {a:?}; known: {}",
                    crate::design::assumptions::NAMES.join(", ")
                ));
            }
        }
        let summary = format!(
            "external executor `{}`{}",
            shared.command.join(" "),
            hello
                .client
                .as_deref()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default()
        );
        let (assumptions, guarantee) = (hello.assumptions.clone(), hello.guarantee.clone());
        if lives == Lives::Fork && !hello.fork {
            // A process that cannot be a zygote (Node, a program with a thread at import):
            // every life a new process, as true and slower; its caveat says so.
            // Only `new` holds the Arc yet.
            if let Some(s) = Arc::get_mut(&mut shared) {
                s.lives = Lives::Fresh;
            }
        }
        shared.set_hello(hello);
        Ok(Self {
            shared,
            summary,
            assumptions,
            guarantee,
        })
    }

    /// The `init` line its executor in `model`'s world sends its process: with fork lives,
    /// the key of the zygote every worker life of that world is forked from, so that
    /// `self.shared().take_process(&design.init_line(model))` is one worker life as the
    /// world takes it (benches/lives.rs measures that against the world's runs).
    pub fn init_line(&self, model: &crate::model::Model) -> String {
        self.external_in(model).init().line()
    }

    /// Its executor in `model`'s world, with the model's provider face.
    fn external_in(&self, model: &crate::model::Model) -> executor::External {
        let mut face = face::Face::new(&model.provider.http);
        face.should_retry = model.provider.should_retry.clone();
        executor::External::new(Arc::clone(&self.shared), &model.executor, face).with_storage(
            model.workers.count,
            model.workers.journal == crate::model::Durability::Volatile,
            !model.workers.crash.machine_loss.is_zero(),
        )
    }

    /// The first protocol error of any of its processes, with the executor named.
    pub fn failure(&self) -> Option<String> {
        self.shared
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Only warns on a request its provider's face cannot serve (another host, a create
    /// that matches no route), answering it 404 as unmapped, instead of stopping the
    /// command (`--executor-unmapped warn`).
    pub fn set_lenient_unmapped(&self, lenient: bool) {
        self.shared
            .lenient_unmapped
            .store(lenient, std::sync::atomic::Ordering::Relaxed);
    }

    /// Stops the processes started ahead for workers that never came (those of workers are
    /// stopped with their worlds).
    pub fn shutdown(&self) {
        let spare =
            std::mem::take(&mut *self.shared.spare.lock().unwrap_or_else(|e| e.into_inner()));
        drop(spare);
        let idle = std::mem::take(&mut *self.shared.idle.lock().unwrap_or_else(|e| e.into_inner()));
        drop(idle);
        // Last: their children, killed above or with their worlds, are reaped by them.
        let zygotes = std::mem::take(
            &mut *self
                .shared
                .zygotes
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        drop(zygotes);
    }
}

impl Design for ExternalDesign {
    fn name(&self) -> &str {
        &self.shared.name
    }

    fn summary(&self) -> &str {
        &self.summary
    }

    /// With the generic HTTP face: [`Design::executor_in`] gives the model's.
    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        let face = face::Face::new(&crate::model::http_face::HttpFace::default());
        Box::new(executor::External::new(
            Arc::clone(&self.shared),
            config,
            face,
        ))
    }

    fn executor_in(&self, model: &crate::model::Model) -> Box<dyn Executor> {
        Box::new(self.external_in(model))
    }

    fn assumptions(&self) -> Vec<Assumption> {
        self.assumptions
            .iter()
            .filter_map(|a| crate::design::assumptions::by_name(a))
            .collect()
    }

    fn guarantee(&self) -> Vec<crate::check::Property> {
        self.guarantee.clone()
    }

    fn certificate_caveats(&self) -> Vec<String> {
        let lives = match self.shared.lives {
            Lives::Fresh => "every worker life (a run's first and each restart) in a new process",
            Lives::Fork => {
                "every worker life in a process forked from a zygote that ran its imports, hello and init and no call (the determinism check compares forked with new processes, on a few seeds)"
            }
            Lives::Reuse => {
                "worker lives in reused processes told to reset (`--executor-lives reuse`: true only as far as the executor's reset is; the determinism check compares reused processes with new ones, on a few seeds with a crash)"
            }
        };
        let mut caveats = vec![
            "the executor's own random draws as seeded per worker and incarnation (one seed each, not enumerated)".to_string(),
            lives.into(),
        ];
        if self
            .shared
            .unchecked
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            caveats.push("the executor's determinism assumed, not checked (--no-determinism-check): a certificate of an executor that is not a function of its messages means nothing".into());
        }
        caveats
    }

    fn is_external(&self) -> bool {
        true
    }

    /// Runs the determinism check for `model`'s `init` line the first time it is asked
    /// (`determinism::check`); later, the same answer without its line.
    fn check_determinism(
        &self,
        model: &crate::model::Model,
        run: bool,
    ) -> Result<Option<String>, String> {
        if !run {
            let before = self
                .shared
                .unchecked
                .swap(true, std::sync::atomic::Ordering::Relaxed);
            return Ok((!before).then(|| {
                format!(
                    "warning: executor {}: determinism not checked (--no-determinism-check): its figures, replays and certificates assume an executor that is a function of its messages",
                    self.shared.name
                )
            }));
        }
        let init = self.init_line(model);
        let known = self
            .shared
            .checked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(i, _)| *i == init)
            .map(|(_, r)| r.clone());
        if let Some(r) = known {
            return r.map(|_| None);
        }
        let r = determinism::check(model, self, self.shared.lives, &determinism::SEEDS);
        self.shared
            .checked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((init, r.clone()));
        r.map(Some)
    }
}

/// Parses `NAME=COMMAND`, COMMAND split into words as a POSIX shell would.
pub fn parse_spec(spec: &str) -> Result<(String, Vec<String>), String> {
    let Some((name, command)) = spec.split_once('=') else {
        return Err(format!(
            "--executor {spec:?}: expected NAME=COMMAND, e.g. naive=\"python3 examples/python/naive_retry.py\""
        ));
    };
    let Some(words) = shlex::split(command) else {
        return Err(format!(
            "--executor {name}: the command {command:?} has an unclosed quote or a trailing backslash"
        ));
    };
    if words.is_empty() {
        return Err(format!("--executor {name}: the command is empty"));
    }
    Ok((name.to_string(), words))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_split_like_a_shell() {
        assert_eq!(
            parse_spec("naive=python3 'my dir/x.py' --flag \"a b\"").unwrap(),
            (
                "naive".to_string(),
                vec![
                    "python3".into(),
                    "my dir/x.py".into(),
                    "--flag".into(),
                    "a b".into()
                ]
            )
        );
        assert!(
            parse_spec("naive")
                .unwrap_err()
                .contains("expected NAME=COMMAND")
        );
        assert!(
            parse_spec("naive=python3 'x")
                .unwrap_err()
                .contains("unclosed quote")
        );
        assert!(parse_spec("naive=  ").unwrap_err().contains("empty"));
    }
}

//! Executor designs: the systems under test.
//!
//! A [`Design`] builds an [`Executor`] for each worker incarnation: a crash drops the
//! executor and everything it held in memory; the restarted worker gets a fresh one, and
//! only the [`Journal`] carries over: its records and their scratch state if it is durable,
//! its authorization ledger always. The designs that are policy only (an identity and
//! retry layers) are data, the files of `models/designs/` ([`preset`]), run by the one
//! loop of [`Stack`]; the journal family is code, one design per file.

pub mod assumptions;
pub(crate) mod configured;
pub(crate) mod context;
pub(crate) mod durable_authorization;
pub(crate) mod inert;
pub mod journal;
pub(crate) mod journal_design;
pub(crate) mod journal_reconcile;
pub(crate) mod journal_reconcile_lease;
pub(crate) mod journaled;
pub mod preset;
pub(crate) mod registry;
pub(crate) mod retrying;
pub(crate) mod stack;

pub use assumptions::{Assumption, Judgement};
pub use configured::Configured;
pub use context::{ExecCommand, ExecCtx, NO_TIMEOUT};
pub use inert::{Inert, inert};
pub use journal::{Journal, OpState, Operation, Scratch};
pub use journaled::{Journaled, Policy};
pub use registry::Registry;
pub use retrying::{Identity, Retrying};
pub use stack::{Backoff, Layer, RetryOn, Stack, Stacked};

use crate::model::ExecutorModel;
use crate::vocab::ids::{AttemptId, CallId, OpId};
use crate::vocab::protocol::{Response, ToolCall};

/// An executor design: a name and a factory of executors.
pub trait Design: Send + Sync {
    /// The name used in model files and on the command line.
    fn name(&self) -> &str;
    /// One line on what the design does.
    fn summary(&self) -> &str;
    /// A fresh executor for one worker incarnation.
    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor>;
    /// The contract assumptions the design's guarantee rests on (see [`assumptions`]); none
    /// for a design that promises nothing.
    fn assumptions(&self) -> Vec<Assumption> {
        Vec::new()
    }
    /// The properties the design promises on every run of a model where every one of its
    /// [`Design::assumptions`] holds (judged by [`assumptions::judge`]); none for a design
    /// that promises nothing. Data beside the assumptions, so that a test of the guarantee
    /// asserts exactly this, exactly where the judgement `run` and `check` print says it
    /// applies.
    fn guarantee(&self) -> Vec<crate::check::Property> {
        Vec::new()
    }
    /// Properties the design brings beyond the built-in ones: judged on every run of it
    /// (each run's outcome, against the ledger), named in a model's `expect` for it, checked
    /// by `check` and `explore` and shown in reports like the built-in ones. Their names must
    /// differ from the built-in properties and from those of every other registered design.
    fn properties(&self) -> &'static [crate::check::PropertyDef] {
        &[]
    }
    /// Time thresholds of the design's own that are not model knobs, known when it is built
    /// from `config`: each constant it compares an age or a delay against (a cache window, a
    /// grace period), with a name for the certificate's scope. `explore` offers the values
    /// around each in its timing menus, as it does for the model's knobs (see
    /// [`crate::explore::Threshold`]); ages known only during a run are declared with
    /// [`ExecCtx::declare_threshold`], and the delays of the design's timers are learned
    /// as they are set. None by default: a design built only on the model's knobs.
    fn time_thresholds(&self, _config: &ExecutorModel) -> Vec<(crate::sim::Millis, &'static str)> {
        Vec::new()
    }
    /// The executor of a worker of a world running `model`: [`executor`](Self::executor)
    /// with the model's `executor` section, unless the design needs more of the model (an
    /// external executor speaks to the provider's HTTP face).
    fn executor_in(&self, model: &crate::model::Model) -> Box<dyn Executor> {
        self.executor(&model.executor)
    }
    /// What a search of this design holds fixed that a schedule could vary, one clause each
    /// ("the executor's own random draws as seeded per worker and incarnation"): a
    /// certificate's scope names them, so that it claims no more than was checked. None
    /// for a design whose every decision goes through the world's choices.
    fn certificate_caveats(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether the design runs the retry layers of a model's `executor.stack` in place of
    /// its own (the design presets). Its guarantee was stated for its own layers: where a
    /// model gives a stack, the judgement of its assumptions adds one that does not hold
    /// ([`assumptions::judge`]). False by default.
    fn runs_model_stack(&self) -> bool {
        false
    }

    /// Whether the design is an external executor process ([`crate::external`]): its
    /// determinism is checked before a search relies on it, not assumed.
    fn is_external(&self) -> bool {
        false
    }

    /// An external executor's determinism check for `model` (`run`), or the note that it
    /// was switched off (`!run`, `--no-determinism-check`): `Ok(Some(line))` the first time
    /// it passes for the model's `init`, `Ok(None)` when it already ran in this command (or
    /// the design is not external), `Err` the refusal. Run by every command before it runs
    /// the design.
    fn check_determinism(
        &self,
        _model: &crate::model::Model,
        _run: bool,
    ) -> Result<Option<String>, String> {
        Ok(None)
    }
    /// The parts of the world its executors' callbacks read or write
    /// (`sim::por`), for the independence of events a search relies on. An
    /// executor that reaches the world only through its [`ExecCtx`] (the journal, sends,
    /// timers, reports and claims, no state shared outside the world) touches
    /// [`Parts::EXECUTORS`](crate::sim::Parts::EXECUTORS), which is what every built-in
    /// design declares. By default [`Parts::ALL`](crate::sim::Parts::ALL): an undeclared
    /// design's events are dependent on every other event, so a search explores every
    /// order of them.
    fn parts(&self) -> crate::sim::Parts {
        crate::sim::Parts::ALL
    }
    /// Whether its executors treat workers, calls, operations and keys by identity only:
    /// they compare them for equality, never branch on the value of an id (no "worker 0
    /// leads"). Then two workers that have run nothing yet are interchangeable, and so are
    /// two identical intents arriving together, and a search explores one of each
    /// ([`crate::explore::Reductions::symmetry`]). False by default; every built-in design
    /// declares it.
    fn symmetric(&self) -> bool {
        false
    }

    /// Whether its executors may read the journal's times of a settled operation (created,
    /// updated, key first sent, last send or action), or a lease's expiry otherwise than as
    /// "has it passed". If not, a search hashes a settled operation without those times and
    /// a lease's expiry by whether it has passed, where it cannot change before the horizon
    /// ([`crate::explore::Reductions::timing`]; [`crate::sim::Moments`]). True by
    /// default, which claims nothing; every built-in design declares false: they read an
    /// operation's times only while it is unsettled (a retrying design that sends a failed
    /// operation again reads only its first-sent moment, which the context stamps on the
    /// request and which is hashed as the provider's, settled or not), and a lease's expiry
    /// only against the clock.
    fn reads_settled_times(&self) -> bool {
        true
    }

    /// The design this one configures, if it is a model's entry with an executor section of
    /// its own ([`configured::Configured`]); such a design is compared only by the model that
    /// configures it, never by one that says `"all"`.
    fn configures(&self) -> Option<&'static dyn Design> {
        None
    }
}

/// The executor of one worker incarnation: sans-IO, driven by the world.
pub trait Executor {
    /// The agent made a tool call (a new one, or one it re-runs).
    fn on_call(&mut self, ctx: &mut ExecCtx<'_>, call: ToolCall);
    /// The transport's answer for an attempt this executor sent.
    fn on_response(
        &mut self,
        ctx: &mut ExecCtx<'_>,
        op: OpId,
        attempt: AttemptId,
        response: Response,
    );
    /// The agent stopped waiting for issue `issue` of `call` (its tool timeout passed): it
    /// ignores a result for that issue from now on. Nothing to do for most designs.
    fn on_cancel(&mut self, _ctx: &mut ExecCtx<'_>, _call: CallId, _issue: u32) {}
    /// A timer set with [`ExecCtx::set_timer`] fired.
    fn on_timer(&mut self, _ctx: &mut ExecCtx<'_>, _tag: u64) {}
    /// The worker starts, at the beginning of a run (not after a crash).
    fn on_start(&mut self, _ctx: &mut ExecCtx<'_>) {}
    /// The worker restarted after a crash: recover from the journal.
    fn on_restart(&mut self, _ctx: &mut ExecCtx<'_>) {}
    /// Feeds everything this executor keeps in memory that can change what it does later into
    /// `h`, in a stable order (no pointer values, no `HashMap` iteration order), and returns
    /// true; or returns false if it cannot: then no world with this executor can be
    /// fingerprinted ([`crate::world::World::fingerprint`] is `None`), an explorer does not
    /// prune, and `explore` says so. Required, with no default, so that a design turns
    /// pruning off only on purpose.
    ///
    /// The journal is the world's and is hashed by it; the configuration the executor was
    /// built with is the model's. An executor that keeps nothing else returns true at once.
    fn fingerprint(&self, h: &mut dyn std::hash::Hasher) -> bool;
    /// A new run starts on this executor's worker: forget everything the run before left in
    /// memory, so that the executor is indistinguishable from one [`Design::executor`]
    /// would build now with the same configuration (the only configuration it is ever reset
    /// under: a world's model does not change). Returns false if it cannot (the default):
    /// the world then drops it and builds a new one.
    ///
    /// A sweep runs one world over many seeds; reusing the executors spares an allocation
    /// and a copy of the configuration per worker per seed. An executor that keeps nothing
    /// between callbacks returns true at once; one with maps clears them.
    fn reset(&mut self) -> bool {
        false
    }
    /// A copy of this executor as it is now, for a search that saves a world at a
    /// branching point and restores it instead of re-running the run's start. `None` (the
    /// default) if it cannot be copied: the search then re-runs every run from its start,
    /// as it does for an external executor process, whose memory is another process's.
    fn snapshot(&self) -> Option<Box<dyn Executor>> {
        None
    }
}

static JOURNAL: journal_design::JournalDesign = journal_design::JournalDesign;
static JOURNAL_RECONCILE: journal_reconcile::JournalReconcile = journal_reconcile::JournalReconcile;
static JOURNAL_RECONCILE_LEASE: journal_reconcile_lease::JournalReconcileLease =
    journal_reconcile_lease::JournalReconcileLease;
static DURABLE_AUTHORIZATION: durable_authorization::DurableAuthorization =
    durable_authorization::DurableAuthorization;

/// Every built-in design, in the order they are listed to users: the presets of
/// `models/designs/` ([`preset`]) among the journal family.
pub fn all() -> Vec<&'static dyn Design> {
    let preset = |name| -> &'static dyn Design {
        preset::find(name).unwrap_or_else(|| panic!("models/designs/{name}.json is bundled"))
    };
    vec![
        preset("no_dedup"),
        preset("same_key"),
        preset("new_key_after_replan"),
        preset("key_per_attempt"),
        preset("payload_hash_key"),
        &JOURNAL,
        &JOURNAL_RECONCILE,
        &JOURNAL_RECONCILE_LEASE,
        preset("layered_retries"),
        preset("single_use_token"),
        &DURABLE_AUTHORIZATION,
        preset("thread_key"),
    ]
}

/// The built-in design called `name`.
pub fn find(name: &str) -> Option<&'static dyn Design> {
    all().into_iter().find(|d| d.name() == name)
}

/// Names of the built-in designs.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|d| d.name()).collect()
}

//! The simulated world: workload, agent, executor workers, network, provider and ledger,
//! advanced by one discrete-event loop over virtual time.
//!
//! Components are sans-IO: each reacts to an event and returns commands. Only this loop
//! touches the queue, the clock and the chooser routing, so one run is a pure function of
//! (model, design, chooser answers).
//!
//! Ground truth stays here: no tool call, request or context a design handles says which
//! intent it serves. The agent knows which intent and step each of its calls serves; the
//! journal says which call each operation serves; the world puts the two together when an
//! operation sends (to tag the effect the send may commit) and when a design makes a claim.

pub(crate) mod agent;
mod crashes;
pub(crate) mod faults;
pub(crate) mod fingerprint;
pub mod keystore;
pub(crate) mod ledger;
pub(crate) mod network;
mod oracle;
pub(crate) mod provider;
mod records;
mod sends;
pub(crate) mod snapshot;
mod transport;
mod turns;
pub(crate) mod workers;
pub(crate) mod workload;

pub use agent::Agent;
pub use ledger::{Committed, Ledger};
pub use provider::Provider;
pub use snapshot::Snapshot;
pub use workload::Workload;

use crate::vocab::event::{LedgerEvent, NetworkEvent, OpEvent, WorkerEvent, WorkloadEvent};
use crate::vocab::ids::*;
use crate::vocab::protocol::{Reply, Request, RequestKind, Response, ToolCall, ToolResult};
use crate::vocab::record::Effect;
use crate::vocab::record::{Claim, End, OpRecord};
use crate::vocab::trace::{Component, Trace};
use agent::{Act, AgentOut};
use faults::Faults;
use network::{Network, Transit};
use provider::ProviderOut;
use records::Records;
use transport::{AttemptInfo, Transport};
use workers::Worker;

use crate::design::context::Lent;
use crate::design::journal::SharedJournal;
use crate::design::{Design, ExecCommand, ExecCtx, Executor, Journal, OpState};
use crate::model::{CrashPoint, Model, Paused};
use crate::sim::queue::Handle;
use crate::sim::{Chooser, ChooserExt, EventQueue, Millis, Parts, Purpose, TieEvent};

/// The most events one run handles (an event held back by a pause counts each time it comes
/// up; a periodic timer counts one more for each unresolved operation, since it acts on
/// each of them). A run that would handle more stops there and ends with [`End::Budget`]: every
/// accepted model finishes in bounded time and memory, whatever its horizon and timers.
///
/// The bundled models take at most 824 events per run, so the budget is over 1 000 times
/// that; a run of the model bound's 10 000 intents with the simplest agent takes about
/// 90 000. A spent budget costs about a second of one core, up to a minute for a model built
/// to be slow (a thousand workers sweeping ten thousand stuck operations every 2 ms). It is a
/// constant rather than a model knob: it guards against a model that cannot end (a sweeper
/// every 2 ms for 30 years), it is not a parameter of the scenario, and a model file cannot
/// lift it.
pub const MAX_EVENTS: u64 = 1_000_000;

#[derive(Clone, Copy, Debug, Hash)]
enum Event {
    Arrival,
    /// The agent takes up an intent the user just expressed.
    AgentStart(crate::vocab::record::Intent),
    AgentAct {
        intent: IntentId,
        act: Act,
    },
    AgentTimeout {
        call: CallId,
        issue: u32,
    },
    ToolResult {
        call: CallId,
        issue: u32,
        result: ToolResult,
    },
    CallDelivered {
        worker: WorkerId,
        call: ToolCall,
    },
    /// The queue's visibility timeout (`workers.redelivery_ms`) passed on `call`: if the
    /// agent still waits for it, it is delivered again.
    Redeliver {
        call: ToolCall,
    },
    ExecTimer {
        worker: WorkerId,
        incarnation: u32,
        tag: u64,
        periodic: bool,
    },
    AttemptTimeout {
        attempt: AttemptId,
    },
    /// The connection of an attempt is reset where its reply would have arrived.
    ConnectionReset {
        attempt: AttemptId,
    },
    ReplyArrives {
        attempt: AttemptId,
        reply: Reply,
    },
    /// The request is the attempt's, in [`World::requests`] (kept aside so that events stay
    /// small: they are moved at every push and pop).
    RequestArrives {
        attempt: AttemptId,
    },
    ProviderWake {
        job: u32,
    },
    WorkerRestart {
        worker: WorkerId,
    },
}

impl Event {
    /// A recurring executor timer that acts only on unresolved operations.
    fn periodic(&self) -> bool {
        matches!(self, Event::ExecTimer { periodic: true, .. })
    }

    /// The component whose pause holds this event back.
    fn component(&self) -> Option<Paused> {
        match self {
            // The queue is not a component that pauses; the delivery it makes is held by
            // the pause of the worker it goes to.
            Event::Arrival | Event::Redeliver { .. } => None,
            Event::AgentStart(_)
            | Event::AgentAct { .. }
            | Event::AgentTimeout { .. }
            | Event::ToolResult { .. } => Some(Paused::Agent),
            Event::RequestArrives { .. } | Event::ProviderWake { .. } => Some(Paused::Provider),
            _ => Some(Paused::Executor),
        }
    }
}

/// A timeout event, by the index of the attempt or call it is for (see
/// [`World::timer_slot`]).
#[derive(Clone, Copy)]
enum Timer {
    Attempt(usize),
    Agent(usize),
}

impl Timer {
    fn of(event: &Event) -> Option<Timer> {
        match *event {
            Event::AttemptTimeout { attempt } => Some(Timer::Attempt(attempt.0 as usize - 1)),
            Event::AgentTimeout { call, .. } => Some(Timer::Agent(call.0 as usize - 1)),
            _ => None,
        }
    }
}

/// A world for one model and one design, reusable across seeds.
pub struct World<'a> {
    model: &'a Model,
    design: &'a dyn Design,
    queue: EventQueue<Event>,
    /// Pending events other than periodic timers: when none is left and every operation is
    /// settled or escalated, nothing can change any more.
    aperiodic: usize,
    now: Millis,
    faults: Faults,
    workload: Workload,
    agent: Agent,
    network: Network,
    provider: Provider,
    ledger: Ledger,
    journal: SharedJournal,
    workers: Vec<Worker>,
    random_crashes: u32,
    /// Each send, its request and its timeout; the ids the executors minted.
    transport: Transport,
    /// What the checkers judge, beside the ledger: operations, sends, claims, the end.
    records: Records,
    /// The event [`World::run_observed`] is about to handle, while its observer looks at the
    /// world (it is part of the state: popped, not yet handled). `None` otherwise.
    current: Option<Event>,
    /// Events taken from the queue in the current run, as the budget counts them (see
    /// [`MAX_EVENTS`]).
    events: u64,
    trace: Trace,
    /// The queued tool timeout of each call (by index), cancelled once the agent stops
    /// waiting for that issue of the call. Not part of the state: a cancelled timer is a
    /// no-op that never pops.
    agent_timers: Vec<Option<Handle>>,
    exec_out: Vec<ExecCommand>,
    provider_out: Vec<ProviderOut>,
    /// The events of the open tie as the chooser sees them ([`Chooser::order`]), kept to
    /// spare an allocation per event.
    tie: Vec<TieEvent>,
    /// The tie identity of the event taken last (for [`Chooser::handled`]).
    taken: TieEvent,
    /// The chooser ended the run at a tie ([`Chooser::order`] answered `None`).
    cut_at_tie: bool,
}

impl<'a> World<'a> {
    pub fn new(model: &'a Model, design: &'a dyn Design, trace: bool) -> Self {
        // An entry of `designs` with an executor section of its own runs on its own model.
        let model = model.for_design(design.name());
        let mut world = Self {
            model,
            design,
            queue: EventQueue::default(),
            aperiodic: 0,
            now: 0,
            faults: Faults::new(&model.faults),
            workload: Workload::new(model.workload.clone()),
            agent: Agent::new(model.agent.clone()),
            network: Network::new(model.network.clone()),
            provider: Provider::new(model.provider.clone()),
            ledger: Ledger::default(),
            journal: SharedJournal::new(model.workers.journal),
            workers: Vec::new(),
            random_crashes: 0,
            transport: Transport::default(),
            records: Records::default(),
            current: None,
            events: 0,
            trace: Trace::new(trace),
            agent_timers: Vec::new(),
            exec_out: Vec::new(),
            provider_out: Vec::new(),
            tie: Vec::new(),
            taken: TieEvent {
                id: 0,
                at_ms: 0,
                parts: Parts::ALL,
                class: 0,
                entities: [0, 0],
            },
            cut_at_tie: false,
        };
        world.reserve();
        world
    }

    /// Makes room for the per-intent records of one run (one per intent is the common case),
    /// so that the first run on a new world does not grow and copy them as it goes; later runs
    /// reuse what earlier ones grew. Capped, so that a model asking for millions of intents
    /// reserves nothing it may never use.
    fn reserve(&mut self) {
        const MAX_RESERVED: u32 = 1 << 16;
        let n = self.model.workload.intents.min(MAX_RESERVED) as usize;
        self.workload.reserve(n);
        self.agent.reserve(n);
        self.provider.reserve(n);
        self.ledger.reserve(n);
        self.journal.get_mut().reserve(n);
        self.transport.reserve(n);
        self.records.reserve(n);
    }

    fn reset(&mut self) {
        self.queue.clear();
        self.aperiodic = 0;
        self.now = 0;
        self.workload.clear();
        self.agent.clear();
        self.provider.clear();
        self.ledger.clear();
        self.journal.get_mut().reset();
        // The workers of the last run start over, keeping their executors where those can
        // reset; the first run builds them.
        let (design, model) = (self.design, &self.model);
        let count = self.model.workers.count as usize;
        self.workers.truncate(count);
        for w in &mut self.workers {
            w.reset(|| design.executor_in(model));
        }
        while self.workers.len() < count {
            self.workers.push(Worker::new(design.executor_in(model)));
        }
        self.random_crashes = 0;
        self.transport.clear();
        self.faults.reset();
        self.records.clear();
        self.current = None;
        self.events = 0;
        self.trace.clear();
        self.agent_timers.clear();
        self.cut_at_tie = false;
    }

    /// Runs from time 0 to the horizon (or until nothing is left to happen), taking every
    /// decision from `ch`.
    pub fn run(&mut self, ch: &mut dyn Chooser) {
        self.run_loop::<false>(ch, &mut |_| true);
    }

    /// Like [`World::run`], but calls `at_event(self)` before handling each event (after the
    /// clock has moved to it; the event is part of what [`World::fingerprint`] hashes). If it
    /// returns false the run stops there, and [`World::end`] reports [`End::Pruned`] at that
    /// moment: the outcome is the run so far.
    pub fn run_observed(
        &mut self,
        ch: &mut dyn Chooser,
        at_event: &mut dyn FnMut(&World<'_>) -> bool,
    ) {
        self.run_loop::<true>(ch, at_event);
    }

    /// The event loop. `OBSERVED` is a constant, so that [`World::run`] compiles without the
    /// observer's calls and pays nothing for them.
    fn run_loop<const OBSERVED: bool>(
        &mut self,
        ch: &mut dyn Chooser,
        at_event: &mut dyn FnMut(&World<'_>) -> bool,
    ) {
        self.start(!OBSERVED && !ch.orders_ties(), ch);
        self.drive::<OBSERVED>(ch, at_event, &mut |_| {});
    }

    /// A run's start: the world as new, the first arrival queued, every worker started.
    fn start(&mut self, use_lane: bool, ch: &mut dyn Chooser) {
        self.reset();
        self.queue.use_lane(use_lane);
        self.push(0, Event::Arrival);
        for w in 0..self.model.workers.count {
            self.exec(WorkerId(w), ch, |e, ctx| e.on_start(ctx));
        }
        // Every worker ran the same start: none is touched yet.
        for w in &mut self.workers {
            w.touched = false;
        }
        self.records.end = (End::Quiescent, 0);
    }

    /// [`World::run_observed`], calling `between(self)` too before each event is taken
    /// from the queue (where [`World::save`] may save the world), and starting from `from`
    /// instead of the run's start when given: the world as a run through the same choices
    /// left it there, with `ch` put back where that run's chooser was.
    pub fn run_resumable(
        &mut self,
        from: Option<&snapshot::Snapshot>,
        ch: &mut dyn Chooser,
        at_event: &mut dyn FnMut(&World<'_>) -> bool,
        between: &mut dyn FnMut(&World<'_>),
    ) {
        match from {
            None => self.start(false, ch),
            Some(from) => {
                self.restore(from);
                self.queue.use_lane(false);
                self.records.end = (End::Quiescent, 0);
            }
        }
        self.drive::<true>(ch, at_event, between);
    }

    /// The event loop from where the world is to the run's end.
    fn drive<const OBSERVED: bool>(
        &mut self,
        ch: &mut dyn Chooser,
        at_event: &mut dyn FnMut(&World<'_>) -> bool,
        between: &mut dyn FnMut(&World<'_>),
    ) {
        loop {
            debug_assert!(
                self.aperiodic <= self.queue.len(),
                "{} aperiodic events counted, {} queued",
                self.aperiodic,
                self.queue.len()
            );
            if OBSERVED {
                between(self);
            }
            let Some((at, event)) = self.next_event(ch) else {
                break;
            };
            if event.periodic() {
                if self.aperiodic == 0 && self.settled() {
                    break;
                }
            } else {
                self.aperiodic -= 1;
            }
            if at > self.model.horizon_ms {
                self.records.end = (End::Horizon, self.model.horizon_ms);
                return;
            }
            if !self.spend(&event) {
                return;
            }
            self.now = at;
            if let Some(until) = self.held_until(at, &event) {
                self.hold(until, event);
                continue;
            }
            if OBSERVED {
                self.current = Some(event);
                let go_on = at_event(self);
                self.current = None;
                if !go_on {
                    self.records.end = (End::Pruned, self.now);
                    return;
                }
            }
            if ch.orders_ties() {
                ch.handled(self.taken);
            }
            self.handle(event, ch);
        }
        self.records.end = if self.cut_at_tie {
            (End::Pruned, self.now)
        } else {
            (End::Quiescent, self.now)
        };
    }

    /// Counts `event` against the run's budget, or ends the run when the budget cannot
    /// cover it. A periodic timer acts on the unresolved operations (the contract of
    /// `set_periodic_timer`): it costs one event for each of them, so that a sweeper's
    /// rounds cannot each take the whole journal for one event.
    #[inline]
    fn spend(&mut self, event: &Event) -> bool {
        let cost = if event.periodic() {
            1 + self.journal.get_mut().unresolved_count() as u64
        } else {
            1
        };
        if self.events + cost > MAX_EVENTS {
            self.records.end = (End::Budget, self.now);
            self.trace.log(self.now, Component::Workload, || {
                WorkloadEvent::BudgetSpent { events: MAX_EVENTS }
            });
            return false;
        }
        self.events += cost;
        true
    }

    /// Until when a pause of its component holds `event` back at `at`, if one does.
    #[inline]
    fn held_until(&self, at: Millis, event: &Event) -> Option<Millis> {
        if !self.faults.any_pause() {
            return None;
        }
        event
            .component()
            .and_then(|c| self.faults.paused_until(c, self.event_worker(event), at))
    }

    /// Puts `event` off to `until`, the end of the pause that holds it back (a timeout
    /// keeps its handle in its slot).
    fn hold(&mut self, until: Millis, event: Event) {
        self.aperiodic += usize::from(!event.periodic());
        let timer = Timer::of(&event);
        let handle = self.queue.defer(until, event);
        if let Some(slot) = self.timer_slot(timer) {
            *slot = Some(handle);
        }
    }

    /// Queues `event` at `at_ms` for good (nothing cancels it; on the queue's lane when it
    /// can be, see [`EventQueue::schedule`]).
    fn push(&mut self, at_ms: Millis, event: Event) {
        debug_assert!(at_ms >= self.now, "{event:?} queued in the past");
        self.aperiodic += usize::from(!event.periodic());
        self.queue.schedule(at_ms, event);
    }

    /// Queues `event` at `at_ms` and returns its handle.
    fn enqueue(&mut self, at_ms: Millis, event: Event) -> Handle {
        debug_assert!(at_ms >= self.now, "{event:?} queued in the past");
        self.aperiodic += usize::from(!event.periodic());
        self.queue.push(at_ms, event)
    }

    /// Queues a timeout `event` and keeps its handle in `slot` of `timers`, cancelling the
    /// timer the slot held before (moot by now: a new one replaces it).
    fn push_timer(&mut self, at_ms: Millis, event: Event) {
        let timer = Timer::of(&event);
        let handle = self.enqueue(at_ms, event);
        if let Some(old) = self.timer_slot(timer).and_then(|s| s.replace(handle)) {
            self.cancel(old);
        }
    }

    /// Where the handle of a timeout is kept; `None` for an event that is not one.
    fn timer_slot(&mut self, timer: Option<Timer>) -> Option<&mut Option<Handle>> {
        let (timers, index) = match timer? {
            Timer::Attempt(i) => (&mut self.transport.attempt_timers, i),
            Timer::Agent(i) => (&mut self.agent_timers, i),
        };
        if timers.len() <= index {
            timers.resize(index + 1, None);
        }
        Some(&mut timers[index])
    }

    /// Cancels a queued timer whose reason is gone.
    fn cancel(&mut self, handle: Handle) {
        if self.queue.cancel(handle) {
            self.aperiodic -= 1;
        }
    }

    /// Cancels the timeout of `attempt`, which just closed.
    fn cancel_attempt_timer(&mut self, attempt: AttemptId) {
        if let Some(h) = self
            .transport
            .attempt_timers
            .get_mut(attempt.0 as usize - 1)
            .and_then(Option::take)
        {
            self.cancel(h);
        }
    }

    /// Every operation is settled or escalated: a periodic timer has nothing to act on.
    fn settled(&self) -> bool {
        self.journal.lock().unresolved().next().is_none()
    }

    /// The worker an executor event is for.
    fn event_worker(&self, event: &Event) -> Option<WorkerId> {
        match *event {
            Event::CallDelivered { worker, .. }
            | Event::ExecTimer { worker, .. }
            | Event::WorkerRestart { worker } => Some(worker),
            Event::AttemptTimeout { attempt }
            | Event::ConnectionReset { attempt }
            | Event::ReplyArrives { attempt, .. } => self
                .transport
                .attempts
                .get(attempt.0 as usize - 1)
                .map(|a| a.worker),
            _ => None,
        }
    }

    fn handle(&mut self, event: Event, ch: &mut dyn Chooser) {
        let now = self.now;
        match event {
            Event::Arrival => {
                let (intent, next) = self.workload.arrive(now, ch);
                self.trace
                    .log(now, Component::Workload, || WorkloadEvent::Arrives {
                        intent: intent.id,
                        tenant: intent.tenant,
                        repeat_of: intent.repeat_of,
                    });
                if let Some(t) = next {
                    self.push(t, Event::Arrival);
                }
                self.push(now, Event::AgentStart(intent));
            }
            Event::AgentStart(intent) => {
                let out = self.agent.start(intent, now, &mut self.trace);
                self.agent_out(Some(out), ch);
            }
            Event::AgentAct { intent, act } => {
                let out = self.agent.act(intent, act, now, &mut self.trace);
                self.agent_out(out, ch);
            }
            Event::AgentTimeout { call, issue } => self.agent_timeout(call, issue, ch),
            Event::ToolResult {
                call,
                issue,
                result,
            } => self.tool_result(call, issue, result, ch),
            Event::CallDelivered { worker, call } => self.call_delivered(worker, call, ch),
            Event::Redeliver { call } => self.redeliver(call, ch),
            Event::ExecTimer {
                worker,
                incarnation,
                tag,
                ..
            } => {
                if self.workers[worker.0 as usize].incarnation == incarnation {
                    self.exec(worker, ch, |e, ctx| e.on_timer(ctx, tag));
                }
            }
            Event::AttemptTimeout { attempt } => self.attempt_timeout(attempt, ch),
            Event::ConnectionReset { attempt } => self.connection_reset(attempt, ch),
            Event::ReplyArrives { attempt, reply } => self.reply_arrives(attempt, reply, ch),
            Event::RequestArrives { attempt } => self.request_arrives(attempt, ch),
            Event::ProviderWake { job } => self.provider_wake(job, ch),
            Event::WorkerRestart { worker } => self.restart(worker, ch),
        }
    }

    /// The agent's tool timeout fires; the worker serving the call, if up, hears that the
    /// agent stopped waiting.
    fn agent_timeout(&mut self, call: CallId, issue: u32, ch: &mut dyn Chooser) {
        let awaited = self.agent.awaits(call, issue);
        let out = self
            .agent
            .on_timeout(call, issue, self.now, ch, &mut self.trace);
        let owner = self
            .journal
            .get_mut()
            .find_by_call(call)
            .and_then(|op| self.journal.get_mut().get(op).map(|o| o.owner));
        if awaited
            && let Some(worker) = owner
            && self.workers[worker.0 as usize].up
        {
            self.exec(worker, ch, |e, ctx| e.on_cancel(ctx, call, issue));
        }
        self.agent_out(out, ch);
    }

    /// A worker's result reaches the agent.
    fn tool_result(&mut self, call: CallId, issue: u32, result: ToolResult, ch: &mut dyn Chooser) {
        // The call's queued timer is for its latest issue: moot only if the agent waited
        // for this very issue and no longer does (a late result of an earlier issue leaves
        // the latest issue's timer alone).
        let awaited = self.agent.awaits(call, issue);
        let out = self
            .agent
            .on_result(call, issue, result, self.now, ch, &mut self.trace);
        if awaited
            && !self.agent.awaits(call, issue)
            && let Some(h) = self
                .agent_timers
                .get_mut(call.0 as usize - 1)
                .and_then(Option::take)
        {
            self.cancel(h);
        }
        self.agent_out(out, ch);
    }

    /// A call reaches a worker: handled if the worker is up, else kept for its restart.
    fn call_delivered(&mut self, worker: WorkerId, call: ToolCall, ch: &mut dyn Chooser) {
        let w = &mut self.workers[worker.0 as usize];
        if w.up {
            self.exec(worker, ch, |e, ctx| e.on_call(ctx, call));
            return;
        }
        w.inbox.push(call);
        self.trace.log(self.now, Component::Executor, || {
            WorkerEvent::WaitsForRestart {
                worker,
                call: call.call,
            }
        });
    }

    /// The queue's visibility timeout of a call still awaited: delivered again, to one of
    /// the workers polling the queue now (up and not frozen by a pause: a frozen process
    /// polls nothing; a crashed one gets its calls at its restart).
    fn redeliver(&mut self, call: ToolCall, ch: &mut dyn Chooser) {
        let now = self.now;
        if !self.agent.awaits(call.call, call.issue) {
            return;
        }
        let polling: Vec<u32> = (0..self.model.workers.count)
            .filter(|&w| {
                self.workers[w as usize].up
                    && self
                        .faults
                        .paused_until(Paused::Executor, Some(WorkerId(w)), now)
                        .is_none()
            })
            .collect();
        let to = (!polling.is_empty()).then(|| {
            let i = ch.index(Purpose::WorkerPick, polling.len() as u64) as usize;
            WorkerId(polling[i])
        });
        self.trace
            .log(now, Component::Executor, || WorkerEvent::Unanswered {
                call: call.call,
                to,
            });
        if let Some(worker) = to {
            self.push(now, Event::CallDelivered { worker, call });
        }
        if let Some(after) = self.model.workers.redelivery_ms {
            self.push(now.saturating_add(after), Event::Redeliver { call });
        }
    }

    /// A request reaches the provider.
    fn request_arrives(&mut self, attempt: AttemptId, ch: &mut dyn Chooser) {
        let request = self.transport.requests[attempt.0 as usize - 1];
        let mut out = std::mem::take(&mut self.provider_out);
        let env = provider::Env {
            now: self.now,
            faults: &self.faults,
            ch,
            trace: &mut self.trace,
            out: &mut out,
        };
        self.provider.on_request(attempt, request, env);
        self.provider_commands(&mut out, ch);
        self.provider_out = out;
    }

    /// A provider's job finishes processing.
    fn provider_wake(&mut self, job: u32, ch: &mut dyn Chooser) {
        let mut out = std::mem::take(&mut self.provider_out);
        self.provider
            .on_wake(self.now, job, &self.faults, ch, &mut self.trace, &mut out);
        self.provider_commands(&mut out, ch);
        self.provider_out = out;
    }

    /// The intent and step operation `op` serves as it sends: those of the call its journal
    /// record serves now (the agent knows which intent and step it made each call for). An
    /// operation a volatile journal has forgotten still serves what it served at its first send.
    fn serves(&mut self, op: OpId) -> (IntentId, u32) {
        let call = self.journal.get_mut().get(op).map(|o| o.call().call);
        call.and_then(|c| self.agent.serves(c))
            .or_else(|| {
                self.records
                    .op_records
                    .get(op.0 as usize)
                    .and_then(|r| r.intent)
            })
            .unwrap_or_else(|| {
                panic!(
                    "{op} sends, but no journal record says which of the agent's calls it serves: \
                     a design sends only for operations it recorded in the journal"
                )
            })
    }

    /// The record of operation `op`, created on first use.
    fn op_record(&mut self, op: OpId) -> &mut OpRecord {
        let i = op.0 as usize;
        if self.records.op_records.len() <= i {
            self.records.op_records.resize(i + 1, OpRecord::default());
        }
        &mut self.records.op_records[i]
    }

    pub fn model(&self) -> &Model {
        self.model
    }

    /// The virtual time: under [`World::run_observed`], when the event about to be handled
    /// is due; after a run, when it stopped.
    pub fn now(&self) -> Millis {
        self.now
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The journal, locked (the world is between events: nobody else holds it).
    pub fn journal(&self) -> crate::sync::MutexGuard<'_, Journal> {
        self.journal.lock()
    }

    /// The design under test.
    pub fn design(&self) -> &'a dyn Design {
        self.design
    }

    pub fn workload(&self) -> &Workload {
        &self.workload
    }

    pub fn provider(&self) -> &Provider {
        &self.provider
    }

    pub fn remote_calls(&self) -> u64 {
        self.transport.remote_calls
    }

    /// Each operation as the transport saw it, by operation id.
    pub fn op_records(&self) -> &[OpRecord] {
        &self.records.op_records
    }

    /// The operation each send belonged to, by attempt number (attempt `n` at `n - 1`).
    pub fn attempt_ops(&self) -> &[OpId] {
        &self.records.attempt_ops
    }

    /// The design's claims about its operations, in the order made.
    pub fn claims(&self) -> &[Claim] {
        &self.records.claims
    }

    /// The outcome of the run just finished: what the checkers and metrics judge.
    pub fn outcome(&self) -> crate::check::Outcome<'_> {
        let (end, end_ms) = self.end();
        crate::check::Outcome {
            intents: self.workload().intents(),
            heard: self.agent().heard(),
            effects: self.ledger().effects(),
            ops: self.op_records(),
            attempt_ops: self.attempt_ops(),
            claims: self.claims(),
            properties: self.design().properties(),
            remote_calls: self.remote_calls(),
            end_ms,
            end,
        }
    }

    /// How the last run ended, and when.
    pub fn end(&self) -> (End, Millis) {
        self.records.end
    }

    /// Events the last run took from its queue, as the budget counts them (at most
    /// [`MAX_EVENTS`]).
    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Per scripted fault of the model, whether it fired in the runs since the last call.
    pub fn take_fired_faults(&mut self) -> Vec<bool> {
        self.faults.take_fired()
    }
}

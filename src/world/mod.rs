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
pub(crate) mod faults;
pub(crate) mod fingerprint;
pub mod keystore;
pub(crate) mod ledger;
pub(crate) mod network;
pub(crate) mod provider;
mod records;
pub(crate) mod snapshot;
mod transport;
pub(crate) mod workers;
pub(crate) mod workload;

pub use agent::Agent;
pub use ledger::{Committed, Ledger};
pub use provider::Provider;
pub use snapshot::Snapshot;
pub use workload::Workload;

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
            // A periodic timer acts on the unresolved operations (the contract of
            // `set_periodic_timer`): it costs one event for each of them, so that a
            // sweeper's rounds cannot each take the whole journal for one event.
            let cost = if event.periodic() {
                1 + self.journal.get_mut().unresolved_count() as u64
            } else {
                1
            };
            if self.events + cost > MAX_EVENTS {
                self.records.end = (End::Budget, self.now);
                self.trace.log(self.now, Component::Workload, || {
                    format!(
                        "the run stops here: its budget of {MAX_EVENTS} events is spent, with events still pending"
                    )
                });
                return;
            }
            self.events += cost;
            self.now = at;
            if self.faults.any_pause()
                && let Some(until) = event
                    .component()
                    .and_then(|c| self.faults.paused_until(c, self.event_worker(&event), at))
            {
                self.aperiodic += usize::from(!event.periodic());
                let timer = Timer::of(&event);
                let handle = self.queue.defer(until, event);
                if let Some(slot) = self.timer_slot(timer) {
                    *slot = Some(handle);
                }
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

    /// The parts of the world handling `event` reads or writes (see [`crate::sim::por`]):
    /// the part the event is for, and for an agent event that also wakes the worker serving
    /// a call, the executors. The executors' parts are what the design declares
    /// ([`Design::parts`]): everything, unless it says they reach the world only through
    /// their context.
    fn parts(&self, event: &Event) -> Parts {
        let executors = self.design.parts();
        match event {
            Event::Arrival => workload::PARTS,
            Event::AgentStart(_) | Event::AgentAct { .. } | Event::ToolResult { .. } => {
                agent::PARTS
            }
            // The tool timeout tells the worker serving the call; a redelivery asks which
            // workers poll the queue.
            Event::AgentTimeout { .. } | Event::Redeliver { .. } => agent::PARTS.union(executors),
            Event::CallDelivered { .. }
            | Event::ExecTimer { .. }
            | Event::AttemptTimeout { .. }
            | Event::ConnectionReset { .. }
            | Event::ReplyArrives { .. }
            | Event::WorkerRestart { .. } => executors,
            Event::RequestArrives { .. } | Event::ProviderWake { .. } => provider::PARTS,
        }
    }

    /// The next event to handle: the earliest; among several due at the same instant, the
    /// first queued, unless `ch` [orders ties](Chooser::orders_ties). Then it chooses
    /// ([`Purpose::Order`]; alternative 0 is the first queued, the others keep their order),
    /// except where the order cannot matter: an event a pause holds back comes first without
    /// a choice (it is put off to the pause's end whatever the order), and past the horizon,
    /// or with only periodic timers left and nothing for them to act on, the run ends anyway.
    fn next_event(&mut self, ch: &mut dyn Chooser) -> Option<(Millis, Event)> {
        // Only cancelled timers left (or nothing): the run is over without popping them.
        if self.queue.is_empty() {
            return None;
        }
        if !ch.orders_ties() {
            return self.queue.pop();
        }
        let n = self.queue.open_tie();
        if n == 0 {
            return None;
        }
        let at = self.queue.tie(0).0;
        let pick = if at > self.model.horizon_ms || (self.aperiodic == 0 && self.settled()) {
            0
        } else if let Some(held) = (0..n).find(|&i| {
            let event = self.queue.tie(i).1;
            event
                .component()
                .and_then(|c| self.faults.paused_until(c, self.event_worker(event), at))
                .is_some()
        }) {
            held
        } else {
            let mut tie = std::mem::take(&mut self.tie);
            tie.clear();
            tie.extend((0..n).map(|i| TieEvent {
                id: self.queue.tie_id(i),
                at_ms: at,
                parts: self.parts(self.queue.tie(i).1),
                class: self.twin_class(self.queue.tie(i).1),
                entities: self.entities(self.queue.tie(i).1),
            }));
            let pick = ch.order(&tie);
            self.tie = tie;
            match pick {
                Some(i) => i,
                None => {
                    // Every order from here is one the search has explored: the run ends.
                    self.queue.close_tie(0);
                    self.cut_at_tie = true;
                    return None;
                }
            }
        };
        self.taken = TieEvent {
            id: self.queue.tie_id(pick),
            at_ms: at,
            parts: self.parts(self.queue.tie(pick).1),
            class: 0,
            entities: self.entities(self.queue.tie(pick).1),
        };
        Some(self.queue.close_tie(pick))
    }

    /// The entries of its part `event` reads or writes ([`TieEvent::entities`]): for a
    /// provider event, the key record and resources of its request.
    fn entities(&self, event: &Event) -> [u64; 2] {
        match *event {
            Event::RequestArrives { attempt } => self
                .provider
                .entities(&self.transport.requests[attempt.0 as usize - 1]),
            Event::ProviderWake { job } => self.provider.job_entities(job),
            _ => [0, 0],
        }
    }

    /// The symmetry class of each worker for a pick ([`Chooser::choose_up_to_symmetry`]):
    /// 1 for a worker that has run nothing but the run's start, is up in its first
    /// incarnation with nothing waiting, and is named by no scripted fault, when the
    /// design treats workers by identity only ([`Design::symmetric`]): any two such are
    /// interchangeable. 0 for the others.
    fn worker_classes(&self) -> Vec<u32> {
        let symmetric = self.design.symmetric();
        self.workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let fresh = !w.touched && w.up && w.incarnation == 0 && w.inbox.is_empty();
                let named = self.faults.names_worker(WorkerId(i as u32));
                u32::from(symmetric && fresh && !named)
            })
            .collect()
    }

    /// The symmetry class of a tied event ([`TieEvent::class`]): two identical intents
    /// taken up at the same instant (same tenant, endpoint and steps, neither a genuine
    /// repeat, in a workload without genuine repeats, which would make the later of them
    /// special) are interchangeable, when the design treats ids by identity only. So are
    /// two intents alike but for their tenants, where each is its tenant's only intent in
    /// the workload: those tenants are names only (their keys, records and resources are
    /// theirs alone, and no other intent refers to either). 0 for every other event.
    fn twin_class(&self, event: &Event) -> u32 {
        match event {
            Event::AgentStart(i)
                if self.design.symmetric()
                    && self.model.workload.genuine_repeat.is_zero()
                    && i.repeat_of.is_none() =>
            {
                let tenant = if self.sole_intent_of_its_tenant(i.id) {
                    u64::MAX
                } else {
                    u64::from(i.tenant.0)
                };
                let mut h = crate::sim::hash::StableHasher::new();
                std::hash::Hash::hash(&(tenant, i.endpoint, i.steps), &mut h);
                (std::hash::Hasher::finish(&h) as u32).max(1)
            }
            _ => 0,
        }
    }

    /// Whether intent `id` is the only intent of its tenant in the whole workload (intents
    /// take the tenants in turn, and no genuine repeat moves one: see [`workload`]).
    fn sole_intent_of_its_tenant(&self, id: IntentId) -> bool {
        let w = &self.model.workload;
        w.genuine_repeat.is_zero()
            && id.0 < w.tenants
            && u64::from(id.0) + u64::from(w.tenants) >= u64::from(w.intents)
    }

    /// The positions in pop order of the queued events among `ids` (tie identities, see
    /// [`Chooser::order`]): a search mixes them into a state's fingerprint when it keeps
    /// some events asleep.
    pub fn queued_positions(&self, ids: &[u32]) -> Vec<usize> {
        self.queue.positions_of(ids)
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
                    .log(now, Component::Workload, || match intent.repeat_of {
                        Some(p) => format!("{} arrives: genuinely repeats {p}", intent.id),
                        None => format!("{} arrives ({})", intent.id, intent.tenant),
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
            Event::AgentTimeout { call, issue } => {
                let awaited = self.agent.awaits(call, issue);
                let out = self.agent.on_timeout(call, issue, now, ch, &mut self.trace);
                // The worker serving the call hears that the agent stopped waiting.
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
            Event::ToolResult {
                call,
                issue,
                result,
            } => {
                // The call's queued timer is for its latest issue: moot only if the agent
                // waited for this very issue and no longer does (a late result of an
                // earlier issue leaves the latest issue's timer alone).
                let awaited = self.agent.awaits(call, issue);
                let out = self
                    .agent
                    .on_result(call, issue, result, now, ch, &mut self.trace);
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
            Event::CallDelivered { worker, call } => {
                let w = &mut self.workers[worker.0 as usize];
                if w.up {
                    self.exec(worker, ch, |e, ctx| e.on_call(ctx, call));
                } else {
                    w.inbox.push(call);
                    self.trace.log(now, Component::Executor, || {
                        format!("{worker} is down; {} waits for its restart", call.call)
                    });
                }
            }
            Event::Redeliver { call } => {
                if !self.agent.awaits(call.call, call.issue) {
                    return;
                }
                // The workers polling the queue now: up and not frozen by a pause (a frozen
                // process polls nothing; a crashed one gets its calls at its restart).
                let polling: Vec<u32> = (0..self.model.workers.count)
                    .filter(|&w| {
                        self.workers[w as usize].up
                            && self
                                .faults
                                .paused_until(Paused::Executor, Some(WorkerId(w)), now)
                                .is_none()
                    })
                    .collect();
                if polling.is_empty() {
                    self.trace.log(now, Component::Executor, || {
                        format!(
                            "{} not answered within the queue's visibility timeout; no worker polls the queue now",
                            call.call
                        )
                    });
                } else {
                    let i = ch.index(Purpose::WorkerPick, polling.len() as u64) as usize;
                    let worker = WorkerId(polling[i]);
                    self.trace.log(now, Component::Executor, || {
                        format!(
                            "{} not answered within the queue's visibility timeout: delivered again, to {worker}",
                            call.call
                        )
                    });
                    self.push(now, Event::CallDelivered { worker, call });
                }
                if let Some(after) = self.model.workers.redelivery_ms {
                    self.push(now.saturating_add(after), Event::Redeliver { call });
                }
            }
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
            Event::RequestArrives { attempt } => {
                let request = self.transport.requests[attempt.0 as usize - 1];
                let mut out = std::mem::take(&mut self.provider_out);
                let env = provider::Env {
                    now,
                    faults: &self.faults,
                    ch,
                    trace: &mut self.trace,
                    out: &mut out,
                };
                self.provider.on_request(attempt, request, env);
                self.provider_commands(&mut out, ch);
                self.provider_out = out;
            }
            Event::ProviderWake { job } => {
                let mut out = std::mem::take(&mut self.provider_out);
                self.provider
                    .on_wake(now, job, &self.faults, ch, &mut self.trace, &mut out);
                self.provider_commands(&mut out, ch);
                self.provider_out = out;
            }
            Event::WorkerRestart { worker } => self.restart(worker, ch),
        }
    }

    fn agent_out(&mut self, out: Option<AgentOut>, ch: &mut dyn Chooser) {
        match out {
            None => {}
            Some(AgentOut::Call {
                call,
                timeout_at_ms,
            }) => {
                let n = u64::from(self.model.workers.count);
                let worker = if ch.orders_ties() && n > 1 {
                    let classes = self.worker_classes();
                    ch.choose_up_to_symmetry(Purpose::WorkerPick, &classes)
                } else {
                    ch.index(Purpose::WorkerPick, n)
                };
                let worker = WorkerId(worker as u32);
                self.push(self.now, Event::CallDelivered { worker, call });
                // Built-in designs keep one journal shared by every worker: a redelivered
                // call would look already in hand anywhere (inert.rs warns).
                if let Some(after) = self.model.workers.redelivery_ms
                    && self.design.is_external()
                {
                    self.push(self.now.saturating_add(after), Event::Redeliver { call });
                }
                self.push_timer(
                    timeout_at_ms,
                    Event::AgentTimeout {
                        call: call.call,
                        issue: call.issue,
                    },
                );
            }
            Some(AgentOut::Later { intent, act, at_ms }) => {
                self.push(at_ms, Event::AgentAct { intent, act });
            }
        }
    }

    /// Runs one executor callback on `worker`, then carries out its commands.
    fn exec(
        &mut self,
        worker: WorkerId,
        ch: &mut dyn Chooser,
        f: impl FnOnce(&mut dyn Executor, &mut ExecCtx<'_>),
    ) {
        self.workers[worker.0 as usize].touched = true;
        let should_retry = self.transport.answer_should_retry.take();
        let Some(mut executor) = self.workers[worker.0 as usize].executor.take() else {
            return;
        };
        let mut out = std::mem::take(&mut self.exec_out);
        let mut ctx = ExecCtx::new(
            self.now,
            (worker, self.workers[worker.0 as usize].incarnation),
            Lent {
                journal: self.journal.get_mut(),
                out: &mut out,
                minted: &mut self.transport.minted,
                trace: &mut self.trace,
                claims: &mut self.records.call_claims,
            },
            should_retry.map(|v| (self.model.provider.should_retry.header.as_str(), v)),
        );
        f(executor.as_mut(), &mut ctx);
        self.workers[worker.0 as usize].executor = Some(executor);
        self.tag_claims();
        self.exec_commands(worker, &mut out, ch);
        out.clear();
        self.exec_out = out;
    }

    /// Turns the claims the callback just made, on the calls their operations serve, into
    /// claims on the intents and steps those calls serve.
    fn tag_claims(&mut self) {
        for c in self.records.call_claims.drain(..) {
            // A call the agent never made serves no intent: nothing to judge the claim by.
            let Some(intent) = self.agent.serves(c.call) else {
                self.trace.log(c.at_ms, Component::Executor, || {
                    format!(
                        "{}: claim on {}, which the agent never made: ignored",
                        c.op, c.call
                    )
                });
                continue;
            };
            debug_assert!(
                self.records
                    .claims
                    .last()
                    .is_none_or(|l| l.at_ms <= c.at_ms),
                "claims recorded out of time order"
            );
            self.records.claims.push(Claim {
                op: c.op,
                intent,
                at_ms: c.at_ms,
                kind: c.kind,
            });
        }
    }

    fn exec_commands(
        &mut self,
        worker: WorkerId,
        cmds: &mut Vec<ExecCommand>,
        ch: &mut dyn Chooser,
    ) {
        let now = self.now;
        for cmd in cmds.drain(..) {
            if !self.workers[worker.0 as usize].up {
                break;
            }
            match cmd {
                ExecCommand::Send {
                    attempt,
                    op,
                    request,
                    timeout_ms,
                } => {
                    let is_create = matches!(request.kind, RequestKind::Create { .. });
                    self.faults.number(attempt, is_create);
                    if self.crash_check(worker, attempt, CrashPoint::BeforeDispatch, ch) {
                        self.crash(worker, attempt, CrashPoint::BeforeDispatch);
                        break;
                    }
                    let timeout_ms = timeout_ms.unwrap_or(self.model.executor.timeout_ms);
                    self.send(worker, attempt, op, request, timeout_ms, ch);
                    if self.crash_check(worker, attempt, CrashPoint::AfterSend, ch) {
                        self.crash(worker, attempt, CrashPoint::AfterSend);
                        break;
                    }
                }
                ExecCommand::Timer {
                    at_ms,
                    tag,
                    periodic,
                    spread_ms,
                } => {
                    let min = at_ms.saturating_sub(now);
                    // The design's own delay: a threshold later timing choices may straddle.
                    // A jittered one is a timing choice itself, between its two ends.
                    ch.learn_threshold(min);
                    let at_ms = if spread_ms == 0 {
                        at_ms
                    } else {
                        let max = min.saturating_add(spread_ms);
                        ch.learn_threshold(max);
                        now.saturating_add(ch.between(Purpose::Backoff, min, max))
                    };
                    let incarnation = self.workers[worker.0 as usize].incarnation;
                    self.push(
                        at_ms,
                        Event::ExecTimer {
                            worker,
                            incarnation,
                            tag,
                            periodic,
                        },
                    );
                }
                ExecCommand::Threshold { ms } => ch.learn_threshold(ms),
                ExecCommand::Report {
                    call,
                    issue,
                    result,
                } => {
                    self.trace.log(now, Component::Executor, || {
                        format!("{worker}: reports {result} for {call}")
                    });
                    self.push(
                        now,
                        Event::ToolResult {
                            call,
                            issue,
                            result,
                        },
                    );
                }
            }
        }
    }

    fn send(
        &mut self,
        worker: WorkerId,
        attempt: AttemptId,
        op: OpId,
        request: Request,
        timeout_ms: Millis,
        ch: &mut dyn Chooser,
    ) {
        let now = self.now;
        let index = attempt.0 as usize - 1;
        let create = matches!(request.kind, RequestKind::Create { .. });
        if self.transport.attempts.len() <= index {
            let unsent = AttemptInfo {
                worker,
                op,
                open: false,
                create: false,
                serves: None,
            };
            self.transport.attempts.resize(index + 1, unsent);
            self.records.attempt_ops.resize(index + 1, op);
            self.transport.requests.resize(index + 1, request);
        }
        let serves = self.serves(op);
        self.transport.attempts[index] = AttemptInfo {
            worker,
            op,
            open: true,
            create,
            serves: Some(serves),
        };
        self.records.attempt_ops[index] = op;
        let record = self.op_record(op);
        record.intent.get_or_insert(serves);
        let request = Request {
            region: self.faults.region(attempt),
            ..request
        };
        self.transport.requests[index] = request;
        self.transport.remote_calls += 1;
        debug_assert!(
            self.transport.requests.len() == self.transport.attempts.len()
                && self.records.attempt_ops.len() == self.transport.attempts.len(),
            "one request and one operation per attempt"
        );
        self.trace.log(now, Component::Executor, || {
            let key = request
                .key
                .map_or("no key".to_string(), |k| format!("key {k}"));
            let region = match request.region.0 {
                0 => String::new(),
                _ => format!(", to {}", request.region),
            };
            format!(
                "{worker}: {op} sends {attempt}: {}, {key}{region}",
                request.kind
            )
        });
        // A client without a timeout waits for as long as the run lasts.
        if timeout_ms != crate::design::context::NO_TIMEOUT {
            self.push_timer(
                now.saturating_add(timeout_ms),
                Event::AttemptTimeout { attempt },
            );
        }
        match self.network.request(attempt, &self.faults, ch) {
            Transit::Lost { scripted } => self.trace.log(now, Component::Network, || {
                format!("request of {attempt} lost{}", scripted_note(scripted))
            }),
            // Only a reply's connection is reset (`Network::reply`).
            Transit::Reset { .. } => {}
            Transit::Delivered {
                latency_ms,
                duplicate_ms,
            } => {
                self.push(now + latency_ms, Event::RequestArrives { attempt });
                if let Some(d) = duplicate_ms {
                    self.trace.log(now, Component::Network, || {
                        format!("request of {attempt} duplicated")
                    });
                    self.push(now + d, Event::RequestArrives { attempt });
                }
            }
        }
    }

    fn attempt_timeout(&mut self, attempt: AttemptId, ch: &mut dyn Chooser) {
        self.close_unanswered(attempt, Response::Timeout, ch);
    }

    /// The connection of `attempt` was reset: its worker learns now that no answer comes
    /// (unless the attempt was closed already).
    fn connection_reset(&mut self, attempt: AttemptId, ch: &mut dyn Chooser) {
        self.close_unanswered(attempt, Response::Reset, ch);
    }

    /// Closes `attempt`, still open, without an answer: its outcome is unknown, and its
    /// worker hears `response` (a timeout, whose timer this is, or a reset, which cancels
    /// the timer).
    fn close_unanswered(&mut self, attempt: AttemptId, response: Response, ch: &mut dyn Chooser) {
        let info = &mut self.transport.attempts[attempt.0 as usize - 1];
        if !info.open {
            return;
        }
        info.open = false;
        let (worker, op) = (info.worker, info.op);
        if matches!(response, Response::Reset) {
            self.cancel_attempt_timer(attempt);
        }
        self.unknown_from(attempt);
        self.trace
            .log(self.now, Component::Executor, || match response {
                Response::Reset => format!("{worker}: connection of {attempt} reset"),
                _ => format!("{worker}: {attempt} timed out"),
            });
        self.exec(worker, ch, |e, ctx| {
            e.on_response(ctx, op, attempt, response)
        });
    }

    fn reply_arrives(&mut self, attempt: AttemptId, reply: Reply, ch: &mut dyn Chooser) {
        let info = &mut self.transport.attempts[attempt.0 as usize - 1];
        if !info.open {
            self.trace.log(self.now, Component::Network, || {
                format!(
                    "reply to {attempt} arrives after the attempt was closed (answered, timed out, or its worker crashed): discarded"
                )
            });
            return;
        }
        info.open = false;
        let (worker, op) = (info.worker, info.op);
        self.cancel_attempt_timer(attempt);
        if self.crash_check(worker, attempt, CrashPoint::AfterReply, ch) {
            // The reply died with the process: the outcome is unknown to the executor.
            self.unknown_from(attempt);
            self.crash(worker, attempt, CrashPoint::AfterReply);
            return;
        }
        if matches!(
            reply,
            Reply::ServerError { .. } | Reply::InProgress | Reply::Expired
        ) {
            self.unknown_from(attempt);
        }
        let response = Response::Reply(reply);
        let should_retry = crate::model::stack::ErrorClass::of(response)
            .and_then(|class| self.model.provider.should_retry.on(class));
        self.trace
            .log(self.now, Component::Executor, || match should_retry {
                Some(v) => format!("{worker}: reply to {attempt}: {reply} (should-retry: {v})"),
                None => format!("{worker}: reply to {attempt}: {reply}"),
            });
        self.transport.answer_should_retry = should_retry;
        self.exec(worker, ch, |e, ctx| {
            e.on_response(ctx, op, attempt, response)
        });
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

    /// The transport lost track of `attempt` (a timeout, an indeterminate reply, its worker
    /// crashed): if it was a create, its operation's outcome is unknown from now on.
    ///
    /// Not when the operation is already confirmed or failed in the journal: a stale
    /// attempt (a worker frozen while another finished the operation) changes nothing of
    /// what is known about it.
    fn unknown_from(&mut self, attempt: AttemptId) {
        let a = self.transport.attempts[attempt.0 as usize - 1];
        let settled = matches!(
            self.journal.get_mut().get(a.op).map(|o| o.state()),
            Some(OpState::Confirmed | OpState::Failed)
        );
        if a.create && !settled {
            let now = self.now;
            self.op_record(a.op).first_unknown_ms.get_or_insert(now);
        }
    }

    fn provider_commands(&mut self, out: &mut Vec<ProviderOut>, ch: &mut dyn Chooser) {
        let now = self.now;
        for o in out.drain(..) {
            match o {
                ProviderOut::Reply { attempt, reply } => {
                    match self.network.reply(attempt, &self.faults, ch) {
                        Transit::Lost { scripted } => {
                            self.trace.log(now, Component::Network, || {
                                format!("reply to {attempt} lost{}", scripted_note(scripted))
                            })
                        }
                        Transit::Delivered { latency_ms, .. } => {
                            self.push(now + latency_ms, Event::ReplyArrives { attempt, reply })
                        }
                        Transit::Reset { latency_ms } => {
                            self.trace.log(now, Component::Network, || {
                                format!("reply to {attempt}: the connection will be reset")
                            });
                            self.push(now + latency_ms, Event::ConnectionReset { attempt })
                        }
                    }
                }
                ProviderOut::Wake { job, at_ms } => self.push(at_ms, Event::ProviderWake { job }),
                ProviderOut::Commit(committed) => {
                    let attempt = committed.attempt;
                    let (intent, step) = self.transport.attempts[attempt.0 as usize - 1]
                        .serves
                        .expect("a send that reached the provider was recorded");
                    let effect = Effect::tagged(committed, intent, step);
                    self.trace.log(now, Component::Ledger, || {
                        format!("effect {} committed for {}", effect.resource, effect.intent)
                    });
                    self.ledger.commit(effect);
                }
            }
        }
    }

    /// Whether `worker` crashes at `point` of `attempt`: a scripted fault, or a random one
    /// while the run's crash budget lasts.
    fn crash_check(
        &mut self,
        worker: WorkerId,
        attempt: AttemptId,
        point: CrashPoint,
        ch: &mut dyn Chooser,
    ) -> bool {
        if self.faults.crashes_worker(attempt, point, worker) {
            return true;
        }
        if self.random_crashes >= self.model.workers.max_crashes {
            return false;
        }
        let c = &self.model.workers.crash;
        let p = match point {
            CrashPoint::BeforeDispatch => c.before_dispatch,
            CrashPoint::AfterSend => c.after_send,
            CrashPoint::AfterReply => c.after_reply,
        };
        let crashed = ch.chance(Purpose::WorkerCrash, p);
        self.random_crashes += u32::from(crashed);
        crashed
    }

    fn crash(&mut self, worker: WorkerId, attempt: AttemptId, point: CrashPoint) {
        self.workers[worker.0 as usize].crash();
        for i in 0..self.transport.attempts.len() {
            let a = &mut self.transport.attempts[i];
            if a.worker == worker && a.open {
                a.open = false;
                // Its answer will never reach anyone.
                self.unknown_from(AttemptId(i as u32 + 1));
                self.cancel_attempt_timer(AttemptId(i as u32 + 1));
            }
        }
        self.journal.get_mut().crash(worker);
        let restart_at = self.now + self.model.workers.restart_delay_ms;
        self.trace.log(self.now, Component::Executor, || {
            format!(
                "{worker} crashes {} of {attempt}; restarts at {restart_at} ms",
                point.name()
            )
        });
        self.push(restart_at, Event::WorkerRestart { worker });
    }

    fn restart(&mut self, worker: WorkerId, ch: &mut dyn Chooser) {
        let executor = self.design.executor_in(self.model);
        let w = &mut self.workers[worker.0 as usize];
        w.restart(executor);
        let inbox = std::mem::take(&mut w.inbox);
        // In the model's spelling.
        let journal = match self.model.workers.journal {
            crate::model::Durability::Durable => "durable",
            crate::model::Durability::Volatile => "volatile",
        };
        self.trace.log(self.now, Component::Executor, || {
            format!("{worker} restarts ({journal} journal) and recovers")
        });
        self.exec(worker, ch, |e, ctx| e.on_restart(ctx));
        for call in inbox {
            if self.workers[worker.0 as usize].up {
                self.exec(worker, ch, |e, ctx| e.on_call(ctx, call));
            } else {
                self.workers[worker.0 as usize].inbox.push(call);
            }
        }
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

fn scripted_note(scripted: bool) -> &'static str {
    if scripted { " (scripted fault)" } else { "" }
}

#[cfg(test)]
mod symmetry {
    use super::*;
    use crate::sim::RandomChooser;

    /// The seeds' model with two workers, and `faults` as its scripted faults.
    fn model(faults: &str) -> Model {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models/ticket_lost_response.json");
        let text = std::fs::read_to_string(path).expect("the bundled model");
        let mut m: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        m["workers"] = serde_json::json!({ "count": 2, "journal": "durable" });
        m["faults"] = serde_json::from_str(faults).expect("JSON");
        m.as_object_mut().expect("an object").remove("$schema");
        Model::from_json(&m.to_string(), "m.json").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn workers_that_ran_nothing_share_a_class_unless_a_fault_names_one() {
        let same_key = crate::design::find("same_key").expect("built in");
        let m = model("[]");
        let mut w = World::new(&m, same_key, false);
        w.start(false, &mut RandomChooser::new(0));
        assert_eq!(w.worker_classes(), [1, 1]);
        // A worker that handled anything, crashed, or has calls waiting is itself.
        w.workers[0].touched = true;
        assert_eq!(w.worker_classes(), [0, 1]);
        w.workers[0].touched = false;
        w.workers[1].incarnation = 1;
        assert_eq!(w.worker_classes(), [1, 0]);

        let named =
            model(r#"[{ "crash_worker": { "attempt": 1, "point": "after_send", "worker": 1 } }]"#);
        let mut w = World::new(&named, same_key, false);
        w.start(false, &mut RandomChooser::new(0));
        assert_eq!(w.worker_classes(), [1, 0]);
        let any = model(r#"[{ "crash_worker": { "attempt": 1, "point": "after_send" } }]"#);
        let mut w = World::new(&any, same_key, false);
        w.start(false, &mut RandomChooser::new(0));
        assert_eq!(
            w.worker_classes(),
            [1, 1],
            "a fault on whichever worker names none"
        );
    }

    /// A design that does not declare it treats ids by identity only.
    struct Undeclared;

    impl Design for Undeclared {
        fn name(&self) -> &str {
            "undeclared"
        }
        fn summary(&self) -> &str {
            "same_key, without its declarations"
        }
        fn executor(&self, config: &crate::model::ExecutorModel) -> Box<dyn Executor> {
            crate::design::find("same_key")
                .expect("built in")
                .executor(config)
        }
    }

    #[test]
    fn an_undeclared_design_has_no_symmetry_and_touches_everything() {
        let m = model("[]");
        let mut w = World::new(&m, &Undeclared, false);
        w.start(false, &mut RandomChooser::new(0));
        assert_eq!(w.worker_classes(), [0, 0]);
        assert_eq!(
            w.parts(&Event::CallDelivered {
                worker: WorkerId(0),
                call: crate::vocab::protocol::ToolCall::for_tests(0),
            }),
            Parts::ALL
        );
        let intent = crate::vocab::record::Intent {
            id: IntentId(0),
            arrival_ms: 0,
            tenant: crate::vocab::ids::Tenant(0),
            endpoint: crate::vocab::ids::Endpoint(0),
            params: crate::vocab::ids::Params(1),
            repeat_of: None,
            steps: 1,
        };
        assert_eq!(w.twin_class(&Event::AgentStart(intent)), 0);
        let same_key = crate::design::find("same_key").expect("built in");
        let w = World::new(&m, same_key, false);
        assert_ne!(w.twin_class(&Event::AgentStart(intent)), 0);
        assert_eq!(
            w.twin_class(&Event::AgentStart(crate::vocab::record::Intent {
                repeat_of: Some(IntentId(0)),
                ..intent
            })),
            0
        );
        assert_eq!(w.parts(&Event::Arrival), Parts::WORKLOAD);
        assert_eq!(w.parts(&Event::ProviderWake { job: 0 }), Parts::PROVIDER);
    }

    #[test]
    fn intents_alone_in_their_tenants_are_twins_across_tenants() {
        let same_key = crate::design::find("same_key").expect("built in");
        let intent = |id: u32, tenant: u32| {
            Event::AgentStart(crate::vocab::record::Intent {
                id: IntentId(id),
                arrival_ms: 0,
                tenant: crate::vocab::ids::Tenant(tenant),
                endpoint: crate::vocab::ids::Endpoint(0),
                params: crate::vocab::ids::Params(u64::from(id) + 1),
                repeat_of: None,
                steps: 1,
            })
        };
        let with = |intents: u32, tenants: u32| {
            let mut m = model("[]");
            m.workload.intents = intents;
            m.workload.tenants = tenants;
            m
        };
        // Two intents, two tenants: each tenant has one intent, a name only.
        let m = with(2, 2);
        let w = World::new(&m, same_key, false);
        assert_eq!(w.twin_class(&intent(0, 0)), w.twin_class(&intent(1, 1)));
        // Three intents, two tenants: intent 2 shares tenant 0 with intent 0, so tenant 0
        // is not a name only, and intent 0 is not intent 1's twin; intent 1 is alone in
        // tenant 1, but its twin would have to be alone too.
        let m = with(3, 2);
        let w = World::new(&m, same_key, false);
        assert_ne!(w.twin_class(&intent(0, 0)), w.twin_class(&intent(1, 1)));
        assert_eq!(w.twin_class(&intent(0, 0)), w.twin_class(&intent(2, 0)));
    }
}

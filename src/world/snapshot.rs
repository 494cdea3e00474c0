//! A world saved between two events, to be restored instead of re-running a run's start.
//!
//! An exhaustive search re-executes: each run replays the choices its path shares with the
//! run before, then takes new ones. Most runs of a depth-first search share all but their
//! last few choices, so most of the work is the replay. A snapshot taken where a run's
//! choices so far are the path's prefix lets the next run through that prefix start there:
//! the world is restored, the chooser is put back at the same position, and the run goes
//! on exactly as a replay would have (the snapshot holds everything the fingerprint holds,
//! and the queue's slots and push numbers, so that timer handles and tie identities stay
//! valid).
//!
//! Only a world whose every executor can copy itself ([`Executor::snapshot`]) and whose
//! trace is off can be saved: an external executor process cannot be copied, and a search
//! traces nothing.

use super::records::Records;
use super::transport::Transport;
use super::{Event, World};
use crate::design::Executor;
use crate::design::journal::SharedJournal;
use crate::sim::queue::Handle;
use crate::sim::{EventQueue, Millis};
use crate::vocab::protocol::ToolCall;

use super::agent::Agent;
use super::faults::Faults;
use super::ledger::Ledger;
use super::network::Network;
use super::provider::Provider;
use super::workload::Workload;

/// One worker process as saved.
struct WorkerCopy {
    up: bool,
    incarnation: u32,
    executor: Option<Box<dyn Executor>>,
    inbox: Vec<ToolCall>,
    touched: bool,
    machine_lost: bool,
}

/// A world between two events: everything a run can still change.
pub struct Snapshot {
    queue: EventQueue<Event>,
    aperiodic: usize,
    now: Millis,
    faults: Faults,
    workload: Workload,
    agent: Agent,
    network: Network,
    provider: Provider,
    ledger: Ledger,
    journal: SharedJournal,
    workers: Vec<WorkerCopy>,
    random_crashes: u32,
    transport: Transport,
    records: Records,
    events: u64,
    agent_timers: Vec<Option<Handle>>,
}

fn copy(e: &Option<Box<dyn Executor>>) -> Option<Option<Box<dyn Executor>>> {
    match e {
        Some(e) => e.snapshot().map(Some),
        None => Some(None),
    }
}

impl World<'_> {
    /// The world as it is now, between two events; `None` if an executor cannot be copied
    /// or the trace is on.
    pub fn save(&self) -> Option<Snapshot> {
        if self.trace.enabled() {
            return None;
        }
        debug_assert!(self.current.is_none());
        debug_assert!(self.exec_out.is_empty() && self.provider_out.is_empty());
        let mut workers = Vec::with_capacity(self.workers.len());
        for w in &self.workers {
            workers.push(WorkerCopy {
                up: w.up,
                incarnation: w.incarnation,
                executor: copy(&w.executor)?,
                inbox: w.inbox.clone(),
                touched: w.touched,
                machine_lost: w.machine_lost,
            });
        }
        Some(Snapshot {
            queue: self.queue.clone(),
            aperiodic: self.aperiodic,
            now: self.now,
            faults: self.faults.clone(),
            workload: self.workload.clone(),
            agent: self.agent.clone(),
            network: self.network.clone(),
            provider: self.provider.clone(),
            ledger: self.ledger.clone(),
            journal: self.journal.clone(),
            workers,
            random_crashes: self.random_crashes,
            transport: self.transport.clone(),
            records: self.records.clone(),
            events: self.events,
            agent_timers: self.agent_timers.clone(),
        })
    }

    /// Puts the world back as `s` saved it.
    pub(super) fn restore(&mut self, s: &Snapshot) {
        self.queue.clone_from(&s.queue);
        self.aperiodic = s.aperiodic;
        self.now = s.now;
        self.faults.clone_from(&s.faults);
        self.workload.clone_from(&s.workload);
        self.agent.clone_from(&s.agent);
        self.network.clone_from(&s.network);
        self.provider.clone_from(&s.provider);
        self.ledger.clone_from(&s.ledger);
        self.journal = s.journal.clone();
        self.workers.truncate(s.workers.len());
        for (i, c) in s.workers.iter().enumerate() {
            let executor = c.executor.as_ref().map(|e| {
                e.snapshot()
                    .expect("an executor that was copied copies again")
            });
            let w = super::workers::Worker {
                up: c.up,
                incarnation: c.incarnation,
                executor,
                inbox: c.inbox.clone(),
                touched: c.touched,
                machine_lost: c.machine_lost,
            };
            if i < self.workers.len() {
                self.workers[i] = w;
            } else {
                self.workers.push(w);
            }
        }
        self.random_crashes = s.random_crashes;
        self.transport.clone_from(&s.transport);
        self.records.clone_from(&s.records);
        self.events = s.events;
        self.agent_timers.clone_from(&s.agent_timers);
        self.current = None;
        self.cut_at_tie = false;
        self.trace.clear();
    }
}

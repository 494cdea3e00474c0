//! The worker processes that run the executor.
//!
//! A worker is up or down. A crash drops its executor (and so everything the executor held
//! in memory) and bumps its incarnation, so timers and replies meant for the old process are
//! recognised as stale. Calls that arrive while it is down wait in its inbox.

use std::hash::{Hash, Hasher};

use crate::design::Executor;
use crate::vocab::protocol::ToolCall;

pub struct Worker {
    pub up: bool,
    pub incarnation: u32,
    pub(crate) executor: Option<Box<dyn Executor>>,
    pub(crate) inbox: Vec<ToolCall>,
    /// Some callback other than the run's `on_start` ran on it (or it crashed): until then
    /// it is interchangeable with every other worker in the same case. Derived from the
    /// run, not part of the state.
    pub(crate) touched: bool,
    /// It is down after losing its machine (`workers.crash.machine_loss`): its next life finds
    /// its directory as its commits left it.
    pub(crate) machine_lost: bool,
}

impl Worker {
    pub(crate) fn new(executor: Box<dyn Executor>) -> Self {
        Self {
            up: true,
            incarnation: 0,
            executor: Some(executor),
            inbox: Vec::new(),
            touched: false,
            machine_lost: false,
        }
    }

    /// Back to the start of a run, as [`Worker::new`] would make it: up, first incarnation,
    /// nothing waiting. The executor is kept if it can reset itself ([`Executor::reset`]),
    /// else `fresh` builds another: a sweep over many seeds then allocates nothing here.
    pub(crate) fn reset(&mut self, fresh: impl FnOnce() -> Box<dyn Executor>) {
        let Worker {
            up,
            incarnation,
            executor,
            inbox,
            touched,
            machine_lost,
        } = self;
        *up = true;
        *incarnation = 0;
        *touched = false;
        *machine_lost = false;
        inbox.clear();
        if !executor.as_mut().is_some_and(|e| e.reset()) {
            *executor = Some(fresh());
        }
    }

    /// The process dies: its executor and memory are gone.
    pub(crate) fn crash(&mut self) {
        self.touched = true;
        self.up = false;
        self.executor = None;
        self.incarnation += 1;
    }

    /// A new process starts with a fresh executor.
    pub(crate) fn restart(&mut self, executor: Box<dyn Executor>) {
        self.up = true;
        self.executor = Some(executor);
    }

    /// Hashes the process: up or down, incarnation, waiting calls and its executor's memory.
    /// False if the executor cannot be fingerprinted.
    pub(crate) fn fingerprint<H: Hasher>(&self, h: &mut H) -> bool {
        let Worker {
            up,
            incarnation,
            executor,
            inbox,
            // Whether a symmetry applies is read off the state itself: two states alike in
            // everything hashed have the same automorphisms.
            touched: _,
            machine_lost,
        } = self;
        up.hash(h);
        incarnation.hash(h);
        machine_lost.hash(h);
        inbox.hash(h);
        match executor {
            Some(e) => {
                h.write_u8(1);
                e.fingerprint(h)
            }
            None => {
                h.write_u8(0);
                true
            }
        }
    }
}

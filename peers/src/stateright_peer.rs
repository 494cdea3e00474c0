//! The lost-response protocol as a stateright model, for the exhaustive mode.
//!
//! One intent; the agent (with its executor: one attempt per call) makes at most two calls;
//! the provider deduplicates by key (`same_key`: every request carries the intent's key) or
//! cannot (`no_dedup`: no key). The network is a bag of messages, delivered in any order; the
//! reply to the first create is lost (the scripted fault), and any message may be lost while
//! the state's fault budget lasts. Time is not modelled: an attempt may time out at any
//! moment while it waits (a superset of retrylab's timed runs, where a timeout comes only
//! when the reply is lost). A provider job may finish at any moment after it started.
//!
//! Property: `no_duplicate` (never more than one ticket), the property whose verdict differs
//! between the two designs.

use stateright::{Checker, Model, Property};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Msg {
    /// A create, attempt `n` (from 1).
    Request { attempt: u8 },
    /// The reply to attempt `n`: created (`true`) or 409 in progress (`false`).
    Reply { attempt: u8, created: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Agent {
    /// About to send call `n` (from 1).
    Ready { call: u8 },
    /// Waiting for the reply to attempt `n`.
    Waiting { attempt: u8 },
    /// Told the user (success or unresolved).
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Slot {
    Free,
    InFlight,
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    agent: Agent,
    /// Messages in flight, sorted (a bag).
    net: Vec<Msg>,
    /// Jobs the provider is processing: the attempt each answers, sorted.
    jobs: Vec<u8>,
    /// The provider's record of the intent's key (`same_key`).
    key: Slot,
    tickets: u8,
    faults_left: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Send,
    Deliver(Msg),
    Lose(Msg),
    Finish(u8),
    Timeout,
}

pub struct Protocol {
    pub dedup: bool,
    pub max_calls: u8,
    /// Messages the network may lose beyond the scripted one.
    pub max_faults: u8,
}

impl Protocol {
    /// After a timeout or a 409: replan while calls last, else tell the user "unresolved".
    fn unknown(&self, s: &mut State, attempt: u8) {
        s.agent = if attempt < self.max_calls {
            Agent::Ready { call: attempt + 1 }
        } else {
            Agent::Done
        };
    }
}

fn put(net: &mut Vec<Msg>, m: Msg) {
    let i = net.partition_point(|x| *x <= m);
    net.insert(i, m);
}

fn take(net: &mut Vec<Msg>, m: Msg) {
    let i = net
        .iter()
        .position(|x| *x == m)
        .expect("the message is in flight");
    net.remove(i);
}

impl Model for Protocol {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            agent: Agent::Ready { call: 1 },
            net: Vec::new(),
            jobs: Vec::new(),
            key: Slot::Free,
            tickets: 0,
            faults_left: self.max_faults,
        }]
    }

    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        match s.agent {
            Agent::Ready { .. } => actions.push(Action::Send),
            Agent::Waiting { .. } => actions.push(Action::Timeout),
            Agent::Done => {}
        }
        for (i, &m) in s.net.iter().enumerate() {
            if i > 0 && s.net[i - 1] == m {
                continue;
            }
            actions.push(Action::Deliver(m));
            if s.faults_left > 0 {
                actions.push(Action::Lose(m));
            }
        }
        for (i, &j) in s.jobs.iter().enumerate() {
            if i == 0 || s.jobs[i - 1] != j {
                actions.push(Action::Finish(j));
            }
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut s = last.clone();
        match action {
            Action::Send => {
                let Agent::Ready { call } = s.agent else {
                    return None;
                };
                put(&mut s.net, Msg::Request { attempt: call });
                s.agent = Agent::Waiting { attempt: call };
            }
            Action::Timeout => {
                let Agent::Waiting { attempt } = s.agent else {
                    return None;
                };
                self.unknown(&mut s, attempt);
            }
            Action::Lose(m) => {
                take(&mut s.net, m);
                s.faults_left -= 1;
            }
            Action::Deliver(m) => {
                take(&mut s.net, m);
                match m {
                    Msg::Request { attempt } => match (self.dedup, s.key) {
                        (true, Slot::Done) => put(
                            &mut s.net,
                            Msg::Reply {
                                attempt,
                                created: true,
                            },
                        ),
                        (true, Slot::InFlight) => put(
                            &mut s.net,
                            Msg::Reply {
                                attempt,
                                created: false,
                            },
                        ),
                        (dedup, _) => {
                            if dedup {
                                s.key = Slot::InFlight;
                            }
                            let i = s.jobs.partition_point(|&x| x <= attempt);
                            s.jobs.insert(i, attempt);
                        }
                    },
                    Msg::Reply { attempt, created } => {
                        // A reply to an attempt no longer waited for is discarded.
                        if s.agent == (Agent::Waiting { attempt }) {
                            if created {
                                s.agent = Agent::Done;
                            } else {
                                self.unknown(&mut s, attempt);
                            }
                        }
                    }
                }
            }
            Action::Finish(attempt) => {
                let i = s.jobs.iter().position(|&x| x == attempt)?;
                s.jobs.remove(i);
                s.tickets += 1;
                if self.dedup {
                    s.key = Slot::Done;
                }
                // The scripted fault: the reply to the first create is lost.
                if attempt != 1 {
                    put(
                        &mut s.net,
                        Msg::Reply {
                            attempt,
                            created: true,
                        },
                    );
                }
            }
        }
        Some(s)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("no_duplicate", |_, s: &State| {
            s.tickets <= 1
        })]
    }
}

/// What one exhaustive check found.
#[derive(Clone, Copy, Debug)]
pub struct Found {
    pub states: usize,
    pub unique_states: usize,
    /// A run with two tickets was found.
    pub duplicate: bool,
}

/// Checks the protocol depth first on one thread.
pub fn check(dedup: bool, max_faults: u8) -> Found {
    let model = Protocol {
        dedup,
        max_calls: 2,
        max_faults,
    };
    let checker = model.checker().threads(1).spawn_dfs().join();
    Found {
        states: checker.state_count(),
        unique_states: checker.unique_state_count(),
        duplicate: checker.discovery("no_duplicate").is_some(),
    }
}

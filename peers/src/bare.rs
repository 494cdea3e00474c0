//! The limit: the same scenario as retrylab's world, written as one hand-made event loop.
//!
//! What it does per seed, as retrylab's world does with `same_key` or `no_dedup` on the models
//! the benchmark runs: intents arrive (spacing drawn); the agent makes a tool call and arms
//! its tool timeout; the executor makes an operation of the call (`same_key`: one per
//! intent, with one key; `no_dedup`: one per call, no key), sends an attempt and arms the
//! attempt's timeout; the request travels (loss, latency); the provider checks its
//! idempotency-key table (`same_key`) and either replays the stored reply, answers 409 for a
//! key in flight, or starts a job (processing time drawn); the job commits an effect to the
//! ledger, stores its reply under the key, and replies; the reply travels (scripted drop,
//! random loss, latency); the executor reads the reply or the timeout (a timeout or a 409 is
//! unknown: it retries after its backoff while attempts last, then reports unknown); the agent
//! reacts to an unknown or a failure with the model's weights (replan, give up, ask the user)
//! after a think time drawn, or tells the user success; after `max_calls` calls it reports
//! what it last saw. At the end every intent is classified against the ledger (completed,
//! false success, false failure, true failure, unresolved; duplicate effects; time to
//! outcome) and added to the totals.
//!
//! What it leaves out, as a lean hand-written loop would: events that only hop at the same
//! instant (retrylab queues the agent's start, the call's delivery to the worker and the
//! executor's report as events due now; here they are function calls), a generic design
//! trait, tracing, the choice recorder, and timers that can no longer change anything: the
//! run stops as soon as every intent has been told and no request, job, backoff timer or open
//! attempt is left (retrylab pops every timer, the agent's 60 s timeouts included, until its
//! queue is empty). It keeps the operations' claims out too: retrylab judges each design
//! claim against the ledger (`unknown_ops`, `false_resolutions`); this loop judges only the
//! intents.

use std::collections::BinaryHeap;

use retrylab::model::{
    Atomicity, Dedup, Fault, InFlight, KeySource, Model, ReplayMode, StoredOutcomes,
};

/// The scenario's numbers, read from a retrylab model.
#[derive(Clone, Debug)]
pub struct Config {
    pub horizon: u64,
    pub intents: u32,
    pub spacing: (u64, u64),
    pub tool_timeout: u64,
    pub max_calls: u32,
    pub think: (u64, u64),
    /// Weights of replan, give up, ask the user, on an unknown outcome and on a failure.
    pub on_unknown: [u32; 3],
    pub on_failure: [u32; 3],
    pub attempts: u32,
    pub backoff: u64,
    pub max_backoff: u64,
    pub attempt_timeout: u64,
    pub latency: (u64, u64),
    pub request_loss: (u32, u32),
    pub reply_loss: (u32, u32),
    pub processing: (u64, u64),
    /// Bit `n - 1` set: the reply to create `n` is dropped (a scripted fault).
    pub drop_reply: u64,
    /// `same_key` (one key per intent, deduplicated) or `no_dedup` (no key).
    pub dedup: bool,
}

impl Config {
    /// The numbers of `model` for `design` (`same_key` or `no_dedup`). Refuses a model that
    /// uses a knob this loop does not implement, so that the comparison stays honest.
    pub fn of(model: &Model, design: &str) -> Result<Config, String> {
        let dedup = match design {
            "same_key" => true,
            "no_dedup" => false,
            other => {
                return Err(format!(
                    "the bare loop implements same_key and no_dedup, not {other}"
                ));
            }
        };
        let a = &model.agent;
        let e = &model.executor;
        let n = &model.network;
        let p = &model.provider;
        let w = &model.workload;
        let mut unsupported = Vec::new();
        let mut need = |ok: bool, what: &str| {
            if !ok {
                unsupported.push(what.to_string());
            }
        };
        need(w.steps == 1, "workload.steps");
        need(w.genuine_repeat.is_zero(), "workload.genuine_repeat");
        need(model.workers.count == 1, "workers.count");
        let c = &model.workers.crash;
        need(
            c.before_dispatch.is_zero() && c.after_send.is_zero() && c.after_reply.is_zero(),
            "workers.crash",
        );
        need(n.duplicate.is_zero(), "network.duplicate");
        need(a.authorization_loss.is_zero(), "agent.authorization_loss");
        for r in [&a.on_unknown, &a.on_failure] {
            need(
                r.retry_same == 0 && r.change_args == 0,
                "agent reactions other than replan, give_up, ask_user",
            );
        }
        need(e.deadline_ms.is_none(), "executor.deadline_ms");
        need(p.dedup == Dedup::ByKey, "provider.dedup");
        need(p.key_source == KeySource::Client, "provider.key_source");
        need(p.retention_ms.is_none(), "provider.retention_ms");
        need(
            p.in_progress_expiry_ms.is_none(),
            "provider.in_progress_expiry_ms",
        );
        need(p.atomicity == Atomicity::Atomic, "provider.atomicity");
        need(p.in_flight == InFlight::Reject, "provider.in_flight");
        need(
            p.stored_outcomes == StoredOutcomes::All,
            "provider.stored_outcomes",
        );
        need(p.replay == ReplayMode::StoredResponse, "provider.replay");
        need(
            !p.accept_async && !p.require_key,
            "provider.accept_async/require_key",
        );
        need(
            p.error_before_commit.is_zero()
                && p.error_after_commit.is_zero()
                && p.crash_during_processing.is_zero(),
            "provider errors and crashes",
        );
        let mut drop_reply = 0u64;
        for f in &model.faults {
            match f {
                Fault::DropReply { attempt } if (1..=64).contains(attempt) => {
                    drop_reply |= 1 << (attempt - 1)
                }
                other => need(false, &format!("fault {other:?}")),
            }
        }
        if !unsupported.is_empty() {
            return Err(format!(
                "model {}: the bare loop does not implement {}",
                model.name,
                unsupported.join(", ")
            ));
        }
        let ratio = |r: retrylab::sim::Ratio| (r.num(), r.den());
        let weights = |r: &retrylab::model::Reaction| [r.replan, r.give_up, r.ask_user];
        Ok(Config {
            horizon: model.horizon_ms,
            intents: w.intents,
            spacing: (w.spacing_ms.min, w.spacing_ms.max),
            tool_timeout: a.tool_timeout_ms,
            max_calls: a.max_calls,
            think: (a.think_ms.min, a.think_ms.max),
            on_unknown: weights(&a.on_unknown),
            on_failure: weights(&a.on_failure),
            attempts: e.attempts,
            backoff: e.backoff_ms,
            max_backoff: e.max_backoff_ms,
            attempt_timeout: e.timeout_ms,
            latency: (n.latency_ms.min, n.latency_ms.max),
            request_loss: ratio(n.request_loss),
            reply_loss: ratio(n.reply_loss),
            processing: (p.processing_ms.min, p.processing_ms.max),
            drop_reply,
            dedup,
        })
    }
}

/// Totals over seeds, as retrylab's `Metrics` defines them (intents only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub seeds: u64,
    pub intents: u64,
    pub effects: u64,
    pub completed: u64,
    pub duplicate_effects: u64,
    pub false_success: u64,
    pub false_failure: u64,
    pub true_failures: u64,
    pub unresolved: u64,
    pub remote_calls: u64,
    /// Time to outcome over the intents told success or failure: count, sum.
    pub outcomes: u64,
    pub outcome_ms: u64,
    /// Events popped from the queue.
    pub events: u64,
}

/// A fast inline generator: wyrand, seeded through SplitMix64.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng(z ^ (z >> 31))
    }

    #[inline]
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        (t >> 64) as u64 ^ t as u64
    }

    /// Uniform in `0..n`.
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    #[inline]
    pub(crate) fn between(&mut self, (lo, hi): (u64, u64)) -> u64 {
        if lo == hi {
            lo
        } else {
            lo + self.below(hi - lo + 1)
        }
    }

    #[inline]
    fn chance(&mut self, (num, den): (u32, u32)) -> bool {
        num != 0 && (num == den || self.below(u64::from(den)) < u64::from(num))
    }

    /// An index into `weights`; no draw when only one is possible.
    #[inline]
    fn weighted(&mut self, weights: &[u32; 3]) -> usize {
        let total: u32 = weights.iter().sum();
        if weights.iter().filter(|&&w| w > 0).count() <= 1 {
            return weights.iter().position(|&w| w > 0).unwrap_or(0);
        }
        let mut draw = self.below(u64::from(total)) as u32;
        for (i, &w) in weights.iter().enumerate() {
            if draw < w {
                return i;
            }
            draw -= w;
        }
        unreachable!()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Arrival,
    AgentAct {
        intent: u32,
        act: u8,
    },
    AgentTimeout {
        call: u32,
    },
    AttemptTimeout {
        attempt: u32,
    },
    Backoff {
        op: u32,
    },
    RequestArrives {
        attempt: u32,
    },
    JobDone {
        job: u32,
    },
    /// `resource` is the reply's receipt; `NONE` for a 409 in progress.
    ReplyArrives {
        attempt: u32,
        resource: u32,
    },
}

const NONE: u32 = u32::MAX;

/// A queue entry: time and sequence number packed in one word (time in the high 40 bits),
/// so that ordering is one comparison and ties pop first-pushed first.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Entry {
    key: u64,
    ev: Ev,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.key.cmp(&self.key)
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

const REPLAN: u8 = 0;
const GIVE_UP: u8 = 1;
const ASK_USER: u8 = 2;

const TOLD_NOTHING: u8 = 0;
const TOLD_SUCCESS: u8 = 1;
const TOLD_FAILURE: u8 = 2;
const TOLD_UNRESOLVED: u8 = 3;

#[derive(Clone, Copy, PartialEq, Eq)]
enum OpState {
    Dispatched,
    Unknown,
    Confirmed,
}

#[derive(Clone, Copy)]
struct Intent {
    arrival: u64,
    calls: u32,
    current: u32,
    told: u8,
    told_at: u64,
    /// Its `same_key` operation, once made.
    op: u32,
    effects: u32,
}

#[derive(Clone, Copy)]
struct Op {
    intent: u32,
    /// The call it reports to.
    call: u32,
    state: OpState,
    attempts: u32,
    last_attempt: u32,
    owes_report: bool,
    /// Its key (`same_key`: the slot in the key table), or `NONE`.
    key: u32,
}

#[derive(Clone, Copy)]
struct Attempt {
    op: u32,
    open: bool,
}

/// The provider's idempotency record of a key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Free,
    InFlight,
    Done { resource: u32 },
}

#[derive(Clone, Copy)]
struct Job {
    attempt: u32,
    key: u32,
}

/// The loop's state, reused across seeds (nothing is allocated per seed once warm).
pub struct Bare {
    cfg: Config,
    heap: BinaryHeap<Entry>,
    seq: u64,
    now: u64,
    rng: Rng,
    intents: Vec<Intent>,
    /// Call → intent.
    calls: Vec<u32>,
    ops: Vec<Op>,
    attempts: Vec<Attempt>,
    keys: Vec<Slot>,
    jobs: Vec<Job>,
    /// The ledger: the intent of each committed effect, in commit order.
    ledger: Vec<u32>,
    arrived: u32,
    told: u32,
    /// Queued requests, jobs and backoff timers, and open attempts: while any is left an
    /// effect may still be committed or a report made.
    live: u32,
    pub totals: Totals,
    /// Run until the queue is empty, popping the timers that can no longer change anything
    /// (as retrylab does), instead of stopping once nothing live is left.
    pub drain: bool,
}

impl Bare {
    pub fn new(cfg: Config) -> Bare {
        Bare {
            cfg,
            heap: BinaryHeap::with_capacity(64),
            seq: 0,
            now: 0,
            rng: Rng::new(0),
            intents: Vec::with_capacity(8),
            calls: Vec::with_capacity(16),
            ops: Vec::with_capacity(16),
            attempts: Vec::with_capacity(32),
            keys: Vec::with_capacity(8),
            jobs: Vec::with_capacity(32),
            ledger: Vec::with_capacity(16),
            arrived: 0,
            told: 0,
            live: 0,
            totals: Totals::default(),
            drain: false,
        }
    }

    #[inline]
    fn push(&mut self, at: u64, ev: Ev) {
        debug_assert!(at < 1 << 40 && self.seq < 1 << 24);
        self.heap.push(Entry {
            key: at << 24 | self.seq,
            ev,
        });
        self.seq += 1;
    }

    /// Runs every seed of `seeds`, adding to the totals.
    pub fn run_seeds(&mut self, seeds: std::ops::Range<u64>) {
        for seed in seeds {
            self.run(seed);
        }
    }

    /// One run.
    pub fn run(&mut self, seed: u64) {
        self.heap.clear();
        self.seq = 0;
        self.now = 0;
        self.rng = Rng::new(seed);
        self.intents.clear();
        self.calls.clear();
        self.ops.clear();
        self.attempts.clear();
        self.keys.clear();
        self.jobs.clear();
        self.ledger.clear();
        self.arrived = 0;
        self.told = 0;
        self.live = 0;
        let mut events = 0;
        if self.cfg.intents > 0 {
            self.push(0, Ev::Arrival);
        }
        while let Some(Entry { key, ev }) = self.heap.pop() {
            let at = key >> 24;
            if at > self.cfg.horizon {
                break;
            }
            events += 1;
            self.now = at;
            self.handle(ev);
            if !self.drain && self.live == 0 && self.told == self.cfg.intents {
                break;
            }
        }
        self.totals.events += events;
        self.classify();
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Arrival => self.arrive(),
            Ev::AgentAct { intent, act } => self.act(intent, act),
            Ev::AgentTimeout { call } => {
                let i = self.calls[call as usize];
                let s = self.intents[i as usize];
                if s.told == TOLD_NOTHING && s.current == call {
                    self.react(i, true);
                }
            }
            Ev::AttemptTimeout { attempt } => {
                let a = &mut self.attempts[attempt as usize];
                if a.open {
                    a.open = false;
                    self.live -= 1;
                    let op = a.op;
                    self.on_response(op, attempt, NONE);
                }
            }
            Ev::Backoff { op } => {
                self.live -= 1;
                if self.ops[op as usize].state == OpState::Unknown {
                    self.dispatch(op);
                }
            }
            Ev::RequestArrives { attempt } => {
                self.live -= 1;
                self.provider_request(attempt);
            }
            Ev::JobDone { job } => {
                self.live -= 1;
                self.job_done(job);
            }
            Ev::ReplyArrives { attempt, resource } => {
                let a = &mut self.attempts[attempt as usize];
                if a.open {
                    a.open = false;
                    self.live -= 1;
                    let op = a.op;
                    self.on_response(op, attempt, resource);
                }
            }
        }
    }

    // The user and the agent.

    fn arrive(&mut self) {
        let i = self.arrived;
        self.arrived += 1;
        self.intents.push(Intent {
            arrival: self.now,
            calls: 0,
            current: NONE,
            told: TOLD_NOTHING,
            told_at: 0,
            op: NONE,
            effects: 0,
        });
        if self.arrived < self.cfg.intents {
            let at = self.now + self.rng.between(self.cfg.spacing);
            self.push(at, Ev::Arrival);
        }
        self.new_call(i);
    }

    fn new_call(&mut self, intent: u32) {
        let call = self.calls.len() as u32;
        self.calls.push(intent);
        let s = &mut self.intents[intent as usize];
        s.calls += 1;
        s.current = call;
        self.push(self.now + self.cfg.tool_timeout, Ev::AgentTimeout { call });
        self.on_call(call, intent);
    }

    fn tell(&mut self, intent: u32, told: u8) {
        let s = &mut self.intents[intent as usize];
        s.told = told;
        s.told_at = self.now;
        self.told += 1;
    }

    /// The executor reported on `call`: `resource` for a success, `NONE` for an unknown.
    fn on_result(&mut self, call: u32, resource: u32) {
        let i = self.calls[call as usize];
        let s = &mut self.intents[i as usize];
        if s.told != TOLD_NOTHING || s.current != call {
            return;
        }
        if resource != NONE {
            s.current = NONE;
            self.tell(i, TOLD_SUCCESS);
        } else {
            self.react(i, true);
        }
    }

    fn react(&mut self, intent: u32, unknown: bool) {
        let s = &mut self.intents[intent as usize];
        s.current = NONE;
        if s.calls >= self.cfg.max_calls {
            let told = if unknown {
                TOLD_UNRESOLVED
            } else {
                TOLD_FAILURE
            };
            return self.tell(intent, told);
        }
        let weights = if unknown {
            &self.cfg.on_unknown
        } else {
            &self.cfg.on_failure
        };
        let act = self.rng.weighted(weights) as u8;
        let at = self.now + self.rng.between(self.cfg.think);
        self.push(at, Ev::AgentAct { intent, act });
    }

    fn act(&mut self, intent: u32, act: u8) {
        if self.intents[intent as usize].told != TOLD_NOTHING {
            return;
        }
        match act {
            REPLAN => self.new_call(intent),
            GIVE_UP => self.tell(intent, TOLD_FAILURE),
            ASK_USER => self.tell(intent, TOLD_UNRESOLVED),
            _ => unreachable!(),
        }
    }

    // The executor.

    fn on_call(&mut self, call: u32, intent: u32) {
        let op = match self.intents[intent as usize].op {
            op if op != NONE && self.cfg.dedup => op,
            _ => {
                let op = self.ops.len() as u32;
                let key = if self.cfg.dedup {
                    self.keys.push(Slot::Free);
                    self.keys.len() as u32 - 1
                } else {
                    NONE
                };
                self.ops.push(Op {
                    intent,
                    call,
                    state: OpState::Unknown,
                    attempts: 0,
                    last_attempt: NONE,
                    owes_report: false,
                    key,
                });
                self.intents[intent as usize].op = op;
                op
            }
        };
        let o = &mut self.ops[op as usize];
        o.call = call;
        o.owes_report = true;
        match o.state {
            OpState::Confirmed => {
                // Done before: answered from the journal. (A confirmed operation's receipt is
                // the intent's only effect here.)
                o.owes_report = false;
                self.on_result(call, 0);
            }
            OpState::Dispatched => {}
            OpState::Unknown => {
                o.attempts = 0;
                self.dispatch(op);
            }
        }
    }

    fn dispatch(&mut self, op: u32) {
        let attempt = self.attempts.len() as u32;
        let o = &mut self.ops[op as usize];
        o.attempts += 1;
        o.state = OpState::Dispatched;
        o.last_attempt = attempt;
        self.attempts.push(Attempt { op, open: true });
        self.live += 1;
        self.totals.remote_calls += 1;
        self.push(
            self.now + self.cfg.attempt_timeout,
            Ev::AttemptTimeout { attempt },
        );
        if !self.rng.chance(self.cfg.request_loss) {
            let at = self.now + self.rng.between(self.cfg.latency);
            self.live += 1;
            self.push(at, Ev::RequestArrives { attempt });
        }
    }

    /// A reply (`resource`, or `NONE` for a 409) or a timeout (`NONE`) for `attempt` of `op`.
    fn on_response(&mut self, op: u32, attempt: u32, resource: u32) {
        let o = &mut self.ops[op as usize];
        if o.state != OpState::Dispatched || o.last_attempt != attempt {
            return;
        }
        if resource != NONE {
            o.state = OpState::Confirmed;
        } else {
            o.state = OpState::Unknown;
            if o.attempts < self.cfg.attempts {
                let n = o.attempts;
                let wait = self
                    .cfg
                    .backoff
                    .saturating_mul(1 << (n - 1).min(31))
                    .min(self.cfg.max_backoff);
                self.live += 1;
                self.push(self.now + wait, Ev::Backoff { op });
                return;
            }
        }
        let o = &mut self.ops[op as usize];
        if o.owes_report {
            o.owes_report = false;
            let call = o.call;
            self.on_result(call, resource);
        }
    }

    // The network and the provider.

    fn provider_request(&mut self, attempt: u32) {
        let op = self.attempts[attempt as usize].op;
        let key = self.ops[op as usize].key;
        if key != NONE {
            match self.keys[key as usize] {
                Slot::Done { resource } => return self.reply(attempt, resource),
                Slot::InFlight => return self.reply(attempt, NONE),
                Slot::Free => self.keys[key as usize] = Slot::InFlight,
            }
        }
        let job = self.jobs.len() as u32;
        self.jobs.push(Job { attempt, key });
        let at = self.now + self.rng.between(self.cfg.processing);
        self.live += 1;
        self.push(at, Ev::JobDone { job });
    }

    fn job_done(&mut self, job: u32) {
        let Job { attempt, key } = self.jobs[job as usize];
        let op = self.attempts[attempt as usize].op;
        let intent = self.ops[op as usize].intent;
        let resource = self.ledger.len() as u32;
        self.ledger.push(intent);
        self.intents[intent as usize].effects += 1;
        if key != NONE {
            self.keys[key as usize] = Slot::Done { resource };
        }
        self.reply(attempt, resource);
    }

    fn reply(&mut self, attempt: u32, resource: u32) {
        // Attempts are numbered from 0 here, creates from 1 in the model.
        if attempt < 64 && self.cfg.drop_reply & (1 << attempt) != 0 {
            return;
        }
        if self.rng.chance(self.cfg.reply_loss) {
            return;
        }
        let at = self.now + self.rng.between(self.cfg.latency);
        self.push(at, Ev::ReplyArrives { attempt, resource });
    }

    // The judge.

    fn classify(&mut self) {
        let t = &mut self.totals;
        t.seeds += 1;
        t.intents += self.intents.len() as u64;
        t.effects += self.ledger.len() as u64;
        for s in &self.intents {
            t.duplicate_effects += u64::from(s.effects.saturating_sub(1));
            match s.told {
                TOLD_SUCCESS | TOLD_FAILURE => {
                    t.outcomes += 1;
                    t.outcome_ms += s.told_at - s.arrival;
                    match (s.told, s.effects > 0) {
                        (TOLD_SUCCESS, true) => t.completed += 1,
                        (TOLD_SUCCESS, false) => t.false_success += 1,
                        (_, true) => t.false_failure += 1,
                        (_, false) => t.true_failures += 1,
                    }
                }
                _ => t.unresolved += 1,
            }
        }
    }
}

//! The one choice point.
//!
//! Every nondeterministic decision of a run (a latency, a lost reply, a crash, the agent's
//! reaction, which worker takes a call) is one call to [`Chooser::choose`]: "pick one of these
//! alternatives, for this purpose". Random simulation, replay of a recorded vector and, later,
//! exhaustive search and shrinking are all implementations of this trait, so the components
//! never hold an RNG of their own.
//!
//! Conventions every implementation relies on:
//! - alternative 0 is the *default*: no fault, the shortest delay, the first listed reaction
//!   with a non-zero weight; a replay that runs out of recorded values takes the default, which
//!   is what lets a shrinker delete entries;
//! - a decision with only one possible alternative is not a choice: [`ChooserExt`] answers it
//!   without calling the chooser, so it costs nothing and is not recorded;
//! - a chooser sees only possible alternatives: [`ChooserExt::weighted`] drops zero weights
//!   before asking and maps the answer back to the caller's index, so a recorded choice
//!   `(value, of)` counts only what could have happened;
//! - every purpose has a [`Class`] (fault, timing, agent, schedule), which is what a search
//!   bounds (a budget of faults) or enumerates (a menu of timings).

use super::Ratio;

crate::sim::named_enum! {
    /// What a choice is for. Random simulation keeps one independent stream per purpose, so two
    /// designs run on the same seed meet the same faults as far as their paths agree.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Purpose {
        /// Spacing between two intents of the workload.
        Arrival => "arrival",
        /// Whether an intent genuinely repeats the previous one's parameters.
        Repeat => "repeat",
        /// Which worker picks up a tool call.
        WorkerPick => "worker_pick",
        /// How long the agent thinks before reacting.
        AgentThink => "agent_think",
        /// The agent's reaction to a failure or an unknown outcome.
        AgentDecision => "agent_decision",
        /// One-way network latency of a request or a reply.
        Latency => "latency",
        /// Whether a request is lost on the way to the provider.
        RequestLoss => "request_loss",
        /// Whether a reply is lost on the way back.
        ReplyLoss => "reply_loss",
        /// Whether the network delivers a request twice.
        Duplicate => "duplicate",
        /// How long the provider takes to process a request.
        Processing => "processing",
        /// Whether the provider fails a request before committing.
        ProviderError => "provider_error",
        /// Whether the provider crashes while processing.
        ProviderCrash => "provider_crash",
        /// How long a committed effect takes to become visible to lookups.
        VisibilityLag => "visibility_lag",
        /// Whether a worker crashes at a crash point.
        WorkerCrash => "worker_crash",
        /// Whether the provider answers 5xx although it committed.
        ProviderErrorAfterCommit => "provider_error_after_commit",
        /// Whether accepted (202) work fails later.
        AsyncFailure => "async_failure",
        /// Whether the agent's replan lost the user's authorization (the user gives it again).
        AuthorizationLoss => "authorization_loss",
        /// When, between the retention floor and its maximum, a key record is pruned.
        Pruning => "pruning",
        /// Which of the events due at the same instant runs next (asked only by a chooser that
        /// [orders ties](Chooser::orders_ties)).
        Order => "order",
        /// How long a retry layer waits, within the range its jitter allows.
        Backoff => "backoff",
        /// Whether the provider refuses a create with 429 (a rate limit).
        Throttle => "throttle",
        /// Whether the provider answers a create with 408.
        RequestTimeout => "request_timeout",
        /// Whether the connection is reset instead of the reply arriving.
        ConnectionReset => "connection_reset",
        /// Whether a worker's crash loses its machine (its writes not yet committed).
        MachineLoss => "machine_loss",
    }
}

crate::sim::named_enum! {
    /// The kind of a choice: what a search may bound or must enumerate.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Class {
        /// Something goes wrong: a lost request or reply, a duplicate, a crash, a provider
        /// error, an async failure, a lost authorization. Alternative 0 is "nothing goes wrong".
        Fault => "fault",
        /// How long something takes: an arrival gap, a think time, a latency, a processing time,
        /// a visibility lag, a pruning moment. Alternative 0 is the shortest.
        Timing => "timing",
        /// What the user and the planner decide: a genuine repeat, the reaction to an error or an
        /// unknown outcome.
        Agent => "agent",
        /// Who runs what, and in which order: the worker that takes a call, the order of events
        /// due at the same instant.
        Schedule => "schedule",
    }
}

impl Purpose {
    /// Dense index, stable across versions of the same choice-vector format: new purposes
    /// are added at the end, so older purposes keep their random streams.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The class of the choices made for this purpose.
    pub fn class(self) -> Class {
        match self {
            Purpose::RequestLoss
            | Purpose::ReplyLoss
            | Purpose::Duplicate
            | Purpose::ProviderError
            | Purpose::ProviderCrash
            | Purpose::WorkerCrash
            | Purpose::ProviderErrorAfterCommit
            | Purpose::AsyncFailure
            | Purpose::AuthorizationLoss
            | Purpose::Throttle
            | Purpose::RequestTimeout
            | Purpose::ConnectionReset
            | Purpose::MachineLoss => Class::Fault,
            Purpose::Arrival
            | Purpose::AgentThink
            | Purpose::Latency
            | Purpose::Processing
            | Purpose::VisibilityLag
            | Purpose::Pruning
            | Purpose::Backoff => Class::Timing,
            Purpose::AgentDecision | Purpose::Repeat => Class::Agent,
            Purpose::WorkerPick | Purpose::Order => Class::Schedule,
        }
    }
}

/// The alternatives of one choice. Always at least two, every one of them possible.
#[derive(Clone, Copy, Debug)]
pub enum Alternatives<'a> {
    /// `0..n`, equally likely ([`ChooserExt::index`]).
    Uniform(u64),
    /// `0..weights.len()`, alternative `i` with relative weight `weights[i]`. Every weight
    /// is non-zero: [`ChooserExt::weighted`] and [`ChooserExt::chance`] pass only the
    /// possible alternatives and map the answer back to the caller's index.
    Weighted(&'a [u32]),
    /// The values `min..min + len` ([`ChooserExt::between`], `len >= 2`). The chooser returns
    /// an *offset* in `0..len`; random choosers treat it exactly like `Uniform(len)`. `min` is
    /// there so that a search can offer a menu of values around the model's thresholds.
    Span { min: u64, len: u64 },
}

impl Alternatives<'_> {
    /// How many alternatives there are; a chooser answers in `0..len()`.
    pub fn len(&self) -> u64 {
        match self {
            Alternatives::Uniform(n) => *n,
            Alternatives::Weighted(w) => w.len() as u64,
            Alternatives::Span { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `value` names a possible alternative.
    pub fn allows(&self, value: u64) -> bool {
        match self {
            Alternatives::Weighted(w) => w.get(value as usize).is_some_and(|&x| x > 0),
            _ => value < self.len(),
        }
    }

    /// The default alternative: 0 if it is possible, else the first possible one (always 0
    /// for the alternatives [`ChooserExt`] passes, which are all possible).
    pub fn default_value(&self) -> u64 {
        match self {
            Alternatives::Weighted(w) => w.iter().position(|&x| x > 0).unwrap_or(0) as u64,
            _ => 0,
        }
    }
}

/// The single source of nondeterminism of a run.
pub trait Chooser {
    /// Picks one of `alternatives` for `purpose` and returns its index (for a
    /// [`Alternatives::Span`], its offset from `min`).
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64;

    /// Whether events due at the same instant are ordered by a choice ([`Purpose::Order`],
    /// alternative 0 = first in, first out) instead of always first in, first out. Default
    /// false: random simulation and plain replay are unchanged.
    fn orders_ties(&self) -> bool {
        false
    }

    /// Which of the events due at the same instant runs next, when this chooser
    /// [orders ties](Chooser::orders_ties): an index into `tie` (first queued first), or
    /// `None` to end the run there (a search that knows every order from here repeats one
    /// it has explored). Asked for a single event too, so that a search sees every event
    /// before it is handled; by default one event is taken without a choice and several
    /// are one [`Purpose::Order`] choice, which is what a replay records.
    fn order(&mut self, tie: &[super::TieEvent]) -> Option<usize> {
        match tie.len() {
            0 | 1 => Some(0),
            n => Some(self.choose(Purpose::Order, Alternatives::Uniform(n as u64)) as usize),
        }
    }

    /// One of `0..classes.len()` for `purpose`, where alternatives of the same non-zero
    /// class lead to states that are the same up to the names of interchangeable things
    /// (two workers that have run nothing yet): a search may take one of each class
    /// (symmetry reduction). By default one [`Alternatives::Uniform`] choice over all of
    /// them, as [`ChooserExt::index`] makes it, which is what a replay records.
    fn choose_up_to_symmetry(&mut self, purpose: Purpose, classes: &[u32]) -> u64 {
        match classes.len() {
            0 | 1 => 0,
            n => self.choose(purpose, Alternatives::Uniform(n as u64)),
        }
    }

    /// The world is about to handle `event` (taken from a tie by [`Chooser::order`], or
    /// the only one due). Ignored by default.
    fn handled(&mut self, _event: super::TieEvent) {}

    /// A time threshold the design under test uses became known (the delay of a timer it
    /// set, or an age it declared with [`crate::design::ExecCtx::declare_threshold`]): an
    /// explorer adds it to the menus of the timing choices that follow. Ignored by default:
    /// random simulation and replay draw the same values whatever the design declares.
    fn learn_threshold(&mut self, _ms: super::Millis) {}
}

/// Most weights [`ChooserExt::weighted`] compacts on the stack; longer lists are rare and
/// go through the heap.
const INLINE_WEIGHTS: usize = 8;

/// The shapes of decision components need, each answered without a call when it is forced.
pub trait ChooserExt: Chooser {
    /// True with probability `p`.
    fn chance(&mut self, purpose: Purpose, p: Ratio) -> bool {
        if p.is_zero() {
            return false;
        }
        if p.is_one() {
            return true;
        }
        // Strictly between 0 and 1: both alternatives are possible.
        let weights = [p.den() - p.num(), p.num()];
        self.choose(purpose, Alternatives::Weighted(&weights)) == 1
    }

    /// A value in `min..=max`, uniformly: the chooser sees `Span { min, len }` and answers
    /// an offset.
    fn between(&mut self, purpose: Purpose, min: u64, max: u64) -> u64 {
        debug_assert!(min <= max);
        if min == max {
            return min;
        }
        // The whole range of u64 has one value more than a u64 counts: the top one is left out.
        let len = (max - min).saturating_add(1);
        min + self.choose(purpose, Alternatives::Span { min, len })
    }

    /// An index into `weights`, with their relative weights; at least one must be non-zero.
    ///
    /// The chooser sees only the non-zero weights, in order, and its answer `k` (the `k`-th
    /// possible alternative) is mapped back to the index of that weight in `weights`. A
    /// random chooser draws exactly what it drew over the full list: the total and the
    /// cumulative bounds of the possible alternatives are the same.
    fn weighted(&mut self, purpose: Purpose, weights: &[u32]) -> usize {
        let possible = weights.iter().filter(|&&w| w > 0).count();
        if possible <= 1 {
            return weights.iter().position(|&w| w > 0).unwrap_or(0);
        }
        if possible == weights.len() {
            return self.choose(purpose, Alternatives::Weighted(weights)) as usize;
        }
        let mut inline = [0u32; INLINE_WEIGHTS];
        let heap: Vec<u32>;
        let compact: &[u32] = if possible <= INLINE_WEIGHTS {
            for (slot, &w) in inline.iter_mut().zip(weights.iter().filter(|&&w| w > 0)) {
                *slot = w;
            }
            &inline[..possible]
        } else {
            heap = weights.iter().copied().filter(|&w| w > 0).collect();
            &heap
        };
        let k = self.choose(purpose, Alternatives::Weighted(compact)) as usize;
        weights
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0)
            .nth(k)
            .map(|(i, _)| i)
            .expect("a chooser answers one of the alternatives it was offered")
    }

    /// One of `0..n`, uniformly.
    fn index(&mut self, purpose: Purpose, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        self.choose(purpose, Alternatives::Uniform(n))
    }
}

impl<C: Chooser + ?Sized> ChooserExt for C {}

/// One recorded decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    pub purpose: Purpose,
    /// What the chooser answered: the index among the possible alternatives (for a
    /// `between`, the offset from its minimum). Replaying it gives the same decision.
    pub value: u64,
    /// How many possible alternatives there were.
    pub of: u64,
}

impl Choice {
    /// The class of its purpose.
    pub fn class(&self) -> Class {
        self.purpose.class()
    }
}

/// Wraps a chooser and records every decision it makes, in order: the run's choice vector.
pub struct Recorder<'a> {
    inner: &'a mut dyn Chooser,
    pub choices: Vec<Choice>,
}

impl<'a> Recorder<'a> {
    pub fn new(inner: &'a mut dyn Chooser) -> Self {
        Self {
            inner,
            choices: Vec::new(),
        }
    }
}

impl Chooser for Recorder<'_> {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        let value = self.inner.choose(purpose, alternatives);
        self.choices.push(Choice {
            purpose,
            value,
            of: alternatives.len(),
        });
        value
    }

    fn orders_ties(&self) -> bool {
        self.inner.orders_ties()
    }

    fn learn_threshold(&mut self, ms: super::Millis) {
        self.inner.learn_threshold(ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts calls; always answers 1.
    struct Counting(u32);
    impl Chooser for Counting {
        fn choose(&mut self, _: Purpose, _: Alternatives<'_>) -> u64 {
            self.0 += 1;
            1
        }
    }

    #[test]
    fn forced_decisions_are_not_choices() {
        let mut c = Counting(0);
        assert!(!c.chance(Purpose::ReplyLoss, Ratio::ZERO));
        assert!(c.chance(Purpose::ReplyLoss, Ratio::ONE));
        assert_eq!(c.between(Purpose::Latency, 7, 7), 7);
        assert_eq!(c.weighted(Purpose::AgentDecision, &[0, 0, 5, 0]), 2);
        assert_eq!(c.index(Purpose::WorkerPick, 1), 0);
        assert_eq!(c.0, 0);
        assert_eq!(c.between(Purpose::Latency, 7, 9), 8);
        assert_eq!(c.0, 1);
    }

    /// Answers a fixed value, remembers the alternatives it was offered.
    struct Fixed {
        answer: u64,
        seen: Vec<(Purpose, String)>,
        ties: bool,
    }
    impl Chooser for Fixed {
        fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
            self.seen.push((purpose, format!("{alternatives:?}")));
            self.answer
        }
        fn orders_ties(&self) -> bool {
            self.ties
        }
    }
    fn fixed(answer: u64) -> Fixed {
        Fixed {
            answer,
            seen: Vec::new(),
            ties: false,
        }
    }

    #[test]
    fn every_purpose_has_its_class() {
        use Class::*;
        let table = [
            (Purpose::Arrival, Timing),
            (Purpose::Repeat, Agent),
            (Purpose::WorkerPick, Schedule),
            (Purpose::AgentThink, Timing),
            (Purpose::AgentDecision, Agent),
            (Purpose::Latency, Timing),
            (Purpose::RequestLoss, Fault),
            (Purpose::ReplyLoss, Fault),
            (Purpose::Duplicate, Fault),
            (Purpose::Processing, Timing),
            (Purpose::ProviderError, Fault),
            (Purpose::ProviderCrash, Fault),
            (Purpose::VisibilityLag, Timing),
            (Purpose::WorkerCrash, Fault),
            (Purpose::ProviderErrorAfterCommit, Fault),
            (Purpose::AsyncFailure, Fault),
            (Purpose::AuthorizationLoss, Fault),
            (Purpose::Pruning, Timing),
            (Purpose::Order, Schedule),
            (Purpose::Backoff, Timing),
            (Purpose::Throttle, Fault),
            (Purpose::RequestTimeout, Fault),
            (Purpose::ConnectionReset, Fault),
            (Purpose::MachineLoss, Fault),
        ];
        assert_eq!(table.len(), Purpose::COUNT);
        for (i, (p, class)) in table.into_iter().enumerate() {
            assert_eq!(Purpose::ALL[i], p, "the table follows Purpose::ALL");
            assert_eq!(p.class(), class, "{}", p.name());
        }
        assert_eq!(Purpose::Order.name(), "order");
        assert_eq!(Purpose::Order.index(), 18, "new purposes go at the end");
        let names: Vec<&str> = Class::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names, ["fault", "timing", "agent", "schedule"]);
    }

    #[test]
    fn weighted_offers_only_possible_alternatives_and_maps_the_answer_back() {
        let weights = [0, 3, 0, 5, 2];
        for (answer, index) in [(0, 1), (1, 3), (2, 4)] {
            let mut c = fixed(answer);
            assert_eq!(c.weighted(Purpose::AgentDecision, &weights), index);
            assert_eq!(
                c.seen,
                vec![(Purpose::AgentDecision, "Weighted([3, 5, 2])".to_string())]
            );
        }
        // Without zero weights the list goes through as it is.
        let mut c = fixed(1);
        assert_eq!(c.weighted(Purpose::AgentDecision, &[4, 1]), 1);
        assert_eq!(c.seen[0].1, "Weighted([4, 1])");
        // Longer than the inline buffer, with zeros.
        let long = [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1];
        let mut c = fixed(9);
        assert_eq!(c.weighted(Purpose::AgentDecision, &long), 19);
        assert_eq!(c.seen[0].1, format!("Weighted({:?})", [1u32; 10]));
    }

    #[test]
    fn recorded_weighted_choice_counts_only_possible_alternatives_and_replays() {
        use crate::sim::{ChoiceVector, ReplayChooser};
        let weights = [0, 2, 0, 0, 1];
        let mut inner = fixed(1);
        let mut rec = Recorder::new(&mut inner);
        assert_eq!(rec.weighted(Purpose::AgentDecision, &weights), 4);
        assert_eq!(
            rec.choices,
            vec![Choice {
                purpose: Purpose::AgentDecision,
                value: 1,
                of: 2
            }]
        );
        assert_eq!(rec.choices[0].class(), Class::Agent);
        let vector = ChoiceVector::from_choices(&rec.choices);
        let mut replay = ReplayChooser::new(vector);
        assert_eq!(replay.weighted(Purpose::AgentDecision, &weights), 4);
        assert_eq!(replay.finish(), Ok(()));
        // The old, uncompacted index 4 is no longer a possible answer.
        let mut replay = ReplayChooser::new(ChoiceVector(vec![4]));
        assert_eq!(replay.weighted(Purpose::AgentDecision, &weights), 1);
        assert!(replay.finish().is_err());
    }

    #[test]
    fn between_offers_a_span_and_records_the_offset() {
        let mut inner = fixed(969);
        let mut rec = Recorder::new(&mut inner);
        assert_eq!(rec.between(Purpose::Latency, 30, 2000), 999);
        assert_eq!(
            rec.choices,
            vec![Choice {
                purpose: Purpose::Latency,
                value: 969,
                of: 1971
            }]
        );
        assert_eq!(
            inner.seen,
            vec![(Purpose::Latency, "Span { min: 30, len: 1971 }".to_string())]
        );
        let span = Alternatives::Span { min: 30, len: 1971 };
        assert_eq!(span.len(), 1971);
        assert!(span.allows(1970) && !span.allows(1971));
        assert_eq!(span.default_value(), 0);
    }

    #[test]
    fn chance_offers_two_possible_alternatives() {
        let mut c = fixed(1);
        assert!(c.chance(Purpose::ReplyLoss, Ratio::new(1, 4).unwrap()));
        assert_eq!(c.seen[0].1, "Weighted([3, 1])");
    }

    #[test]
    fn recorder_forwards_tie_ordering() {
        let mut plain = fixed(0);
        assert!(!Recorder::new(&mut plain).orders_ties());
        let mut ordering = fixed(0);
        ordering.ties = true;
        assert!(Recorder::new(&mut ordering).orders_ties());
        assert!(!Counting(0).orders_ties(), "off by default");
    }

    #[test]
    fn purposes_are_densely_indexed() {
        for (i, p) in Purpose::ALL.iter().enumerate() {
            assert_eq!(p.index(), i);
        }
    }

    #[test]
    fn default_skips_impossible_alternatives() {
        assert_eq!(Alternatives::Weighted(&[0, 3, 1]).default_value(), 1);
        assert!(!Alternatives::Weighted(&[0, 3]).allows(0));
        assert!(Alternatives::Uniform(4).allows(3));
        assert!(!Alternatives::Uniform(4).allows(4));
    }
}

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
//!   without calling the chooser, so it costs nothing and is not recorded.

use super::Ratio;

/// What a choice is for. Random simulation keeps one independent stream per purpose, so two
/// designs run on the same seed meet the same faults as far as their paths agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Purpose {
    /// Spacing between two intents of the workload.
    Arrival,
    /// Whether an intent genuinely repeats the previous one's parameters.
    Repeat,
    /// Which worker picks up a tool call.
    WorkerPick,
    /// How long the agent thinks before reacting.
    AgentThink,
    /// The agent's reaction to a failure or an unknown outcome.
    AgentDecision,
    /// One-way network latency of a request or a reply.
    Latency,
    /// Whether a request is lost on the way to the provider.
    RequestLoss,
    /// Whether a reply is lost on the way back.
    ReplyLoss,
    /// Whether the network delivers a request twice.
    Duplicate,
    /// How long the provider takes to process a request.
    Processing,
    /// Whether the provider fails a request before committing.
    ProviderError,
    /// Whether the provider crashes while processing.
    ProviderCrash,
    /// How long a committed effect takes to become visible to lookups.
    VisibilityLag,
    /// Whether a worker crashes at a crash point.
    WorkerCrash,
    /// Whether the provider answers 5xx although it committed.
    ProviderErrorAfterCommit,
    /// Whether accepted (202) work fails later.
    AsyncFailure,
    /// Whether the agent's replan lost the user's authorization (the user gives it again).
    AuthorizationLoss,
    /// When, between the retention floor and its maximum, a key record is pruned.
    Pruning,
}

impl Purpose {
    pub const COUNT: usize = 18;

    pub const ALL: [Purpose; Purpose::COUNT] = [
        Purpose::Arrival,
        Purpose::Repeat,
        Purpose::WorkerPick,
        Purpose::AgentThink,
        Purpose::AgentDecision,
        Purpose::Latency,
        Purpose::RequestLoss,
        Purpose::ReplyLoss,
        Purpose::Duplicate,
        Purpose::Processing,
        Purpose::ProviderError,
        Purpose::ProviderCrash,
        Purpose::VisibilityLag,
        Purpose::WorkerCrash,
        Purpose::ProviderErrorAfterCommit,
        Purpose::AsyncFailure,
        Purpose::AuthorizationLoss,
        Purpose::Pruning,
    ];

    /// Dense index, stable across versions of the same choice-vector format: new purposes
    /// are added at the end, so older purposes keep their random streams.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Purpose::Arrival => "arrival",
            Purpose::Repeat => "repeat",
            Purpose::WorkerPick => "worker_pick",
            Purpose::AgentThink => "agent_think",
            Purpose::AgentDecision => "agent_decision",
            Purpose::Latency => "latency",
            Purpose::RequestLoss => "request_loss",
            Purpose::ReplyLoss => "reply_loss",
            Purpose::Duplicate => "duplicate",
            Purpose::Processing => "processing",
            Purpose::ProviderError => "provider_error",
            Purpose::ProviderCrash => "provider_crash",
            Purpose::VisibilityLag => "visibility_lag",
            Purpose::WorkerCrash => "worker_crash",
            Purpose::ProviderErrorAfterCommit => "provider_error_after_commit",
            Purpose::AsyncFailure => "async_failure",
            Purpose::AuthorizationLoss => "authorization_loss",
            Purpose::Pruning => "pruning",
        }
    }
}

/// The alternatives of one choice. Always at least two.
#[derive(Clone, Copy, Debug)]
pub enum Alternatives<'a> {
    /// `0..n`, equally likely.
    Uniform(u64),
    /// `0..weights.len()`, alternative `i` with relative weight `weights[i]`; a zero weight
    /// is impossible.
    Weighted(&'a [u32]),
}

impl Alternatives<'_> {
    pub fn len(&self) -> u64 {
        match self {
            Alternatives::Uniform(n) => *n,
            Alternatives::Weighted(w) => w.len() as u64,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `value` names a possible alternative.
    pub fn allows(&self, value: u64) -> bool {
        match self {
            Alternatives::Uniform(n) => value < *n,
            Alternatives::Weighted(w) => w.get(value as usize).is_some_and(|&x| x > 0),
        }
    }

    /// The default alternative: 0 if it is possible, else the first possible one.
    pub fn default_value(&self) -> u64 {
        match self {
            Alternatives::Uniform(_) => 0,
            Alternatives::Weighted(w) => w.iter().position(|&x| x > 0).unwrap_or(0) as u64,
        }
    }
}

/// The single source of nondeterminism of a run.
pub trait Chooser {
    /// Picks one of `alternatives` for `purpose` and returns its index.
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64;
}

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
        let weights = [p.den() - p.num(), p.num()];
        self.choose(purpose, Alternatives::Weighted(&weights)) == 1
    }

    /// A value in `min..=max`, uniformly.
    fn between(&mut self, purpose: Purpose, min: u64, max: u64) -> u64 {
        debug_assert!(min <= max);
        if min == max {
            return min;
        }
        min + self.choose(purpose, Alternatives::Uniform(max - min + 1))
    }

    /// An index into `weights`, with their relative weights; at least one must be non-zero.
    fn weighted(&mut self, purpose: Purpose, weights: &[u32]) -> usize {
        let mut possible = weights.iter().enumerate().filter(|(_, w)| **w > 0);
        let first = possible.next().map(|(i, _)| i).unwrap_or(0);
        if possible.next().is_none() {
            return first;
        }
        self.choose(purpose, Alternatives::Weighted(weights)) as usize
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
    pub value: u64,
    /// How many alternatives there were.
    pub of: u64,
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

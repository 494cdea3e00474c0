//! The retry layers of a stack as data: which errors a layer retries, how long it waits,
//! and the stack of them a model's spec (or the executor's shorthand) describes.

use super::{ErrorClass, GiveUp, Jitter, KeyMode, Redelivery, StackSpec};
use crate::model::ExecutorModel;
use crate::model::stack::{Attempts, BackoffSpec, KNOBS, LayerSpec, RetryAfterSpec, UNLIMITED};
use crate::sim::Millis;
use crate::vocab::protocol::{Reply, Response};

impl ErrorClass {
    /// The class of a response that is not a success; `None` for a success.
    pub fn of(response: Response) -> Option<ErrorClass> {
        Some(match response {
            Response::Timeout => ErrorClass::Timeout,
            Response::Reset => ErrorClass::ConnectionReset,
            Response::Reply(reply) => match reply {
                Reply::Created { .. }
                | Reply::Found { .. }
                | Reply::AlreadyExists
                | Reply::Accepted { .. } => return None,
                Reply::InProgress => ErrorClass::InProgress,
                Reply::ServerError { .. } => ErrorClass::ServerError,
                Reply::NotFound | Reply::Pending => ErrorClass::Inconclusive,
                Reply::Mismatch => ErrorClass::Mismatch,
                Reply::Expired => ErrorClass::Expired,
                Reply::MissingKey | Reply::Unsupported | Reply::Rejected => ErrorClass::Refused,
                Reply::OperationFailed => ErrorClass::Failed,
                Reply::Throttled { .. } => ErrorClass::Throttled,
                Reply::RequestTimeout => ErrorClass::RequestTimeout,
            },
        })
    }

    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// The errors a layer retries: a set of [`ErrorClass`]es.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RetryOn(u16);

impl RetryOn {
    /// Nothing: the layer makes one call and passes every error up.
    pub const NOTHING: RetryOn = RetryOn(0);
    /// What leaves the outcome open and may go away: a timeout, a 409, a 5xx, an
    /// inconclusive answer. What an honest transport loop retries.
    pub const UNCERTAIN: RetryOn = RetryOn(
        ErrorClass::Timeout.bit()
            | ErrorClass::InProgress.bit()
            | ErrorClass::ServerError.bit()
            | ErrorClass::Inconclusive.bit()
            | ErrorClass::Throttled.bit()
            | ErrorClass::RequestTimeout.bit()
            | ErrorClass::ConnectionReset.bit(),
    );
    /// Every error, as a generic "retry on exception" does.
    pub const ANY: RetryOn = RetryOn((1 << ErrorClass::ALL.len()) - 1);

    /// The set of `classes`.
    pub fn of(classes: &[ErrorClass]) -> RetryOn {
        RetryOn(classes.iter().fold(0, |b, c| b | c.bit()))
    }

    pub fn contains(self, class: ErrorClass) -> bool {
        self.0 & class.bit() != 0
    }
}

/// The waits between one layer's attempts: before its `n`-th retry,
/// `initial_ms * factor^(n-1)`, at most `cap_ms` (or the `n`-th entry of `table_ms`, the
/// last one repeated), then spread by its jitter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Backoff {
    pub initial_ms: Millis,
    pub factor: u32,
    pub cap_ms: Millis,
    /// Waits written out; empty: the exponential ones.
    pub table_ms: Vec<Millis>,
    pub jitter: Jitter,
    /// No wait shorter than this, after the jitter.
    pub floor_ms: Millis,
    /// No wait longer than this, after the jitter (`Millis::MAX`: none).
    pub ceiling_ms: Millis,
}

impl Backoff {
    /// `initial_ms` times `factor` per retry, at most `cap_ms`, without jitter.
    pub fn exponential(initial_ms: Millis, factor: u32, cap_ms: Millis) -> Backoff {
        Backoff {
            initial_ms,
            factor,
            cap_ms,
            table_ms: Vec::new(),
            jitter: Jitter::None,
            floor_ms: 0,
            ceiling_ms: Millis::MAX,
        }
    }

    /// The wait before retry number `n` (1-based), before jitter.
    pub fn before(&self, n: u32) -> Millis {
        if let Some(last) = self.table_ms.last() {
            let i = (n.saturating_sub(1) as usize).min(self.table_ms.len() - 1);
            return self.table_ms.get(i).copied().unwrap_or(*last);
        }
        let steps = n.saturating_sub(1).min(31);
        self.initial_ms
            .saturating_mul(u64::from(self.factor).saturating_pow(steps))
            .min(self.cap_ms)
    }

    /// The shortest and longest wait before retry number `n`: the wait spread by the
    /// jitter.
    pub fn range(&self, n: u32) -> (Millis, Millis) {
        let wait = self.before(n);
        let percent = |p: u32| wait.saturating_mul(u64::from(p)) / 100;
        let floor = |(lo, hi): (Millis, Millis)| {
            let bound = |w: Millis| w.min(self.ceiling_ms).max(self.floor_ms);
            (bound(lo), bound(hi))
        };
        floor(match self.jitter {
            Jitter::None => (wait, wait),
            Jitter::Full => (0, wait),
            Jitter::Equal => (wait / 2, wait),
            Jitter::Additive { max_ms } => (wait, wait.saturating_add(max_ms)),
            Jitter::Multiplicative {
                min_percent,
                max_percent,
            } => (percent(min_percent), percent(max_percent)),
        })
    }
}

/// One retry layer of a stack.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layer {
    /// What the layer is (`http`, `tool`, `queue`, a framework's name), for messages.
    pub name: String,
    /// Calls of the layer below per call of this layer, the first included; `u32::MAX`:
    /// without limit.
    pub attempts: u32,
    pub backoff: Backoff,
    /// The backoff after an error of a class, in place of `backoff` (counted by the same
    /// retries).
    pub backoff_on: Vec<(ErrorClass, Backoff)>,
    pub retry_on: RetryOn,
    pub key: KeyMode,
    pub redelivery: Redelivery,
    /// The client timeout of each send (read from the innermost layer); `None`: the
    /// model's `executor.timeout_ms`.
    pub timeout_ms: Option<Millis>,
    /// No retry by this layer once its current call has lasted this long.
    pub deadline_ms: Option<Millis>,
    /// A 429's `Retry-After` up to this, waited instead of the backoff; above it, as the
    /// spec says. `None`: the header is ignored.
    pub retry_after: Option<RetryAfterSpec>,
    /// The should-retry header it follows over `retry_on` (`true`: retry, `false`: do
    /// not), by name, compared without case; `None`: it reads none.
    pub should_retry_header: Option<String>,
}

impl Layer {
    /// The backoff it waits after an error of `class`.
    pub fn backoff_after(&self, class: ErrorClass) -> &Backoff {
        self.backoff_on
            .iter()
            .find(|(c, _)| *c == class)
            .map_or(&self.backoff, |(_, b)| b)
    }

    /// A layer with no client timeout or deadline of its own.
    pub fn new(
        name: &str,
        attempts: u32,
        backoff: Backoff,
        retry_on: RetryOn,
        key: KeyMode,
        redelivery: Redelivery,
    ) -> Layer {
        Layer {
            name: name.into(),
            attempts,
            backoff,
            backoff_on: Vec::new(),
            retry_on,
            key,
            redelivery,
            timeout_ms: None,
            deadline_ms: None,
            retry_after: None,
            should_retry_header: None,
        }
    }
}

/// Retry layers, outermost first, and how the stack gives up.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stack {
    pub layers: Vec<Layer>,
    pub gives_up: GiveUp,
}

impl Stack {
    /// The shorthand of a model's `executor` section for a design with one transport loop:
    /// `executor.attempts` sends, waiting `backoff_ms` doubled each retry up to
    /// `max_backoff_ms`, retrying what leaves the outcome open, with the key `key`, and
    /// giving up as unknown.
    pub fn transport(config: &ExecutorModel, key: KeyMode) -> Stack {
        Stack {
            layers: vec![Layer::new(
                "http",
                config.attempts,
                shorthand_backoff(config),
                RetryOn::UNCERTAIN,
                key,
                Redelivery::Anew,
            )],
            gives_up: GiveUp::Unknown,
        }
    }

    /// The stack `spec` describes under the model's `executor` section (the shorthand's
    /// backoff where a layer gives none, and its knobs where a preset layer names them).
    /// `spec` is one that reads without problems ([`StackSpec::problems`]).
    pub fn from_spec(spec: &StackSpec, config: &ExecutorModel) -> Stack {
        Stack {
            layers: spec.layers.iter().map(|l| layer_of(l, config)).collect(),
            gives_up: spec.gives_up,
        }
    }
}

fn layer_of(l: &LayerSpec, config: &ExecutorModel) -> Layer {
    let attempts = match &l.attempts {
        Attempts::Count(n) => *n,
        Attempts::Named(n) if n == UNLIMITED => u32::MAX,
        Attempts::Named(n) => match n.as_str() {
            "executor.layers.tool" => config.layers.tool,
            "executor.layers.queue" => config.layers.queue,
            knob => {
                debug_assert!(KNOBS.contains(&knob), "checked when read: {knob}");
                config.attempts
            }
        },
    };
    let backoff = match &l.backoff {
        None => shorthand_backoff(config),
        Some(b) => backoff_of(b, config),
    };
    let backoff_on = l
        .backoff_on
        .iter()
        .filter_map(|(name, b)| {
            let class = ErrorClass::ALL.into_iter().find(|c| c.name() == name)?;
            Some((class, backoff_of(b, config)))
        })
        .collect();
    let classes = l.retry_on.classes("retry_on").unwrap_or_default();
    Layer {
        name: l.name.clone(),
        attempts,
        backoff,
        backoff_on,
        retry_on: RetryOn::of(&classes),
        key: l.key,
        redelivery: l.redelivery,
        timeout_ms: l.timeout_ms,
        deadline_ms: l.deadline_ms,
        retry_after: l.retry_after,
        should_retry_header: l.should_retry_header.clone(),
    }
}

fn backoff_of(b: &BackoffSpec, config: &ExecutorModel) -> Backoff {
    Backoff {
        initial_ms: b.initial_ms.unwrap_or(config.backoff_ms),
        factor: b.factor,
        cap_ms: b.cap_ms.unwrap_or(config.max_backoff_ms),
        table_ms: b.table_ms.clone().unwrap_or_default(),
        jitter: b.jitter.clone(),
        floor_ms: b.floor_ms.unwrap_or(0),
        ceiling_ms: b.ceiling_ms.unwrap_or(Millis::MAX),
    }
}

fn shorthand_backoff(config: &ExecutorModel) -> Backoff {
    Backoff::exponential(config.backoff_ms, 2, config.max_backoff_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::retrying::{Verdict, classify};
    use crate::vocab::ids::ResourceId;

    fn every_response() -> Vec<Response> {
        let r = ResourceId(7);
        [
            Reply::Created {
                resource: r,
                replayed: false,
            },
            Reply::Accepted { handle: 1 },
            Reply::OperationFailed,
            Reply::AlreadyExists,
            Reply::InProgress,
            Reply::Mismatch,
            Reply::Expired,
            Reply::Rejected,
            Reply::MissingKey,
            Reply::ServerError { replayed: false },
            Reply::Found { resource: r },
            Reply::NotFound,
            Reply::Pending,
            Reply::Unsupported,
            Reply::Throttled {
                retry_after_ms: Some(1_000),
            },
            Reply::RequestTimeout,
        ]
        .into_iter()
        .map(Response::Reply)
        .chain([Response::Timeout, Response::Reset])
        .collect()
    }

    #[test]
    fn a_success_has_no_error_class_and_every_error_one() {
        for response in every_response() {
            let done = matches!(classify(response), Verdict::Done(_));
            assert_eq!(ErrorClass::of(response).is_none(), done, "{response:?}");
        }
    }

    #[test]
    fn what_an_honest_loop_retries_is_what_leaves_the_outcome_open() {
        for response in every_response() {
            let Some(class) = ErrorClass::of(response) else {
                continue;
            };
            let uncertain = classify(response) == Verdict::Uncertain;
            assert_eq!(
                RetryOn::UNCERTAIN.contains(class),
                uncertain,
                "{response:?}"
            );
            assert!(RetryOn::ANY.contains(class));
            assert!(!RetryOn::NOTHING.contains(class));
        }
        let some = RetryOn::of(&[ErrorClass::Timeout, ErrorClass::Refused]);
        let inside: Vec<_> = ErrorClass::ALL
            .into_iter()
            .filter(|c| some.contains(*c))
            .collect();
        assert_eq!(inside, [ErrorClass::Timeout, ErrorClass::Refused]);
    }

    #[test]
    fn the_shorthand_backoff_doubles_up_to_its_cap() {
        for (backoff_ms, max_backoff_ms) in [(0, 60_000), (500, 60_000), (1_000, 3_000)] {
            let config = ExecutorModel {
                backoff_ms,
                max_backoff_ms,
                ..ExecutorModel::default()
            };
            let b = shorthand_backoff(&config);
            for n in 0..40 {
                assert_eq!(b.before(n), config.backoff_before(n), "retry {n}");
            }
        }
        let b = Backoff::exponential(100, 3, 1_000);
        let waits: Vec<_> = (1..=5).map(|n| b.before(n)).collect();
        assert_eq!(waits, [100, 300, 900, 1_000, 1_000]);
        let table = Backoff {
            table_ms: vec![5, 50, 500],
            ..b.clone()
        };
        let waits: Vec<_> = (1..=5).map(|n| table.before(n)).collect();
        assert_eq!(waits, [5, 50, 500, 500, 500]);
    }

    #[test]
    fn jitter_spreads_each_wait_over_its_range() {
        let with = |jitter| Backoff {
            jitter,
            ..Backoff::exponential(1_000, 2, 3_000)
        };
        let ranges =
            |b: Backoff| -> Vec<(Millis, Millis)> { (1..=3).map(|n| b.range(n)).collect() };
        assert_eq!(
            ranges(with(Jitter::None)),
            [(1_000, 1_000), (2_000, 2_000), (3_000, 3_000)]
        );
        assert_eq!(
            ranges(with(Jitter::Full)),
            [(0, 1_000), (0, 2_000), (0, 3_000)]
        );
        assert_eq!(
            ranges(with(Jitter::Equal)),
            [(500, 1_000), (1_000, 2_000), (1_500, 3_000)]
        );
        assert_eq!(
            ranges(with(Jitter::Additive { max_ms: 250 })),
            [(1_000, 1_250), (2_000, 2_250), (3_000, 3_250)]
        );
        let openai = Jitter::Multiplicative {
            min_percent: 75,
            max_percent: 100,
        };
        assert_eq!(
            ranges(with(openai)),
            [(750, 1_000), (1_500, 2_000), (2_250, 3_000)]
        );
    }
}

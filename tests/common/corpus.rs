//! The known-bad corpus, shared by its test (`tests/known_bad.rs`: each bug is caught, with
//! the fewest faults, within a stated number of runs) and its benchmark
//! (`benches/known_bad.rs`: how many runs each strategy needed): the bugs, their models, and
//! how each strategy is run on them.
#![allow(dead_code)]

use std::path::Path;

use retrylab::check::Property;
use retrylab::design::Design;
use retrylab::explore::{Bound, Exploration, Spec, Strategy, explore, sweep};
use retrylab::model::Model;

use super::{bad, broken};

/// Seeds of `check`'s default sweep.
pub const SEEDS: (u64, u64) = (0, 999);

/// The runs within which each strategy must meet every bug of the corpus: the budget of
/// `check`'s default sweep (1000 seeds) for each. A strategy that needs more than the
/// sweep's seeds to meet a bug it exists to find has regressed; the exact figures (at most
/// 274 random, 141 swarm, 233 dfs) are the benchmark's (`cargo bench --bench known_bad`).
pub const RANDOM_RUNS: u64 = 1000;
pub const SWARM_RUNS: u64 = 1000;
pub const DFS_RUNS: u64 = 1000;

/// One bug of the corpus, and what shows it.
pub struct Known {
    pub bad: fn() -> &'static dyn Design,
    /// The built-in design it was made from.
    pub real: &'static str,
    /// Under `models/bad/`, without `.json`.
    pub model: &'static str,
    pub property: Property,
    /// Faults of `explore --strategy dfs --max-faults 2`'s counterexample: the fewest the bug
    /// needs.
    pub faults: u32,
    /// Lines the first violating run's timeline shows: the mechanism.
    pub shows: &'static [&'static str],
}

pub fn load(name: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/bad")
        .join(format!("{name}.json"));
    Model::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// `check`'s sweep of `design` on `model` for `property`: the violating seeds and the first.
pub fn sweep_for(model: &Model, design: &dyn Design, property: Property) -> (u64, Option<u64>) {
    let properties = [property];
    let s = sweep(
        &Spec {
            model,
            design,
            seeds: SEEDS,
            properties: &properties,
            keep_failures: 1,
        },
        &|_| {},
    );
    (s.violations.of(property), s.first_failure(property))
}

/// The bound of the corpus's searches: K = 2, and at most `max_runs` runs.
pub fn bound(max_runs: u64) -> Bound {
    Bound {
        max_faults: 2,
        max_runs,
        ..Bound::default()
    }
}

/// What each strategy found of one bug, on its bad design.
pub struct Caught {
    pub model: Model,
    /// Seeds of [`SEEDS`] that violate the property, and the first of them.
    pub violating: u64,
    pub first: Option<u64>,
    /// `explore --strategy dfs --max-faults 2`, stopped at [`DFS_RUNS`].
    pub dfs: Exploration,
    /// `explore --strategy swarm`, seeds from 0, at most [`SWARM_RUNS`].
    pub swarm: Exploration,
    /// `explore --strategy random`, seeds from 0, at most [`RANDOM_RUNS`].
    pub random: Exploration,
}

impl Caught {
    /// Runs each strategy made until its first violation (`None`: not within its bound).
    pub fn dfs_runs(&self) -> Option<u64> {
        self.dfs.violations.first().map(|v| v.after_runs)
    }

    pub fn swarm_runs(&self) -> Option<u64> {
        self.swarm.violations.first().map(|v| v.after_runs)
    }

    pub fn random_runs(&self) -> Option<u64> {
        self.random.violations.first().map(|v| v.after_runs)
    }
}

/// The sweep and the three strategies on `k`'s bad design.
pub fn catch(k: &Known) -> Caught {
    let model = load(k.model);
    let bad = (k.bad)();
    let (violating, first) = sweep_for(&model, bad, k.property);
    let properties = [k.property];
    let run = |strategy, max_runs| explore(&model, bad, &properties, strategy, bound(max_runs));
    let dfs = run(Strategy::Dfs, DFS_RUNS);
    let swarm = run(Strategy::Swarm, SWARM_RUNS);
    let random = run(Strategy::Random, RANDOM_RUNS);
    Caught {
        violating,
        first,
        dfs,
        swarm,
        random,
        model,
    }
}

pub fn known(model: &str) -> &'static Known {
    CORPUS
        .iter()
        .find(|k| k.model == model)
        .expect("in the corpus")
}

pub const CORPUS: &[Known] = &[
    // 1. A replan after a lost reply mints a new key: a second ticket.
    Known {
        bad: bad::key_per_call,
        real: "same_key",
        model: "lost_reply_rare",
        property: Property::NoDuplicate,
        faults: 1,
        shows: &[
            "reply to attempt 1 lost",
            "op 1 sends attempt 2: create with params 1, key k2",
        ],
    },
    // 2. A crash between the send and the journal write: the restarted worker resends the
    // operation without its key.
    Known {
        bad: || &bad::RECORD_AFTER_SEND,
        real: "journal",
        model: "crash_after_send_rare",
        property: Property::NoDuplicate,
        faults: 1,
        shows: &[
            "worker 0 crashes after_send of attempt 1",
            "op 0 sends attempt 2: create with params 1, no key",
        ],
    },
    // 3. "Not found" from a lagging index believed at once: created again.
    Known {
        bad: || &broken::NEGATIVE_READ_AT_ONCE,
        real: "journal_reconcile",
        model: "lagging_search_rare",
        property: Property::NoDuplicate,
        faults: 1,
        shows: &[
            "-> 404 not found",
            "not found past the visibility bound: may create",
        ],
    },
    // 4. A stalled holder's stale refusal settles its successor's live operation as failed.
    Known {
        bad: || &broken::UNFENCED,
        real: "journal_reconcile_lease",
        model: "stalled_holder_refused",
        property: Property::NoFalseFailure,
        faults: 0,
        shows: &[
            "worker 1: recovers op 0",
            "worker 0: reply to attempt 1: 400 rejected",
            "worker 0: op 0 unknown -> failed",
        ],
    },
    // 5. A key sent again the next day, past the provider's retention: charged twice.
    Known {
        bad: || &bad::RETENTION_FOREVER,
        real: "journal",
        model: "retention_next_day",
        property: Property::NoDuplicate,
        faults: 1,
        shows: &["key k1 expired and was forgotten"],
    },
    // 6. A 409 in progress reported as a failure while the first request commits.
    Known {
        bad: || &bad::IN_PROGRESS_IS_FAILURE,
        real: "same_key",
        model: "in_progress_at_retry",
        property: Property::NoFalseFailure,
        faults: 0,
        shows: &["-> 409 in progress", "op 0 dispatched -> failed"],
    },
    // 7. Two tenants ask for the same thing: one key, the second answered with the first's
    // ticket.
    Known {
        bad: || &bad::TENANT_BLIND_HASH,
        real: "payload_hash_key",
        model: "tenants_same_request",
        property: Property::NoMergedRepeat,
        faults: 0,
        shows: &[
            "intent 1 arrives: genuinely repeats intent 0",
            "seen: replay -> 201 created r0, replayed",
            "worker 0: reports success (r0) for call 2",
        ],
    },
    // 8. Another worker's sweeper takes a live operation over and sends it again.
    Known {
        bad: || &bad::SWEEPER_WITHOUT_LEASE,
        real: "journal_reconcile_lease",
        model: "sweeper_takes_live_op",
        property: Property::NoDuplicate,
        faults: 0,
        shows: &[
            "recovers op 0",
            "op 0: no read-back decided: same-key retry",
            "key k1 not deduplicated",
        ],
    },
    // 9. A 202 reported as done; the accepted work then fails.
    Known {
        bad: || &bad::ACCEPTED_IS_DONE,
        real: "journal",
        model: "async_failure_rare",
        property: Property::NoFalseSuccess,
        faults: 1,
        shows: &[
            "-> 202 accepted",
            "op 0 dispatched -> confirmed",
            "done -> 500 operation failed",
        ],
    },
    // 10. The journal names each operation's own ticket, the answer to the agent the first
    // ticket of its endpoint: the second intent is told the first one's.
    Known {
        bad: || &bad::MEMOISED_RECEIPT,
        real: "same_key",
        model: "memoised_receipt",
        property: Property::NoWrongReceipt,
        faults: 0,
        shows: &[
            "ledger    effect r1 committed for intent 1",
            "reports success (r0) for call 2",
        ],
    },
    // 11. The same wrapper in a workflow that compensates: the second intent's cancellation
    // removes the first intent's ticket.
    Known {
        bad: || &bad::MEMOISED_RECEIPT,
        real: "same_key",
        model: "compensates_other_intent",
        property: Property::NoWrongCompensation,
        faults: 0,
        shows: &[
            "reports success (r0) for call 3",
            "compensation of step 0 call #1), params 4611686018427387904",
        ],
    },
    // 12. A design-internal constant: an identical call within 2 s of a success is answered
    // from a cache, and the user's genuine repeat is merged.
    Known {
        bad: || &bad::DEBOUNCED,
        real: "same_key",
        model: "debounced_repeat",
        property: Property::NoMergedRepeat,
        faults: 0,
        shows: &["intent 1 arrives: genuinely repeats intent 0", "cached"],
    },
];

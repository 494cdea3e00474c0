//! proptest in the space where the safe designs earn their keep: providers that race
//! same-key requests (only a lease and a patient read-back keep two sends apart), keys that
//! expire or are scoped to a region, stalled workers, and honesty whatever the contract.
//!
//! Each guarantee property is also run against a deliberately broken variant of its design
//! (`common/broken.rs`) and must find a counterexample there: a property that a broken design
//! passes proves nothing about the real one.

use crate::common::broken;
use crate::common::strategies;

use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestError, TestRng, TestRunner};
use retrylab::check::Metrics;
use retrylab::design::{self, Design};
use retrylab::model::Model;
use retrylab::sim::{Millis, RandomChooser};
use retrylab::world::World;
use serde_json::{Value, json};

const SEEDS: u64 = 6;

/// Totals over `SEEDS` seeds, and the longest time any operation stayed unknown in one run.
fn sweep(m: &Model, d: &dyn Design) -> (Metrics, Millis) {
    let mut world = World::new(m, d, false);
    let mut chooser = RandomChooser::new(0);
    let mut metrics = Metrics::default();
    let mut longest = 0;
    for seed in 0..SEEDS {
        chooser.reset(seed);
        world.run(&mut chooser);
        longest = longest.max(metrics.add_outcome(&world.outcome()).longest_unknown_ms);
    }
    (metrics, longest)
}

/// A generated model, and its JSON text: a failure message carries a model file that
/// replays it.
struct Case {
    model: Model,
    text: String,
}

/// Generators make valid models only: an invalid one is a bug of the test, not a
/// counterexample (and must not pass for one where a counterexample is expected).
fn load(v: &Value) -> Result<Case, TestCaseError> {
    let text = v.to_string();
    let model = Model::from_json(&text, "generated").unwrap_or_else(|e| panic!("{e}\n{text}"));
    Ok(Case { model, text })
}

/// Whether every assumption `d` states holds on `m`, as `run` and `check` judge it.
fn applies(d: &dyn Design, m: &Model) -> bool {
    retrylab::design::assumptions::judge(d, m)
        .iter()
        .all(|j| j.holds)
}

fn latency_max(world: &Value) -> u64 {
    world["network"]["latency_ms"]["max"].as_u64().unwrap()
}

/// The space where only the lease keeps two sends of one operation apart, written into a
/// generated world. Two workers with a sweeper (from just past the timeout to three times
/// it) and a durable journal; a provider that executes overlapping same-key requests; a
/// read-back whose visibility bound covers the index lag and ordinary processing. Then the
/// dangerous part: the worker that makes the first send dies just after it, and that send
/// stays at the provider for longer than the visibility bound (`slow`, past the bound), so
/// a read during it says "not found" and a recovering worker, the restarted one or another,
/// would send again. The lease outlasts that send's whole life (timeout, processing, lag,
/// latency both ways). No late network copies, no provider crash between effect and key;
/// other crashes, stalls and faults as generated.
fn lease_world(
    mut world: Value,
    (provider, lag, processing): (Value, u64, u64),
    (pauses, sweep_quarters, slow, refused): (Vec<Value>, u64, u64, Option<u32>),
) -> Value {
    let latency = latency_max(&world);
    world["provider"] = provider;
    world["workers"]["count"] = json!(2);
    world["workers"]["journal"] = json!("durable");
    world["network"]["duplicate"] = json!(0);
    let timeout = world["executor"]["timeout_ms"].as_u64().unwrap();
    let bound = lag + processing + 2 * latency + 1;
    let slow = bound + slow;
    world["executor"]["visibility_bound_ms"] = json!(bound);
    world["executor"]["lease_ms"] = json!(timeout + slow + lag + 2 * latency + 1);
    world["executor"]["sweep_ms"] = json!(timeout + timeout * sweep_quarters / 4);

    let faults = world["faults"].as_array_mut().unwrap();
    faults.retain(|f| {
        ["slow_processing", "crash_provider", "crash_worker"]
            .iter()
            .all(|k| f.get(k).is_none())
    });
    faults.push(json!({ "crash_worker": { "attempt": 1, "point": "after_send" } }));
    faults.push(json!({ "slow_processing": { "attempt": 1, "ms": slow } }));
    faults.extend(pauses);
    if let Some(attempt) = refused {
        faults.push(json!({ "reject": { "attempt": attempt } }));
    }
    world
}

/// [`lease_world`] within the lease design's assumptions, where its guarantee is asserted:
/// the holder's own transport retry comes after the first send's whole life, no replan
/// resends the operation early (one tool call per intent), and the provider deduplicates
/// atomically (`own_sends_spaced`, `atomic_dedup`; the holder's own race is the window
/// `lease_own_retry_overlaps`, and a broken lease is shown caught on the whole of
/// [`lease_world`] below).
fn lease_world_assumed(world: Value, racing: (Value, u64, u64), stalls: Stalls) -> Value {
    let latency = latency_max(&world);
    let processing = racing.2;
    let mut world = lease_world(world, racing, stalls);
    let slow = world["faults"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["slow_processing"]["ms"].as_u64())
        .max()
        .unwrap_or(0);
    let spaced = latency + slow.max(processing) + 1;
    world["executor"]["backoff_ms"] = json!(spaced);
    world["executor"]["max_backoff_ms"] = json!(spaced);
    world["agent"]["max_calls"] = json!(1);
    world["provider"]["atomicity"] = json!("atomic");
    world
}

type Stalls = (Vec<Value>, u64, u64, Option<u32>);

/// Stalls, the sweeper's period in quarters of the timeout past it, how much longer than
/// the visibility bound the first send is processed, and a send the provider refuses (a
/// definite answer that a stalled holder may wake up to).
fn stalls() -> impl Strategy<Value = (Vec<Value>, u64, u64, Option<u32>)> {
    (
        prop::collection::vec(strategies::executor_pause(), 0..2),
        1..9u64,
        1..20_000u64,
        prop::option::of(1..4u32),
    )
}

/// The space where the read-back keeps sends apart: a provider that executes overlapping
/// same-key requests, and a visibility bound that covers processing, the index lag and the
/// latency both ways, so that a "not found" that counts means the earlier send is over and
/// left nothing. Workers, crashes and faults as generated (no late network copies, no
/// provider crash between effect and key, no scripted processing past the bound).
fn read_back_world(mut world: Value, (provider, lag, processing): (Value, u64, u64)) -> Value {
    let latency = latency_max(&world);
    world["provider"] = provider;
    world["workers"]["journal"] = json!("durable");
    world["network"]["duplicate"] = json!(0);
    world["executor"]["visibility_bound_ms"] = json!(lag + processing + 2 * latency + 1);
    let faults = world["faults"].as_array_mut().unwrap();
    faults.retain(|f| f.get("slow_processing").is_none() && f.get("crash_provider").is_none());
    world
}

/// No duplicate, and no claim of the design that the ledger contradicts: what the lease
/// and its fencing tokens protect together (a stalled holder's stale answer must not settle
/// an operation its successor is working on).
fn one_effect_true_claims(c: &Case, d: &dyn Design) -> Result<(), TestCaseError> {
    no_duplicate(c, d)?;
    let (r, _) = sweep(&c.model, d);
    let claims = r.false_resolutions;
    prop_assert_eq!(
        claims,
        0,
        "{} made a false claim in {}",
        d.name(),
        strategies::failing_model(&c.text)
    );
    Ok(())
}

/// No duplicate: the property the read-back protects when the provider races same-key
/// sends.
fn no_duplicate(c: &Case, d: &dyn Design) -> Result<(), TestCaseError> {
    let (r, _) = sweep(&c.model, d);
    prop_assert_eq!(
        r.duplicate_effects,
        0,
        "{} duplicated in {}",
        d.name(),
        strategies::failing_model(&c.text)
    );
    Ok(())
}

/// An agent that never turns an unknown into a failure by itself: whatever failure the user
/// hears comes from the executor.
fn patient_agent(world: &mut Value) {
    world["agent"]["on_unknown"]["give_up"] = json!(0);
    let r = &world["agent"]["on_unknown"];
    let total: u64 = ["retry_same", "replan", "change_args", "ask_user"]
        .iter()
        .map(|k| r[k].as_u64().unwrap_or(0))
        .sum();
    if total == 0 {
        world["agent"]["on_unknown"]["replan"] = json!(1);
    }
}

/// Honesty: the user is never told "failed" while an effect of the intent exists. (A
/// confirmed claim can still be false under a payload-keyed provider that merges a genuine
/// repeat: no caller can tell that apart, so it is not part of this property.)
fn honest(c: &Case, d: &dyn Design) -> Result<(), TestCaseError> {
    let (r, _) = sweep(&c.model, d);
    prop_assert_eq!(
        r.false_failure,
        0,
        "{} told a false failure in {}",
        d.name(),
        strategies::failing_model(&c.text)
    );
    Ok(())
}

/// Every operation that became unknown is resolved or escalated within the deadline plus
/// the longest the design may sit without acting on it (the sweeper's notice, a crashed
/// holder's lease, a backoff, a poll) and a send or two.
fn settles(c: &Case, d: &dyn Design) -> Result<(), TestCaseError> {
    let (_, longest) = sweep(&c.model, d);
    let e = &c.model.executor;
    let idle = [
        2 * e.sweep_ms.unwrap(),
        e.lease_ms,
        e.max_backoff_ms,
        e.poll_ms,
    ]
    .into_iter()
    .max()
    .unwrap();
    let bound = e.deadline_ms.unwrap() + idle + 2 * e.timeout_ms;
    prop_assert!(
        longest <= bound,
        "{}: an operation stayed unknown {} ms (bound {} ms) in {}",
        d.name(),
        longest,
        bound,
        strategies::failing_model(&c.text)
    );
    Ok(())
}

/// A keyed contract in a generated world; when its keys expire, the operator tells the
/// executor the true retention (`executor.assumed_retention_ms`).
fn keyed(world: &mut Value, (provider, retention): (Value, Option<u64>)) {
    world["provider"] = provider;
    if let Some(r) = retention {
        world["executor"]["assumed_retention_ms"] = json!(r);
    }
}

/// A keyed contract and a patient agent. The authorization survives replans: a replan that
/// comes back with a new one is a new operation, whose honest "failed" says nothing of the
/// first (`identity_loss` shows what that costs).
///
/// One step per intent: when a later step of a workflow truly fails after an earlier one
/// succeeded, "failed" with the earlier effect left behind is the workflow's partial failure
/// (what compensation is for), not an unknown turned into a failure.
fn honest_world(mut world: Value, provider: (Value, Option<u64>)) -> Value {
    keyed(&mut world, provider);
    patient_agent(&mut world);
    world["workload"]["steps"] = json!(1);
    world
}

fn settling_world(mut world: Value, provider: (Value, Option<u64>), deadline: u64) -> Value {
    keyed(&mut world, provider);
    world["workers"]["journal"] = json!("durable");
    let timeout = world["executor"]["timeout_ms"].as_u64().unwrap();
    world["executor"]["sweep_ms"] = json!(3 * timeout);
    world["executor"]["deadline_ms"] = json!(deadline);
    world
}

const HONEST: [&str; 5] = [
    "same_key",
    "journal",
    "journal_reconcile",
    "journal_reconcile_lease",
    "durable_authorization",
];

const JOURNALS: [&str; 4] = [
    "journal",
    "journal_reconcile",
    "journal_reconcile_lease",
    "durable_authorization",
];

proptest! {
    #![proptest_config(strategies::config(
        48,
        concat!(env!("CARGO_MANIFEST_DIR"), "/proptest-regressions/prop_dangerous.txt"),
    ))]

    /// With a provider that executes both of two overlapping same-key requests and a
    /// read-back that cannot see work still processing, the lease keeps a recovering worker
    /// from sending while another's send is alive, even when a worker stalls past its lease.
    #[test]
    fn the_lease_keeps_racing_sends_apart(
        world in strategies::world(),
        provider in strategies::racing_provider(),
        stalls in stalls(),
    ) {
        let m = load(&lease_world_assumed(world, provider, stalls))?;
        let d = design::find("journal_reconcile_lease").unwrap();
        // The guarantee is asserted where the judgement `run` prints says it applies (a
        // slow_processing fault past the visibility bound, say, breaks an assumption).
        if applies(d, &m.model) {
            one_effect_true_claims(&m, d)?;
        }
    }

    /// With a provider that executes both of two overlapping same-key requests, reading back
    /// before any resend, and believing "not found" only once the bound has passed since the
    /// last send, keeps one operation to one effect: with or without a lease.
    #[test]
    fn the_read_back_keeps_racing_sends_apart(
        world in strategies::world(),
        provider in strategies::racing_provider(),
    ) {
        // Beyond the declared guarantee: these worlds break journal_reconcile's atomic_dedup
        // or in_flight_refused_or_held (the read-back by key is not counted as deciding
        // there), and the test shows the read-back keeps sends apart all the same.
        let m = load(&read_back_world(world, provider))?;
        for name in ["journal_reconcile", "journal_reconcile_lease"] {
            no_duplicate(&m, design::find(name).unwrap())?;
        }
    }

    /// Under the keyed contract, widened to expiring and region-scoped keys, the keyed
    /// designs never tell the user "failed" while the effect exists, whatever the agent
    /// does short of giving up by itself (re-run, replan, change the arguments).
    #[test]
    fn an_unknown_never_becomes_a_failure(
        world in strategies::world(),
        provider in strategies::keyed_provider_wide(),
    ) {
        let m = load(&honest_world(world, provider))?;
        for name in HONEST {
            honest(&m, design::find(name).unwrap())?;
        }
    }

    /// Under the same contracts, a journal design with a deadline and a sweeper resolves or
    /// escalates every operation that became unknown.
    #[test]
    fn every_unknown_is_resolved_or_escalated(
        world in strategies::world(),
        provider in strategies::keyed_provider_wide(),
        deadline in 1_000..60_000u64,
    ) {
        let m = load(&settling_world(world, provider, deadline))?;
        for name in JOURNALS {
            settles(&m, design::find(name).unwrap())?;
        }
    }
}

/// Runs `property` on `cases` generated inputs with a fixed random stream, and returns
/// whether it found a counterexample.
fn finds_counterexample<S: Strategy>(
    cases: u32,
    strategy: S,
    property: impl Fn(S::Value) -> Result<(), TestCaseError>,
) -> bool {
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 0,
        ..ProptestConfig::default()
    };
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(config, rng);
    matches!(runner.run(&strategy, property), Err(TestError::Fail(..)))
}

#[test]
fn the_lease_property_fails_without_an_exclusive_lease() {
    let strategy = || (strategies::world(), strategies::racing_provider(), stalls());
    let property = |d: &'static dyn Design| {
        move |(world, provider, stalls)| {
            let m = load(&lease_world(world, provider, stalls))?;
            one_effect_true_claims(&m, d)
        }
    };
    assert!(finds_counterexample(
        256,
        strategy(),
        property(&broken::LEASE_NEVER_EXCLUDES)
    ));
    // Nor does it without fencing: a stalled holder acts on answers to its old sends (a
    // narrower window: a refusal it wakes up to while its successor's send is out).
    assert!(finds_counterexample(
        2048,
        strategy(),
        property(&broken::UNFENCED)
    ));
    // Nor does the same design without a lease keep racing sends apart.
    assert!(finds_counterexample(
        256,
        strategy(),
        property(design::find("journal_reconcile").unwrap())
    ));
}

#[test]
fn the_honesty_property_fails_when_a_timeout_is_reported_as_failure() {
    let strategy = (strategies::world(), strategies::keyed_provider_wide());
    assert!(finds_counterexample(256, strategy, |(world, provider)| {
        let m = load(&honest_world(world, provider))?;
        honest(&m, &broken::TIMEOUT_IS_FAILURE)
    }));
}

#[test]
fn the_read_back_property_fails_when_a_negative_read_is_trusted_at_once() {
    let strategy = (strategies::world(), strategies::racing_provider());
    assert!(finds_counterexample(256, strategy, |(world, provider)| {
        let m = load(&read_back_world(world, provider))?;
        no_duplicate(&m, &broken::NEGATIVE_READ_AT_ONCE)
    }));
}

/// `same_key`'s guarantee (`prop_guarantees.rs`): no duplicate under the keyed contract.
/// With the key minted per tool call instead, an agent's replan is a new operation.
#[test]
fn the_same_key_property_fails_with_a_key_per_call() {
    let strategy = (strategies::world(), strategies::keyed_atomic_provider());
    let property = |d: &'static dyn Design| {
        move |(mut world, provider): (Value, Value)| {
            world["provider"] = provider;
            world["workers"]["journal"] = json!("durable");
            no_duplicate(&load(&world)?, d)
        }
    };
    assert!(!finds_counterexample(
        64,
        strategy,
        property(design::find("same_key").unwrap())
    ));
    let strategy = (strategies::world(), strategies::keyed_atomic_provider());
    assert!(finds_counterexample(
        256,
        strategy,
        property(broken::key_per_call())
    ));
}

/// The lease test above is not vacuous: over the cases it draws (the same seed, the same
/// cases), the guarantee it asserts applies on at least a quarter of the worlds.
#[test]
fn the_racing_worlds_meet_the_assumptions_of_the_designs_they_test() {
    type Racing = (Value, u64, u64);
    let count = |space: &dyn Fn(Value, Racing, Stalls) -> Value, name: &str| {
        let d = design::find(name).unwrap();
        let n = std::sync::Mutex::new((0u32, 0u32));
        let mut runner = TestRunner::new(strategies::config(48, "/nonexistent/regressions.txt"));
        runner
            .run(
                &(strategies::world(), strategies::racing_provider(), stalls()),
                |(world, provider, stalls)| {
                    let m = load(&space(world, provider, stalls)).unwrap();
                    let mut n = n.lock().unwrap();
                    n.0 += 1;
                    n.1 += u32::from(applies(d, &m.model));
                    Ok(())
                },
            )
            .unwrap();
        n.into_inner().unwrap()
    };
    let lease = count(&lease_world_assumed, "journal_reconcile_lease");
    eprintln!("cases, and worlds where the lease design's guarantee applies: {lease:?}");
    assert!(lease.1 * 4 >= lease.0, "{lease:?}");
}

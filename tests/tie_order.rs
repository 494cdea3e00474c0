//! Same-instant order as a choice (issue 9): a chooser that orders ties decides which of the
//! events due at one instant runs first; one that does not (random simulation, plain replay)
//! makes no such choice and keeps first in, first out. `retrylab replay --ties` replays a run
//! recorded that way.
//!
//! The model: one create, 10 ms each way, 4980 ms of processing and a 5 s attempt timeout,
//! so the reply arrives at exactly the instant the attempt times out (timeout queued first).
//! First in, first out, the timeout wins: the call is unknown, the agent replans and
//! `no_dedup` commits twice. The reply first: one effect, success.

use retrylab::design;
use retrylab::model::Model;
use retrylab::run::{Traced, run_traced};
use retrylab::sim::{
    Alternatives, Choice, ChoiceVector, Chooser, Purpose, RandomChooser, ReplayChooser,
};
use serde_json::{Value, json};

use crate::common::cli;
use cli::{retrylab, shell, stderr, stdout};

use crate::common::strategies;
use proptest::prelude::*;

fn tie_model() -> Value {
    json!({
        "name": "tie",
        "horizon_ms": 200_000_000u64,
        "designs": ["no_dedup"],
        "workload": { "intents": 1 },
        "agent": {
            "tool_timeout_ms": 60_000,
            "max_calls": 2,
            "on_failure": { "give_up": 1 },
            "on_unknown": { "replan": 1 }
        },
        "executor": { "attempts": 1, "timeout_ms": 5_000 },
        "network": { "latency_ms": 10 },
        "provider": { "dedup": "by_key", "processing_ms": 4_980 }
    })
}

/// The same, with the executor paused from 4995 ms to 5095 ms: the timeout and the reply,
/// both due at 5000 ms, are held back to 5095 ms.
fn paused_model() -> Value {
    let mut v = tie_model();
    v["faults"] = json!([
        { "pause": { "component": "executor", "from_ms": 4_995, "duration_ms": 100 } }
    ]);
    v
}

fn model(v: &Value) -> Model {
    Model::from_json(&v.to_string(), "tie.json").unwrap_or_else(|e| panic!("{e}"))
}

/// Orders ties, always answering `order` to a `Purpose::Order` choice (0 to anything else:
/// the model makes no other choice).
struct Orders(u64);

impl Chooser for Orders {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        assert_eq!(purpose, Purpose::Order, "the model has no other choice");
        self.0.min(alternatives.len() - 1)
    }

    fn orders_ties(&self) -> bool {
        true
    }
}

fn run(v: &Value, chooser: &mut dyn Chooser) -> Traced {
    run_traced(&model(v), design::find("no_dedup").unwrap(), chooser)
}

/// The timeline line of the first event at `at` (formatted as the trace prints times).
fn first_at(t: &Traced, at: &str) -> String {
    t.timeline
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{at} ms")))
        .unwrap_or_else(|| panic!("nothing at {at} ms:\n{}", t.timeline))
        .to_string()
}

fn order(value: u64) -> Choice {
    Choice {
        purpose: Purpose::Order,
        value,
        of: 2,
    }
}

#[test]
fn without_tie_ordering_no_order_choice_is_made_and_the_first_queued_runs_first() {
    for t in [
        run(&tie_model(), &mut RandomChooser::new(0)),
        run(
            &tie_model(),
            &mut ReplayChooser::new(ChoiceVector::default()),
        ),
    ] {
        assert!(t.choices.is_empty(), "{:?}", t.choices);
        assert!(first_at(&t, "5000").contains("attempt 1 timed out"));
        assert_eq!((t.metrics.effects, t.metrics.duplicate_effects), (2, 1));
    }
}

#[test]
fn picking_the_second_of_two_tied_events_runs_it_first() {
    let t = run(&tie_model(), &mut Orders(1));
    assert_eq!(t.choices[0], order(1), "{:?}", t.choices);
    assert!(
        first_at(&t, "5000").contains("reply to attempt 1: 201 created"),
        "{}",
        t.timeline
    );
    assert_eq!((t.metrics.effects, t.metrics.completed), (1, 1));
    assert_eq!(t.metrics.duplicate_effects, 0);
}

#[test]
fn alternative_zero_is_first_in_first_out() {
    for v in [tie_model(), paused_model()] {
        let fifo = run(&v, &mut RandomChooser::new(0));
        let ordered = run(&v, &mut Orders(0));
        assert_eq!(ordered.timeline, fifo.timeline);
        assert_eq!(ordered.metrics, fifo.metrics);
        assert!(!ordered.choices.is_empty());
        assert!(ordered.choices.iter().all(|c| *c == order(0)));
    }
}

#[test]
fn events_held_by_a_pause_come_back_in_order_and_are_chosen_among_then() {
    // Nothing runs at 5000 ms: both events are held, without a choice, and come back at
    // 5095 ms as the same tie (timeout first). Picking the second runs the reply first, as
    // without the pause; a choice spent on the held events would have swapped them at
    // 5000 ms and picked the timeout at 5095 ms.
    let t = run(&paused_model(), &mut Orders(1));
    assert!(!t.timeline.contains(" 5000 ms "), "{}", t.timeline);
    assert!(
        first_at(&t, "5095").contains("reply to attempt 1: 201 created"),
        "{}",
        t.timeline
    );
    assert_eq!(t.choices[0], order(1));
    assert_eq!((t.metrics.effects, t.metrics.completed), (1, 1));
    let fifo = run(&paused_model(), &mut Orders(0));
    assert!(first_at(&fifo, "5095").contains("attempt 1 timed out"));
    assert_eq!(fifo.metrics.effects, 2);
}

/// Writes `v` to a model file of its own.
fn model_file(v: &Value, name: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("retrylab-ties-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, v.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn replay_with_ties_reproduces_a_run_recorded_with_tie_ordering() {
    let path = model_file(&tie_model(), "tie.json");
    let recorded = run(&tie_model(), &mut Orders(1));
    // One tie: the timeout and the reply at 5000 ms. Taking the reply first cancels the
    // timeout, so no second tie is left to order.
    let vector = recorded.vector().to_string();
    assert_eq!(vector, "1");

    let out = retrylab(&[
        "replay",
        &path,
        "--design",
        "no_dedup",
        "--choices",
        &vector,
        "--ties",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&recorded.timeline), "{text}");
    assert!(
        text.contains("effects 1, completed 1, duplicate effects 0"),
        "{text}"
    );
    assert!(text.contains("choices (1: 1 schedule; "), "{text}");
    assert!(text.contains("): order:1/2\n"), "{text}");

    // The printed replay command's key says +ties and reproduces the run as printed.
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a replay line");
    assert!(line.ends_with(&format!("+ties:{vector}")), "{line}");
    let again = shell(line);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), text);

    // Without --ties the run makes no choice, so the vector is refused (exit 2).
    let plain = retrylab(&[
        "replay",
        &path,
        "--design",
        "no_dedup",
        "--choices",
        &vector,
    ]);
    assert_eq!(plain.status.code(), Some(2));
    assert!(
        stderr(&plain).contains("the run made 0 decisions but the vector has 1"),
        "{}",
        stderr(&plain)
    );
}

#[test]
fn trace_and_plain_replay_print_no_ties_flag() {
    let path = model_file(&tie_model(), "plain.json");
    let out = retrylab(&["trace", &path, "--design", "no_dedup"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("choices (0; "), "{text}");
    assert!(text.contains(":\n"), "{text}");
    assert!(!text.contains("+ties"), "{text}");
}

/// Random simulation that orders ties: `Purpose::Order` drawn from its own stream like any
/// other choice, or always 0 (first in, first out) when `fifo`.
struct RandomTies {
    random: RandomChooser,
    fifo: bool,
}

impl Chooser for RandomTies {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        if purpose == Purpose::Order && self.fifo {
            return 0;
        }
        self.random.choose(purpose, alternatives)
    }

    fn orders_ties(&self) -> bool {
        true
    }
}

proptest! {
    #![proptest_config(strategies::config(
        48,
        concat!(env!("CARGO_MANIFEST_DIR"), "/proptest-regressions/tie_order.txt"),
    ))]

    /// On generated models (crashes, losses, scripted faults, a stalled executor, any
    /// provider contract) and every design: ordering ties with alternative 0 everywhere is
    /// the first-in-first-out run, and a run with ties ordered at random replays exactly
    /// with `ordering_ties(true)`.
    #[test]
    fn tie_order_zero_is_fifo_and_a_tie_ordered_run_replays(
        mut world in strategies::world(),
        provider in strategies::any_provider(),
        pause in prop::option::of(strategies::executor_pause()),
        which in 0..design::all().len(),
        seed in any::<u64>(),
    ) {
        world["provider"] = provider;
        if let Some(mut p) = pause {
            let count = world["workers"]["count"].as_u64().unwrap();
            let w = p["pause"]["worker"].as_u64().unwrap();
            p["pause"]["worker"] = json!(w % count);
            world["faults"].as_array_mut().unwrap().push(p);
        }
        let model = Model::from_json(&world.to_string(), "generated")
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let d = design::all()[which];
        let fifo = run_traced(&model, d, &mut RandomChooser::new(seed));
        let zero = run_traced(&model, d, &mut RandomTies { random: RandomChooser::new(seed), fifo: true });
        prop_assert_eq!(&zero.timeline, &fifo.timeline);
        prop_assert_eq!(&zero.metrics, &fifo.metrics);
        prop_assert!(zero.choices.iter().all(|c| c.purpose != Purpose::Order || c.value == 0));
        let others: Vec<Choice> = zero.choices.iter().copied().filter(|c| c.purpose != Purpose::Order).collect();
        prop_assert_eq!(&others, &fifo.choices);

        let ordered = run_traced(&model, d, &mut RandomTies { random: RandomChooser::new(seed), fifo: false });
        let mut replay = ReplayChooser::new(ordered.vector()).ordering_ties(true);
        let replayed = run_traced(&model, d, &mut replay);
        prop_assert_eq!(replay.finish(), Ok(()));
        prop_assert_eq!(&replayed.timeline, &ordered.timeline);
        prop_assert_eq!(&replayed.choices, &ordered.choices);
    }
}

//! The known-bad corpus (`tests/common/corpus.rs`): each design of `tests/common/bad.rs`
//! carries one real bug, and it must be caught three ways on the model where it shows, each
//! within a stated number of runs, while the real design it was built from passes the same
//! property on the same model: the one change is the bug.
//! - `check`'s random sweep (seeds 0 to 999, the default) finds it, and the real design has
//!   no violation on those seeds;
//! - `explore --strategy dfs --max-faults 2` finds it within 1000 runs, with the fewest faults
//!   it needs (exact, per bug: every smaller budget searched completely, without a
//!   violation), and certifies the real design for that property within K = 2 (complete
//!   search, no violation);
//! - `explore --strategy swarm` finds it within 1000 seeds, and `--strategy random` at the
//!   sweep's first violating seed.
//!
//! Each counterexample found (the sweep's, the dfs one, the swarm one) replays and shows the
//! mechanism in its timeline. The test pins the verdicts and the fewest faults, not how many
//! runs each strategy took: those are figures of the strategies, and a change of the random
//! streams or of the search order moves them. The benchmark `cargo bench --bench known_bad`
//! (`benches/known_bad.rs`, on the same corpus) computes them: the second table below is
//! what it prints.
//!
//! | # | bad design | built from: the one change | model (`models/bad/`) | what a run must draw | property violated |
//! |---|---|---|---|---|---|
//! | 1 | `new_key_after_replan` | `same_key`: key minted per tool call | `lost_reply_rare` | one lost reply | `no_duplicate` |
//! | 2 | `bad_record_after_send` | `journal`: key written to the journal after the send | `crash_after_send_rare` | one worker crash after a send | `no_duplicate` |
//! | 3 | `broken_negative_read_at_once` | `journal_reconcile`: "not found" trusted at once | `lagging_search_rare` | one lost reply, and an index lag past about 6 s | `no_duplicate` |
//! | 4 | `broken_unfenced` | `journal_reconcile_lease`: no fencing | `stalled_holder_refused` | the call on worker 0, and a round trip above 1.4 s | `no_false_failure` |
//! | 5 | `bad_retention_forever` | `journal`: no assumed retention, old key resent | `retention_next_day` | one lost reply, and the agent back after 24 h | `no_duplicate` |
//! | 6 | `bad_in_progress_is_failure` | `same_key`: 409 in progress heard as failure | `in_progress_at_retry` | a first processing time above about 5.5 s | `no_false_failure` |
//! | 7 | `bad_tenant_blind_hash` | `payload_hash_key`: tenant left out of the hash | `tenants_same_request` | a repeat (of the other tenant's request) | `no_merged_repeat` |
//! | 8 | `bad_sweeper_without_lease` | `journal_reconcile_lease`: no lease | `sweeper_takes_live_op` | a first processing time above about 24 s | `no_duplicate` |
//! | 9 | `bad_accepted_is_done` | `journal`: 202 Accepted heard as done | `async_failure_rare` | one failure of the accepted work | `no_false_success` |
//! | 10 | `bad_memoised_receipt` | `same_key`: the receipt told to the agent memoised per endpoint (its journal keeps the right one) | `memoised_receipt` | nothing: two intents | `no_wrong_receipt` |
//! | 11 | `bad_memoised_receipt` | the same | `compensates_other_intent` | nothing: two intents, the second's last step refused | `no_wrong_compensation` |
//!
//! Bugs 10 and 11 pass every other property but `no_false_success`/`no_false_failure` on
//! 11 (judged by the resource each compensation removed): they are the cases the receipt
//! and compensation properties exist for, and they show on every seed, so the second table
//! leaves them out. Their exact figures are pinned by the `*_window_has_exact_figures` tests.
//! ("About": the exact edge depends on the latencies drawn.) Runs to the first violation, per
//! strategy (`cargo bench --bench known_bad`). Random: plain seeds from 0, as `run` and
//! `check` draw them (the sweep's first violating seed + 1); one draw of a geometric
//! variable, so the expected figure, 1000 over the violating seeds of 1000, is given beside
//! it. Swarm: seeds from 0, each with its own mix of fault probabilities and of timings drawn
//! only at the ends of their range. Dfs: runs of the whole search (every budget below K
//! included, every pass of a smaller deviation budget, runs cut at an explored state
//! included), and K, the faults of the counterexample:
//!
//! | # | model | violating seeds of 1000 | random (expected) | swarm | dfs (K) | expected / swarm | expected / dfs |
//! |---|---|---|---|---|---|---|---|
//! | 1 | `lost_reply_rare` | 8 | 40 (125) | 7 | 22 (1) | 17.9 | 5.7 |
//! | 2 | `crash_after_send_rare` | 9 | 74 (111) | 11 | 41 (1) | 10.1 | 2.7 |
//! | 3 | `lagging_search_rare` | 4 | 40 (250) | 141 | 162 (1) | 1.8 | 1.5 |
//! | 4 | `stalled_holder_refused` | 21 | 20 (48) | 11 | 8 (0) | 4.3 | 6.0 |
//! | 5 | `retention_next_day` | 11 | 7 (91) | 7 | 35 (1) | 13.0 | 2.6 |
//! | 6 | `in_progress_at_retry` | 11 | 27 (91) | 2 | 14 (0) | 45.5 | 6.5 |
//! | 7 | `tenants_same_request` | 11 | 37 (91) | 37 | 6 (0) | 2.5 | 15.2 |
//! | 8 | `sweeper_takes_live_op` | 6 | 45 (167) | 2 | 8 (0) | 83.3 | 20.8 |
//! | 9 | `async_failure_rare` | 9 | 274 (111) | 9 | 38 (1) | 12.3 | 2.9 |
//!
//! The ratios divide random's expected runs, not its one draw (a single geometric draw is
//! noisy: 7 runs on 5, 274 on 9). Every real design is certified for its property within
//! K = 2 on its model (no real design showed a violation the random sweep had missed). The
//! issue's target, at least 10 times fewer runs than plain random on the rarest bugs: the
//! rarest by rate are 3 (4 violating seeds of 1000), 8 (6) and 1 (8). Swarm meets it on 8
//! (83.3) and 1 (17.9), not on 3 (1.8); dfs on 8 (20.8). Over the whole corpus swarm is at
//! least 10 times faster than random on six bugs of nine (1, 2, 5, 6, 8, 9); dfs on two (7,
//! 8). Why:
//! - swarm raises the probability of fault choices and, per seed, draws some delays only at
//!   the ends of their range: the bugs that need a rare fault (1, 2, 5, 9) or an extreme
//!   delay (6, 8) come up within a few seeds. 3 needs both in one seed, a lost reply and an
//!   index lag near the top of its range, and swarm turns each on for part of its seeds only
//!   (141 seeds in this draw); 7 needs a workload draw (an agent-class choice), which swarm
//!   leaves alone.
//! - dfs must first search every run with fewer faults completely (that is what makes its
//!   counterexample the one with the fewest faults), and within a budget it grows a bound on
//!   deviations from each choice's first option pass by pass, repeating the runs of the
//!   smaller passes: a bug one extreme delay away is met in a few passes wherever the delay
//!   is in the run (8: 8 runs, where plain depth-first order took 589), but a bug that needs
//!   a fault *and* a delay pays for the whole fault-free space first (3: 233). What dfs
//!   brings is the fewest faults and a bound: the real design's certificate, which no number
//!   of random seeds gives.
//! - pruning matters: with an executor that cannot fingerprint what it holds, plain
//!   depth-first search reached the violation on 8 after 33 281 runs. The fixtures forward
//!   `Executor::fingerprint`, so every search here prunes (asserted).
//!
//! Bugs 6 and 8 both need the first processing time near the top of its range, so they meet
//! it on the same seeds. What each model does and why the bug shows there is in its
//! `description`; its `expect` block pins the real design (and any built-in design with the
//! same flaw), so `retrylab check models/bad/*.json` passes. Bug 7 needs two tenants asking
//! for the same thing: the workload knob `repeat_across_tenants`.

use crate::common::bad;
use crate::common::cli;
use crate::common::corpus;

use std::path::Path;

use corpus::{
    CORPUS, Caught, DFS_RUNS, Known, RANDOM_RUNS, SWARM_RUNS, bound, catch, known, load, sweep_for,
};
use retrylab::design::{self, Design};
use retrylab::explore::{Bound, Strategy, explore};
use retrylab::run::{Traced, run_traced};
use retrylab::sim::{ChoiceVector, RandomChooser, ReplayChooser};

fn assert_caught(k: &Known) {
    let c = catch(k);
    let model = &c.model;
    let bad = (k.bad)();
    let real = design::find(k.real).expect("a built-in design");
    let what = format!("{} on {}: {}", bad.name(), k.model, k.property);
    let Some(first) = c.first else {
        panic!("{what}: check's sweep of 1000 seeds finds no violation");
    };
    assert!(c.violating > 0 && first < RANDOM_RUNS, "{what}");
    assert_eq!(
        sweep_for(model, real, k.property),
        (0, None),
        "{} (the real design) on {}: {}",
        k.real,
        k.model,
        k.property
    );
    // The first violating run, traced, shows the mechanism.
    let t = run_traced(model, bad, &mut RandomChooser::new(first));
    assert_shows(k, "the sweep's first violation", &t);
    assert_explored(k, &c, bad, real, first);
}

/// `t` violates the bug's property and its timeline shows the mechanism.
fn assert_shows(k: &Known, found_by: &str, t: &Traced) {
    assert!(
        t.violated().contains(&k.property),
        "{} ({found_by}): {} holds\n{}",
        k.model,
        k.property,
        t.timeline
    );
    for line in k.shows {
        assert!(
            t.timeline.contains(line),
            "{} ({found_by}): no {line:?} in\n{}",
            k.model,
            t.timeline
        );
    }
}

/// `explore` catches the bug three ways, each within its bound: dfs with the fewest faults
/// (every smaller budget searched completely without a violation), swarm, and random at the
/// sweep's first violating seed; and dfs certifies the real design within K = 2.
fn assert_explored(k: &Known, c: &Caught, bad: &dyn Design, real: &dyn Design, first: u64) {
    let model = &c.model;
    let what = format!("{} on {}: {}", bad.name(), k.model, k.property);

    let d = &c.dfs;
    assert!(d.pruning, "{what}: dfs could not fingerprint the world");
    let [v] = &d.violations[..] else {
        panic!(
            "{what}: dfs found {:?} within {DFS_RUNS} runs",
            d.violations
        );
    };
    assert_eq!(
        (v.property, v.faults),
        (k.property, k.faults),
        "{what}: dfs (property, faults of the violation)"
    );
    assert!(
        v.after_runs <= DFS_RUNS,
        "{what}: dfs runs {}",
        v.after_runs
    );
    // Fewest faults: every smaller budget was searched completely, and the search stopped at
    // the budget of the violation.
    assert_eq!(
        d.levels.len(),
        k.faults as usize + 1,
        "{what}: {:?}",
        d.levels
    );
    let (last, smaller) = d.levels.split_last().expect("a level");
    assert!(
        smaller.iter().all(|l| l.complete) && last.found,
        "{what}: {:?}",
        d.levels
    );
    // The counterexample replays as found (ties ordered by choice) and shows the mechanism.
    let mut replay = ReplayChooser::new(ChoiceVector(v.values.clone())).ordering_ties(true);
    let t = run_traced(model, bad, &mut replay);
    assert_eq!(replay.finish(), Ok(()), "{what}: dfs counterexample");
    assert_shows(k, "dfs", &t);

    let properties = [k.property];
    let r = explore(
        model,
        real,
        &properties,
        Strategy::Dfs,
        bound(Bound::default().max_runs),
    );
    assert!(r.pruning, "{} on {}: no fingerprint", k.real, k.model);
    assert!(
        r.certified(),
        "{} (the real design) on {}: {}: not certified within K = 2: {:?} {:?}",
        k.real,
        k.model,
        k.property,
        r.violations,
        r.levels
    );

    let s = &c.swarm;
    let [v] = &s.violations[..] else {
        panic!(
            "{what}: swarm found {:?} in {SWARM_RUNS} seeds",
            s.violations
        );
    };
    assert!(
        v.after_runs <= SWARM_RUNS,
        "{what}: swarm runs {}",
        v.after_runs
    );
    assert_eq!(
        s.runs(),
        v.after_runs,
        "{what}: swarm stops at the violation"
    );
    let mut replay = ReplayChooser::new(ChoiceVector(v.values.clone()));
    let t = run_traced(model, bad, &mut replay);
    assert_eq!(replay.finish(), Ok(()), "{what}: swarm counterexample");
    assert_shows(k, "swarm", &t);

    let p = &c.random;
    let [v] = &p.violations[..] else {
        panic!(
            "{what}: random found {:?} in {RANDOM_RUNS} seeds",
            p.violations
        );
    };
    assert_eq!(
        v.after_runs,
        first + 1,
        "{what}: random draws the sweep's seeds, and meets its first violation"
    );
}

#[test]
fn key_per_call_is_caught() {
    assert_caught(known("lost_reply_rare"));
}

#[test]
fn journal_written_after_dispatch_is_caught() {
    assert_caught(known("crash_after_send_rare"));
}

#[test]
fn negative_read_trusted_at_once_is_caught() {
    assert_caught(known("lagging_search_rare"));
}

#[test]
fn lease_without_fencing_is_caught() {
    assert_caught(known("stalled_holder_refused"));
}

#[test]
fn retry_after_retention_without_read_back_is_caught() {
    assert_caught(known("retention_next_day"));
}

#[test]
fn in_progress_treated_as_failure_is_caught() {
    assert_caught(known("in_progress_at_retry"));
}

#[test]
fn payload_hash_ignoring_the_tenant_is_caught() {
    assert_caught(known("tenants_same_request"));
}

#[test]
fn sweeper_resending_without_a_lease_is_caught() {
    assert_caught(known("sweeper_takes_live_op"));
}

#[test]
fn success_reported_on_202_is_caught() {
    assert_caught(known("async_failure_rare"));
}

#[test]
fn a_receipt_memoised_per_endpoint_is_caught() {
    assert_caught(known("memoised_receipt"));
}

#[test]
fn a_compensation_on_another_intents_receipt_is_caught() {
    assert_caught(known("compensates_other_intent"));
}

/// The totals of `check`'s sweep (1000 seeds) of `design` on the corpus model `model`.
fn totals(model: &str, design: &dyn Design) -> retrylab::check::Metrics {
    let model = load(model);
    let properties = retrylab::check::Property::PLAIN;
    retrylab::explore::sweep(
        &retrylab::explore::Spec {
            model: &model,
            design,
            seeds: corpus::SEEDS,
            properties: &properties,
            keep_failures: 1,
        },
        &|_| {},
    )
    .metrics
}

/// Bug 10's window, exactly: on every seed the second intent is told the first one's ticket
/// while its own exists. Every outcome is a completion and every claim is true, so only the
/// receipt property sees it; the real design hands each intent its own.
#[test]
fn the_memoised_receipt_window_has_exact_figures() {
    let m = totals("memoised_receipt", &bad::MEMOISED_RECEIPT);
    assert_eq!(
        (m.intents, m.effects, m.completed, m.wrong_receipts),
        (2000, 2000, 2000, 1000)
    );
    assert_eq!(
        (
            m.false_success,
            m.false_resolutions,
            m.duplicate_effects,
            m.merged_repeats
        ),
        (0, 0, 0, 0)
    );
    let m = totals("memoised_receipt", design::find("same_key").unwrap());
    assert_eq!((m.completed, m.wrong_receipts), (2000, 0));
}

/// Bug 11's window, exactly: judged by the resource it removed, the second intent's
/// cancellation undoes the first intent's ticket (a false success: the user was told it
/// exists) and leaves its own behind (a false failure), on every seed. Judged by the intent
/// that sent it, as before, it was a clean failure of intent 1 and a completion of intent 0.
#[test]
fn the_wrong_compensation_window_has_exact_figures() {
    let m = totals("compensates_other_intent", &bad::MEMOISED_RECEIPT);
    assert_eq!(
        (m.intents, m.effects, m.compensations, m.wrong_compensations),
        (2000, 3000, 1000, 1000)
    );
    assert_eq!(
        (
            m.completed,
            m.false_success,
            m.false_failure,
            m.true_failures
        ),
        (0, 1000, 1000, 0)
    );
    assert_eq!((m.wrong_receipts, m.false_resolutions), (1000, 0));
    let m = totals(
        "compensates_other_intent",
        design::find("same_key").unwrap(),
    );
    assert_eq!(
        (
            m.completed,
            m.true_failures,
            m.false_success,
            m.false_failure
        ),
        (1000, 1000, 0, 0)
    );
    assert_eq!((m.wrong_compensations, m.wrong_receipts), (0, 0));
}

#[test]
fn a_debounce_window_of_the_designs_own_is_caught() {
    assert_caught(known("debounced_repeat"));
}

/// Bug 12 without its declaration: the same code, whose 2 s window no menu straddles, is
/// certified by dfs, and the certificate's scope says so: it names the values searched,
/// and 2000 is not among them. Declared, the window is in the scope and the search finds
/// the merge. A random sweep finds it either way (the second request lands inside the
/// window on about a tenth of the seeds).
#[test]
fn an_undeclared_design_constant_is_outside_the_certificate_it_gets() {
    let model = load("debounced_repeat");
    let properties = [retrylab::check::Property::NoMergedRepeat];
    let undeclared = explore(
        &model,
        &bad::DEBOUNCED_UNDECLARED,
        &properties,
        Strategy::Dfs,
        bound(Bound::default().max_runs),
    );
    assert!(undeclared.certified(), "{:?}", undeclared.violations);
    let scope = undeclared.scope.describe();
    assert!(!undeclared.scope.values().contains(&2000), "{scope}");
    assert!(scope.contains("5000 (executor.timeout_ms)"), "{scope}");
    let declared = explore(
        &model,
        &bad::DEBOUNCED,
        &properties,
        Strategy::Dfs,
        bound(Bound::default().max_runs),
    );
    assert!(!declared.certified());
    assert_eq!(declared.violations.len(), 1);
    assert!(
        declared
            .scope
            .describe()
            .contains("2000 (the design's debounce window)"),
        "{}",
        declared.scope.describe()
    );
    let (undeclared_seeds, _) = sweep_for(&model, &bad::DEBOUNCED_UNDECLARED, properties[0]);
    let (declared_seeds, _) = sweep_for(&model, &bad::DEBOUNCED, properties[0]);
    assert_eq!(undeclared_seeds, declared_seeds);
    assert!(undeclared_seeds > 50, "{undeclared_seeds}");
}

/// The world hands the chooser every delay a design sets a timer for, as it sets it: what
/// `dfs` adds to the menus of the choices after it (see the unit tests of
/// `src/explore/search/path.rs`), so that a menu depends on the run's prefix alone and every
/// vector found replays (asserted for every counterexample of the corpus above).
#[test]
fn the_world_hands_the_chooser_each_timer_delay_the_design_sets() {
    use retrylab::sim::{Alternatives, Chooser, Purpose};
    let mut learned = Vec::new();
    struct Learner<'a>(&'a mut Vec<u64>);
    impl Chooser for Learner<'_> {
        fn choose(&mut self, _: Purpose, _: Alternatives<'_>) -> u64 {
            0
        }
        fn learn_threshold(&mut self, ms: u64) {
            self.0.push(ms);
        }
    }
    // The world hands the chooser the delay of every timer a design sets, in the order set:
    // journal_reconcile reading a lagging index back.
    let model =
        retrylab::model::Model::load(&cli::root().join("models/windows/delayed_visibility.json"))
            .unwrap();
    let mut world =
        retrylab::world::World::new(&model, design::find("journal_reconcile").unwrap(), false);
    world.run(&mut Learner(&mut learned));
    // Its read-back waits: `executor.poll_ms` (1 s), doubling.
    assert_eq!(learned, [1000, 2000, 4000]);
}

/// Every model of `models/bad/` belongs to a case of the corpus, and `check` passes on all
/// of them: their expectations (the real designs hold, the built-in designs with the same
/// flaw violate) are met on the default 1000 seeds.
#[test]
fn the_corpus_models_pass_check() {
    let dir = cli::root().join("models/bad");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    for f in &files {
        let name = Path::new(f).file_stem().unwrap().to_str().unwrap();
        assert!(
            CORPUS.iter().any(|k| k.model == name),
            "{name} is not in the corpus"
        );
    }
    for k in CORPUS {
        let file = dir.join(format!("{}.json", k.model));
        assert!(
            files.contains(&file.to_string_lossy().into_owned()),
            "{} has no model",
            k.model
        );
    }
    let mut args = vec!["check"];
    args.extend(files.iter().map(String::as_str));
    let out = cli::retrylab(&args);
    let text = cli::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", cli::stderr(&out));
    assert!(!text.contains("FAIL"), "{text}");
}

/// The workload knob bug 7 needs: with `repeat_across_tenants`, a genuine repeat comes from
/// the tenant whose turn it is; without it, from the tenant it repeats.
#[test]
fn a_repeat_across_tenants_comes_from_the_next_tenant() {
    use retrylab::vocab::ids::{IntentId, Tenant};
    use retrylab::world::World;
    let k = known("tenants_same_request");
    let mut model = load(k.model);
    let bad = (k.bad)();
    let first = sweep_for(&model, bad, k.property)
        .1
        .expect("a violating seed");
    let payload_hash_key = design::find("payload_hash_key").unwrap();
    for (across, tenant) in [(true, Tenant(1)), (false, Tenant(0))] {
        model.workload.repeat_across_tenants = across;
        let mut world = World::new(&model, payload_hash_key, false);
        world.run(&mut RandomChooser::new(first));
        let second = world.workload().intents()[1];
        assert_eq!(
            (second.repeat_of, second.tenant),
            (Some(IntentId(0)), tenant)
        );
    }
}

//! The timing equivalence of states (`Reductions::timing`, `src/sim/moments.rs`),
//! tested where it could be wrong: two states that the abstract fingerprint calls one (and
//! the exact one tells apart, since they differ in when things happened) must have the same
//! futures.
//!
//! For every bundled model (the top level, the windows and the guarantee models, and a
//! fixture where a failed operation is reopened) and each of its built-in designs, random runs are observed between events: the first world seen
//! with each abstract fingerprint is saved, and a later world with the same abstract
//! fingerprint but another exact one makes a pair. Each pair is continued from both worlds
//! with the same random choices: the two continuations must meet the same choice points
//! and take the same values, end the same way, and give the same verdict on every plain
//! property. A moment left out that still mattered (a visibility moment still ahead, a
//! retention floor still to pass, a settled operation's time that a design reads) shows up
//! as two continuations that part.
//!
//! Where the soundness comparison of `tests/reductions.rs` looks at verdicts of whole
//! searches, which a wrong merge rarely changes (a violation has many paths), this looks at
//! each merge the abstraction makes on the way, and the futures it claims equal.

use crate::common::models;

use std::collections::HashMap;
use std::path::Path;

use retrylab::check::{Metrics, Property};
use retrylab::design;
use retrylab::model::Model;
use retrylab::sim::{Alternatives, Chooser, Class, Purpose, RandomChooser, Recorder};
use retrylab::world::Snapshot;
use retrylab::world::World;

/// Random runs observed per model and design.
const SEEDS: u64 = 400;
/// Pairs continued per model and design, at most.
const PAIRS: usize = 200;
/// Continuations per pair, each with its own seed.
const CONTINUATIONS: u64 = 3;
/// Worlds saved per model and design, at most (the first with each abstract fingerprint).
const SAVED: usize = 4_000;

/// Every bundled model, with the guarantee models.
fn models() -> Vec<(String, Model)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = models::bundled_paths();
    let mut guarantees: Vec<_> = std::fs::read_dir(root.join("models/guarantees"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    guarantees.sort();
    paths.extend(guarantees);
    // Where a settled operation is reopened (a failed one retried under its key): found
    // by review, a hole before `Operation`'s first-sent moment was hashed as the
    // provider's.
    paths.push(root.join("tests/fixtures/timing_reopened_failure.json"));
    paths
        .into_iter()
        .map(|p| {
            let model = Model::load(&p).unwrap_or_else(|e| panic!("{e}"));
            let name = p.strip_prefix(root).unwrap().display().to_string();
            (name, model)
        })
        .collect()
}

/// Random choices, with every delay at one end of its range (as the search's menus offer
/// them, and the swarm's "ends only" mode draws them): runs then meet at the same moments
/// often enough for merges to happen, where uniform delays almost never line up.
struct Ends(RandomChooser);

impl Chooser for Ends {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        match alternatives {
            Alternatives::Span { len, .. } if purpose.class() == Class::Timing => {
                if self.0.choose(purpose, Alternatives::Uniform(2)) == 0 {
                    0
                } else {
                    len - 1
                }
            }
            _ => self.0.choose(purpose, alternatives),
        }
    }
}

/// What a continuation from a saved world did: its choices (purpose, value, of), how it
/// ended, and the verdict on each plain property.
#[derive(Debug, PartialEq, Eq)]
struct Future {
    choices: Vec<(Purpose, u64, u64)>,
    end: retrylab::vocab::record::End,
    holds: Vec<bool>,
}

fn continue_from(world: &mut World<'_>, from: &Snapshot, seed: u64) -> Future {
    let mut random = Ends(RandomChooser::new(seed));
    let mut recorder = Recorder::new(&mut random);
    world.run_resumable(Some(from), &mut recorder, &mut |_| true, &mut |_| {});
    let choices = recorder
        .choices
        .iter()
        .map(|c| (c.purpose, c.value, c.of))
        .collect();
    let summary = Metrics::default().add_outcome(&world.outcome());
    Future {
        choices,
        end: world.end().0,
        holds: Property::PLAIN.iter().map(|p| p.holds(&summary)).collect(),
    }
}

/// The worlds of `design` on `model` saved first with each abstract fingerprint, and the
/// later worlds that the abstract fingerprint merges with one of them and the exact one
/// tells apart (with the index of the first), at most [`PAIRS`].
fn merged_pairs(
    model: &Model,
    design: &dyn design::Design,
) -> (Vec<Snapshot>, Vec<(usize, Snapshot)>) {
    let mut world = World::new(model, design, false);
    // Abstract fingerprint -> (exact fingerprint, index of the saved world).
    let mut first: HashMap<u64, (u64, usize)> = HashMap::new();
    let mut saved: Vec<Snapshot> = Vec::new();
    let mut pairs: Vec<(usize, Snapshot)> = Vec::new();
    for seed in 0..SEEDS {
        let mut ch = Ends(model.chooser(seed));
        world.run_resumable(None, &mut ch, &mut |_| true, &mut |w| {
            if pairs.len() >= PAIRS {
                return;
            }
            let (Some(exact), Some(moments)) =
                (w.fingerprint(), w.fingerprint_with(Some(w.moments(false))))
            else {
                return;
            };
            match first.get(&moments) {
                Some(&(e, i)) if e != exact => {
                    if let Some(s) = w.save() {
                        pairs.push((i, s));
                    }
                }
                Some(_) => {}
                None if saved.len() < SAVED => {
                    if let Some(s) = w.save() {
                        first.insert(moments, (exact, saved.len()));
                        saved.push(s);
                    }
                }
                None => {}
            }
        });
    }
    (saved, pairs)
}

#[test]
fn worlds_the_timing_equivalence_merges_have_the_same_futures() {
    let mut merged = 0usize;
    let mut cases = 0usize;
    let mut parted = Vec::new();
    for (path, model) in models() {
        for name in &model.designs {
            let Some(design) = design::find(name) else {
                continue;
            };
            cases += 1;
            let (saved, pairs) = merged_pairs(&model, design);
            merged += pairs.len();
            let mut world = World::new(&model, design, false);
            for (n, (i, b)) in pairs.iter().enumerate() {
                for seed in 0..CONTINUATIONS {
                    let fa = continue_from(&mut world, &saved[*i], seed);
                    let fb = continue_from(&mut world, b, seed);
                    if fa != fb {
                        parted.push(format!(
                            "{path} {name}: pair {n}, continuation seed {seed}:\n  first:  {fa:?}\n  second: {fb:?}"
                        ));
                    }
                }
            }
        }
    }
    eprintln!("{cases} model x design cases, {merged} merged pairs continued");
    assert!(
        parted.is_empty(),
        "{} continuations of merged worlds parted:\n{}",
        parted.len(),
        parted.join("\n")
    );
    // The test must test something: merges happen on the bundled models.
    assert!(merged > 100, "only {merged} merged pairs");
}

/// The moments and both fingerprints at every event of a replayed run, and the
/// properties it violates.
fn replayed(
    model: &Model,
    design: &dyn design::Design,
    choices: &[u64],
) -> (Vec<(u64, u64, u64)>, Vec<Property>) {
    use retrylab::sim::{ChoiceVector, ReplayChooser};
    let mut w = World::new(model, design, false);
    let mut ch = ReplayChooser::new(ChoiceVector(choices.to_vec()));
    let mut seen = Vec::new();
    w.run_observed(&mut ch, &mut |w| {
        let exact = w.fingerprint().expect("a built-in design");
        let moments = w.fingerprint_with(Some(w.moments(false))).unwrap();
        seen.push((w.now(), exact, moments));
        true
    });
    let summary = Metrics::default().add_outcome(&w.outcome());
    let violated = Property::PLAIN
        .into_iter()
        .filter(|p| !p.holds(&summary))
        .collect();
    (seen, violated)
}

/// Found by review: a failed operation that a retry of the same call reopens sends again
/// under its key, with the first-sent moment the operation kept, which the provider
/// (retention from the client's first send) compares with the clock. Two runs whose first
/// sends are 100 ms apart reach one state at 1 220 ms but for that moment, and part: one
/// is refused as outside the window, the other is processed and its claim is false. The
/// moment must keep the two states apart, though the operation was settled when they met.
#[test]
fn a_reopened_failure_keeps_the_first_sent_moment_the_provider_reads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let model = Model::load(&root.join("tests/fixtures/timing_reopened_failure.json")).unwrap();
    let design = design::find("new_key_after_replan").unwrap();
    let (a, violated_a) = replayed(&model, design, &[0, 0, 100, 100, 100, 0]);
    let (b, violated_b) = replayed(&model, design, &[100, 0, 0, 100, 100, 0]);
    assert_eq!(violated_a, []);
    assert_eq!(violated_b, [Property::NoFalseResolution]);
    let at = |run: &[(u64, u64, u64)]| -> Vec<(u64, u64)> {
        run.iter()
            .filter(|(now, ..)| *now == 1_220)
            .map(|&(_, e, m)| (e, m))
            .collect()
    };
    let (a, b) = (at(&a), at(&b));
    assert!(!a.is_empty() && !b.is_empty(), "both runs pass 1 220 ms");
    for (ea, ma) in &a {
        for (eb, mb) in &b {
            assert!(
                ma != mb || ea == eb,
                "two states with different futures share an abstract fingerprint"
            );
        }
    }
}

//! Shrinking: the smallest choice vector that still violates a property.
//!
//! A failing seed is first recorded as its choice vector. Candidates are then made by
//! deleting runs of entries and by lowering single entries towards the default (0: no fault,
//! the shortest delay), in a fixed order, and kept when the run they replay still violates
//! the property. Each candidate is replayed leniently (an entry that is no longer a possible
//! alternative takes the default) and what the run really followed is recorded; that
//! recorded vector, without trailing defaults, replaces the current one only when it is
//! smaller: shorter, or as long and lexicographically lower. So shrinking always ends, and
//! its result replays exactly, with the strict replay `retrylab replay` uses.

use crate::check::{Metrics, Property};
use crate::design::Design;
use crate::model::Model;
use crate::sim::{ChoiceVector, Chooser, Recorder, ReplayChooser};
use crate::world::World;

/// Most candidate runs one shrink may take: it stops with what it has by then.
pub const MAX_RUNS: u64 = 200_000;

/// The result of shrinking one failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shrunk {
    /// The failing seed's own vector.
    pub original: ChoiceVector,
    /// The smallest violating vector found.
    pub vector: ChoiceVector,
    /// Candidate runs tried.
    pub runs: u64,
}

/// Runs candidates of one model and design, reusing one world.
struct Tester<'a> {
    world: World<'a>,
    property: Property,
    runs: u64,
    /// Whether events due at the same instant are ordered by choice (vectors found by
    /// exhaustive search are).
    ties: bool,
}

impl<'a> Tester<'a> {
    /// Runs with `chooser`; the vector it followed (trailing defaults dropped), if the run
    /// violates the property.
    fn run(&mut self, chooser: &mut dyn Chooser) -> Option<Vec<u64>> {
        self.runs += 1;
        let mut recorder = Recorder::new(chooser);
        self.world.run(&mut recorder);
        let violated = !self
            .property
            .holds(&Metrics::default().add_outcome(&self.world.outcome()));
        violated.then(|| canonical(recorder.choices.iter().map(|c| c.value).collect()))
    }

    fn try_values(&mut self, values: &[u64]) -> Option<Vec<u64>> {
        let ties = self.ties;
        self.run(&mut ReplayChooser::lenient(values).ordering_ties(ties))
    }
}

/// Drops trailing zeros: a replay that runs out takes alternative 0 where it is possible,
/// and a recorded 0 means it was.
fn canonical(mut v: Vec<u64>) -> Vec<u64> {
    while v.last() == Some(&0) {
        v.pop();
    }
    v
}

/// Shorter first, then lexicographically lower.
fn smaller(a: &[u64], b: &[u64]) -> bool {
    (a.len(), a) < (b.len(), b)
}

/// Shrinks the run of `seed`, which must violate `property`; `None` if it does not.
pub fn shrink_seed(
    model: &Model,
    design: &dyn Design,
    property: Property,
    seed: u64,
) -> Option<Shrunk> {
    let mut t = Tester {
        world: World::new(model, design, false),
        property,
        runs: 0,
        ties: false,
    };
    let v = t.run(&mut model.chooser(seed))?;
    Some(shrink(&mut t, v))
}

/// Shrinks the run that `values` replays (leniently; with events due at the same instant
/// ordered by choice when `ties`), which must violate `property`; `None` if it does not.
pub fn shrink_values(
    model: &Model,
    design: &dyn Design,
    property: Property,
    values: &[u64],
    ties: bool,
) -> Option<Shrunk> {
    let mut t = Tester {
        world: World::new(model, design, false),
        property,
        runs: 0,
        ties,
    };
    let v = t.try_values(values)?;
    Some(shrink(&mut t, v))
}

fn shrink(t: &mut Tester<'_>, mut v: Vec<u64>) -> Shrunk {
    let original = ChoiceVector(v.clone());
    loop {
        let before = v.clone();
        delete_runs(t, &mut v);
        lower_entries(t, &mut v);
        if v == before || t.runs >= MAX_RUNS {
            break;
        }
    }
    Shrunk {
        original,
        vector: ChoiceVector(v),
        runs: t.runs,
    }
}

/// Tries deleting runs of 8, 4, 2 and 1 entries at every position.
fn delete_runs(t: &mut Tester<'_>, v: &mut Vec<u64>) {
    for size in [8usize, 4, 2, 1] {
        let mut i = 0;
        while i < v.len() && t.runs < MAX_RUNS {
            let end = (i + size).min(v.len());
            let mut candidate = v[..i].to_vec();
            candidate.extend_from_slice(&v[end..]);
            match t.try_values(&candidate) {
                Some(c) if smaller(&c, v) => *v = c,
                _ => i += 1,
            }
        }
    }
}

/// Lowers each entry to the smallest value that still fails: 0 first, then a binary search
/// between the largest value known to pass and the current one.
fn lower_entries(t: &mut Tester<'_>, v: &mut Vec<u64>) {
    let mut i = 0;
    while i < v.len() && t.runs < MAX_RUNS {
        if v[i] == 0 {
            i += 1;
            continue;
        }
        let mut candidate = v.clone();
        candidate[i] = 0;
        if let Some(c) = t.try_values(&candidate).filter(|c| smaller(c, v)) {
            *v = c;
            continue;
        }
        let (mut passes, mut fails) = (0, v[i]);
        while fails - passes > 1 && t.runs < MAX_RUNS {
            let mid = passes + (fails - passes) / 2;
            candidate[i] = mid;
            match t.try_values(&candidate).filter(|c| smaller(c, v)) {
                Some(c) => {
                    fails = mid;
                    *v = c;
                    candidate = v.clone();
                }
                None => passes = mid,
            }
            if i >= v.len() {
                break;
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_drops_trailing_defaults_only() {
        assert_eq!(canonical(vec![0, 3, 0, 0]), vec![0, 3]);
        assert_eq!(canonical(vec![0, 0]), Vec::<u64>::new());
    }

    #[test]
    fn shorter_is_smaller_then_lexicographic() {
        assert!(smaller(&[9], &[0, 0]));
        assert!(smaller(&[1, 2], &[1, 3]));
        assert!(!smaller(&[1, 3], &[1, 3]));
    }
}

//! The merge of a sharded `dfs` search ([`super::explore_shard`]): the N shards' searches,
//! each a share of one tree, added up to what the one-machine search reports: its levels,
//! its violation, whether it certifies. The command line only renders what this decides.

use super::{Bound, Exploration, Level, Strategy, TimingScope};

/// The shards' searches merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedShards {
    /// The one-machine search: its levels (figures summed over the shards, depth and
    /// deviations the most of any), the winning shard's violations, the events budget's
    /// cut runs, the thresholds any shard learned (`scope.learned`; the named thresholds
    /// and caveats are every shard's alike, and left empty).
    pub exploration: Exploration,
    /// The shard (from 0) whose violations are the one-machine search's.
    pub winner: Option<usize>,
    /// The shard (from 0) whose run the events budget cut in the last level shown.
    pub budget_shard: Option<usize>,
    /// Runs cut at a split point, summed over the shards and levels shown.
    pub split_cut: u64,
    /// The most states one shard's visited set held at once: the visited set is one
    /// machine's.
    pub peak_states: u64,
}

/// Why shards' searches are not the shares of one search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MergeError {
    /// Shard `shard` (from 0) searched `levels` fault budgets: none, or more than the
    /// bound's `max_faults + 1`.
    Levels { shard: usize, levels: usize },
    /// The merged levels certify where the shards do not, or the reverse.
    DoNotAddUp,
}

/// Checks that every shard searched at least one fault budget and at most the bound's:
/// `levels`, each shard's number of levels in shard order.
pub fn check_levels(
    bound: Bound,
    levels: impl IntoIterator<Item = usize>,
) -> Result<(), MergeError> {
    for (shard, levels) in levels.into_iter().enumerate() {
        if levels == 0 || levels > bound.max_faults as usize + 1 {
            return Err(MergeError::Levels { shard, levels });
        }
    }
    Ok(())
}

/// Merges the searches of shards `0..N` (`shards`, in shard order) of one `dfs` search of
/// `bound`.
///
/// The violation shown is the one the one-machine search finds: the shard's whose run has
/// the fewest faults, then the smallest deviation budget, then comes first in depth-first
/// order (the choice values compare as the paths do, every menu being in increasing
/// order). A one-machine search stops at the first violating run of the first pass of the
/// first fault budget that has one; every leaf of that pass is in one shard, and a shard
/// finds the first violating leaf of its own share of it (a state met past the split
/// point that cuts a run there stands for continuations in the same share). Ties cannot
/// happen (every leaf has one owner); they would go to the lower shard.
///
/// A level is complete when every shard's share of it is (or the shard's search saturated
/// in an earlier level), saturated when every shard's is; the certificate needs every
/// shard certified: every level up to K complete (or saturated), no run cut by the events
/// budget, no violation.
pub fn merge_shards(bound: Bound, shards: &[Exploration]) -> Result<MergedShards, MergeError> {
    check_levels(bound, shards.iter().map(|s| s.levels.len()))?;
    let winner = winner(shards);
    let end = last_level(shards, winner);
    let levels: Vec<Level> = (0..=end)
        .map(|k| merge_level(shards, k, winner.is_some() && k == end))
        .collect();
    // The events budget cut a run in a shard that stopped in the last level shown.
    let budget_shard = shards
        .iter()
        .position(|s| s.budget_runs > 0 && last(s).max_faults == end);
    let mut learned: Vec<u64> = shards
        .iter()
        .flat_map(|s| s.scope.learned.clone())
        .collect();
    learned.sort_unstable();
    learned.dedup();
    let exploration = Exploration {
        strategy: Strategy::Dfs,
        bound,
        pruning: shards.iter().all(|s| s.pruning),
        visited_full: shards.iter().any(|s| s.visited_full),
        violations: winner.map_or_else(Vec::new, |w| shards[w].violations.clone()),
        budget_runs: budget_shard.map_or(0, |b| shards[b].budget_runs),
        scope: TimingScope {
            learned,
            ..TimingScope::default()
        },
        levels,
    };
    // What the merged levels say must be what the shards say.
    if winner.is_none() && exploration.certified() != shards.iter().all(Exploration::certified) {
        return Err(MergeError::DoNotAddUp);
    }
    Ok(MergedShards {
        split_cut: exploration.levels.iter().map(|l| l.split_cut).sum(),
        peak_states: shards
            .iter()
            .flat_map(|s| s.levels.iter().map(|l| l.distinct_states))
            .max()
            .unwrap_or(0),
        exploration,
        winner,
        budget_shard,
    })
}

/// The level a shard's search stopped in (every shard has one: [`check_levels`]).
fn last(s: &Exploration) -> &Level {
    &s.levels[s.levels.len() - 1]
}

/// The shard stopped short of covering its share: a limit, or the events budget.
fn unfinished(s: &Exploration) -> bool {
    s.violations.is_empty() && (s.budget_runs > 0 || !last(s).complete)
}

/// The winning shard: fewest faults, smallest deviation budget, first in depth-first
/// order, then the lowest shard.
fn winner(shards: &[Exploration]) -> Option<usize> {
    shards
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.violations.is_empty())
        .min_by(|(i, a), (j, b)| {
            let key = |s: &Exploration| {
                let l = last(s);
                (
                    l.max_faults,
                    l.deviation_budget,
                    s.violations[0].values.clone(),
                )
            };
            key(a).cmp(&key(b)).then(i.cmp(j))
        })
        .map(|(i, _)| i)
}

/// The fault budget of the last level the one-machine search reaches: the winner's, else
/// the lowest any unfinished shard stopped in, else the highest any shard searched.
fn last_level(shards: &[Exploration], winner: Option<usize>) -> u32 {
    if let Some(w) = winner {
        return last(&shards[w]).max_faults;
    }
    match shards
        .iter()
        .filter(|s| unfinished(s))
        .min_by_key(|s| last(s).max_faults)
    {
        Some(s) => last(s).max_faults,
        None => shards.iter().map(|s| last(s).max_faults).max().unwrap_or(0),
    }
}

/// Level `k` of the merged search; `found`: the winning violation is in it.
fn merge_level(shards: &[Exploration], k: u32, found: bool) -> Level {
    let mut level = Level {
        max_faults: k,
        complete: true,
        saturated: true,
        found,
        ..Level::default()
    };
    for s in shards {
        let Some(l) = s.levels.get(k as usize) else {
            // A shard that stopped before level k either covered every larger budget
            // (its last level saturated) or did not cover its share.
            let covered = s.violations.is_empty() && !unfinished(s) && last(s).saturated;
            level.complete &= covered;
            level.saturated &= covered;
            continue;
        };
        level.runs += l.runs;
        level.pruned += l.pruned;
        level.distinct_states += l.distinct_states;
        level.states_visited += l.states_visited;
        level.split_cut += l.split_cut;
        level.max_depth = level.max_depth.max(l.max_depth);
        level.max_deviations = level.max_deviations.max(l.max_deviations);
        level.deviation_budget = level.deviation_budget.max(l.deviation_budget);
        level.complete &= l.complete;
        level.saturated &= l.saturated;
    }
    level
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Property;
    use crate::explore::{Reductions, Violation};

    fn bound(max_faults: u32) -> Bound {
        Bound {
            max_faults,
            max_runs: 1_000,
            max_states: 100,
            reductions: Reductions::ALL,
        }
    }

    /// Level `k` of a shard: `runs` runs, half as many distinct states, 1 cut at a split.
    fn level(k: u32, runs: u64, complete: bool, saturated: bool) -> Level {
        Level {
            max_faults: k,
            runs,
            pruned: 1,
            distinct_states: runs / 2,
            states_visited: runs / 2,
            max_depth: 3 + k as usize,
            max_deviations: 1,
            deviation_budget: u32::MAX,
            complete,
            saturated,
            split_cut: 1,
            found: false,
        }
    }

    fn shard(max_faults: u32, levels: Vec<Level>) -> Exploration {
        Exploration {
            strategy: Strategy::Dfs,
            bound: bound(max_faults),
            levels,
            pruning: true,
            visited_full: false,
            violations: Vec::new(),
            budget_runs: 0,
            scope: TimingScope::default(),
        }
    }

    /// A shard whose last level, of deviation budget `d`, found a violation of run `values`.
    fn found(mut levels: Vec<Level>, d: u32, values: Vec<u64>) -> Exploration {
        let last = levels.last_mut().unwrap();
        (last.found, last.complete, last.deviation_budget) = (true, false, d);
        let k = last.max_faults;
        Exploration {
            violations: vec![Violation {
                property: Property::NoDuplicate,
                faults: k,
                values,
                after_runs: 4,
            }],
            ..shard(2, levels)
        }
    }

    #[test]
    fn certified_shares_add_up_to_the_certificate() {
        let mut a = shard(1, vec![level(0, 4, true, false), level(1, 10, true, false)]);
        let b = shard(1, vec![level(0, 6, true, false), level(1, 30, true, false)]);
        a.scope.learned = vec![2_000, 7];
        let m = merge_shards(bound(1), &[a, b]).unwrap();
        assert_eq!(m.winner, None);
        assert_eq!(m.budget_shard, None);
        assert_eq!((m.split_cut, m.peak_states), (4, 15));
        assert_eq!(m.exploration.scope.learned, [7, 2_000]);
        assert!(m.exploration.certified());
        assert_eq!(
            m.exploration.levels,
            [
                Level {
                    runs: 10,
                    pruned: 2,
                    distinct_states: 5,
                    states_visited: 5,
                    split_cut: 2,
                    ..level(0, 0, true, false)
                },
                Level {
                    runs: 40,
                    pruned: 2,
                    distinct_states: 20,
                    states_visited: 20,
                    split_cut: 2,
                    ..level(1, 0, true, false)
                }
            ]
        );
    }

    #[test]
    fn the_violation_with_the_fewest_faults_wins_and_ends_the_levels() {
        let a = found(
            vec![level(0, 4, true, false), level(1, 9, true, false)],
            0,
            vec![0],
        );
        let b = found(vec![level(0, 6, true, false)], 4, vec![1, 1]);
        let m = merge_shards(bound(2), &[a, b.clone()]).unwrap();
        assert_eq!(m.winner, Some(1));
        assert_eq!(m.exploration.violations, b.violations);
        assert_eq!(m.exploration.levels.len(), 1);
        let l = &m.exploration.levels[0];
        // The deviation budget is the most of any shard's: a's unbounded pass of level 0.
        assert_eq!(
            (l.runs, l.found, l.complete, l.deviation_budget),
            (10, true, false, u32::MAX)
        );
        assert!(!m.exploration.certified());
    }

    #[test]
    fn then_the_smaller_deviation_budget_then_the_first_path_then_the_lower_shard() {
        let at = |d, values| found(vec![level(0, 4, true, false)], d, values);
        let w = |shards: &[Exploration]| merge_shards(bound(2), shards).unwrap().winner;
        assert_eq!(w(&[at(2, vec![0]), at(1, vec![5])]), Some(1));
        assert_eq!(w(&[at(1, vec![0, 2]), at(1, vec![0, 1, 5])]), Some(1));
        assert_eq!(w(&[at(1, vec![0, 1]), at(1, vec![0, 1])]), Some(0));
    }

    #[test]
    fn a_shard_stopped_at_its_run_limit_ends_the_merge_uncertified() {
        let a = shard(2, vec![level(0, 4, true, false), level(1, 8, false, false)]);
        let b = shard(2, vec![level(0, 4, true, true)]);
        let c = shard(2, (0..3).map(|k| level(k, 4, true, false)).collect());
        let m = merge_shards(bound(2), &[a, b, c]).unwrap();
        let shape: Vec<(bool, bool)> = m
            .exploration
            .levels
            .iter()
            .map(|l| (l.complete, l.saturated))
            .collect();
        // Level 1: a's share incomplete; b saturated in level 0, so it covers level 1.
        assert_eq!(shape, [(true, false), (false, false)]);
        assert!(!m.exploration.certified());
    }

    #[test]
    fn a_shard_saturated_early_covers_every_larger_budget() {
        let a = shard(2, vec![level(0, 4, true, true)]);
        let b = shard(2, vec![level(0, 4, true, false), level(1, 8, true, true)]);
        let m = merge_shards(bound(2), &[a, b]).unwrap();
        let shape: Vec<(bool, bool)> = m
            .exploration
            .levels
            .iter()
            .map(|l| (l.complete, l.saturated))
            .collect();
        assert_eq!(shape, [(true, false), (true, true)]);
        assert!(m.exploration.certified());
    }

    #[test]
    fn a_run_the_events_budget_cut_is_named_by_its_shard() {
        let a = shard(1, vec![level(0, 4, true, false), level(1, 8, true, false)]);
        let b = Exploration {
            budget_runs: 1,
            ..shard(1, vec![level(0, 3, false, false)])
        };
        let m = merge_shards(bound(1), &[a, b]).unwrap();
        assert_eq!(m.budget_shard, Some(1));
        assert_eq!(m.exploration.budget_runs, 1);
        assert_eq!(m.exploration.levels.len(), 1);
        assert!(!m.exploration.certified());
    }

    #[test]
    fn shares_of_another_search_are_refused() {
        let two = || shard(1, vec![level(0, 4, true, false), level(1, 8, true, false)]);
        assert_eq!(
            merge_shards(bound(0), &[two(), two()]),
            Err(MergeError::Levels {
                shard: 0,
                levels: 2
            })
        );
        assert_eq!(
            merge_shards(bound(1), &[two(), shard(1, Vec::new())]),
            Err(MergeError::Levels {
                shard: 1,
                levels: 0
            })
        );
        // Shards that certified a bound of 0 faults do not certify 1 fault merged.
        let zero = || shard(0, vec![level(0, 4, true, false)]);
        assert_eq!(
            merge_shards(bound(1), &[zero(), zero()]),
            Err(MergeError::DoNotAddUp)
        );
    }
}

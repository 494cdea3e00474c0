//! The sampling strategies: plain random seeds, as `run` draws them, and swarm testing,
//! where each seed first decides its own mix of faults and extreme delays. Neither
//! certifies anything; a violation's choice vector replays like any other.

use super::{
    Bound, Exploration, Level, PROGRESS_EVERY, Strategy, TimingScope, Violation, violated,
};
use crate::check::{Metrics, Property};
use crate::design::Design;
use crate::model::Model;
use crate::sim::{Alternatives, Chooser, Class, Purpose, RandomChooser, Recorder};
use crate::vocab::record::End;
use crate::world::World;

/// Seeds of the swarm's configuration stream are the run's seed mixed with this, so that the
/// configuration and the run's own draws are independent.
const SWARM_SALT: u64 = 0x5357_4152_4d5f_6366; // "SWARM_cf"

/// The swarm's mix for one seed: per fault purpose, off or the model's probability times 1,
/// 4 or 16 (at most one half); per timing purpose, uniform over its range or only its two
/// ends.
struct SwarmChooser {
    random: RandomChooser,
    /// Per purpose (by index): for a fault, 0 = off, else the multiplier; for a timing, 0 =
    /// uniform, 1 = the ends only.
    scale: [u64; Purpose::COUNT],
}

impl SwarmChooser {
    fn new(model: &Model, seed: u64) -> Self {
        let mut config = model.chooser(seed ^ SWARM_SALT);
        let mut scale = [0; Purpose::COUNT];
        for p in Purpose::ALL {
            match p.class() {
                Class::Fault => {
                    scale[p.index()] =
                        [0, 1, 4, 16][config.choose(p, Alternatives::Uniform(4)) as usize];
                }
                Class::Timing => scale[p.index()] = config.choose(p, Alternatives::Uniform(2)),
                _ => {}
            }
        }
        SwarmChooser {
            random: model.chooser(seed),
            scale,
        }
    }
}

impl Chooser for SwarmChooser {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        let scale = self.scale[purpose.index()];
        match (purpose.class(), alternatives) {
            // A yes/no fault with the model's probability yes/(no+yes): off, or more likely.
            (Class::Fault, Alternatives::Weighted(&[no, yes])) => {
                if scale == 0 {
                    return 0;
                }
                let den = u64::from(no) + u64::from(yes);
                let num = u64::from(yes) * scale;
                let weights = if 2 * num >= den {
                    [1, 1]
                } else {
                    // num < den / 2 <= u32::MAX: both fit.
                    [(den - num) as u32, num as u32]
                };
                self.random
                    .choose(purpose, Alternatives::Weighted(&weights))
            }
            // A delay at one end of its range, either end alike.
            (Class::Timing, Alternatives::Span { len, .. }) if scale == 1 => {
                if self.random.choose(purpose, Alternatives::Uniform(2)) == 0 {
                    0
                } else {
                    len - 1
                }
            }
            _ => self.random.choose(purpose, alternatives),
        }
    }
}

/// Samples seeds 0, 1, ... with `strategy` (swarm or random) until a violation, the
/// events budget, or `bound.max_runs` seeds.
pub(super) fn sample(
    model: &Model,
    design: &dyn Design,
    properties: &[Property],
    strategy: Strategy,
    bound: Bound,
    progress: &dyn Fn(u64),
) -> Exploration {
    let mut world = World::new(model, design, false);
    let mut level = Level::default();
    let mut violations = Vec::new();
    let mut budget_runs = 0;
    for seed in 0..bound.max_runs {
        level.runs += 1;
        if level.runs % PROGRESS_EVERY == 0 {
            progress(PROGRESS_EVERY);
        }
        let mut random;
        let mut swarm;
        let inner: &mut dyn Chooser = match strategy {
            Strategy::Swarm => {
                swarm = SwarmChooser::new(model, seed);
                &mut swarm
            }
            _ => {
                random = model.chooser(seed);
                &mut random
            }
        };
        let mut recorder = Recorder::new(inner);
        world.run(&mut recorder);
        level.max_depth = level.max_depth.max(recorder.choices.len());
        if world.end().0 == End::Budget {
            budget_runs += 1;
            break;
        }
        let summary = Metrics::default().add_outcome(&world.outcome());
        let mut any = false;
        for p in violated(properties, &summary) {
            any = true;
            let faults = recorder
                .choices
                .iter()
                .filter(|c| c.purpose.class() == Class::Fault && c.value != 0)
                .count() as u32;
            violations.push(Violation {
                property: p,
                faults,
                values: recorder.choices.iter().map(|c| c.value).collect(),
                after_runs: seed + 1,
            });
        }
        // A run without a single choice is the model's only run: every seed repeats it.
        if any || recorder.choices.is_empty() {
            break;
        }
    }
    Exploration {
        strategy,
        bound,
        levels: vec![level],
        pruning: false,
        visited_full: false,
        violations,
        budget_runs,
        scope: TimingScope::of(model, design),
    }
}

//! A sweep: one design over a range of seeds, on every core, with the same result for any
//! number of threads.
//!
//! Seeds are cut into fixed chunks; each chunk runs on whichever thread is free, and the
//! chunks' results are combined in seed order (rayon's `reduce` keeps the order of an
//! indexed iterator). Counts add up, histograms merge exactly, and the first violating
//! seeds are kept in seed order, so the bytes printed do not depend on the thread count.

use std::ops::RangeInclusive;

use rayon::prelude::*;

use super::result::{DesignResult, ReplayCommand, Report};
use crate::check::{Metrics, Property, Violations};
use crate::design::{Design, assumptions};
use crate::model::Model;
use crate::sim::RandomChooser;
use crate::world::World;

/// Most seeds per unit of parallel work: large enough that merging costs little, small
/// enough to move a progress bar.
pub const CHUNK: u64 = 4096;

/// Seeds per unit of work for a sweep of `count` seeds: about eight units per thread so
/// that threads stay busy, between 16 and [`CHUNK`]. The result does not depend on it.
fn chunk_for(count: u64) -> u64 {
    let threads = rayon::current_num_threads() as u64;
    (count / (threads * 8)).clamp(16, CHUNK)
}

/// The result of running one design over a range of seeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    pub metrics: Metrics,
    /// Seeds violating each property asked for.
    pub violations: Violations,
    /// Per property (same order), the first violating seeds, ascending, at most the number
    /// asked for.
    pub failures: Vec<Vec<u64>>,
    /// Per scripted fault of the model, whether it fired on some seed.
    pub fired: Vec<bool>,
}

impl Sweep {
    fn empty(properties: &[Property], faults: usize) -> Self {
        Sweep {
            metrics: Metrics::default(),
            violations: Violations::new(properties),
            failures: vec![Vec::new(); properties.len()],
            fired: vec![false; faults],
        }
    }

    /// The scripted faults (indices in the model's list) that fired on no seed.
    pub fn unfired(&self) -> Vec<usize> {
        (0..self.fired.len()).filter(|&i| !self.fired[i]).collect()
    }

    /// Appends `later` (seeds after this one's).
    fn then(mut self, later: Sweep, keep: usize) -> Sweep {
        self.metrics.merge(&later.metrics);
        self.violations.merge(&later.violations);
        for (mine, theirs) in self.fired.iter_mut().zip(&later.fired) {
            *mine |= *theirs;
        }
        for (mine, theirs) in self.failures.iter_mut().zip(later.failures) {
            let room = keep.saturating_sub(mine.len());
            mine.extend(theirs.into_iter().take(room));
        }
        self
    }

    /// The first seed that violated `p`, if it was asked for and kept.
    pub fn first_failure(&self, p: Property) -> Option<u64> {
        let i = self.violations.counts.iter().position(|(q, _)| *q == p)?;
        self.failures[i].first().copied()
    }
}

/// What to sweep.
#[derive(Clone, Copy)]
pub struct Spec<'a> {
    pub model: &'a Model,
    pub design: &'a dyn Design,
    pub seeds: (u64, u64),
    /// Properties to evaluate on every run.
    pub properties: &'a [Property],
    /// How many violating seeds to keep per property.
    pub keep_failures: usize,
}

impl Spec<'_> {
    /// Seeds `first..=last` (inclusive, so that the last seed may be `u64::MAX`).
    pub fn range(&self) -> RangeInclusive<u64> {
        self.seeds.0..=self.seeds.1
    }

    fn count(&self) -> u64 {
        self.seeds.1 - self.seeds.0 + 1
    }
}

/// Runs the sweep on the current rayon pool, calling `progress(n)` as each `n` seeds finish
/// (from any thread).
pub fn sweep(spec: &Spec<'_>, progress: &(dyn Fn(u64) + Sync)) -> Sweep {
    let count = spec.count();
    let chunk = chunk_for(count);
    let chunks = count.div_ceil(chunk);
    let keep = spec.keep_failures;
    (0..chunks)
        .into_par_iter()
        .map_init(
            || {
                (
                    World::new(spec.model, spec.design, false),
                    spec.model.chooser(0),
                )
            },
            |(world, chooser), i| {
                let start = spec.seeds.0 + i * chunk;
                let end = start + (chunk.min(count - i * chunk) - 1);
                let part = run_chunk(spec, world, chooser, start..=end);
                progress(end - start + 1);
                part
            },
        )
        .reduce(
            || Sweep::empty(spec.properties, spec.model.faults.len()),
            |a, b| a.then(b, keep),
        )
}

/// Runs seeds in order on one thread.
fn run_chunk(
    spec: &Spec<'_>,
    world: &mut World<'_>,
    chooser: &mut RandomChooser,
    seeds: RangeInclusive<u64>,
) -> Sweep {
    let mut part = Sweep::empty(spec.properties, spec.model.faults.len());
    for seed in seeds {
        chooser.reset(seed);
        world.run(chooser);
        let run = part.metrics.add_outcome(&world.outcome());
        if part.violations.add(&run) {
            for (i, (p, _)) in part.violations.counts.iter().enumerate() {
                let kept = &mut part.failures[i];
                if kept.len() < spec.keep_failures && !p.holds(&run) {
                    kept.push(seed);
                }
            }
        }
    }
    part.fired = world.take_fired_faults();
    part
}

/// What to compare: designs of one model over the same seeds.
pub struct Comparison<'a> {
    pub model: &'a Model,
    pub designs: &'a [&'a dyn Design],
    /// Seeds `first..=last`.
    pub seeds: (u64, u64),
    /// Properties to evaluate beside the plain ones and those the model's expectations name.
    pub extra_properties: &'a [Property],
    /// How many violating seeds to keep per design and property.
    pub keep_failures: usize,
}

/// Sweeps every design over the same seeds (paired: a seed meets the same faults in each, as
/// far as their paths agree) and gathers a report. `progress(design, n)` is called as seeds
/// finish.
pub fn compare(
    c: &Comparison<'_>,
    replay: ReplayCommand,
    progress: &(dyn Fn(&str, u64) + Sync),
) -> Report {
    let results = c
        .designs
        .iter()
        .map(|d| {
            let properties = properties_for(c.model, *d, c.extra_properties);
            let spec = Spec {
                model: c.model,
                design: *d,
                seeds: c.seeds,
                properties: &properties,
                keep_failures: c.keep_failures,
            };
            let s = sweep(&spec, &|n| progress(d.name(), n));
            DesignResult {
                design: d.name().to_string(),
                unfired: s.unfired(),
                metrics: s.metrics,
                violations: s.violations,
                failures: s.failures,
                expect: c.model.expectations(d.name()),
                assumptions: assumptions::judge(*d, c.model),
                guarantee: d.guarantee(),
            }
        })
        .collect();
    Report {
        model: c.model.name.clone(),
        first_seed: c.seeds.0,
        seed_count: c.seeds.1 - c.seeds.0 + 1,
        results,
        replay,
    }
}

/// Every plain property and those the design brings, then those the model's expectations
/// and `extra` add.
fn properties_for(model: &Model, design: &dyn Design, extra: &[Property]) -> Vec<Property> {
    let mut ps: Vec<Property> = Property::standard(design.properties());
    let more = model
        .expectations(design.name())
        .into_iter()
        .map(|(p, _)| p)
        .chain(extra.iter().copied());
    for p in more {
        if !ps.contains(&p) {
            ps.push(p);
        }
    }
    ps
}

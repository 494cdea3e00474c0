//! What the sweep benchmarks share: a rayon pool of a given size, and one iteration that
//! sweeps the next batch of fresh seeds (so that no iteration replays another's runs) through
//! some designs, with the plain properties evaluated on every run.

use std::hint::black_box;

use rayon::ThreadPool;
use retrylab::check::Property;
use retrylab::design::Design;
use retrylab::explore::{Spec, sweep};
use retrylab::model::Model;

/// A pool of `threads` threads.
pub fn pool(threads: usize) -> ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap_or_else(|e| panic!("cannot build a pool of {threads} threads: {e}"))
}

/// The built-in design called `name`.
pub fn design(name: &str) -> &'static dyn Design {
    retrylab::design::find(name).unwrap_or_else(|| panic!("unknown design {name:?}"))
}

/// Sweeps seeds `*first..*first + batch` through each of `designs` on `pool`, then moves
/// `*first` past them.
pub fn sweep_fresh(
    pool: &ThreadPool,
    model: &Model,
    designs: &[&dyn Design],
    batch: u64,
    first: &mut u64,
) {
    let seeds = (*first, *first + batch - 1);
    *first += batch;
    pool.install(|| {
        for &design in designs {
            let spec = Spec {
                model,
                design,
                seeds,
                properties: &Property::PLAIN,
                keep_failures: 0,
            };
            black_box(sweep(black_box(&spec), &|_n| {}));
        }
    })
}

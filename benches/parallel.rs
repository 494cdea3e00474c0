//! Parallel speed-up of `explore::sweep` on the lost-response model: every design the model
//! lists, in a rayon pool of one thread and of two.
//!
//! One iteration sweeps [`BATCH`] fresh seeds through each design, so criterion's `thrpt`
//! line reads as runs (seed x design) per second. The target is two threads at least 1.8
//! times one thread; the ratio is only meaningful on an otherwise idle machine.
//!
//! Run with `cargo bench --bench parallel`.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use retrylab::check::Property;
use retrylab::design::Design;
use retrylab::explore::{Spec, sweep};
use retrylab::model::Model;

/// Seeds per design per iteration: a tenth of the 10^6 of a full run, so that one iteration
/// stays under a second on one thread while every thread gets many chunks.
const BATCH: u64 = 100_000;

fn parallel(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ticket_lost_response.json");
    let model = Model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let designs: Vec<&dyn Design> = model
        .designs
        .iter()
        .map(|n| retrylab::design::find(n).unwrap_or_else(|| panic!("unknown design {n:?}")))
        .collect();

    let mut group = c.benchmark_group("parallel/ticket_lost_response");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(BATCH * designs.len() as u64));
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap_or_else(|e| panic!("cannot build a pool of {threads} threads: {e}"));
        let mut first = 0u64;
        group.bench_function(BenchmarkId::new("threads", threads), |b| {
            b.iter(|| {
                let seeds = (first, first + BATCH - 1);
                first += BATCH;
                pool.install(|| {
                    for &design in &designs {
                        let spec = Spec {
                            model: &model,
                            design,
                            seeds,
                            properties: &Property::PLAIN,
                            keep_failures: 0,
                        };
                        black_box(sweep(black_box(&spec), &|_n| {}));
                    }
                })
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    targets = parallel
}
criterion_main!(benches);

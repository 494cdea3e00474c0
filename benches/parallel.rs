//! Parallel speed-up of `explore::sweep` on the lost-response model: every design the model
//! lists, in a rayon pool of one thread and of two.
//!
//! One iteration sweeps [`BATCH`] fresh seeds through each design, so criterion's `thrpt`
//! line reads as runs (seed x design) per second. The target is two threads at least 1.8
//! times one thread; the ratio is only meaningful on an otherwise idle machine.
//!
//! Run with `cargo bench --bench parallel`.

mod common;

use std::path::Path;
use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use retrylab::design::Design;
use retrylab::model::Model;

/// Seeds per design per iteration: a tenth of the 10^6 of a full run, so that one iteration
/// stays under a second on one thread while every thread gets many chunks.
const BATCH: u64 = 100_000;

fn parallel(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ticket_lost_response.json");
    let model = Model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let designs: Vec<&dyn Design> = model.designs.iter().map(|n| common::design(n)).collect();

    let mut group = c.benchmark_group("parallel/ticket_lost_response");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(BATCH * designs.len() as u64));
    for threads in [1usize, 2] {
        let pool = common::pool(threads);
        let mut first = 0u64;
        group.bench_function(BenchmarkId::new("threads", threads), |b| {
            b.iter(|| common::sweep_fresh(&pool, &model, &designs, BATCH, &mut first))
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

//! Seeds per second of `run_seeds` on the lost-response model, one thread, tracing off.
//!
//! Each iteration runs a batch of consecutive seeds; with `Throughput::Elements(BATCH)`
//! criterion's `thrpt` line reads directly as seeds per second. Every iteration uses a fresh
//! seed range, so the batches do not replay the same runs.
//!
//! Run with `cargo bench --bench seeds`.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retrylab::model::Model;

/// Seeds per iteration.
const BATCH: u64 = 10_000;

fn seeds(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ticket_lost_response.json");
    let model = Model::load(&path).unwrap_or_else(|e| panic!("{e}"));

    let mut group = c.benchmark_group("seeds/ticket_lost_response");
    group.throughput(Throughput::Elements(BATCH));
    for name in &model.designs {
        let design = retrylab::design::find(name)
            .unwrap_or_else(|| panic!("the model lists an unknown design {name:?}"));
        let mut start = 0u64;
        group.bench_function(name.as_str(), |b| {
            b.iter(|| {
                let seeds = start..start + BATCH;
                start += BATCH;
                black_box(retrylab::run::run_seeds(
                    black_box(&model),
                    design,
                    black_box(seeds),
                ))
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(5));
    targets = seeds
}
criterion_main!(benches);

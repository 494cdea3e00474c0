//! Seeds per second of every bundled model (`models/*.json`, `models/windows/*.json`) under
//! every design it lists, on one thread, with the plain properties evaluated on each run.
//!
//! Each case sweeps [`BATCH`] fresh seeds per iteration in a one-thread rayon pool, so
//! criterion's `thrpt` line reads as seeds per second. Measurement is short per case (there
//! are about 150): read the figures as within some ±10 %. The target is 100 K seeds per
//! second for every case.
//!
//! Run with `cargo bench --bench models`; `cargo bench --bench models -- windows/compensation`
//! runs the cases whose name contains that text.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use retrylab::model::Model;

/// Seeds per iteration: 0.1 s at the target speed.
const BATCH: u64 = 10_000;

/// The bundled model files, in name order, each with its name relative to `models/`
/// (without `.json`).
fn model_files() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut files = Vec::new();
    for (dir, prefix) in [(root.clone(), ""), (root.join("windows"), "windows/")] {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            // models/schema.json is the JSON Schema of the models, not a model.
            if path.extension().is_some_and(|x| x == "json") && !path.ends_with("schema.json") {
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                files.push((format!("{prefix}{stem}"), path));
            }
        }
    }
    files.sort();
    files
}

fn models(c: &mut Criterion) {
    let pool = common::pool(1);
    let mut group = c.benchmark_group("models");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(BATCH));
    for (name, path) in model_files() {
        let model = Model::load(&path).unwrap_or_else(|e| panic!("{e}"));
        for design_name in &model.designs {
            let design = common::design(design_name);
            let mut first = 0u64;
            group.bench_function(format!("{name}/{design_name}"), |b| {
                b.iter(|| common::sweep_fresh(&pool, &model, &[design], BATCH, &mut first))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1));
    targets = models
}
criterion_main!(benches);

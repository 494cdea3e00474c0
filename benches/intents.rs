//! Cost per intent: the lost-response model with N intents per run, N from 10 to 10 000, on
//! one thread, designs `same_key` and `journal_reconcile`.
//!
//! Each iteration runs about [`INTENTS`] intents (fewer seeds as N grows), and criterion's
//! `thrpt` line reads as intents per second. The target is a flat line: the cost of an
//! intent should not grow with the number of intents in the run.
//!
//! Run with `cargo bench --bench intents`.

mod common;

use std::path::Path;
use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use retrylab::model::Model;

/// Intents per iteration, whatever N: enough that even N = 10 000 runs 20 seeds, as a sweep
/// does (a world is built per chunk of seeds and reused within it; with two seeds an
/// iteration would mostly measure building it).
const INTENTS: u64 = 200_000;

/// Time between two intents: longer than an intent's life when its reply is lost (a 60 s
/// tool timeout, then a replan), so that runs stay sparse, as a real queue of tickets
/// would be, and the event queue holds a handful of events whatever N.
const SPACING_MS: u64 = 2_000;

/// The lost-response model with `intents` intents, spaced by about [`SPACING_MS`], a
/// horizon that leaves the last one time to finish, and a provider that can be read back by
/// key (for `journal_reconcile`).
fn model_with(intents: u64) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ticket_lost_response.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    v["workload"]["intents"] = intents.into();
    v["workload"]["spacing_ms"] =
        serde_json::json!({"min": SPACING_MS / 2, "max": SPACING_MS * 3 / 2});
    v["horizon_ms"] = (intents * SPACING_MS * 2 + 600_000).into();
    v["designs"] = serde_json::json!(["same_key", "journal_reconcile"]);
    v["executor"]["reconcile"] = "by_key".into();
    v["provider"]["lookup"] = "by_key".into();
    // The expectations speak of one intent and of the original designs.
    v.as_object_mut().map(|m| m.remove("expect"));
    Model::from_json(
        &v.to_string(),
        &format!("{} with {intents} intents", path.display()),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn intents(c: &mut Criterion) {
    let pool = common::pool(1);
    let mut group = c.benchmark_group("intents");
    group.sampling_mode(SamplingMode::Flat);
    for n in [10u64, 100, 1_000, 10_000] {
        let model = model_with(n);
        let seeds = (INTENTS / n).max(1);
        group.throughput(Throughput::Elements(n * seeds));
        for design_name in &model.designs {
            let design = common::design(design_name);
            let mut first = 0u64;
            group.bench_function(BenchmarkId::new(design_name.as_str(), n), |b| {
                b.iter(|| common::sweep_fresh(&pool, &model, &[design], seeds, &mut first))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = intents
}
criterion_main!(benches);

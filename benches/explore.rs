//! Exhaustive search speed, on one core: runs and distinct states explored per second.
//!
//! - `ticket_lost_response`, `journal_reconcile_lease`, at most 3 faults: the complete
//!   search (small: the lost reply is scripted and the other choices are timing menus);
//! - `ticket_chaos`, `same_key`, at most 1 fault, the first 20 000 runs: five intents with
//!   every fault on, a space far larger than any budget, so this measures the engine on
//!   long runs with heavy pruning.
//!
//! Each iteration is one search; criterion's `thrpt` reads as runs per second. The number of
//! states per search (distinct, and visited over the passes of growing deviation budget) is
//! printed first, so that states per second is that number times iterations per second. Run
//! with `cargo bench --bench explore`.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use retrylab::check::Property;
use retrylab::explore::{Bound, Strategy, explore};
use retrylab::model::Model;

fn load(name: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(name);
    Model::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn searches(c: &mut Criterion) {
    let mut group = c.benchmark_group("explore");
    for (model, design, max_faults, max_runs) in [
        (
            "ticket_lost_response.json",
            "journal_reconcile_lease",
            3,
            1_000_000,
        ),
        ("ticket_chaos.json", "same_key", 1, 20_000),
    ] {
        let m = load(model);
        let d = retrylab::design::find(design).expect("a built-in design");
        let bound = Bound {
            max_faults,
            max_runs,
            ..Bound::default()
        };
        let once = explore(&m, d, &Property::PLAIN, Strategy::Dfs, bound);
        let states: u64 = once.levels.iter().map(|l| l.distinct_states).sum();
        let visited: u64 = once.levels.iter().map(|l| l.states_visited).sum();
        let pruned: u64 = once.levels.iter().map(|l| l.pruned).sum();
        println!(
            "{model} {design} K={max_faults}: {} runs, {states} distinct states ({visited} visited over the passes), {pruned} pruned, certified: {}",
            once.runs(),
            once.certified()
        );
        group.throughput(Throughput::Elements(once.runs()));
        group.bench_function(BenchmarkId::new(design, model), |b| {
            b.iter(|| black_box(explore(&m, d, &Property::PLAIN, Strategy::Dfs, bound)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = searches
}
criterion_main!(benches);

//! Paired differences between two designs on the same seeds: exact where the model makes
//! them exact, and the same for any thread count.

use std::path::Path;

use retrylab::check::counters::quantities;
use retrylab::design;
use retrylab::explore::paired;
use retrylab::model::Model;

fn load(name: &str) -> Model {
    Model::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models")
            .join(name),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn index(q: &str) -> usize {
    quantities().position(|c| c.quantity() == q).unwrap()
}

/// The seeds' table: every seed loses the first reply, `no_dedup`'s replan duplicates and
/// `same_key`'s does not. The difference of duplicates per intent is exactly -1 on every
/// seed and every seed disagrees; both complete every intent. With no spread between seeds
/// the interval is that of one seed in 3.84 / 503.84 differing by one event.
#[test]
fn same_key_against_no_dedup_on_the_lost_response() {
    let m = load("ticket_lost_response.json");
    let p = paired(
        &m,
        design::find("same_key").unwrap(),
        design::find("no_dedup").unwrap(),
        0..=499,
    );
    let dup = p.difference(index("duplicate_effects"));
    assert_eq!((dup.mean, dup.seeds, dup.disagree), (-1.0, 500, 500));
    let z2 = 1.959_963_984_540_054f64.powi(2);
    let half = z2 / (500.0 + z2);
    assert!((dup.low + 1.0 + half).abs() < 1e-12, "{dup:?}");
    assert!((dup.high + 1.0 - half).abs() < 1e-12, "{dup:?}");
    let done = p.difference(index("completed"));
    assert_eq!((done.mean, done.disagree), (0.0, 0));
}

/// On the chaos model the difference varies from seed to seed: an interval of positive
/// width around the mean, the same on one thread and on two.
#[test]
fn a_paired_difference_is_the_same_on_any_thread_count() {
    let m = load("ticket_chaos.json");
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                paired(
                    &m,
                    design::find("same_key").unwrap(),
                    design::find("no_dedup").unwrap(),
                    0..=999,
                )
            })
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(one, two);
    let dup = one.difference(index("duplicate_effects"));
    assert!(dup.low < dup.mean && dup.mean < dup.high, "{dup:?}");
    assert!(dup.high < 0.0, "same_key duplicates less: {dup:?}");
    assert!(dup.disagree > 0 && dup.disagree < 1000, "{dup:?}");
}

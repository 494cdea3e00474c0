//! The runnable example `examples/custom_design.rs` is also a test: its design runs under the
//! simulator and its numbers are pinned here.

#[path = "../examples/custom_design.rs"]
mod example;

fn row(report: &retrylab::report::Report, design: &str) -> [u64; 6] {
    let m = &report
        .results
        .iter()
        .find(|r| r.design == design)
        .unwrap()
        .metrics;
    [
        m.effects,
        m.completed,
        m.duplicate_effects,
        m.false_success,
        m.merged_repeats,
        m.remote_calls,
    ]
}

#[test]
fn check_then_create_absorbs_a_lost_reply() {
    // The replan's search finds the first ticket: no duplicate, but three calls.
    let r = example::compare(example::MODELS[0], 10);
    assert_eq!(row(&r, "check_then_create"), [10, 10, 0, 0, 0, 30]);
    assert_eq!(row(&r, "same_key"), [10, 10, 0, 0, 0, 20]);
}

#[test]
fn check_then_create_merges_a_genuine_repeat() {
    // The second, wanted, identical ticket is "found" and never created.
    let r = example::compare(example::MODELS[1], 10);
    assert_eq!(row(&r, "check_then_create"), [10, 10, 0, 10, 10, 30]);
    assert_eq!(row(&r, "same_key"), [20, 20, 0, 0, 0, 20]);
}

#[test]
fn check_then_create_is_fooled_by_a_lagging_search() {
    // Provider without keys, search index 8 s behind: the replan's search misses the first
    // ticket and creates a second.
    let r = example::compare(example::MODELS[2], 10);
    assert_eq!(row(&r, "check_then_create"), [20, 10, 10, 0, 0, 40]);
}

#[test]
fn the_example_prints_its_tables() {
    let text = retrylab::report::table::render(&example::compare(example::MODELS[0], 2));
    assert!(text.contains("check_then_create"), "{text}");
}

//! The integration tests, one binary: each file of `tests/` is a module here, so that the
//! crate and its dependencies are linked once for all of them, not once per file, and the
//! slow tests of one file run beside the quick ones of the others. Run one file's tests
//! with its module name as the filter, `cargo test --test suite designs::`, and several
//! after `--`, `cargo test --test suite -- designs:: stacks::`. A filter is a substring of
//! `module::test`, so no module's name ends with another's (`explore::` would also run
//! `shard_explore::`): `every_test_file_is_compiled` checks that too.
//!
//! Three files are binaries of their own (`Cargo.toml`'s `[[test]]` entries): the two loom
//! models, which compile to nothing without `--cfg loom`, and `external.rs`, which sets an
//! environment variable that every process a test starts would inherit.
//! `every_test_file_is_compiled` (below) fails on a file of `tests/` that is in neither.

mod common;

mod assumptions;
mod bundled_models;
mod check_verdicts;
mod configured;
mod corpus;
mod corpus_below;
mod custom_design_example;
mod designs;
mod diagrams;
mod executor_presets;
mod executor_reset;
mod expectation_verdicts;
mod explore_bounded;
mod fingerprint;
mod frameworks;
mod golden;
mod guarantee_matrix;
mod identity;
mod known_bad;
mod lane;
mod layering;
mod leftovers;
mod lost_response;
mod model_errors;
mod model_limits;
mod model_mutations;
mod model_reference;
mod model_warnings;
mod node_examples;
mod outcome;
mod package_presets;
mod paired;
mod parity;
mod prop_dangerous;
mod prop_determinism;
mod prop_guarantees;
mod prop_keystore;
mod proptest_config;
mod protocol_schema;
mod provider_presets;
mod public_api;
mod python_examples;
mod random_unchanged;
mod recommend;
mod reductions;
mod regressions;
mod report;
mod reports_current;
mod same_bytes;
mod scenarios;
mod shard_explore;
mod shard_merge;
mod shim_limits;
mod sizes;
mod stacks;
mod thread_key;
mod tie_order;
mod timing_equivalence;
mod trace_text;
mod windows;

/// Every `.rs` file directly in `tests/` is a module above or a `[[test]]` of `Cargo.toml`
/// (with `autotests = false`, Cargo would silently skip a file that is neither).
#[test]
fn every_test_file_is_compiled() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = std::fs::read_to_string(root.join("tests/suite.rs")).unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
            continue;
        };
        let Some(stem) = file.strip_suffix(".rs") else {
            continue;
        };
        let module = suite.lines().any(|l| l == format!("mod {stem};"));
        let binary = manifest.contains(&format!("path = \"tests/{file}\""));
        if !module && !binary {
            missing.push(file.to_string());
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "tests/ files compiled by no test binary (add `mod NAME;` to tests/suite.rs): {missing:?}"
    );
    // `cargo test --test suite NAME::` runs NAME's tests and no other module's.
    let modules: Vec<&str> = suite
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut clashes = Vec::new();
    for a in &modules {
        for b in &modules {
            if a != b && b.ends_with(a) {
                clashes.push(format!("{a}:: also runs {b}::"));
            }
        }
    }
    assert!(clashes.is_empty(), "rename the shorter: {clashes:?}");
}

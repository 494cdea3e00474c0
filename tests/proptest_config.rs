//! The property tests' settings (`tests/common/strategies.rs`): every run draws the same
//! cases from a fixed seed, and a failure is printed, never written into the source tree.

use crate::common::strategies;

use proptest::prelude::*;
use proptest::test_runner::{TestError, TestRunner};

/// The values a runner with the crate's settings generates for the first `n` cases.
fn drawn(n: u32) -> Vec<u64> {
    let seen = std::sync::Mutex::new(Vec::new());
    let mut runner = TestRunner::new(strategies::config(n, "/nonexistent/regressions.txt"));
    runner
        .run(&any::<u64>(), |x| {
            seen.lock().unwrap().push(x);
            Ok(())
        })
        .unwrap();
    seen.into_inner().unwrap()
}

#[test]
fn the_same_cases_are_drawn_on_every_run() {
    let (a, b) = (drawn(32), drawn(32));
    assert_eq!(a.len(), 32);
    assert_eq!(a, b);
}

/// A property that fails: the runner finds and shrinks the failure, and the regressions
/// file it was given is still not there afterwards.
#[test]
fn a_failure_is_not_written_into_the_regressions_file() {
    let file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("regressions-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let path: &'static str = Box::leak(file.to_str().unwrap().to_string().into_boxed_str());
    let mut runner = TestRunner::new(strategies::config(256, path));
    let result = runner.run(&(0..1_000u32), |x| {
        prop_assert!(x < 500);
        Ok(())
    });
    match result {
        Err(TestError::Fail(_, x)) => assert_eq!(x, 500, "shrunk to the smallest failure"),
        other => panic!("expected a failure, got {other:?}"),
    }
    assert!(!file.exists(), "a test run wrote {}", file.display());
}

/// A generated model that failed is written under the target directory as a file `retrylab
/// run` takes, and the failure message names it with the seed of the run.
#[test]
fn a_failing_model_is_written_as_a_model_file_retrylab_runs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("models/ticket_lost_response.json")).unwrap();
    let line = strategies::failing_model(&text);
    let path = line
        .strip_prefix("the generated model ")
        .and_then(|r| r.split(' ').next())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(path.starts_with(env!("CARGO_TARGET_TMPDIR")), "{line}");
    assert!(
        line.ends_with(&format!(
            "--seeds 6; RETRYLAB_PROPTEST_SEED={})",
            strategies::seed()
        )),
        "{line}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(["run", path, "--seeds", "6"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("model ticket_lost_response: 6 seeds")
    );
}

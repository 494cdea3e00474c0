//! The golden-file helper (`tests/common/golden.rs`) itself: what a mismatch prints, what it
//! writes and where. Every test works in its own scratch directory under the target
//! directory (Cargo's `CARGO_TARGET_TMPDIR`) and never in `tests/snapshots/`, and none reads
//! `RETRYLAB_BLESS`: blessing is passed explicitly.

use crate::common::golden;

use std::path::PathBuf;

use golden::{Golden, MAX_LINE_CHARS, diff};

/// A scratch snapshots directory and fresh-output directory for `test`, emptied.
fn scratch(test: &str) -> (PathBuf, PathBuf) {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("golden-selftest")
        .join(test);
    let _ = std::fs::remove_dir_all(&base);
    let (snapshots, fresh) = (base.join("snapshots"), base.join("fresh"));
    std::fs::create_dir_all(snapshots.join("a")).unwrap();
    (snapshots, fresh)
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn equal_text_passes_and_writes_nothing() {
    let (snapshots, fresh) = scratch("equal");
    std::fs::write(snapshots.join("a/one.txt"), "x\ny\n").unwrap();
    let mut g = Golden::at(snapshots.clone(), fresh.clone(), false);
    g.check("a/one.txt", "x\ny\n");
    g.stale_under("a");
    assert!(g.failure().is_none());
    assert!(!fresh.exists());
    g.finish();
}

#[test]
fn a_mismatch_shows_a_unified_diff_and_writes_the_fresh_text_outside_the_snapshots() {
    let (snapshots, fresh) = scratch("mismatch");
    let old = numbered(20);
    let new = old.replace("line 10\n", "line ten\n");
    std::fs::write(snapshots.join("a/one.txt"), &old).unwrap();
    let mut g = Golden::at(snapshots.clone(), fresh.clone(), false);
    g.check("a/one.txt", &new);
    let [m] = g.mismatches() else {
        panic!("{:?}", g.mismatches())
    };
    assert_eq!(m.changed_lines, 2);
    let hunk = "@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n";
    assert!(m.report.contains(hunk), "{}", m.report);
    let first = m.report.lines().next().unwrap();
    assert!(
        first.starts_with("--- committed ") && first.ends_with("/mismatch/snapshots/a/one.txt"),
        "{first}"
    );
    let written = fresh.join("a/one.txt");
    assert!(
        m.report
            .contains(&format!("+++ fresh {}", written.display()))
    );
    assert_eq!(std::fs::read_to_string(&written).unwrap(), new);
    // The committed snapshot is untouched.
    assert_eq!(
        std::fs::read_to_string(snapshots.join("a/one.txt")).unwrap(),
        old
    );
    let text = g.failure().unwrap();
    assert!(text.contains("RETRYLAB_BLESS=1 cargo test --release --test suite golden::"));
}

#[test]
fn every_mismatch_of_a_test_is_collected_before_it_fails() {
    let (snapshots, fresh) = scratch("collect");
    for name in ["one", "two", "three"] {
        std::fs::write(snapshots.join(format!("a/{name}.txt")), "old\n").unwrap();
    }
    let mut g = Golden::at(snapshots, fresh, false);
    g.check("a/one.txt", "new\n");
    g.check("a/two.txt", "old\n");
    g.check("a/three.txt", "new\n");
    g.check("a/four.txt", "new\n");
    let paths: Vec<&str> = g.mismatches().iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["a/one.txt", "a/three.txt", "a/four.txt"]);
    let text = g.failure().unwrap();
    assert!(text.starts_with("3 golden file(s) differ"), "{text}");
    assert!(text.contains("  a/one.txt (2 lines changed)\n"), "{text}");
    assert!(text.contains("  a/four.txt (no snapshot yet)\n"), "{text}");
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| g.finish()));
    let message = panic.unwrap_err();
    assert_eq!(message.downcast_ref::<String>(), Some(&text));
}

#[test]
fn a_missing_snapshot_fails_and_says_how_to_bless() {
    let (snapshots, fresh) = scratch("missing");
    let mut g = Golden::at(snapshots.clone(), fresh.clone(), false);
    g.check("a/new_design.txt", "a\nb\n");
    let text = g.failure().unwrap();
    assert!(text.contains("no snapshot yet (2 lines fresh)"), "{text}");
    assert!(text.contains("RETRYLAB_BLESS=1"), "{text}");
    assert!(!snapshots.join("a/new_design.txt").exists());
    assert!(fresh.join("a/new_design.txt").exists());
}

#[test]
fn a_snapshot_nothing_checked_is_stale() {
    let (snapshots, fresh) = scratch("stale");
    std::fs::create_dir_all(snapshots.join("a/gone_model")).unwrap();
    std::fs::write(snapshots.join("a/kept.txt"), "k\n").unwrap();
    std::fs::write(snapshots.join("a/gone_model/d.txt"), "g\n").unwrap();
    let mut g = Golden::at(snapshots, fresh, false);
    g.check("a/kept.txt", "k\n");
    g.stale_under("a");
    let [m] = g.mismatches() else {
        panic!("{:?}", g.mismatches())
    };
    assert_eq!(
        (m.path.as_str(), m.summary.as_str()),
        ("a/gone_model/d.txt", "stale")
    );
    assert!(m.report.contains("stale"), "{}", m.report);
}

#[test]
fn blessing_writes_the_snapshots_and_removes_stale_ones() {
    let (snapshots, fresh) = scratch("bless");
    std::fs::write(snapshots.join("a/changed.txt"), "old\n").unwrap();
    std::fs::write(snapshots.join("a/gone.txt"), "old\n").unwrap();
    let mut g = Golden::at(snapshots.clone(), fresh.clone(), true);
    g.check("a/changed.txt", "new\n");
    g.check("a/b/added.txt", "added\n");
    g.stale_under("a");
    assert!(g.failure().is_none());
    assert_eq!(
        g.blessed(),
        ["a/changed.txt", "a/b/added.txt", "a/gone.txt (removed)"]
    );
    g.finish();
    let read = |p: &str| std::fs::read_to_string(snapshots.join(p)).unwrap();
    assert_eq!(read("a/changed.txt"), "new\n");
    assert_eq!(read("a/b/added.txt"), "added\n");
    assert!(!snapshots.join("a/gone.txt").exists());
    assert!(!fresh.exists());
}

#[test]
fn a_long_diff_is_cut_with_a_count_of_what_was_cut() {
    let old = numbered(1000);
    let new = old.replace("line ", "LINE ");
    let d = diff(&old, &new, 50);
    assert_eq!(d.changed_lines, 2000);
    let lines: Vec<&str> = d.text.lines().collect();
    assert_eq!(lines.len(), 51, "{}", d.text);
    // One hunk header and 2000 changed lines, 50 shown.
    assert_eq!(lines[50], "... 1951 more diff lines not shown");
    assert_eq!(lines[0], "@@ -1,1000 +1,1000 @@");
}

#[test]
fn a_long_line_is_cut_and_a_missing_newline_is_said() {
    let long = "x".repeat(MAX_LINE_CHARS + 10);
    let d = diff("short\n", &long, 10);
    let lines: Vec<&str> = d.text.lines().collect();
    assert_eq!(lines[1], "-short");
    let cut = format!(
        "+{} ... (10 more characters) (no newline at end)",
        "x".repeat(MAX_LINE_CHARS)
    );
    assert_eq!(lines[2], cut);
}

#[test]
fn line_numbers_count_from_the_start_of_the_files() {
    // The common start is skipped before diffing; the hunk still gives file line numbers.
    let old = numbered(500);
    let new = old.replace("line 400\n", "");
    let d = diff(&old, &new, 100);
    assert!(
        d.text.starts_with("@@ -397,7 +397,6 @@\n line 397\n"),
        "{}",
        d.text
    );
    assert!(diff(&old, &old, 100).text.is_empty());
}

#[test]
fn text_compared_with_something_else_fails_with_its_diff() {
    golden::assert_same_text("a\nb\n", "a\nb\n", "equal");
    let panic = std::panic::catch_unwind(|| golden::assert_same_text("a\nb\n", "a\nc\n", "why"));
    let message = panic.unwrap_err();
    let text = message.downcast_ref::<String>().unwrap();
    assert_eq!(
        text,
        "why\n--- expected\n+++ actual\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n(2 lines changed)"
    );
}

//! The committed comparison report in `reports/` is current: made again with the arguments
//! its own provenance records, it is the same bytes (JSON, Markdown and HTML). The committed
//! report is the golden: any change in behaviour, in the random streams or in the report's
//! layout fails here with a diff of each file that changed (`tests/common/golden.rs`; the
//! HTML's long lines cut), and the fresh report is kept under
//! `target/tmp/golden-new/reports/`. `reports/README.md` gives the command that regenerates
//! it; `RETRYLAB_BLESS=1 cargo test --release --test suite reports_current::` copies the fresh files
//! into `reports/` (the same bytes that command writes).

use crate::common::cli;
use crate::common::golden;

use cli::*;

/// The files `report --out DIR` writes.
const FILES: [&str; 3] = ["report.json", "report.md", "report.html"];

#[test]
fn the_committed_report_is_current() {
    check_current("reports");
    if golden::blessing() {
        // After the report: the README copies its table (the test below only compares).
        bless_readme();
    }
}

#[test]
fn the_committed_framework_report_is_current() {
    check_current("reports/frameworks");
}

/// The report committed in `dir` is made again, the same bytes, by the arguments its
/// provenance records.
fn check_current(dir: &str) {
    let committed = root().join(dir);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(committed.join("report.json")).unwrap()).unwrap();
    let pv = &json["provenance"];
    let list = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("reports-current")
        .join(dir);
    let _ = std::fs::remove_dir_all(&out);
    let mut args: Vec<String> = vec!["report".into()];
    args.extend(list(&pv["arguments"]["models"]));
    for m in list(&pv["arguments"]["each_provider"]) {
        args.extend(["--each-provider".into(), m]);
    }
    for m in list(&pv["arguments"]["matrix"]) {
        args.extend(["--matrix".into(), m]);
    }
    args.extend([
        "--max-faults".into(),
        pv["arguments"]["max_faults"].to_string(),
        "--seeds".into(),
        pv["seeds"]["count"].to_string(),
        "--first-seed".into(),
        pv["seeds"]["first"].to_string(),
        "--baseline".into(),
        pv["baseline"].as_str().unwrap().to_string(),
        "--out".into(),
        out.display().to_string(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = retrylab(&args);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let mut written: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let mut want = FILES.map(String::from).to_vec();
    want.sort();
    assert_eq!(written, want, "the files report --out writes");

    let mut golden = golden::Golden::in_project(dir);
    golden.note(&format!(
        "(or regenerate {dir}/ with the command in its README.md)"
    ));
    for name in FILES {
        let fresh = std::fs::read_to_string(out.join(name)).unwrap();
        golden.check(name, &fresh);
    }
    golden.finish();
    let _ = std::fs::remove_dir_all(&out);
}

/// The README's copy of the headline table is a golden too: `RETRYLAB_BLESS=1` writes the
/// committed report's table into it (the test above does, once it has blessed the report).
#[test]
fn the_readme_shows_the_headline_table_of_the_committed_report() {
    if golden::blessing() {
        return;
    }
    let report = std::fs::read_to_string(root().join("reports/report.md")).unwrap();
    let table = headline(&report).expect("reports/report.md has a headline table");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let shown = headline(&readme).expect("README.md shows a headline table");
    golden::assert_same_text(
        shown,
        table,
        "README.md does not show the headline table of reports/report.md (bless with RETRYLAB_BLESS=1 cargo test --test suite reports_current::)",
    );
}

/// Writes the committed report's headline table into the README.
fn bless_readme() {
    let report = std::fs::read_to_string(root().join("reports/report.md")).unwrap();
    let table = headline(&report).expect("reports/report.md has a headline table");
    let path = root().join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let shown = headline(&readme).expect("README.md shows a headline table");
    if shown != table {
        std::fs::write(&path, readme.replacen(shown, table, 1)).unwrap();
    }
}

/// The headline table of a report (or of the README that copies it): from its header line
/// to the first blank line.
fn headline(text: &str) -> Option<&str> {
    let start = text.find("| design | no duplicate |")?;
    let len = text[start..].find("\n\n")? + 1;
    Some(&text[start..start + len])
}

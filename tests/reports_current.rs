//! The committed comparison report in `reports/` is current: made again with the arguments
//! its own provenance records, it is the same bytes (JSON, Markdown and HTML). Any change in
//! behaviour, in the random streams or in the report's layout shows up here as a diff;
//! `reports/README.md` gives the command that regenerates it.

#[path = "common/cli.rs"]
mod cli;

use cli::*;

#[test]
fn the_committed_report_is_current() {
    let committed = root().join("reports");
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
    let out = std::env::temp_dir().join(format!("retrylab-reports-{}", std::process::id()));
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
    for name in ["report.json", "report.md", "report.html"] {
        let fresh = std::fs::read(out.join(name)).unwrap();
        let old = std::fs::read(committed.join(name)).unwrap();
        assert!(
            fresh == old,
            "reports/{name} is stale; regenerate reports/ with the command in reports/README.md"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_readme_shows_the_headline_table_of_the_committed_report() {
    let report = std::fs::read_to_string(root().join("reports/report.md")).unwrap();
    let start = report.find("| design | no duplicate |").unwrap();
    let table = &report[start..start + report[start..].find("\n\n").unwrap() + 1];
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(table),
        "README.md does not show the headline table of reports/report.md; copy it:\n{table}"
    );
}

//! Every bundled model loads and `retrylab run` prints two lines per listed design, within
//! 100 columns.

use crate::common::models;

use std::path::PathBuf;
use std::process::Command;

/// The bundled models, and those of the framework report (models/frameworks/).
fn models() -> Vec<PathBuf> {
    let mut paths = models::bundled_paths();
    let frameworks = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/frameworks");
    let mut more: Vec<PathBuf> = std::fs::read_dir(frameworks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    more.sort();
    paths.extend(more);
    paths
}

#[test]
fn every_bundled_model_runs_every_listed_design() {
    let files = models();
    // Every model file of models/ and models/windows/ (a new window needs no edit here).
    for main in ["ticket_lost_response.json", "ticket_chaos.json"] {
        assert!(files.iter().any(|f| f.ends_with(main)), "{main}: {files:?}");
    }
    for file in files {
        let model = retrylab::model::Model::load(&file).unwrap_or_else(|e| panic!("{e}"));
        let out = Command::new(env!("CARGO_BIN_EXE_retrylab"))
            .args(["run", file.to_str().unwrap(), "--seeds", "3"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "{}: {line}", file.display());
        }
        let table: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("design "))
            .skip(1)
            .take_while(|l| !l.is_empty() && !l.starts_with("expectation") && !l.starts_with('*'))
            .collect();
        // Three lines per design: figures, intervals, then harm and verdict (which may wrap
        // onto a fourth, indented more).
        let rows: Vec<&str> = table
            .iter()
            .copied()
            .filter(|l| !l.starts_with(' '))
            .collect();
        assert_eq!(rows.len(), model.designs.len(), "{}", file.display());
        let verdicts = table
            .iter()
            .filter(|l| l.starts_with("  harm: ") || l.starts_with("  no harm in "))
            .count();
        assert_eq!(verdicts, model.designs.len(), "{}", file.display());
        for (row, design) in rows.iter().zip(&model.designs) {
            assert!(
                row.starts_with(design.as_str()),
                "{}: {row}",
                file.display()
            );
        }
    }
}

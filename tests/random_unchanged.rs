//! Random simulation does not change when the choice point does (issue 9): every bundled
//! model, run with every design, gives byte-identical `run --format json` output and
//! byte-identical timelines to those recorded in `tests/fixtures/random_unchanged.txt`.
//!
//! The fixture holds FNV-1a hashes generated from the code before the choice point learnt
//! classes, compacted weighted alternatives, spans and tie ordering. Regenerate it only for a
//! deliberate change of what random simulation does, and say so in the commit:
//!
//! ```text
//! RETRYLAB_REGENERATE=1 cargo test --release --test random_unchanged
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use retrylab::design;
use retrylab::model::Model;
use retrylab::run::run_traced;
use retrylab::sim::RandomChooser;

#[path = "common/cli.rs"]
mod cli;
use cli::{retrylab, root, stderr, stdout};

/// Seeds of `run --format json` per model (every design).
const RUN_SEEDS: &str = "2000";
/// Seeds traced per model and design (timeline and metrics).
const TRACE_SEEDS: u64 = 50;

const FIXTURE: &str = "tests/fixtures/random_unchanged.txt";

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Every bundled model, as a path relative to the project root, sorted.
fn models() -> Vec<String> {
    let root = root();
    let mut files = Vec::new();
    for dir in ["models", "models/windows"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            // models/schema.json is the JSON Schema of the models, not a model.
            if path.extension().is_some_and(|e| e == "json") && !path.ends_with("schema.json") {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                files.push(format!("{dir}/{name}"));
            }
        }
    }
    files.sort();
    files
}

/// One line per model and kind: `run MODEL HASH` and `trace MODEL HASH`.
fn hashes() -> BTreeMap<String, String> {
    let mut lines = BTreeMap::new();
    let names = design::names();
    for model in models() {
        let mut args = vec!["run", &model, "--format", "json", "--seeds", RUN_SEEDS];
        for d in &names {
            args.extend(["--design", d]);
        }
        let out = retrylab(&args);
        assert!(out.status.success(), "{model}: {}", stderr(&out));
        lines.insert(
            format!("run {model}"),
            format!("{:016x}", fnv1a(stdout(&out).as_bytes())),
        );

        let m = Model::load(&root().join(&model)).unwrap();
        let mut text = String::new();
        for d in design::all() {
            for seed in 0..TRACE_SEEDS {
                let t = run_traced(&m, d, &mut RandomChooser::new(seed));
                text.push_str(&format!(
                    "{} {seed}\n{}\n{:?}\n",
                    d.name(),
                    t.timeline,
                    t.metrics
                ));
            }
        }
        lines.insert(
            format!("trace {model}"),
            format!("{:016x}", fnv1a(text.as_bytes())),
        );
    }
    lines
}

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)
}

#[test]
fn random_simulation_is_byte_identical_on_every_bundled_model() {
    let now = hashes();
    assert_eq!(now.len(), 2 * 20, "every bundled model, run and trace");
    if std::env::var_os("RETRYLAB_REGENERATE").is_some() {
        let mut text = String::from(
            "# FNV-1a 64 of `retrylab run MODEL --format json --seeds 2000 --design (every design)`\n\
             # and of the timelines and metrics of seeds 0..50 of every design (tests/random_unchanged.rs).\n\
             # Regenerate: RETRYLAB_REGENERATE=1 cargo test --release --test random_unchanged\n",
        );
        for (k, v) in &now {
            text.push_str(&format!("{k} {v}\n"));
        }
        std::fs::create_dir_all(fixture_path().parent().unwrap()).unwrap();
        std::fs::write(fixture_path(), text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(fixture_path()).unwrap();
    let want: BTreeMap<String, String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    let changed: Vec<String> = now
        .iter()
        .filter(|(k, v)| want.get(*k) != Some(*v))
        .map(|(k, v)| format!("{k}: {v}, fixture {:?}", want.get(k)))
        .collect();
    assert!(
        changed.is_empty() && want.len() == now.len(),
        "random simulation changed:\n{}",
        changed.join("\n")
    );
}

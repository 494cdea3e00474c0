//! Random simulation does not change unseen (issue 9, with readable goldens since issue 19):
//! every bundled model (`models/*.json`, `models/windows/*.json`), run with every built-in
//! design (`design::all()`), prints what the committed snapshots under
//! `tests/snapshots/random/` say, one file per model and design:
//! `tests/snapshots/random/<model path without .json>/<design>.txt`. Each holds
//!
//! - the design's entry of `retrylab run MODEL --format json --seeds 2000 --design (every
//!   design)`, with the run's header, as the JSON that run prints (the test checks that the
//!   entries and header put together again are that output byte for byte);
//! - one line per seed 0..50, traced with `RandomChooser::new(seed)`: its metrics (every
//!   count that is not zero, and the histograms' buckets and maxima, exactly);
//! - the full timelines of the first [`TIMELINE_SEEDS`] of those seeds only. All 50 would
//!   make the snapshots 31.6 MB (26.3 MB of it timelines), too much to keep in git; with 3
//!   they are 4.0 MB. The FNV-1a hashes this test replaced covered the 50 timelines whole;
//!   the metrics line of each seed still sees any change of outcome, count or duration, and
//!   the first timelines show how runs unfold.
//!
//! A change shows up as a diff of these files (see `tests/common/golden.rs`); a model or
//! design without a snapshot fails, and so does a snapshot of one that is gone. Rewrite them
//! only for a deliberate change of what random simulation does, and say so in the commit:
//!
//! ```text
//! RETRYLAB_BLESS=1 cargo test --release --test suite random_unchanged::
//! ```

use std::fmt::Write as _;

use retrylab::check::Metrics;
use retrylab::check::counters::COUNTERS;
use retrylab::design;
use retrylab::model::Model;
use retrylab::run::{Traced, run_traced};
use retrylab::sim::RandomChooser;

use crate::common::cli;
use crate::common::golden;
use cli::{retrylab, root, stderr, stdout};

/// Seeds of `run --format json` per model (every design).
const RUN_SEEDS: &str = "2000";
/// Seeds traced per model and design (metrics).
const TRACE_SEEDS: u64 = 50;
/// Of those, the first seeds whose whole timeline is kept.
const TIMELINE_SEEDS: u64 = 3;

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

/// `run --format json` split into its header (through `"results": [`), each result's text
/// with its design's name, and its end; put together again they are `out` byte for byte.
struct RunJson {
    header: String,
    results: Vec<(String, String)>,
    end: String,
}

impl RunJson {
    fn split(out: &str) -> RunJson {
        let lines: Vec<&str> = out.split_inclusive('\n').collect();
        let open = lines
            .iter()
            .position(|l| *l == "  \"results\": [\n")
            .expect("a results array");
        let mut results = Vec::new();
        let mut i = open + 1;
        while lines[i] == "    {\n" {
            let close = i + lines[i..]
                .iter()
                .position(|l| *l == "    }\n" || *l == "    },\n")
                .expect("the end of a result");
            let text: String = lines[i..=close].concat();
            let text = text.strip_suffix(",\n").unwrap_or(&text).to_string();
            let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
            let design = lines[i + 1]
                .strip_prefix("      \"design\": \"")
                .and_then(|l| l.strip_suffix("\",\n"))
                .expect("a result starts with its design")
                .to_string();
            results.push((design, text));
            i = close + 1;
        }
        let split = RunJson {
            header: lines[..=open].concat(),
            results,
            end: lines[i..].concat(),
        };
        assert_eq!(
            split.join(),
            out,
            "the split of run --format json is lossless"
        );
        split
    }

    /// The output again, from its parts.
    fn join(&self) -> String {
        let results: Vec<&str> = self.results.iter().map(|(_, t)| t.as_str()).collect();
        format!("{}{}\n{}", self.header, results.join(",\n"), self.end)
    }

    /// The output as it would be with only the result of `design`.
    fn only(&self, design: &str) -> String {
        let (_, text) = self
            .results
            .iter()
            .find(|(d, _)| d == design)
            .unwrap_or_else(|| panic!("no result of {design}"));
        format!("{}{text}\n{}", self.header, self.end)
    }
}

/// `run MODEL --format json --seeds 2000` with every design, split.
fn run_json(model: &str, names: &[&str]) -> RunJson {
    let mut args = vec!["run", model, "--format", "json", "--seeds", RUN_SEEDS];
    for d in names {
        args.extend(["--design", d]);
    }
    let out = retrylab(&args);
    assert!(out.status.success(), "{model}: {}", stderr(&out));
    let run = RunJson::split(&stdout(&out));
    let got: Vec<&str> = run.results.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(got, names, "{model}: one result per design, in order");
    run
}

/// One run's metrics on one line: every count that is not zero, and each histogram's
/// buckets (the highest value of each, `xN` when it holds N > 1 values) and exact maximum.
/// The fields are named one by one (no `..`), so a new field does not go unseen.
fn metrics_line(m: &Metrics) -> String {
    assert_eq!(m.seeds, 1, "the metrics of one run");
    // Every counter of the one list, by name: a new counter shows up here by itself.
    let mut parts: Vec<String> = COUNTERS
        .iter()
        .map(|c| (c.name, (c.total)(m)))
        .filter(|(_, v)| *v != 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    for (name, h) in [
        ("reconciliation_ms", &m.reconciliation_ms),
        ("time_to_outcome_ms", &m.time_to_outcome_ms),
    ] {
        if h.is_empty() {
            continue;
        }
        let (buckets, max) = h.buckets();
        let values: Vec<String> = buckets
            .iter()
            .map(|&(v, n)| {
                if n == 1 {
                    format!("{v}")
                } else {
                    format!("{v}x{n}")
                }
            })
            .collect();
        parts.push(format!("{name} {} (max {max})", values.join(" ")));
    }
    parts.join(", ")
}

/// The snapshot of one model and design.
fn snapshot(
    model: &str,
    d: &'static dyn design::Design,
    run: &RunJson,
    traced: &[Traced],
) -> String {
    let mut text = format!(
        "# retrylab run {model} --format json --seeds {RUN_SEEDS} --design (every design): \
         the result of {}\n",
        d.name()
    );
    text.push_str(&run.only(d.name()));
    let _ = writeln!(
        text,
        "\n# seeds 0..{TRACE_SEEDS} traced (RandomChooser::new(seed)): metrics of each"
    );
    for (seed, t) in traced.iter().enumerate() {
        let _ = writeln!(text, "seed {seed}: {}", metrics_line(&t.metrics));
    }
    for (seed, t) in traced.iter().enumerate().take(TIMELINE_SEEDS as usize) {
        let _ = writeln!(text, "\n# timeline of seed {seed}");
        text.push_str(&t.timeline);
        if !t.timeline.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

#[test]
fn random_simulation_matches_the_snapshots_on_every_bundled_model_and_design() {
    let names = design::names();
    let mut golden = golden::Golden::new();
    for model in models() {
        let run = run_json(&model, &names);
        let m = Model::load(&root().join(&model)).unwrap();
        let dir = model.strip_suffix(".json").unwrap();
        for d in design::all() {
            let traced: Vec<Traced> = (0..TRACE_SEEDS)
                .map(|seed| run_traced(&m, d, &mut RandomChooser::new(seed)))
                .collect();
            let text = snapshot(&model, d, &run, &traced);
            golden.check(&format!("random/{dir}/{}.txt", d.name()), &text);
        }
    }
    golden.stale_under("random");
    golden.finish();
}

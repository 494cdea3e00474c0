//! The guarantee matrix on `models/guarantees/`: each model breaks exactly the assumption
//! its file names (judged for every design), the matrix within 2 faults is the one written
//! out below, every counterexample replays through the binary, and the thread count changes
//! nothing.

use crate::common::cli;

use std::sync::OnceLock;

use cli::{shell, stderr, stdout};
use retrylab::design::{self, Design, assumptions::judge};
use retrylab::model::Model;
use retrylab::report::{Cell, Matrix, REPLAY_PROGRAM, guarantee_matrix};

/// The columns, in the order of the table below: the contract as assumed, then one model
/// per assumption.
const FILES: [&str; 13] = [
    "contract_as_assumed",
    "atomic_dedup",
    "one_key_scope",
    "in_flight_refused_or_held",
    "mismatch_refused_or_original",
    "every_outcome_stored",
    "retention_covers_retries",
    "durable_journal",
    "authorization_survives",
    "read_back_identifies_operation",
    "visibility_bound_covers_lag",
    "lease_covers_step",
    "lease_outlasts_request",
];

fn path(name: &str) -> String {
    format!("models/guarantees/{name}.json")
}

fn models() -> Vec<(String, Model)> {
    FILES
        .iter()
        .map(|n| {
            let file = path(n);
            let model = Model::load(&cli::root().join(&file)).unwrap_or_else(|e| panic!("{e}"));
            (file, model)
        })
        .collect()
}

fn matrix() -> &'static Matrix {
    static M: OnceLock<Matrix> = OnceLock::new();
    M.get_or_init(|| guarantee_matrix(&models(), &design::all(), 2))
}

fn declares(d: &dyn Design, assumption: &str) -> bool {
    d.assumptions().iter().any(|a| a.name == assumption)
}

/// The assumptions of `d` that the model of `file` is meant to break.
fn meant_broken(file: &str, d: &dyn Design) -> Vec<&'static str> {
    let reconciling = matches!(d.name(), "journal_reconcile" | "journal_reconcile_lease");
    let mut out = Vec::new();
    match file {
        "contract_as_assumed" => {}
        // The lease design's assumption replaces in_flight_refused_or_held, and is only
        // checked where the provider does not absorb concurrent requests.
        "lease_outlasts_request" => {
            for a in ["in_flight_refused_or_held", "lease_outlasts_request"] {
                if declares(d, a) {
                    out.push(a);
                }
            }
        }
        // Needed only where the key contract fails: retention, for the reconciling designs.
        "read_back_identifies_operation" | "visibility_bound_covers_lag" if reconciling => {
            out.push("retention_covers_retries");
            out.push(if file == "read_back_identifies_operation" {
                "read_back_identifies_operation"
            } else {
                "visibility_bound_covers_lag"
            });
        }
        "read_back_identifies_operation" | "visibility_bound_covers_lag" => {}
        _ => {
            if declares(d, file) {
                out.push(FILES.iter().find(|f| **f == file).unwrap());
            }
        }
    }
    out
}

#[test]
fn each_model_breaks_exactly_the_assumption_it_names() {
    let mut declared_somewhere = Vec::new();
    for (file, model) in models() {
        let name = FILES.iter().find(|n| path(n) == file).unwrap();
        assert_eq!(&model.name, name, "{file}: the model's name is its file's");
        assert!(
            model.design_list.is_all(),
            "{file}: compares every registered design (\"designs\": \"all\")"
        );
        assert!(model.workload.intents <= 2, "{file}: a small model");
        for d in design::all() {
            let mut broken: Vec<String> = judge(d, &model)
                .into_iter()
                .filter(|j| !j.holds)
                .map(|j| j.name)
                .collect();
            broken.sort();
            let mut want: Vec<String> = meant_broken(name, d)
                .into_iter()
                .map(String::from)
                .collect();
            want.sort();
            assert_eq!(broken, want, "{file}, design {}", d.name());
            if broken.iter().any(|b| b == name) {
                declared_somewhere.push(*name);
            }
        }
    }
    // Every assumption model breaks its assumption for at least one design.
    declared_somewhere.dedup();
    assert_eq!(declared_somewhere, FILES[1..].to_vec());
}

#[test]
fn the_column_labels_come_from_the_judged_assumptions() {
    let labels: Vec<String> = matrix().columns.iter().map(|c| c.label()).collect();
    assert_eq!(
        labels,
        [
            "contract as assumed",
            "atomic_dedup",
            "one_key_scope",
            "in_flight_refused_or_held",
            "mismatch_refused_or_original",
            "every_outcome_stored",
            "retention_covers_retries",
            "durable_journal",
            "authorization_survives",
            "retention_covers_retries + read_back_identifies_operation",
            "retention_covers_retries + visibility_bound_covers_lag",
            "lease_covers_step",
            "in_flight_refused_or_held + lease_outlasts_request",
        ]
    );
}

/// The expected matrix within 2 faults, one row per design, keyed by its name (a name that
/// is not a registered design fails; a registered design without a row is not checked
/// here), one entry per column of [`FILES`]: `ok` certified, `-` not applicable, `P/n` a
/// counterexample violating property P with n faults.
const EXPECTED: &[(&str, [&str; FILES.len()])] = {
    const NA: &str = "-";
    const D0: &str = "no_duplicate/0";
    const D1: &str = "no_duplicate/1";
    const D2: &str = "no_duplicate/2";
    const OK: &str = "ok";
    &[
        // contract, atomic, scope, in_flight, mismatch, stored, retention, durable, auth,
        // read_back, visibility, lease_step, lease_request
        (
            "no_dedup",
            [D1, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA],
        ),
        (
            "same_key",
            [OK, D1, D1, D0, D1, D1, D2, D1, D2, OK, OK, OK, D0],
        ),
        (
            "new_key_after_replan",
            [D1, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA],
        ),
        (
            "key_per_attempt",
            [D1, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA],
        ),
        (
            "payload_hash_key",
            [
                "no_false_success/0",
                NA,
                NA,
                NA,
                NA,
                NA,
                NA,
                NA,
                NA,
                NA,
                NA,
                NA,
                NA,
            ],
        ),
        (
            "journal",
            [OK, D1, D1, D0, OK, D1, D2, D1, D2, OK, OK, OK, D0],
        ),
        (
            "journal_reconcile",
            [OK, D1, D2, OK, OK, OK, OK, D1, D2, OK, OK, OK, OK],
        ),
        (
            "journal_reconcile_lease",
            [OK, D1, D2, OK, OK, OK, OK, D1, D2, D1, D1, OK, OK],
        ),
        (
            "layered_retries",
            [D1, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA],
        ),
        (
            "single_use_token",
            [D1, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA, NA],
        ),
        (
            "durable_authorization",
            [OK, D1, D1, D0, OK, D1, D2, OK, D2, OK, OK, OK, D0],
        ),
    ]
};

/// The matrix row of the design called `name`, which must be registered.
fn row_of(m: &Matrix, name: &str) -> usize {
    assert!(
        design::find(name).is_some(),
        "{name} is not a registered design; registered: {}",
        design::names().join(", ")
    );
    m.designs
        .iter()
        .position(|d| d == name)
        .unwrap_or_else(|| panic!("{name} has no row in the matrix"))
}

fn short(cell: &Cell) -> String {
    match cell {
        Cell::Certified { .. } => "ok".into(),
        Cell::NotApplicable { .. } => "-".into(),
        Cell::Counterexample {
            property, faults, ..
        } => format!("{property}/{faults}"),
        Cell::Incomplete { runs } => format!("incomplete after {runs} runs"),
    }
}

#[test]
fn the_matrix_within_two_faults_is_the_expected_one() {
    let m = matrix();
    assert_eq!(m.max_faults, 2);
    // One row per design searched, in the order given.
    let searched: Vec<&str> = design::all().iter().map(|d| d.name()).collect();
    assert_eq!(m.designs, searched);
    assert_eq!(
        m.properties,
        [
            "no_duplicate",
            "no_false_success",
            "no_false_failure",
            "no_merged_repeat",
            "no_drift",
            "no_masked_mismatch",
            "no_false_resolution",
            "no_wrong_receipt",
            "no_wrong_compensation"
        ]
    );
    let files: Vec<String> = FILES.iter().map(|n| path(n)).collect();
    assert_eq!(
        m.columns.iter().map(|c| c.file.clone()).collect::<Vec<_>>(),
        files
    );
    let mut wrong = Vec::new();
    for (name, row) in EXPECTED {
        let d = row_of(m, name);
        for (c, want) in row.iter().enumerate() {
            let got = short(&m.cells[d][c]);
            if got != *want {
                wrong.push(format!("{name} on {}: got {got}, want {want}", FILES[c]));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_design_without_assumptions_is_searched_only_under_the_contract_as_assumed() {
    let m = matrix();
    for (d, row) in m.cells.iter().enumerate() {
        let promises = !design::find(&m.designs[d])
            .unwrap()
            .assumptions()
            .is_empty();
        for (c, cell) in row.iter().enumerate() {
            let na = matches!(cell, Cell::NotApplicable { .. });
            assert_eq!(
                na,
                !promises && !m.columns[c].broken.is_empty(),
                "{} on {}",
                m.designs[d],
                m.columns[c].file
            );
            if let Cell::NotApplicable { why } = cell {
                assert!(why.contains("declares no assumption"), "{why}");
            }
        }
    }
}

#[test]
fn every_counterexample_replays_through_the_binary() {
    let m = matrix();
    // Those of the designs of the expected matrix are counted: as many as it has.
    let expected = EXPECTED
        .iter()
        .flat_map(|(_, row)| row.iter())
        .filter(|cell| cell.contains('/'))
        .count();
    let mut n = 0;
    for (d, row) in m.cells.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            let Cell::Counterexample {
                property,
                choices,
                replay,
                ..
            } = cell
            else {
                continue;
            };
            if EXPECTED.iter().any(|(name, _)| *name == m.designs[d]) {
                n += 1;
            }
            assert_eq!(
                *replay,
                format!(
                    "{REPLAY_PROGRAM} replay {} --design {} --choices {}+ties:{choices}",
                    m.columns[c].file,
                    m.designs[d],
                    Model::load(&cli::root().join(&m.columns[c].file))
                        .unwrap()
                        .digest()
                )
            );
            // The command as printed, with the built binary in place of `cargo run`.
            let rest = replay.strip_prefix(REPLAY_PROGRAM).unwrap();
            let line = format!("{}{rest}", env!("CARGO_BIN_EXE_retrylab"));
            let out = shell(&line);
            let text = stdout(&out);
            assert_eq!(out.status.code(), Some(0), "{line}\n{}", stderr(&out));
            let violates = text
                .lines()
                .find_map(|l| l.strip_prefix("violates: "))
                .unwrap_or_else(|| panic!("{line}\n{text}"));
            assert!(
                violates.split(", ").any(|p| p == property),
                "{line}: violates {violates}, not {property}"
            );
        }
    }
    assert_eq!(n, expected, "counterexamples replayed");
}

#[test]
fn the_markdown_has_the_table_the_columns_and_every_replay() {
    let m = matrix();
    let md = m.to_markdown();
    assert!(md.contains("| design | [1] | [2] |"), "{md}");
    assert!(
        md.contains("| journal_reconcile_lease | ✓ | ✗ no_duplicate (1) |"),
        "{md}"
    );
    assert!(md.contains(
        "10. **retention_covers_retries + read_back_identifies_operation** (`models/guarantees/read_back_identifies_operation.json`): "
    ), "{md}");
    for row in &m.cells {
        for cell in row {
            if let Cell::Counterexample { replay, .. } = cell {
                assert!(md.contains(&format!("`{replay}`")), "{replay}");
            }
        }
    }
    let json = m.to_json();
    assert_eq!(json["columns"].as_array().unwrap().len(), FILES.len());
    let lease = row_of(m, "journal_reconcile_lease");
    assert_eq!(json["cells"][lease]["design"], "journal_reconcile_lease");
    assert_eq!(
        json["cells"][lease]["cells"][9]["kind"], "counterexample",
        "{json}"
    );
    let no_dedup = row_of(m, "no_dedup");
    assert_eq!(json["cells"][no_dedup]["design"], "no_dedup");
    assert_eq!(
        json["cells"][no_dedup]["cells"][1]["kind"],
        "not_applicable"
    );
}

#[test]
fn the_matrix_is_the_same_on_one_and_two_threads() {
    let models = models();
    let designs = design::all();
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| guarantee_matrix(&models, &designs, 2))
    };
    let (one, two) = (on(1), on(2));
    assert_eq!(
        serde_json::to_string(&one.to_json()).unwrap(),
        serde_json::to_string(&two.to_json()).unwrap()
    );
    assert_eq!(one.to_markdown(), two.to_markdown());
    assert_eq!(&one, matrix());
}

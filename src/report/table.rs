//! The table form of a report.
//!
//! The default table fits 100 columns: three lines per design. The first two: the outcome
//! of each intent as shares that add up to 100 % with their 95 % Wilson intervals below,
//! duplicate effects and remote calls per intent, reconciliation time p50 (p99 below) in
//! human units. The third says what happened to the user first (`harm: 1000 duplicate
//! effects in 1000 intents`, or `no harm in ...`), then the verdict of the model's
//! expectations, marked `*` when the design's guarantee does not apply to the model (a
//! footnote below the table names the contract assumption that does not hold): met
//! expectations never read as "safe" beside a duplicate. `--wide` keeps every count on one
//! line per design.

use std::fmt::Write;

use super::stats::{Rate, human_ms, shares_in_tenths, tenths_text};
use crate::check::Metrics;
use crate::check::counters::{self, COUNTERS, Wide, outcomes, per_intent};
use crate::explore::{DesignResult, Report};
use crate::model::Want;

/// Column headers of the default table and what each means (printed by `--help`): the
/// design, the outcome shares and the per-intent counts the counter list puts in the table,
/// the reconciliation time.
pub fn columns() -> Vec<(&'static str, &'static str)> {
    let mut out = vec![(
        "design",
        "executor design under test; below its figures, what happened to the user (harm: duplicate effects, false successes or failures, unresolved intents...), then the verdict of the model's expectations (* its guarantee does not apply: see the note below the table)",
    )];
    out.extend(outcomes().filter_map(|c| Some((c.table?, c.meaning))));
    out.extend(per_intent().filter_map(|c| Some((c.table?, c.meaning))));
    out.extend([
        (
            "recon",
            "time from unknown to a true resolution: p50, p99 below",
        ),
        ("(below)", "95 % Wilson interval of each share, in percent"),
    ]);
    out
}

/// Column headers of `--wide` and what each means: every counter the list shows there.
pub fn wide_columns() -> Vec<(&'static str, &'static str)> {
    let mut out = vec![("design", "executor design under test")];
    out.extend(COUNTERS.iter().filter_map(|c| match c.wide {
        Wide::Hidden => None,
        Wide::Total(h) | Wide::PerIntent(h) => Some((h, c.meaning)),
    }));
    out.extend([
        ("recon_p50/p99", "time unknown before a true resolution, ms"),
        (
            "outcome_p50",
            "time from intent to success/failure message, ms",
        ),
        ("viol_seeds", "seeds violating any property"),
        (
            "verdict",
            "the model's expectations: ok, or how many failed (* guarantee does not apply)",
        ),
    ]);
    out
}

/// The harms a sweep's metrics count, each with its singular and plural name: what
/// happened to the user, whatever the model expects.
fn harms(m: &Metrics) -> [(u64, &'static str, &'static str); 9] {
    [
        (m.duplicate_effects, "duplicate effect", "duplicate effects"),
        (m.false_success, "false success", "false successes"),
        (m.false_failure, "false failure", "false failures"),
        (m.unresolved, "unresolved intent", "unresolved intents"),
        (m.drifted_effects, "drifted effect", "drifted effects"),
        (m.merged_repeats, "merged repeat", "merged repeats"),
        (m.wrong_receipts, "wrong receipt", "wrong receipts"),
        (
            m.wrong_compensations,
            "wrong compensation",
            "wrong compensations",
        ),
        (m.masked_mismatches, "masked mismatch", "masked mismatches"),
    ]
}

/// Names of the counters [`harms`] reads, for the test that keeps it in step with
/// [`crate::check::counters::COUNTERS`].
#[cfg(test)]
const HARM_COUNTERS: [&str; 9] = [
    "duplicate_effects",
    "false_success",
    "false_failure",
    "unresolved",
    "drifted_effects",
    "merged_repeats",
    "wrong_receipts",
    "wrong_compensations",
    "masked_mismatches",
];

/// Whether a sweep harmed the user: a duplicate effect, a false success or failure, an
/// unresolved intent, a drifted effect, a merged repeat, a wrong receipt or compensation,
/// or a masked mismatch.
pub fn harmed(m: &Metrics) -> bool {
    harms(m).iter().any(|h| h.0 > 0)
}

/// What happened to the user over a sweep, stated before any expectation: `harm: 1000
/// duplicate effects in 1000 intents`, or `no harm in 1000 intents` (no duplicate effect,
/// false success or failure, unresolved intent, drifted effect or masked mismatch).
pub fn harm(m: &Metrics) -> String {
    let named: Vec<String> = harms(m)
        .iter()
        .filter(|h| h.0 > 0)
        .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
        .collect();
    let intents = format!(
        "{} intent{}",
        m.intents,
        if m.intents == 1 { "" } else { "s" }
    );
    if named.is_empty() {
        format!("no harm in {intents}")
    } else {
        format!("harm: {} in {intents}", named.join(", "))
    }
}

/// `ok (N met)` or `FAIL (k of N)` (which ones are listed below the table), or `no
/// expectations` when the
/// model expects nothing of the design.
pub fn verdict(r: &DesignResult) -> String {
    match (r.expect.len(), r.unmet().len()) {
        (0, _) => "no expectations".to_string(),
        (n, 0) => format!("ok ({n} met)"),
        (n, k) => format!("FAIL ({k} of {n})"),
    }
}

/// The line under a design's figures: what happened to the user first, then the verdict of
/// the expectations, wrapped to the table's width.
fn verdict_line(r: &DesignResult) -> String {
    let expectations = match r.expect.len() {
        0 => "no expectations".to_string(),
        _ => format!("expectations {}", verdict(r)),
    };
    let text = format!("{}; {expectations}{}", harm(&r.metrics), mark(r));
    wrap("  ", &text, NOTE_WIDTH, "    ")
}

/// `" *"` when one of the design's contract assumptions does not hold on the model.
fn mark(r: &DesignResult) -> &'static str {
    if r.failed_assumptions().next().is_some() {
        " *"
    } else {
        ""
    }
}

/// The width footnotes are wrapped to, like the table.
const NOTE_WIDTH: usize = 100;

/// The footnote of the `*` mark: one line per contract assumption that does not hold,
/// wrapped to 100 columns.
fn assumption_notes(report: &Report) -> String {
    let mut out = String::new();
    for r in &report.results {
        for a in r.failed_assumptions() {
            if out.is_empty() {
                out.push_str(
                    "* the design's guarantee does not apply: an assumption it rests on does not hold\n",
                );
            }
            let note = format!("{}: {}: {}", r.design, a.name, a.why);
            out.push_str(&wrap("  ", &note, NOTE_WIDTH, "      "));
        }
    }
    out
}

/// `text` cut into lines of at most `width` columns at spaces (a longer word keeps its own
/// line), the first line after `first`, the others after `then`.
fn wrap(first: &str, text: &str, width: usize, then: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = then.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

fn header(report: &Report) -> String {
    let last = report.first_seed + report.seed_count.saturating_sub(1);
    format!(
        "model {}: {} seed{} per design (seeds {}..={})\n",
        report.model,
        report.seed_count,
        if report.seed_count == 1 { "" } else { "s" },
        report.first_seed,
        last
    )
}

/// Lays out rows: the first column left-aligned, the others right-aligned, one space apart
/// (two after the first).
fn layout(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            if i == 0 {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad + 1));
            } else {
                line.push(' ');
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The report as the default three-line-per-design table, then what failed.
pub fn render(report: &Report) -> String {
    let mut rows: Vec<Vec<String>> = vec![
        columns()
            .iter()
            .filter(|(h, _)| *h != "(below)")
            .map(|(h, _)| h.to_string())
            .collect(),
    ];
    let mut verdicts = Vec::new();
    for r in &report.results {
        let m = &r.metrics;
        let counts = m.outcome_counts();
        let tenths = shares_in_tenths(&counts);
        let recon = m.reconciliation_ms.percentiles();
        let human = |v: Option<u64>| v.map_or("-".to_string(), human_ms);
        let per_intent = |x: u64| {
            if m.intents == 0 {
                "-".to_string()
            } else {
                format!("{:.2}", x as f64 / m.intents as f64)
            }
        };
        let mut first = vec![r.design.clone()];
        first.extend(tenths.iter().map(|&t| tenths_text(t)));
        let shown = || counters::per_intent().filter(|c| c.table.is_some());
        first.extend(shown().map(|c| per_intent((c.total)(m))));
        first.push(human(recon.p50));
        let mut second = vec![String::new()];
        second.extend(
            counts
                .iter()
                .map(|&k| Rate::wilson(k, m.intents).interval_text()),
        );
        second.extend(shown().map(|_| String::new()));
        second.push(human(recon.p99));
        rows.push(first);
        rows.push(second);
        verdicts.push(verdict_line(r));
    }
    let mut out = header(report);
    out.push_str(
        "outcome of each intent (95 % Wilson interval below), duplicate effects and remote calls\nper intent, reconciliation time p50 (p99 below); below, what happened to the user, then the\nverdict of the model's expectations\n\n",
    );
    // Each design's two rows of figures, then its verdict line, which is not a column.
    let laid = layout(&rows);
    let mut lines = laid.lines();
    if let Some(head) = lines.next() {
        out.push_str(head);
        out.push('\n');
    }
    for v in &verdicts {
        for _ in 0..2 {
            if let Some(l) = lines.next() {
                out.push_str(l);
                out.push('\n');
            }
        }
        out.push_str(v);
    }
    out.push_str(&assumption_notes(report));
    out.push_str(&unmet_lines(report));
    out
}

/// The report with every count on one line per design.
pub fn render_wide(report: &Report) -> String {
    let mut rows: Vec<Vec<String>> =
        vec![wide_columns().iter().map(|(h, _)| h.to_string()).collect()];
    for r in &report.results {
        let m = &r.metrics;
        let recon = m.reconciliation_ms.percentiles();
        let outcome = m.time_to_outcome_ms.percentiles();
        let ms = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        let mut row = vec![r.design.clone()];
        row.extend(COUNTERS.iter().filter_map(|c| match c.wide {
            Wide::Hidden => None,
            Wide::Total(_) => Some((c.total)(m).to_string()),
            Wide::PerIntent(_) => Some(format!(
                "{:.2}",
                if m.intents == 0 {
                    0.0
                } else {
                    (c.total)(m) as f64 / m.intents as f64
                }
            )),
        }));
        row.extend([
            format!("{}/{}", ms(recon.p50), ms(recon.p99)),
            ms(outcome.p50),
            r.violations.any.to_string(),
            format!("{}{}", verdict(r), mark(r)),
        ]);
        rows.push(row);
    }
    let mut out = header(report);
    out.push_str(&layout(&rows));
    out.push_str(&assumption_notes(report));
    out.push_str(&unmet_lines(report));
    out
}

/// One line per design some of whose seeds were cut by the events budget: their figures are
/// those of the runs so far, and no expectation is met.
fn budget_lines(report: &Report) -> String {
    let mut out = String::new();
    for r in &report.results {
        let n = r.metrics.budget_runs;
        if n > 0 {
            let note = format!(
                "events budget: {} stopped {n} of {} seeds after {} events, before the horizon; their figures are those of the run so far, and no property is shown to hold or to fail on them; shorten the horizon or the workload to finish within the budget",
                r.design,
                report.seed_count,
                crate::world::MAX_EVENTS
            );
            out.push_str(&wrap("", &note, NOTE_WIDTH, "  "));
        }
    }
    out
}

/// One line per expectation the sweep did not meet.
fn unmet_lines(report: &Report) -> String {
    let mut out = budget_lines(report);
    for r in &report.results {
        if r.metrics.budget_runs > 0 {
            continue;
        }
        for (p, want) in r.unmet() {
            let n = r.violations.of(p);
            let _ = match want {
                Want::Hold => writeln!(
                    out,
                    "expectation not met: {} must hold {p}, violated on {n} of {} seeds (`check` shrinks a counterexample)",
                    r.design, report.seed_count
                ),
                Want::Violate => writeln!(
                    out,
                    "expectation not met: {} must violate {p} on some seed, none of {} did",
                    r.design, report.seed_count
                ),
            };
        }
    }
    out
}

/// The violating seeds kept by `--show-failures`, each with the command that replays it.
pub fn render_failures(report: &Report) -> String {
    let mut out = String::new();
    for r in &report.results {
        for ((p, n), seeds) in r.violations.counts.iter().zip(&r.failures) {
            if seeds.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "\n{} violates {p} on {n} of {} seeds; the first {}:",
                r.design,
                report.seed_count,
                seeds.len()
            );
            for &seed in seeds {
                let _ = writeln!(
                    out,
                    "  seed {seed}: {}",
                    report.replay.seed(&r.design, seed)
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod harm_tests {
    use super::*;
    use crate::check::counters::{COUNTERS, Kind};

    /// Every counter that is a harm to the user (a per-intent count other than remote
    /// calls, or an outcome other than a completion or a true failure) is stated, and each
    /// entry reads its own counter.
    #[test]
    fn every_harm_counter_is_stated() {
        for c in COUNTERS {
            let harm = match c.kind {
                Kind::PerIntent => c.name != "remote_calls",
                Kind::Outcome { .. } => !matches!(c.name, "completed" | "true_failures"),
                _ => false,
            };
            assert_eq!(HARM_COUNTERS.contains(&c.name), harm, "{}", c.name);
        }
        let mut v = serde_json::to_value(Metrics::default()).unwrap();
        for (i, name) in HARM_COUNTERS.iter().enumerate() {
            v[name] = serde_json::json!(i as u64 + 1);
        }
        let m: Metrics = serde_json::from_value(v).unwrap();
        let got: Vec<u64> = harms(&m).iter().map(|h| h.0).collect();
        assert_eq!(got, (1..=9).collect::<Vec<u64>>());
    }
}

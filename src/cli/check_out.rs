//! `check`'s machine forms: one JSON object (`--format json`) and JUnit XML (`--format
//! junit`, `--junit FILE`), both from the data the text form renders.
//!
//! JUnit, as GitHub's and GitLab's test reports read it: a `<testsuite>` per model (its
//! path and name), a `<testcase>` per expectation (`classname` the model's name, `name`
//! `DESIGN WANT PROPERTY`) and per exhaustive search (`DESIGN explore`); an expectation not
//! met has a `<failure>` whose text is what the table prints about it (the shrunk
//! counterexample, its timeline and the replay command); a search that stopped at its limit
//! is `<skipped>` with the reason (it is neither a pass nor a failure; the exit code 3 says
//! so to the job), and so is a model without expectations (one test case, `(no
//! expectations)`). Each design's test cases carry its harm line in `<system-out>`.

use std::fmt::Write;

use serde_json::{Value, json};

use super::check::{Certification, CheckOptions, CounterexampleText, DesignView, ModelView, Tally};
use crate::check::Metrics;
use crate::explore::check::Judged;
use crate::explore::suite::Explored;
use crate::report::table::harm;

/// The `harm` object of a design: what happened to the user, as exact counts.
fn harm_json(m: &Metrics) -> Value {
    json!({
        "text": harm(m),
        "intents": m.intents,
        "duplicate_effects": m.duplicate_effects,
        "false_success": m.false_success,
        "false_failure": m.false_failure,
        "unresolved": m.unresolved,
        "drifted_effects": m.drifted_effects,
        "masked_mismatches": m.masked_mismatches,
        "budget_runs": m.budget_runs,
    })
}

/// The JSON form: see docs/check.md (`check --format json`).
pub(super) fn json(
    o: &CheckOptions,
    views: &[ModelView<'_>],
    tally: &Tally,
    determinism: Option<&Vec<Result<String, String>>>,
) -> String {
    let models: Vec<Value> = views.iter().map(model_json).collect();
    let verdict = tally.verdict();
    let doc = json!({
        "format": "retrylab-check",
        "version": 1,
        "seeds": {"first": o.first_seed, "count": o.seeds},
        "verdict": verdict.name(),
        "exit_code": verdict.exit_code(),
        "summary": {
            "met": tally.met,
            "not_met": tally.unmet,
            "not_certified": tally.not_certified,
            "models_without_expectations": tally.empty,
        },
        "determinism": determinism.map(|rs| rs.iter().map(|r| match r {
            Ok(line) => json!({"ok": true, "text": line}),
            Err(m) => json!({"ok": false, "text": m}),
        }).collect::<Vec<_>>()),
        "models": models,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// One model's object: what identifies it, and each design's.
fn model_json(v: &ModelView<'_>) -> Value {
    let designs: Vec<Value> = v.designs.iter().map(|d| design_json(v, d)).collect();
    json!({
        "path": v.data.path,
        "name": v.data.name,
        "digest": v.data.digest,
        "has_expectations": !v.designs.is_empty(),
        "designs": designs,
    })
}

/// One design's object: its harm, each expectation, its search and its assumptions.
fn design_json(v: &ModelView<'_>, d: &DesignView<'_>) -> Value {
    let expectations: Vec<Value> = d
        .judged
        .iter()
        .map(|(j, c)| expectation_json(v, &d.data.design, j, c.as_ref()))
        .collect();
    let explore = d
        .data
        .explore
        .as_ref()
        .map(|e| explore_json(v, &d.data.design, e));
    json!({
        "design": d.data.design,
        "harm": harm_json(&d.data.metrics),
        "expectations": expectations,
        "explore": explore,
        "assumptions": d.data.assumptions_line.trim(),
        "assumption_warnings": d.data.assumption_warnings,
    })
}

/// One expectation's object; its counterexample carries both replay commands (by seed, and
/// by the shrunk choices).
fn expectation_json(
    v: &ModelView<'_>,
    design: &str,
    j: &Judged,
    c: Option<&CounterexampleText>,
) -> Value {
    json!({
        "property": j.property.to_string(),
        "want": j.want.name(),
        "met": j.met(),
        "violating_seeds": j.violating,
        "budget_seeds": j.budget,
        "counterexample": c.map(|c| json!({
            "seed": c.seed,
            "trace": v.replay.seed(design, c.seed),
            "choices": c.choices,
            "choices_len": c.choices_len,
            "original_len": c.original_len,
            "shrink_runs": c.runs,
            "replay": v.replay.choices(design, &c.choices),
        })),
    })
}

/// A design's search within the model's bound, each violation with its replay line.
fn explore_json(v: &ModelView<'_>, design: &str, e: &Explored) -> Value {
    json!({
        "status": e.status.name(),
        "max_faults": e.max_faults,
        "max_runs": e.max_runs,
        "runs": e.runs,
        "line": e.line.trim(),
        "reason": e.reason,
        "violations": e.violations.iter().map(|(text, vector)| json!({
            "text": text,
            "replay": v.search_replay(design, vector),
        })).collect::<Vec<_>>(),
    })
}

/// `text` escaped for XML character data and attribute values; characters XML 1.0 cannot
/// hold (control characters other than tab, newline and carriage return) are dropped.
pub(super) fn xml_escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&apos;"),
            '\t' | '\n' | '\r' => s.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => s.push(c),
        }
    }
    s
}

/// One test case.
struct Case {
    name: String,
    /// `None` passed; `Some((kind, message, text))`: `kind` `failure` or `skipped`.
    outcome: Option<(&'static str, String, String)>,
    system_out: String,
}

/// The JUnit XML form (see the module's documentation).
pub(super) fn junit(views: &[ModelView<'_>], tally: &Tally) -> String {
    let mut suites = String::new();
    let (mut tests, mut failures, mut skipped) = (0, 0, 0);
    for v in views {
        let cases = model_cases(v, tally.allow_empty);
        let n_fail = count(&cases, "failure");
        let n_skip = count(&cases, "skipped");
        tests += cases.len();
        failures += n_fail;
        skipped += n_skip;
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{n_fail}\" errors=\"0\" skipped=\"{n_skip}\">",
            xml_escape(&format!("{} ({})", v.data.path, v.data.name)),
            cases.len()
        );
        for c in &cases {
            write_case(&mut suites, v, c);
        }
        suites.push_str("  </testsuite>\n");
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"retrylab check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n{suites}</testsuites>\n"
    )
}

/// How many of `cases` ended as `kind` (`failure` or `skipped`).
fn count(cases: &[Case], kind: &str) -> usize {
    cases
        .iter()
        .filter(|c| matches!(&c.outcome, Some((k, ..)) if *k == kind))
        .count()
}

/// A model's test cases: one per expectation and per search of each design, or, for a
/// model without expectations, one that is skipped unless that is allowed.
fn model_cases(v: &ModelView<'_>, allow_empty: bool) -> Vec<Case> {
    let mut cases = Vec::new();
    if v.designs.is_empty() {
        cases.push(Case {
            name: "(no expectations)".into(),
            outcome: (!allow_empty).then(|| {
                (
                    "skipped",
                    "the model has no expectations: nothing is checked (add an \"expect\" section, or pass --allow-no-expectations)".to_string(),
                    String::new(),
                )
            }),
            system_out: String::new(),
        });
    }
    for d in &v.designs {
        let harm_text = format!("{}: {}\n", d.data.design, harm(&d.data.metrics));
        for (j, c) in &d.judged {
            cases.push(Case {
                name: format!("{} {} {}", d.data.design, j.want.name(), j.property),
                outcome: expectation_outcome(v, j, c.as_ref()),
                system_out: harm_text.clone(),
            });
        }
        if let Some(e) = &d.data.explore {
            cases.push(Case {
                name: format!("{} explore", d.data.design),
                outcome: explore_outcome(v, &d.data.design, e),
                system_out: harm_text.clone(),
            });
        }
    }
    cases
}

/// An expectation not met fails with its explanation's first line as the message, and
/// the whole explanation as the text.
fn expectation_outcome(
    v: &ModelView<'_>,
    j: &Judged,
    c: Option<&CounterexampleText>,
) -> Option<(&'static str, String, String)> {
    (!j.met()).then(|| {
        let explained = v.explain(j, c);
        let message = explained
            .trim_start()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        ("failure", message, explained.trim_start().to_string())
    })
}

/// A search passes when certified, is skipped (with why) when it stopped at its limit, and
/// fails with each violation and its replay line.
fn explore_outcome(
    v: &ModelView<'_>,
    design: &str,
    e: &Explored,
) -> Option<(&'static str, String, String)> {
    match e.status {
        Certification::Certified => None,
        Certification::NotCertified => Some((
            "skipped",
            format!(
                "not certified: {}",
                e.reason
                    .as_deref()
                    .unwrap_or("the search did not cover its bound")
            ),
            String::new(),
        )),
        Certification::Violated => {
            let mut text = String::new();
            for (t, vector) in &e.violations {
                text.push_str(t);
                let _ = writeln!(text, "replay: {}", v.search_replay(design, vector));
            }
            Some(("failure", e.line.trim().to_string(), text))
        }
    }
}

/// One `<testcase>` element; an empty one closes on its own line.
fn write_case(suites: &mut String, v: &ModelView<'_>, c: &Case) {
    let _ = write!(
        suites,
        "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\">",
        xml_escape(&v.data.name),
        xml_escape(&c.name),
        xml_escape(&v.data.path)
    );
    match &c.outcome {
        None => {}
        Some(("skipped", message, _)) => {
            let _ = write!(
                suites,
                "\n      <skipped message=\"{}\"/>",
                xml_escape(message)
            );
        }
        Some((kind, message, text)) => {
            let _ = write!(
                suites,
                "\n      <{kind} message=\"{}\" type=\"retrylab\">{}</{kind}>",
                xml_escape(message),
                xml_escape(text)
            );
        }
    }
    if !c.system_out.is_empty() {
        let _ = write!(
            suites,
            "\n      <system-out>{}</system-out>",
            xml_escape(&c.system_out)
        );
    }
    if c.outcome.is_some() || !c.system_out.is_empty() {
        suites.push_str("\n    ");
    }
    suites.push_str("</testcase>\n");
}

#[cfg(test)]
mod tests {
    use super::xml_escape;

    #[test]
    fn xml_is_escaped() {
        assert_eq!(
            xml_escape("a<b & 'c' > \"d\"\u{1}\te\n"),
            "a&lt;b &amp; &apos;c&apos; &gt; &quot;d&quot;\te\n"
        );
    }
}

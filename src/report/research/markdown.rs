//! The report as Markdown.

use std::fmt::Write;

use super::headline::{READING, headline_table, headline_text};
use super::providers::{PROVIDER_TABLE_NOTE, provider_footnotes, provider_tables};
use super::tables::{
    COUNTEREXAMPLES_NOTE, MODEL_TABLE_NOTE, distributions_table, expectation_text, model_table,
    shown,
};
use super::{METHOD, Research, provenance_text, source_text};

/// The whole report as Markdown: the headline table first, then the guarantee matrix, the
/// method, and each model's tables and counterexamples.
pub fn render_markdown(research: &Research) -> String {
    let mut s = String::new();
    s.push_str("# retrylab comparison report\n\n");
    s.push_str(&crate::report::recommend::markdown(&research.parts));
    s.push_str("\n## Headline\n\n");
    s.push_str(&headline_table(&research.parts).to_markdown());
    let _ = writeln!(s, "\n{}", headline_text(research));
    let _ = writeln!(s, "\n{}", provenance_text(&research.provenance));
    s.push_str("\nChoosing a design with this report:\n\n");
    for (i, step) in READING.iter().enumerate() {
        let _ = writeln!(s, "{}. {step}", i + 1);
    }
    for (file, t) in provider_tables(&research.parts) {
        let _ = writeln!(s, "\n## Provider comparison: `{file}`\n");
        s.push_str(&t.to_markdown());
        let _ = writeln!(s, "\n{PROVIDER_TABLE_NOTE}\n");
        for note in provider_footnotes(&research.parts, &file) {
            let _ = writeln!(s, "- \\* {note}");
        }
    }
    if let Some(m) = &research.matrix {
        s.push_str("\n## Guarantee matrix\n\n");
        s.push_str(&m.markdown);
    }
    s.push_str("\n## Method\n\n");
    for (k, v) in METHOD {
        let _ = writeln!(s, "- **{k}**: {v}.");
    }
    for p in &research.parts {
        let _ = writeln!(
            s,
            "\n## {}\n\n{}\n\n{}.\n",
            p.report.model,
            p.description,
            source_text(p)
        );
        s.push_str(&model_table(p).to_markdown());
        let _ = writeln!(s, "\n{MODEL_TABLE_NOTE}\n");
        s.push_str(&distributions_table(p).to_markdown());
        let shown = shown(p);
        if !shown.is_empty() {
            let _ = writeln!(s, "\n{COUNTEREXAMPLES_NOTE}\n");
            for (design, c) in shown {
                let _ = writeln!(
                    s,
                    "- `{design}` violates `{}` ({}; seed {}, {} choices from {}): `{}`",
                    c.property,
                    expectation_text(c),
                    c.seed,
                    c.choices_len,
                    c.original_len,
                    c.replay
                );
            }
        }
    }
    s
}

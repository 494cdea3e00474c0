//! The report as one self-contained HTML page: inline CSS, inline SVG charts, no script, no
//! font, image or stylesheet fetched from anywhere. Readable on a phone (wide tables scroll
//! inside their box, charts scale to the width) and on paper (a print stylesheet).

use std::fmt::Write;

use super::matrix::{Cell, MAX_RUNS, Matrix, legend};
use super::recommend;
use super::research::{
    COUNTEREXAMPLES_NOTE, METHOD, MODEL_TABLE_NOTE, ModelPart, PROVIDER_TABLE_NOTE, READING,
    Research, Shown, Table, distributions_table, expectation_text, headline_table, headline_text,
    model_table, provenance_text, provider_footnotes, provider_tables, shown, source_text,
};

/// `text` with `&`, `<`, `>` and `"` escaped.
pub fn esc(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            c => s.push(c),
        }
    }
    s
}

/// Text with `code` spans (between backticks) as `<code>`, the rest escaped.
fn inline(text: &str) -> String {
    let mut s = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(s, "<code>{}</code>", esc(part));
        } else {
            s.push_str(&esc(part));
        }
    }
    s
}

/// `text` escaped, with a line-break opportunity after each `_` (`<wbr>`): a long design or
/// preset name in a narrow column breaks there instead of widening the table.
fn breakable(text: &str) -> String {
    esc(text).replace('_', "_<wbr>")
}

/// A table in a box that scrolls sideways on a narrow screen.
pub fn table_html(t: &Table) -> String {
    table_html_class(t, "")
}

/// [`table_html`] with a class on the table (`compact`: names in the head break after
/// `_`, so that many columns fit a window).
fn table_html_class(t: &Table, class: &str) -> String {
    let mut s = if class.is_empty() {
        String::from("<div class=\"scroll\"><table>\n<thead><tr>")
    } else {
        format!("<div class=\"scroll\"><table class=\"{class}\">\n<thead><tr>")
    };
    for h in &t.head {
        if class == "compact" {
            let _ = write!(s, "<th>{}</th>", breakable(h));
        } else {
            let _ = write!(s, "<th>{}</th>", esc(h));
        }
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        s.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            if i == 0 {
                let _ = write!(s, "<th scope=\"row\">{}</th>", esc(c));
            } else {
                let _ = write!(s, "<td>{}</td>", esc(c));
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    s
}

const STYLE: &str = "\
:root{color-scheme:light}
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;line-height:1.45;color:#1a1a1a;background:#fff;margin:0 auto;padding:0 1rem 3rem;max-width:84rem}
h1{font-size:1.6rem;margin:1.2rem 0 .4rem}
h2{font-size:1.3rem;margin-top:2.4rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
h3{font-size:1.05rem;margin-top:1.4rem}
p,li{max-width:48rem}
.scroll{overflow-x:auto;margin:.6rem 0}
table{border-collapse:collapse;font-size:.82rem}
th,td{border:1px solid #d0d0d0;padding:.25rem .45rem;text-align:left;vertical-align:top}
thead th{background:#f3f3f3}
tbody th{font-weight:600;white-space:nowrap}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em;background:#f5f5f5;padding:0 .2em;overflow-wrap:anywhere}
figure{margin:1rem 0;break-inside:avoid}
figure svg{display:block;width:100%;max-width:760px;height:auto}
figcaption{font-size:.85rem;color:#555}
nav ul{columns:2;font-size:.9rem}
.certified{background:#e6f4ea}
.counterexample{background:#fce8e6}
.na{color:#777}
table.matrix td{text-align:center}
table.matrix thead th{font-weight:400;font-size:.75rem;vertical-align:bottom}
details.model{border-top:1px solid #ddd;margin-top:1rem}
details.model>summary{cursor:pointer}
details.model>summary h2{display:inline;border:0;margin:1rem 0 .4rem;overflow-wrap:anywhere}
table.pick td{vertical-align:top}
table.pick details{font-size:.9em}
.incomplete{background:#fff4d6}
ul.cx li{margin:.3rem 0}
details.diagram svg{display:block;width:100%;height:auto;max-width:100%}
@media (max-width:40rem){nav ul{columns:1}body{padding:0 .6rem 2rem}}
@media print{nav{display:none}.scroll{overflow:visible}body{max-width:none}h2{break-after:avoid}a{color:inherit;text-decoration:none}}
";

/// A run's sequence diagram, folded: drawn only when the reader opens it.
fn diagram_html(svg: &str) -> String {
    if svg.is_empty() {
        return String::new();
    }
    format!("\n<details class=\"diagram\"><summary>sequence diagram</summary>\n{svg}</details>")
}

/// The anchor of a counterexample of model part `part` (`p`): by the design's place in the
/// part and the property's name (the only characters of a property name that an id may not
/// hold are the parentheses of `resolved_within(T)`, as `-`; names differ before them).
pub fn cx_anchor(p: &ModelPart, part: usize, design: &str, c: &Shown) -> String {
    let d = p
        .report
        .results
        .iter()
        .position(|r| r.design == design)
        .map_or(0, |i| i + 1);
    let property: String = c
        .property
        .to_string()
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '_' {
                ch
            } else {
                '-'
            }
        })
        .collect();
    format!("cx-{}-{d}-{property}", part + 1)
}

fn counterexamples_html(p: &ModelPart, part: usize, list: &[(&str, &Shown)]) -> String {
    let mut s = format!(
        "<h3>Counterexamples</h3>\n<p>{}</p>\n<ul class=\"cx\">\n",
        esc(COUNTEREXAMPLES_NOTE)
    );
    // A run that violates several properties is drawn once; the others link to it.
    let mut drawn: Vec<(&str, String)> = Vec::new();
    for (design, c) in list {
        let anchor = cx_anchor(p, part, design, c);
        let diagram = match drawn.iter().find(|(replay, _)| *replay == c.replay) {
            Some((_, first)) => {
                format!("<br>the same run as <a href=\"#{first}\">the diagram above</a>")
            }
            None => {
                drawn.push((&c.replay, anchor.clone()));
                diagram_html(&c.diagram)
            }
        };
        let _ = writeln!(
            s,
            "<li id=\"{anchor}\"><code>{}</code> violates <code>{}</code> ({}; seed {}, {} choices from {}):<br><code>{}</code>{diagram}</li>",
            esc(design),
            esc(&c.property.to_string()),
            esc(expectation_text(c)),
            c.seed,
            c.choices_len,
            c.original_len,
            esc(&c.replay),
        );
    }
    s.push_str("</ul>\n");
    s
}

/// What to pick, per scenario: the rule, then a table whose rows fold the designs not
/// recommended (each with its reason and a link to its counterexample).
fn recommendation_html(parts: &[ModelPart]) -> String {
    let mut s = String::from("<section id=\"pick\">\n<h2>What to pick</h2>\n");
    let _ = writeln!(s, "<p>{}</p>", esc(recommend::RULE));
    s.push_str("<div class=\"scroll\"><table class=\"pick\">\n<thead><tr><th>scenario</th><th>recommendation</th></tr></thead>\n<tbody>\n");
    for r in recommend::recommendations(parts) {
        let mut excluded = String::new();
        for e in &r.excluded {
            let _ = write!(
                excluded,
                "<li><code>{}</code>: {}",
                esc(&e.design),
                esc(&e.reason)
            );
            if let Some(c) = e.counterexample {
                let _ = write!(
                    excluded,
                    " (<a href=\"#{}\">counterexample</a>)",
                    cx_anchor(&parts[r.part], r.part, &e.design, c)
                );
            }
            excluded.push_str("</li>\n");
        }
        let _ = writeln!(
            s,
            "<tr><td><a href=\"#model-{}\">{}</a></td><td>{}<details><summary>{} not recommended</summary>\n<ul>\n{excluded}</ul></details></td></tr>",
            r.part + 1,
            esc(&r.scenario),
            esc(&r.summary()),
            r.excluded.len()
        );
    }
    s.push_str("</tbody>\n</table></div>\n</section>\n");
    s
}

fn part_html(index: usize, p: &ModelPart, charts: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<details class=\"model\" id=\"model-{}\">\n<summary><h2>{}</h2></summary>\n<p>{}</p>\n<p>{}.</p>",
        index + 1,
        esc(&p.report.model),
        inline(&p.description),
        inline(&source_text(p))
    );
    s.push_str(&table_html(&model_table(p)));
    let _ = writeln!(s, "<p>{}</p>", inline(MODEL_TABLE_NOTE));
    s.push_str(charts);
    s.push_str(&table_html(&distributions_table(p)));
    let list = shown(p);
    if !list.is_empty() {
        s.push_str(&counterexamples_html(p, index, &list));
    }
    s.push_str("</details>\n");
    s
}

/// The guarantee matrix as an HTML fragment: the table (numbered columns, each named in
/// its header's title and in the list below), the legend, the columns, the counterexamples.
pub fn matrix_html(m: &Matrix) -> String {
    let k = m.max_faults;
    let plural = if k == 1 { "" } else { "s" };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<p>Every schedule with at most {k} fault{plural} (exhaustive depth-first search, at most {MAX_RUNS} runs per cell), checking {}. Each column is a small model that breaks the assumptions it is named by (judged from its knobs); the first breaks none.</p>",
        esc(&m.properties.join(", "))
    );
    matrix_table(&mut s, m);
    let _ = writeln!(s, "<p>{}</p>\n<ol>", esc(&legend(k)));
    for (i, c) in m.columns.iter().enumerate() {
        let _ = writeln!(
            s,
            "<li id=\"matrix-column-{}\"><strong>{}</strong> (<code>{}</code>): {}</li>",
            i + 1,
            esc(&c.label()),
            esc(&c.file),
            inline(&c.description)
        );
    }
    s.push_str("</ol>\n<h3>Counterexamples of the matrix</h3>\n<ul class=\"cx\">\n");
    matrix_counterexamples(&mut s, m);
    s.push_str("</ul>\n");
    s
}

/// The matrix's table: numbered column headers with their labels, a row per design, a cell
/// per column whose class says its verdict and whose title says it in words.
fn matrix_table(s: &mut String, m: &Matrix) {
    s.push_str("<div class=\"scroll\"><table class=\"matrix\">\n<thead><tr><th>design</th>");
    for (i, c) in m.columns.iter().enumerate() {
        let _ = write!(
            s,
            "<th><a href=\"#matrix-column-{}\">[{}]</a><br><small>{}</small></th>",
            i + 1,
            i + 1,
            breakable(&c.label()).replace(" + ", "<br>+ ")
        );
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for (d, row) in m.cells.iter().enumerate() {
        let _ = write!(s, "<tr><th scope=\"row\">{}</th>", esc(&m.designs[d]));
        for (c, cell) in row.iter().enumerate() {
            let (class, title) = cell_class_title(cell);
            let _ = write!(
                s,
                "<td class=\"{class}\" title=\"{}\">{}</td>",
                esc(&format!(
                    "{} on {}: {title}",
                    m.designs[d],
                    m.columns[c].label()
                )),
                breakable(&m.mark(d, c))
            );
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
}

/// A matrix cell's CSS class, and its verdict in words for its title.
fn cell_class_title(cell: &Cell) -> (&'static str, String) {
    match cell {
        Cell::Certified {
            runs,
            distinct_states,
            timings,
        } => (
            "certified",
            format!("certified: {runs} runs, {distinct_states} distinct states; {timings}"),
        ),
        Cell::Counterexample { replay, .. } => ("counterexample", replay.clone()),
        Cell::Incomplete { runs } => ("incomplete", format!("stopped after {runs} runs")),
        Cell::NotApplicable { why } => ("na", why.clone()),
    }
}

/// Each counterexample of the matrix as a list item (the table's marks link to it): where,
/// which property, its replay command and its diagram.
fn matrix_counterexamples(s: &mut String, m: &Matrix) {
    for (d, row) in m.cells.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            if let Cell::Counterexample {
                property,
                faults,
                replay,
                diagram,
                ..
            } = cell
            {
                let _ = writeln!(
                    s,
                    "<li id=\"matrix-cx-{}-{}\"><code>{}</code> on [{}] {}: <code>{}</code> with {faults} fault{}:<br><code>{}</code>{}</li>",
                    d + 1,
                    c + 1,
                    esc(&m.designs[d]),
                    c + 1,
                    esc(&m.columns[c].model),
                    esc(property),
                    if *faults == 1 { "" } else { "s" },
                    esc(replay),
                    diagram_html(diagram)
                );
            }
        }
    }
}

/// The whole report as one HTML page.
pub fn render_html(research: &Research) -> String {
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>retrylab comparison report</title>\n<style>\n");
    s.push_str(STYLE);
    s.push_str("</style>\n</head>\n<body>\n<header>\n<h1>retrylab comparison report</h1>\n");
    let _ = writeln!(
        s,
        "<p>{}</p>\n</header>",
        inline(&provenance_text(&research.provenance))
    );
    summary_html(&mut s, research);
    contents_html(&mut s, research);
    providers_html(&mut s, research);
    if let Some(m) = &research.matrix {
        s.push_str("<section id=\"matrix\">\n<h2>Guarantee matrix</h2>\n");
        s.push_str(&m.html);
        s.push_str("</section>\n");
    }
    s.push_str("<section id=\"method\">\n<h2>Method</h2>\n<ul>\n");
    for (k, v) in METHOD {
        let _ = writeln!(s, "<li><strong>{}</strong>: {}.</li>", esc(k), esc(v));
    }
    s.push_str("</ul>\n</section>\n");
    parts_html(&mut s, research);
    s.push_str("</body>\n</html>\n");
    s
}

/// The summary: what to pick, then the headline and how to read it; everything after it
/// is reference.
fn summary_html(s: &mut String, research: &Research) {
    s.push_str("<div id=\"summary\">\n");
    s.push_str(&recommendation_html(&research.parts));
    s.push_str("<section id=\"headline\">\n<h2>Headline</h2>\n");
    s.push_str(&table_html(&headline_table(&research.parts)));
    let _ = writeln!(s, "<p>{}</p>", esc(&headline_text(research)));
    s.push_str(
        "<details><summary>Choosing a design with this report, step by step</summary>\n<ol>\n",
    );
    for step in READING {
        let _ = writeln!(s, "<li>{}</li>", esc(step));
    }
    s.push_str("</ol>\n</details>\n</section>\n</div>\n");
}

/// The table of contents: a link to each section the page has, in its order.
fn contents_html(s: &mut String, research: &Research) {
    s.push_str("<nav><h2>Contents</h2><ul>\n<li><a href=\"#pick\">What to pick</a></li>\n<li><a href=\"#headline\">Headline</a></li>\n");
    for (i, (file, _)) in provider_tables(&research.parts).iter().enumerate() {
        let _ = writeln!(
            s,
            "<li><a href=\"#providers-{}\">Provider comparison: {}</a></li>",
            i + 1,
            esc(file)
        );
    }
    if research.matrix.is_some() {
        s.push_str("<li><a href=\"#matrix\">Guarantee matrix</a></li>\n");
    }
    s.push_str("<li><a href=\"#method\">Method</a></li>\n");
    for (i, p) in research.parts.iter().enumerate() {
        let _ = writeln!(
            s,
            "<li><a href=\"#model-{}\">{}</a></li>",
            i + 1,
            esc(&p.report.model)
        );
    }
    s.push_str("</ul></nav>\n");
}

/// A section per `--each-provider` model: its designs on every provider, with the notes.
fn providers_html(s: &mut String, research: &Research) {
    for (i, (file, t)) in provider_tables(&research.parts).iter().enumerate() {
        let _ = writeln!(
            s,
            "<section id=\"providers-{}\">\n<h2>Provider comparison: <code>{}</code></h2>",
            i + 1,
            esc(file)
        );
        s.push_str(&table_html_class(t, "compact"));
        let _ = writeln!(s, "<p>{}</p>\n<ul>", inline(PROVIDER_TABLE_NOTE));
        for note in provider_footnotes(&research.parts, file) {
            let _ = writeln!(s, "<li>* {}</li>", inline(&note));
        }
        s.push_str("</ul>\n</section>\n");
    }
}

/// A section per scenario, with its charts as figures.
fn parts_html(s: &mut String, research: &Research) {
    let charts = research.charts();
    for (i, p) in research.parts.iter().enumerate() {
        let mut figures = String::new();
        for c in charts.iter().filter(|c| c.part == i) {
            let _ = write!(
                figures,
                "<figure id=\"{}\">\n{}<figcaption>{}<br><strong>{}</strong></figcaption>\n</figure>\n",
                esc(&c.id),
                research.svg(c),
                esc(&c.title),
                esc(&c.takeaway)
            );
        }
        s.push_str(&part_html(i, p, &figures));
    }
}

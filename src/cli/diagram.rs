//! `trace` and `replay` as a picture: `--format svg` prints the run's sequence diagram,
//! `--format html` a page with the diagram beside the timeline text.

use crate::report::html::esc;
use crate::report::sequence::Diagram;
use crate::run::Traced;

/// What `trace` and `replay` print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum TraceFormat {
    /// The timeline, the outcome and the replay command.
    #[default]
    Text,
    /// The sequence diagram alone: one `<svg>`.
    Svg,
    /// One self-contained page: the diagram beside the timeline text.
    Html,
}

/// The diagram of the whole run `t`, as `format` asks; `text`: what `--format text` prints,
/// shown beside the diagram in the page.
pub(super) fn render(
    format: TraceFormat,
    header: &str,
    t: &Traced,
    violated: &[String],
    text: &str,
) -> Result<String, String> {
    let svg = Diagram::of(header, t, violated).svg()?;
    Ok(match format {
        TraceFormat::Text => text.to_string(),
        TraceFormat::Svg => svg,
        TraceFormat::Html => page(header, &svg, text),
    })
}

/// A page with no script and nothing fetched: the diagram, then (or beside it, on a wide
/// screen) the timeline.
fn page(header: &str, svg: &str, text: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1rem; color: #212121; }}
.run {{ display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }}
.diagram {{ flex: 1 1 40rem; min-width: 0; }}
.diagram svg {{ width: 100%; height: auto; }}
.timeline {{ flex: 1 1 30rem; min-width: 0; }}
pre {{ font-size: 0.75rem; white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }}
</style>
</head>
<body>
<h1>{title}</h1>
<div class="run">
<div class="diagram">
{svg}</div>
<div class="timeline">
<pre>{text}</pre>
</div>
</div>
</body>
</html>
"#,
        title = esc(header),
        text = esc(text),
    )
}

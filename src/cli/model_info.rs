//! Commands about the model format: `schema`, `show-model`, `presets`, `designs`.

use std::path::PathBuf;

use clap::ValueEnum;

use super::{CliError, Ctx};
use crate::model::effective::{Effective, wrap};
use crate::model::provider::{preset, preset_names};
use crate::model::reference;
use crate::model::{Dedup, KeyScope};

#[derive(clap::Args, Debug)]
pub(super) struct SchemaArgs {
    /// Print the table of every field and its default (Markdown, as in docs/models.md) instead
    /// of the schema.
    #[arg(long)]
    markdown: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ShowFormat {
    /// `path = value   # set | preset NAME | default`, one line per field.
    Text,
    /// `{"preset": .., "fields": [{"path", "value", "from"}]}`.
    Json,
}

#[derive(clap::Args, Debug)]
pub(super) struct ShowModelArgs {
    /// Model file (JSON).
    pub(super) model: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ShowFormat,
}

/// `retrylab schema`: the JSON Schema of model files (or the defaults table of docs/models.md).
pub(super) fn schema(a: SchemaArgs, ctx: &Ctx) -> Result<(), CliError> {
    if a.markdown {
        ctx.print(&reference::defaults_markdown())
    } else {
        ctx.print(&reference::schema_text())
    }
}

/// `retrylab show-model FILE`: the effective model and where each value comes from.
pub(super) fn show_model(a: ShowModelArgs, ctx: &Ctx) -> Result<(), CliError> {
    let model = ctx.load(&a.model)?;
    let text = std::fs::read_to_string(&a.model).map_err(|e| {
        CliError::Input(format!("{}: cannot read the file: {e}", a.model.display()))
    })?;
    let effective = Effective::of(&model, &text);
    match a.format {
        ShowFormat::Text => ctx.print(&format!(
            "# {} ({}): every field, with where its value comes from\n{}{}",
            a.model.display(),
            model.name,
            effective.text(),
            preset_layers(&model.executor)
        )),
        ShowFormat::Json => {
            let mut json = effective.json();
            json["file"] = a.model.display().to_string().into();
            json["name"] = model.name.clone().into();
            let mut text = serde_json::to_string_pretty(&json).expect("JSON");
            text.push('\n');
            ctx.print(&text)
        }
    }
}

/// The layers of the model's executor preset (or presets, stacked), one comment line each,
/// with each preset's source and notes; nothing without a preset.
fn preset_layers(e: &crate::model::ExecutorModel) -> String {
    let Some(presets) = e.preset.as_ref().and_then(|p| {
        p.names()
            .into_iter()
            .map(crate::model::executor_preset::find)
            .collect::<Option<Vec<_>>>()
    }) else {
        return String::new();
    };
    let Some(stack) = e.stack_spec() else {
        return String::new();
    };
    let names: Vec<&str> = presets.iter().map(|p| p.name.as_str()).collect();
    let mut out = format!(
        "# executor.preset {} (retrylab executors): its stack, outermost layer first\n",
        names.join(" + ")
    );
    for (i, layer) in stack.layers.iter().enumerate() {
        let changed = if e.overrides.contains_key(&layer.name) {
            format!(" (changed by executor.overrides.{})", layer.name)
        } else {
            String::new()
        };
        let layer = crate::model::effective::Ordered::of(layer).compact();
        out.push_str(&format!(
            "#   executor.stack.layers[{i}] = {layer}{changed}\n"
        ));
    }
    out.push_str(&format!(
        "#   executor.stack.gives_up = {}\n",
        serde_json::to_value(stack.gives_up).unwrap_or_default()
    ));
    for p in presets {
        for (what, text) in [("source", &p.source), ("notes", &p.notes)] {
            let name = if names.len() > 1 {
                format!(" {}", p.name)
            } else {
                String::new()
            };
            out.push_str(&format!("# executor.preset{name} {what}:\n"));
            for line in wrap(text, WIDTH - 4) {
                out.push_str(&format!("#   {line}\n"));
            }
        }
    }
    out
}

/// `retrylab executors`: each executor preset, its summary and its first source address.
pub(super) fn executors(ctx: &Ctx) -> Result<(), CliError> {
    ctx.print(&executors_text())
}

fn executors_text() -> String {
    let all = crate::model::executor_preset::all();
    let width = all.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for p in all {
        let lines = wrap(&p.summary, WIDTH.saturating_sub(width + 2).max(20));
        for (i, line) in lines.iter().enumerate() {
            let name = if i == 0 { p.name.as_str() } else { "" };
            out.push_str(&format!("{name:<width$}  {line}\n"));
        }
        let source = p
            .source
            .split_whitespace()
            .find(|w| w.starts_with("https://"))
            .unwrap_or(&p.source);
        out.push_str(&format!("{:<width$}  source: {source}\n", ""));
    }
    out
}

/// `retrylab presets`: one line per provider preset.
pub(super) fn presets(ctx: &Ctx) -> Result<(), CliError> {
    ctx.print(&presets_text())
}

fn presets_text() -> String {
    let mut out = String::new();
    for name in preset_names() {
        let p = preset(name).expect("a built-in preset");
        let dedup = match p.dedup {
            Dedup::None => "no dedup".to_string(),
            Dedup::ByKey => {
                let scope = match p.key_scope {
                    KeyScope::Global => "global",
                    KeyScope::Tenant => "tenant",
                    KeyScope::TenantEndpoint => "tenant+endpoint",
                    KeyScope::TenantRegion => "tenant+region",
                };
                let retention = p.retention_ms.map_or("forever".to_string(), duration);
                format!("by key, {scope}, {retention}")
            }
        };
        // The first address of the source: the rest is in `show-model`.
        let source = p
            .source
            .split_whitespace()
            .find(|w| w.starts_with("https://"))
            .unwrap_or(&p.source)
            .trim_end_matches([';', ',', ')', '.']);
        out.push_str(&format!("{name:<20} {dedup:<30} {source}\n"));
    }
    out
}

/// A retention as a person writes it: `24 h`, `7 d`, `10 min`, or milliseconds.
fn duration(ms: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "min"),
        (1_000, "s"),
    ];
    for (unit, name) in UNITS {
        // A day count from two days on: "24 h" reads better than "1 d".
        if ms >= unit * if name == "d" { 2 } else { 1 } && ms % unit == 0 {
            return format!("{} {name}", ms / unit);
        }
    }
    format!("{ms} ms")
}

/// `retrylab designs`: each design and its summary, wrapped to fit 100 columns.
pub(super) fn designs(ctx: &Ctx) -> Result<(), CliError> {
    ctx.print(&designs_text(ctx.designs.all()))
}

/// The width of the designs list; no line is longer.
pub(super) const WIDTH: usize = 100;

fn designs_text(all: &[&dyn crate::design::Design]) -> String {
    let name_width = all.iter().map(|d| d.name().len()).max().unwrap_or(0);
    let mut out = String::new();
    for d in all.iter() {
        let lines = wrap(d.summary(), WIDTH.saturating_sub(name_width + 2).max(20));
        for (i, line) in lines.iter().enumerate() {
            let name = if i == 0 { d.name() } else { "" };
            out.push_str(&format!("{name:<name_width$}  {line}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_a_person_writes_them() {
        assert_eq!(duration(86_400_000), "24 h");
        assert_eq!(duration(3_600_000 * 24 * 7), "7 d");
        assert_eq!(duration(3_600_000 * 36), "36 h");
        assert_eq!(duration(1_500), "1500 ms");
    }
}

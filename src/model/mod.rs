//! Model files: JSON scenarios, read with path-precise errors.
//!
//! Every problem names the JSON path and the line and column it applies to, whether serde
//! found it (bad JSON, wrong type, unknown field, negative number) or the checks after parsing
//! did (impossible or inconsistent values, unknown designs).

pub(crate) mod bundled;
pub(crate) mod catalog;
pub(crate) mod designs;
pub(crate) mod effective;
pub(crate) mod executor_preset;
pub(crate) mod http_face;
mod json_schema;
pub(crate) mod locate;
pub mod provider;
pub(crate) mod range;
pub mod reference;
pub(crate) mod schema;
pub(crate) mod stack;
#[cfg(test)]
pub(crate) mod testing;
mod validate;

use std::fmt;
use std::path::Path;

pub use catalog::{Catalog, Listing};
pub use http_face::{AnswerFormat, BodyFormat, ErrorAnswer, HttpFace, KeyCarrier, KeyIn};
pub use range::Range;
pub use schema::*;
pub use stack::{
    AboveMax, Attempts, BackoffSpec, ErrorClass, GiveUp, Jitter, KeyMode, LayerOverride, LayerSpec,
    MAX_LAYERS, Redelivery, Retries, RetryAfterSpec, StackSpec,
};
pub use validate::{
    MAX_ATTEMPTS, MAX_CALLS, MAX_CRASHES, MAX_EXPLORE_RUNS, MAX_FAULTS, MAX_INTENTS, MAX_MS,
    MAX_TENANTS, MAX_WORKERS,
};

/// One problem in a model file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// JSON path such as `provider.retention_ms`, or `(root)`.
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Why a model file was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelError {
    /// The file name (or another label) the text came from.
    pub origin: String,
    pub problems: Vec<Problem>,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            if p.line == 0 {
                // Not about a place in the text (the file could not be read).
                write!(f, "{}: {}", self.origin, p.message)?;
            } else {
                write!(
                    f,
                    "{}:{}:{}: {}: {}",
                    self.origin, p.line, p.column, p.path, p.message
                )?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ModelError {}

crate::sim::named_enum! {
    /// Whether an expected property must hold on every seed or fail on at least one.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Want {
        Hold => "hold",
        Violate => "violate",
    }
}

impl Want {}

impl Model {
    /// The properties the expectations name for `design` beyond the plain ones (such as
    /// `resolved_within(T)`): a run of it is judged on them too.
    pub fn named_properties(&self, design: &str) -> Vec<crate::check::Property> {
        self.expectations(design)
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| !crate::check::Property::PLAIN.contains(p))
            .collect()
    }

    /// The expectations for `design`, parsed (the model was validated when it was read).
    pub fn expectations(&self, design: &str) -> Vec<(crate::check::Property, Want)> {
        let Some(e) = self.expect.get(design) else {
            return Vec::new();
        };
        let hold = e.hold.iter().map(|s| (s, Want::Hold));
        let violate = e.violate.iter().map(|s| (s, Want::Violate));
        hold.chain(violate)
            .filter_map(|(s, w)| {
                crate::check::Property::parse_with(s, &self.custom_properties)
                    .ok()
                    .map(|p| (p, w))
            })
            .collect()
    }

    /// A short stable digest of what a run of the model depends on (16 hex digits,
    /// FNV-1a): the canonical JSON of the effective model (every field with the value a
    /// run uses, presets resolved, file formatting and key order irrelevant) without the
    /// fields no run reads: `name`, `description`, `designs`, `expect`, `explore`, and the
    /// provider's `source` and `notes`; with the layers of a named executor preset, and,
    /// for each configured design, the design it configures and the executor section it
    /// runs. A printed `replay` command carries it
    /// (`--model-digest`), so that a choice vector is never replayed against a model edited
    /// since it was recorded: every choice would then mean another decision.
    pub fn digest(&self) -> String {
        let mut v = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let Some(o) = v.as_object_mut() {
            for key in ["name", "description", "designs", "expect", "explore"] {
                o.remove(key);
            }
            if let Some(p) = o.get_mut("provider").and_then(|p| p.as_object_mut()) {
                p.remove("source");
                p.remove("notes");
            }
            omit_later_knobs_at_default(o);
            o.insert("executor".into(), executor_digest_value(&self.executor));
            // What a configured design runs on is part of what its runs depend on.
            if !self.configured.is_empty() {
                let configured: serde_json::Map<String, serde_json::Value> = self
                    .configured
                    .iter()
                    .map(|(name, c)| {
                        let executor = executor_digest_value(&c.model.executor);
                        let entry = serde_json::json!({ "design": c.design, "executor": executor });
                        (name.clone(), entry)
                    })
                    .collect();
                o.insert("configured".into(), configured.into());
            }
        }
        crate::sim::hash::Fnv1a::hex(v.to_string().as_bytes())
    }

    /// The same scenario against another provider: the contract of the built-in preset
    /// `name` (every knob a preset sets, visibility lag included), with the model's failure
    /// environment kept (`processing_ms`, `error_before_commit`, `error_after_commit`,
    /// `crash_during_processing`, `throttle`, `retry_after_ms`, `request_timeout`,
    /// `should_retry`: no preset sets them). The name becomes `NAME @ PRESET`;
    /// the expectations go (they were written for the model's own provider). Checked again:
    /// a model whose executor needs what the preset lacks is refused, each problem on its
    /// own line.
    pub fn with_provider(&self, name: &str) -> Result<Model, String> {
        let mut provider = provider::preset(name).ok_or_else(|| {
            format!(
                "unknown provider preset \"{name}\"; known presets: {}",
                provider::preset_names().join(", ")
            )
        })?;
        let own = &self.provider;
        provider.processing_ms = own.processing_ms;
        provider.error_before_commit = own.error_before_commit;
        provider.error_after_commit = own.error_after_commit;
        provider.crash_during_processing = own.crash_during_processing;
        provider.throttle = own.throttle;
        provider.retry_after_ms = own.retry_after_ms;
        provider.request_timeout = own.request_timeout;
        provider.should_retry = own.should_retry.clone();
        let mut m = self.clone();
        m.provider = provider;
        m.name = format!("{} @ {name}", self.name);
        m.expect = Default::default();
        // A configured design runs against the same provider.
        for c in m.configured.values_mut() {
            c.model.provider = m.provider.clone();
            c.model.name = m.name.clone();
            c.model.expect = Default::default();
        }
        // The design names were checked when the model was read.
        let problems = validate::check(&m, None);
        if problems.is_empty() {
            Ok(m)
        } else {
            Err(problems
                .iter()
                .map(|(path, message)| format!("{path}: {message}"))
                .collect::<Vec<_>>()
                .join("\n"))
        }
    }

    /// Reads and checks a model file whose designs are among `designs` (`"all"`: every one
    /// of them, in their order).
    pub fn load_with(path: &Path, designs: &dyn Catalog) -> Result<Model, ModelError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ModelError {
            origin: origin.clone(),
            problems: vec![Problem {
                path: "(root)".into(),
                line: 0,
                column: 0,
                message: format!("cannot read the file: {e}"),
            }],
        })?;
        Model::from_json_with(&text, &origin, designs)
    }

    /// Parses and checks model text whose designs are among `designs` (`"all"`: every one of
    /// them, in their order); `origin` labels the errors.
    pub fn from_json_with(
        text: &str,
        origin: &str,
        designs: &dyn Catalog,
    ) -> Result<Model, ModelError> {
        let mut model = parse(text).map_err(|problems| ModelError {
            origin: origin.to_string(),
            problems,
        })?;
        model.custom_properties = designs.properties();
        model.designs = model.design_list.resolve(designs);
        let entries = self::designs::configured_entries(text);
        let mut found = validate::check(&model, Some(designs));
        // A configured entry's name is known by what it configures.
        found.retain(|(path, _)| {
            !entries
                .iter()
                .any(|(i, e)| e.design.is_some() && *path == format!("designs[{i}]"))
        });
        let mut configured = std::collections::BTreeMap::new();
        for (i, entry) in &entries {
            match configure(&model, *i, entry, designs) {
                Ok(c) => {
                    configured.insert(entry.name.clone(), c);
                }
                Err(problems) => found.extend(problems),
            }
        }
        model.configured = configured;
        // A configured design of another model is not this model's to name.
        for (i, name) in model.designs.iter().enumerate() {
            if designs.is_configured(name) && !model.configured.contains_key(name) {
                found.push((
                    format!("designs[{i}]"),
                    format!(
                        "\"{name}\" is a design another model configures; configure it here ({{\"name\": \"{name}\", \"design\": ..., \"executor\": {{...}}}}) or name the design itself"
                    ),
                ));
            }
        }
        let problems: Vec<Problem> = found
            .into_iter()
            .map(|(path, message)| {
                let (line, column) = locate::locate(text, &locate::parse_path(&path));
                Problem {
                    path,
                    line,
                    column,
                    message,
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(model)
        } else {
            Err(ModelError {
                origin: origin.to_string(),
                problems,
            })
        }
    }
}

/// Knobs added after digests were first printed, by section: left out of a digest at their
/// default, so that a model that does not use them keeps its digest and the replay
/// commands printed for it stay good.
/// An executor section as the digest sees it: its fields, and the layers of the executor
/// preset it names (a preset edited since changes the runs, so it changes the digest).
fn executor_digest_value(e: &ExecutorModel) -> serde_json::Value {
    let mut v = serde_json::to_value(e).unwrap_or(serde_json::Value::Null);
    if e.stack.is_none()
        && e.preset.is_some()
        && let (Some(o), Some(stack)) = (v.as_object_mut(), e.stack_spec())
    {
        o.insert(
            "preset_stack".into(),
            serde_json::to_value(stack.as_ref()).unwrap_or(serde_json::Value::Null),
        );
    }
    v
}

const LATER_KNOBS: [(&str, &str); 7] = [
    ("provider", "throttle"),
    ("provider", "should_retry"),
    ("provider", "retry_after_ms"),
    ("provider", "request_timeout"),
    ("network", "connection_reset"),
    ("provider.http", "throttled"),
    ("provider.http", "request_timeout"),
];

fn omit_later_knobs_at_default(model: &mut serde_json::Map<String, serde_json::Value>) {
    let defaults = serde_json::json!({
        "provider": serde_json::to_value(ProviderModel::default()).unwrap_or_default(),
        "network": serde_json::to_value(NetworkModel::default()).unwrap_or_default(),
    });
    for (section, knob) in LATER_KNOBS {
        let pointer = format!("/{}", section.replace('.', "/"));
        let default = defaults.pointer(&format!("{pointer}/{knob}")).cloned();
        let mut at = serde_json::Value::Object(std::mem::take(model));
        if let Some(serde_json::Value::Object(s)) = at.pointer_mut(&pointer)
            && s.get(knob).is_some()
            && s.get(knob).cloned() == default
        {
            s.remove(knob);
        }
        if let serde_json::Value::Object(o) = at {
            *model = o;
        }
    }
}

/// The model entry `entry` (number `i` of `designs`) runs on: `model` with the entry's
/// `executor` fields in place, checked as the model's own section is, its problems named
/// under the entry.
fn configure(
    model: &Model,
    i: usize,
    entry: &self::designs::ConfiguredEntry,
    designs: &dyn Catalog,
) -> Result<Configuration, Vec<(String, String)>> {
    let at = format!("designs[{i}]");
    let design = match &entry.design {
        Some(base) => {
            match designs.listing(base) {
                Some(d) if !d.configured && base != &entry.name => {}
                _ => {
                    return Err(vec![(
                        format!("{at}.design"),
                        format!(
                            "unknown design \"{base}\" to configure; known designs: {}",
                            designs.plain_names().join(", ")
                        ),
                    )]);
                }
            }
            if designs.listing(&entry.name).is_some_and(|d| !d.configured) {
                return Err(vec![(
                    format!("{at}.name"),
                    format!(
                        "\"{}\" is the name of a design; give the configured one another",
                        entry.name
                    ),
                )]);
            }
            base.clone()
        }
        None => entry.name.clone(),
    };
    let mut section = serde_json::to_value(&model.executor).unwrap_or_default();
    if let serde_json::Value::Object(o) = &mut section {
        for (k, v) in &entry.executor {
            o.insert(k.clone(), v.clone());
        }
    }
    let executor: ExecutorModel = serde_path_to_error::deserialize(section).map_err(|e| {
        vec![(
            format!("{at}.executor.{}", e.path()),
            e.into_inner().to_string(),
        )]
    })?;
    let mut run_on = model.clone();
    run_on.executor = executor;
    run_on.configured = Default::default();
    // Its problems: those of its executor section the shared one does not have (the
    // entry's fields cause them, alone or with the shared fields).
    let shared = validate::check(model, None);
    let own: Vec<(String, String)> = validate::check(&run_on, None)
        .into_iter()
        .filter(|(path, _)| path.starts_with("executor."))
        .filter(|p| !shared.contains(p))
        .map(|(path, message)| (format!("{at}.{path}"), message))
        .collect();
    if own.is_empty() {
        Ok(Configuration {
            design,
            model: Box::new(run_on),
            index: i,
            fields: entry.executor.keys().cloned().collect(),
        })
    } else {
        Err(own)
    }
}

/// Reads the model; on failure, every missing required field at once (serde stops at the
/// first), and serde's problem when it is another one, in the order of the text.
fn parse(text: &str) -> Result<Model, Vec<Problem>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed: Result<Model, Problem> = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| serde_problem(path_name(e.path()), e.into_inner()))
        .and_then(|m| {
            de.end()
                .map_err(|e| serde_problem("(root)".to_string(), e))?;
            Ok(m)
        });
    let problem = match parsed {
        Ok(model) => return Ok(model),
        Err(p) => p,
    };
    // Only now the schema: a valid model never pays for it.
    let walk = reference::SchemaWalk::new();
    let mut problems = schema_problems(text, &walk);
    let serde = teach(problem, &walk);
    let wrong_type = |p: &Problem| p.message.starts_with("invalid type");
    if let Some(root) = problems
        .iter()
        .find(|p| p.path == "(root)" && wrong_type(p))
    {
        // The text is JSON but not an object: nothing in it is a model's field.
        return Err(vec![root.clone()]);
    }
    // serde's own problem unless the schema found it too: the same missing field, or a
    // wrong type at the same path (which serde may word as a bare "expected value").
    let unknown = |p: &Problem| p.message.starts_with("unknown field");
    if serde.message.starts_with("missing field") && !problems.is_empty() {
        // One of those the schema found.
    } else if let Some(i) = problems
        .iter()
        .position(|p| p.path == serde.path && unknown(p) && unknown(&serde))
    {
        // The schema's words (the fields in alphabetical order, as for every other unknown
        // field) at serde's position (the end of the key).
        problems[i].line = serde.line;
        problems[i].column = serde.column;
    } else if let Some(i) = problems
        .iter()
        .position(|p| p.path == serde.path && wrong_type(p))
    {
        // serde points at the last character it read: the end of a scalar, but the blank
        // before an object or an array it refused without reading; the schema's position,
        // the value's start, is kept for those.
        if !char_at(text, serde.line, serde.column).is_some_and(char::is_whitespace) {
            problems[i].line = serde.line;
            problems[i].column = serde.column;
        }
        if wrong_type(&serde) {
            problems[i].message = serde.message;
        }
    } else {
        problems.push(serde);
    }
    for p in &mut problems {
        too_large(text, p);
    }
    problems.sort_by_key(|p| (p.line, p.column));
    Err(problems)
}

/// An integer too large for a `u64` is read by JSON as a float: `invalid type: floating
/// point `1e+20`` says it as the author wrote it, `integer 99999999999999999999 (too large)`.
fn too_large(text: &str, p: &mut Problem) {
    let Some(rest) = p.message.strip_prefix("invalid type: floating point `") else {
        return;
    };
    let Some((_, expected)) = rest.split_once('`') else {
        return;
    };
    let Some(line) = text.split('\n').nth(p.line.saturating_sub(1)) else {
        return;
    };
    // The position is the number's first or last character: the literal is the run of
    // number characters around it (a fraction or an exponent included, so that `1.5` is
    // left alone).
    let at = p.column.saturating_sub(1).min(line.len());
    if !line.is_char_boundary(at) {
        return;
    }
    let is_num = |c: char| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E');
    let start = line[..at].rfind(|c: char| !is_num(c)).map_or(0, |i| i + 1);
    let end = line[at..]
        .find(|c: char| !is_num(c))
        .map_or(line.len(), |i| at + i);
    let literal = &line[start..end];
    let digits = literal.strip_prefix('-').unwrap_or(literal);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        p.message = format!("invalid type: integer {literal} (too large){expected}");
    }
}

/// The character at a 1-based line and column.
fn char_at(text: &str, line: usize, column: usize) -> Option<char> {
    let l = text.split('\n').nth(line.checked_sub(1)?)?;
    l.get(column.checked_sub(1)?..)?.chars().next()
}

/// What the schema finds in the text (when it is JSON): every required field absent, at the
/// closing brace of the object that lacks it; every value of the wrong JSON type and every
/// unknown field, where its value starts; each with what is expected and an example.
fn schema_problems(text: &str, walk: &reference::SchemaWalk) -> Vec<Problem> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    walk.findings(&value)
        .into_iter()
        .map(|f| {
            let (path, message, (line, column)) = match f {
                reference::Finding::Missing { object, message } => {
                    let at = locate::locate_end(text, &locate::parse_path(&object));
                    (object, message, at)
                }
                reference::Finding::At { path, message } => {
                    let at = locate::locate(text, &locate::parse_path(&path));
                    (path, message, at)
                }
            };
            Problem {
                path: if path.is_empty() {
                    "(root)".to_string()
                } else {
                    path
                },
                line,
                column,
                message,
            }
        })
        .collect()
}

/// serde's "invalid type: X, expected Y" with Y as the schema describes it, with an example
/// (`expected an array such as [{"drop_reply": {"attempt": 1}}]`).
fn teach(mut p: Problem, walk: &reference::SchemaWalk) -> Problem {
    let Some(rest) = p.message.strip_prefix("invalid type: ") else {
        return p;
    };
    let Some((got, _)) = rest.split_once(", expected ") else {
        return p;
    };
    let path = if p.path == "(root)" { "" } else { &p.path };
    if let Some(shape) = walk.at(path).and_then(|s| walk.shape(s)) {
        p.message = format!("invalid type: {got}, expected {shape}");
    }
    p
}

/// The path serde stopped at, written like validation paths (`faults[0].drop_reply.attempt`).
///
/// serde_path_to_error marks a map key it could not read (a syntax error between members,
/// such as a missing comma) with a `?` segment; the problem is then in the enclosing value,
/// so the path stops before it.
fn path_name(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => break,
        }
    }
    if out.is_empty() {
        "(root)".to_string()
    } else {
        out
    }
}

/// serde names the Rust type it expected; a model author knows JSON, not `u64`.
const EXPECTED_TYPES: [(&str, &str); 2] = [
    (", expected u64", ", expected a non-negative integer"),
    (
        ", expected u32",
        ", expected a non-negative integer no larger than 4294967295",
    ),
];

fn serde_problem(path: String, e: serde_json::Error) -> Problem {
    // serde_json appends " at line L column C"; the position has its own fields here.
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let mut message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
    for (rust, json) in EXPECTED_TYPES {
        if let Some(head) = message.strip_suffix(rust) {
            message = format!("{head}{json}");
        }
    }
    Problem {
        path,
        line: e.line(),
        // serde_json says column 0 at the start of a line (an empty file); columns count
        // from 1.
        column: e.column().max(1),
        message,
    }
}

//! The model format's reference, from one source: the JSON Schema generated from the Rust
//! types ([`schema`]), and what is derived from it (the defaults table of docs/models.md).

use serde_json::Value;

use super::schema::Model;

/// The JSON Schema (draft 7) of a model file.
pub fn schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let mut root = generator.into_root_schema_for::<Model>().to_value();
    if let Value::Object(o) = &mut root {
        o.insert("title".into(), "retrylab model".into());
    }
    unwrap_descriptions(&mut root);
    describe_fault_kinds(&mut root);
    // `$schema` is read and never written: not a reason to mark it write-only for editors.
    if let Some(Value::Object(o)) = root.pointer_mut("/properties/$schema") {
        o.remove("writeOnly");
    }
    root
}

/// A fault, or a jitter with parameters, is a one-key object: its key gets the description
/// of its kind, which editors show on the key.
fn describe_fault_kinds(root: &mut Value) {
    for one_key in ["Fault", "Jitter"] {
        describe_kinds(root, one_key);
    }
}

fn describe_kinds(root: &mut Value, definition: &str) {
    let Some(Value::Array(kinds)) = root.pointer_mut(&format!("/definitions/{definition}/oneOf"))
    else {
        return;
    };
    for kind in kinds {
        let description = kind.get("description").cloned();
        if let (Some(d), Some(Value::Object(p))) = (description, kind.get_mut("properties")) {
            for body in p.values_mut() {
                if let Value::Object(b) = body {
                    b.entry("description").or_insert(d.clone());
                }
            }
        }
    }
}

/// Doc comments arrive with their line breaks; a description is one paragraph.
fn unwrap_descriptions(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match x {
                    Value::String(s) if k == "description" => *s = s.replace('\n', " "),
                    _ => unwrap_descriptions(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

/// [`schema`] as the text of `models/schema.json`.
pub fn schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&schema()).expect("a schema is JSON");
    text.push('\n');
    text
}

/// Reads the schema: follows references and picks the branch of a choice that describes an
/// object.
pub(crate) struct SchemaWalk {
    root: &'static Value,
}

impl SchemaWalk {
    /// A walk over the schema, generated once per process: a model refused is explained
    /// from it, and generating it costs far more than reading a model.
    pub(crate) fn new() -> SchemaWalk {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SchemaWalk {
            root: SCHEMA.get_or_init(schema),
        }
    }

    /// The schema of the whole model.
    pub(crate) fn root(&self) -> &Value {
        self.root
    }

    /// `s` with `$ref` (and a lone `allOf`, which schemars uses to give a reference a
    /// description) followed; with the name of the definition reached, if any.
    fn resolve<'a>(&'a self, mut s: &'a Value) -> (&'a Value, Option<&'a str>) {
        let mut name = None;
        for _ in 0..8 {
            if let Some(r) = s.get("$ref").and_then(Value::as_str) {
                let n = r.rsplit('/').next().unwrap_or_default();
                match self.root.get("definitions").and_then(|d| d.get(n)) {
                    Some(d) => {
                        name = Some(n);
                        s = d;
                        continue;
                    }
                    None => break,
                }
            }
            match s.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
                Some([one]) => s = one,
                _ => break,
            }
        }
        (s, name)
    }

    /// The schema that describes `s` as an object with named fields or entries (the object
    /// branch of a choice), unless `s` is a range.
    fn object<'a>(&'a self, s: &'a Value) -> Option<&'a Value> {
        let (s, name) = self.resolve(s);
        if name == Some("Range") {
            return None;
        }
        if s.get("properties").is_some()
            || s.get("additionalProperties").is_some_and(Value::is_object)
        {
            return Some(s);
        }
        ["anyOf", "oneOf"]
            .iter()
            .filter_map(|k| s.get(*k).and_then(Value::as_array))
            .flatten()
            .find_map(|b| {
                let (b, _) = self.resolve(b);
                b.get("properties").is_some().then_some(b)
            })
    }

    /// Whether a value described by `s` is a section of fields (shown field by field).
    pub(crate) fn is_section(&self, s: &Value) -> bool {
        self.object(s).is_some()
    }

    /// The named fields of the object `s` describes, in the schema's order.
    pub(crate) fn properties<'a>(&'a self, s: &'a Value) -> Vec<(String, &'a Value)> {
        self.object(s)
            .and_then(|o| o.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.iter().map(|(k, v)| (k.clone(), v)).collect())
            .unwrap_or_default()
    }

    /// The fields that must be present in the object `s` describes.
    fn required<'a>(&'a self, s: &'a Value) -> Vec<&'a str> {
        self.object(s)
            .and_then(|o| o.get("required"))
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// The schema of member `name` of the object `s` describes.
    pub(crate) fn property<'a>(&'a self, s: &'a Value, name: &str) -> Option<&'a Value> {
        let (r, _) = self.resolve(s);
        // A choice between objects (a fault): the branch that has this member.
        for k in ["oneOf", "anyOf"] {
            for b in r.get(k).and_then(Value::as_array).into_iter().flatten() {
                let (b, _) = self.resolve(b);
                if let Some(p) = b.get("properties").and_then(|p| p.get(name)) {
                    return Some(p);
                }
            }
        }
        let o = self.object(s)?;
        o.get("properties")
            .and_then(|p| p.get(name))
            .or_else(|| o.get("additionalProperties").filter(|a| a.is_object()))
    }

    /// The schema of the elements of the array `s` describes.
    fn items<'a>(&'a self, s: &'a Value) -> Option<&'a Value> {
        let (r, _) = self.resolve(s);
        r.get("items")
    }

    /// The schema at a path such as `faults[0].drop_reply` (as problems name paths).
    pub(crate) fn at(&self, path: &str) -> Option<&Value> {
        use super::locate::Segment;
        let mut s: &Value = self.root;
        for seg in super::locate::parse_path(path) {
            s = match seg {
                Segment::Key(k) => self.property(s, &k)?,
                Segment::Index(_) => self.items(s)?,
            };
        }
        Some(s)
    }

    /// What a value described by `s` looks like, with an example where the schema gives
    /// one: `an array such as [{"drop_reply": {"attempt": 1}}]`, `a non-negative integer`.
    /// None when the schema says nothing of it.
    pub(crate) fn shape(&self, s: &Value) -> Option<String> {
        if self.resolve(s).1 == Some("Designs") {
            // Its examples are "all" and a list: the words say the first.
            let list = self.examples(s).into_iter().find(Value::is_array)?;
            return Some(format!(
                "\"all\" or an array of design names such as {}",
                compact(&list)
            ));
        }
        let values = self.enum_values(s);
        if !values.is_empty() {
            let values: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
            return Some(format!("one of {}", values.join(", ")));
        }
        let examples = self.examples(s);
        if examples.is_empty() {
            // Without an example, an object names its fields.
            let fields: Vec<String> = self
                .properties(s)
                .into_iter()
                .map(|(k, _)| format!("`{k}`"))
                .collect();
            if !fields.is_empty() {
                return Some(format!("an object with the fields {}", fields.join(", ")));
            }
        }
        let (r, name) = self.resolve(s);
        let integer = match r.get("format").and_then(Value::as_str) {
            Some("uint32") => "a non-negative integer no larger than 4294967295",
            _ => "a non-negative integer",
        };
        let what = match (name, r.get("type").and_then(Value::as_str)) {
            (Some("Range"), _) => "a duration in milliseconds or {\"min\": .., \"max\": ..}",
            (Some("Ratio"), _) => "a probability",
            (Some("Provider"), _) => "a preset name or a provider object",
            (Some("Property"), _) => "a property name",
            (Some("Fault"), _) => "a one-key object",
            (_, Some("array")) => "an array",
            (_, Some("object")) => "an object",
            (_, Some("integer")) => integer,
            (_, Some("string")) => "a string",
            (_, Some("boolean")) => "true or false",
            _ if self.object(s).is_some() => "an object",
            _ if examples.is_empty() => return None,
            _ => "a value",
        };
        if examples.is_empty() {
            // The words alone: the same whichever of serde and the schema finds the value.
            return Some(what.to_string());
        }
        let examples: Vec<String> = examples.iter().map(compact).collect();
        Some(format!("{what} such as {}", examples.join(" or ")))
    }

    /// The values of an enumeration (`"durable"`, `"volatile"`), in declaration order.
    fn enum_values<'a>(&'a self, s: &'a Value) -> Vec<&'a str> {
        let (r, _) = self.resolve(s);
        r.get("oneOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|b| b.get("const").and_then(Value::as_str))
            .collect::<Option<Vec<&str>>>()
            .unwrap_or_default()
    }

    /// The examples of `s`: its own, its definition's, or for an object with required
    /// fields, one made of theirs.
    fn examples(&self, s: &Value) -> Vec<Value> {
        let own = s
            .get("examples")
            .or_else(|| self.resolve(s).0.get("examples"))
            .and_then(Value::as_array);
        if let Some(e) = own {
            return e.clone();
        }
        if let Some(v) = s.get("enum").or_else(|| self.resolve(s).0.get("enum")) {
            return v
                .as_array()
                .into_iter()
                .flatten()
                .take(2)
                .cloned()
                .collect();
        }
        let required = self.required(s);
        if required.is_empty() {
            return Vec::new();
        }
        let mut example = serde_json::Map::new();
        for name in required {
            let Some(first) = self
                .property(s, name)
                .map(|p| self.examples(p))
                .and_then(|e| e.into_iter().next())
            else {
                return Vec::new();
            };
            example.insert(name.to_string(), first);
        }
        vec![Value::Object(example)]
    }

    /// What the schema finds wrong in `value` without reading it into the types: every
    /// required member missing (at the object that lacks it), every unknown member, and every
    /// value of the wrong JSON type (which is not looked into further).
    pub(crate) fn findings(&self, value: &Value) -> Vec<Finding> {
        let mut out = Vec::new();
        self.findings_in(&mut out, "", value, self.root);
        out
    }

    fn findings_in(&self, out: &mut Vec<Finding>, path: &str, v: &Value, s: &Value) {
        let join = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        if let Some(types) = self.types(s) {
            if !types.iter().any(|t| json_type_matches(t, v)) {
                let expected = self.shape(s).unwrap_or_else(|| types.join(" or "));
                out.push(Finding::At {
                    path: path.to_string(),
                    message: format!("invalid type: {}, expected {expected}", unexpected(v)),
                });
                return;
            }
        }
        match v {
            Value::Object(members) => {
                // In a choice between objects (a fault), the branch is the member's name:
                // `property` reaches it below.
                if !self.is_choice_of_objects(s) {
                    for name in self.required(s) {
                        if !members.contains_key(name) {
                            let shape = self
                                .property(s, name)
                                .and_then(|p| self.shape(p))
                                .map(|x| format!(" ({x})"))
                                .unwrap_or_default();
                            let description = self
                                .property(s, name)
                                .and_then(|p| p.get("description"))
                                .and_then(Value::as_str)
                                .unwrap_or_default();
                            let object = if path.is_empty() { "(root)" } else { path };
                            out.push(Finding::Missing {
                                object: object.to_string(),
                                message: format!("missing field `{name}`{shape}: {description}"),
                            });
                        }
                    }
                    let closed = self
                        .object(s)
                        .filter(|o| o.get("additionalProperties") == Some(&Value::Bool(false)));
                    if let Some(o) = closed {
                        let known: Vec<&String> = o
                            .get("properties")
                            .and_then(Value::as_object)
                            .map(|p| p.keys().collect())
                            .unwrap_or_default();
                        for k in members.keys().filter(|k| !known.contains(k)) {
                            let list: Vec<String> =
                                known.iter().map(|k| format!("`{k}`")).collect();
                            out.push(Finding::At {
                                path: join(k),
                                message: format!(
                                    "unknown field `{k}`, expected one of {}",
                                    list.join(", ")
                                ),
                            });
                        }
                    }
                }
                for (k, x) in members {
                    if let Some(sub) = self.property(s, k) {
                        self.findings_in(out, &join(k), x, sub);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(sub) = self.items(s) {
                    for (i, x) in items.iter().enumerate() {
                        self.findings_in(out, &format!("{path}[{i}]"), x, sub);
                    }
                }
            }
            _ => {}
        }
    }

    /// The JSON types a value described by `s` may have; None when the schema does not say.
    fn types(&self, s: &Value) -> Option<Vec<String>> {
        let (r, _) = self.resolve(s);
        match r.get("type") {
            Some(Value::String(t)) => return Some(vec![t.clone()]),
            Some(Value::Array(ts)) => {
                return Some(
                    ts.iter()
                        .filter_map(|t| t.as_str().map(String::from))
                        .collect(),
                );
            }
            _ => {}
        }
        let mut all = Vec::new();
        let mut any = false;
        for k in ["anyOf", "oneOf"] {
            for b in r.get(k).and_then(Value::as_array).into_iter().flatten() {
                any = true;
                for t in self.types(b)? {
                    if !all.contains(&t) {
                        all.push(t);
                    }
                }
            }
        }
        if any { Some(all) } else { None }
    }

    fn is_choice_of_objects(&self, s: &Value) -> bool {
        let (r, _) = self.resolve(s);
        let objects = ["anyOf", "oneOf"]
            .iter()
            .filter_map(|k| r.get(*k).and_then(Value::as_array))
            .flatten()
            .filter(|b| self.resolve(b).0.get("properties").is_some())
            .count();
        objects > 1
    }
}

/// A problem the schema finds in a model's JSON before serde reads it.
pub(crate) enum Finding {
    /// A required member is absent from the object at `object`.
    Missing { object: String, message: String },
    /// The member at `path` has the wrong JSON type, or is unknown.
    At { path: String, message: String },
}

fn json_type_matches(t: &str, v: &Value) -> bool {
    match (t, v) {
        ("null", Value::Null) | ("boolean", Value::Bool(_)) | ("string", Value::String(_)) => true,
        ("array", Value::Array(_)) | ("object", Value::Object(_)) => true,
        ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_u64() || n.is_i64(),
        _ => false,
    }
}

/// A value as serde names what it did not expect: `integer `2``, `map`, `sequence`.
fn unexpected(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {}", Value::from(s.as_str())),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

/// One-line JSON with a space after `:` and `,`.
pub(crate) fn compact(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(compact).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            // A range reads min first.
            let mut members: Vec<(&String, &Value)> = m.iter().collect();
            if m.len() == 2 && m.contains_key("min") && m.contains_key("max") {
                members.reverse();
            }
            let members: Vec<String> = members
                .into_iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), compact(v)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        v => v.to_string(),
    }
}

/// The defaults table of the model reference (docs/models.md) (`retrylab schema --markdown`): one
/// row per field, in the order the types declare them, with its kind, its default (or
/// "required") and its description, all read from [`schema`].
pub fn defaults_markdown() -> String {
    let walk = SchemaWalk::new();
    let mut rows = Vec::new();
    walk.rows(&mut rows, "", &declared_order(), walk.root());
    let mut out = String::from("| field | kind | default | what it is |\n|---|---|---|---|\n");
    for [field, kind, default, description] in rows {
        out.push_str(&format!(
            "| {field} | {kind} | {default} | {} |\n",
            description.replace('|', "\\|")
        ));
    }
    out
}

/// The fields of a model as serde writes them: in the order the types declare them.
fn declared_order() -> super::effective::Ordered {
    const SMALLEST: &str = r#"{"name": "", "horizon_ms": 1, "workload": {"intents": 1},
        "agent": {"tool_timeout_ms": 1, "max_calls": 1, "on_failure": {}, "on_unknown": {}},
        "provider": {"dedup": "none"}}"#;
    let model: Model = serde_json::from_str(SMALLEST).expect("the smallest model reads");
    super::effective::Ordered::of(&model)
}

impl SchemaWalk {
    fn rows(
        &self,
        out: &mut Vec<[String; 4]>,
        prefix: &str,
        order: &super::effective::Ordered,
        s: &Value,
    ) {
        use super::effective::Ordered;
        let mut names: Vec<String> = match order {
            Ordered::Object(m) => m.iter().map(|(k, _)| k.clone()).collect(),
            _ => Vec::new(),
        };
        let properties = self.properties(s);
        // Fields serde does not write (`$schema`, a provider's `preset`) or leaves out at their
        // default: `$schema` and `preset` first, the others last.
        for (k, _) in &properties {
            if !names.contains(k) {
                if k.starts_with('$') || k == "preset" {
                    names.insert(0, k.clone());
                } else {
                    names.push(k.clone());
                }
            }
        }
        let required = self.required(s);
        for name in names {
            let Some(p) = properties.iter().find(|(k, _)| *k == name).map(|(_, p)| *p) else {
                continue;
            };
            let field = format!("{prefix}{name}");
            let sub = match order {
                Ordered::Object(m) => m.iter().find(|(k, _)| *k == name).map(|(_, v)| v),
                _ => None,
            };
            let section = self
                .object(p)
                .filter(|o| o.get("properties").is_some() && self.resolve(p).1 != Some("Fault"));
            if let (Some(o), Some(sub)) = (section, sub) {
                let description = p
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                out.push([
                    format!("**`{field}`**"),
                    "section".into(),
                    String::new(),
                    description.to_string(),
                ]);
                self.rows(out, &format!("{field}."), sub, o);
                continue;
            }
            let default = if required.contains(&name.as_str()) {
                "required".to_string()
            } else {
                p.get("default").map(show_default).unwrap_or_default()
            };
            let description = p
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            out.push([
                format!("`{field}`"),
                self.kind(&name, p),
                default,
                description.to_string(),
            ]);
            if name == "faults" {
                self.fault_rows(out, p);
            }
        }
    }

    /// One row per kind of fault.
    fn fault_rows(&self, out: &mut Vec<[String; 4]>, faults: &Value) {
        let Some(fault) = self.items(faults) else {
            return;
        };
        let (r, _) = self.resolve(fault);
        for b in r
            .get("oneOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some((kind, body)) = b
                .get("properties")
                .and_then(Value::as_object)
                .and_then(|p| p.iter().next())
            else {
                continue;
            };
            let fields: Vec<String> = self
                .properties(body)
                .into_iter()
                .map(|(k, _)| {
                    if self.required(body).contains(&k.as_str()) {
                        format!("`{k}`")
                    } else {
                        format!("`{k}`?")
                    }
                })
                .collect();
            let description = b
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            out.push([
                format!("`faults[]`: `{kind}`"),
                format!("fault: {}", fields.join(", ")),
                String::new(),
                description.to_string(),
            ]);
        }
    }

    /// A short name of what a field holds: `ms`, `range`, `probability`, `a` / `b`...
    fn kind(&self, name: &str, s: &Value) -> String {
        let (r, def) = self.resolve(s);
        match def {
            Some("Range") => return "range (ms)".into(),
            Some("Ratio") => return "probability".into(),
            Some("Provider") => return "preset or object".into(),
            Some("Designs") => return "`\"all\"` or array".into(),
            _ => {}
        }
        let values: Vec<String> = r
            .get("oneOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|b| b.get("const").and_then(Value::as_str))
            .map(|c| format!("`{c}`"))
            .collect();
        if !values.is_empty() {
            return values.join(" / ");
        }
        let types = self.types(s).unwrap_or_default();
        let optional = types.iter().any(|t| t == "null");
        let base = match types.iter().find(|t| *t != "null").map(String::as_str) {
            Some("integer") if name.ends_with("_ms") => "ms",
            Some("integer") => "integer",
            Some("boolean") => "boolean",
            Some("string") => "string",
            Some("array") => "array",
            Some("object") => "object",
            _ if self.object(s).is_some() => "object",
            _ => "value",
        };
        if optional {
            format!("{base} or absent")
        } else {
            base.into()
        }
    }
}

/// A default as a model would write it: a constant range as its constant, `"0/1"` as `0`,
/// `null` as absent.
fn show_default(v: &Value) -> String {
    match v {
        Value::Null => "absent".into(),
        Value::String(s) if s == "0/1" => "`0`".into(),
        Value::Object(m)
            if m.len() == 2 && m.get("min").is_some() && m.get("min") == m.get("max") =>
        {
            format!("`{}`", m["min"])
        }
        Value::String(s) if s.is_empty() => "`\"\"`".into(),
        v => format!("`{}`", compact(v)),
    }
}

/// Whether the file at `path` is a JSON Schema (such as `models/schema.json`) rather than a
/// model: commands that take many model files (`check models/*.json`) pass over it.
pub fn is_schema_file(path: &std::path::Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    o.get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with("http://json-schema.org/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bundled model file (not the presets, not the schema).
    fn bundled() -> Vec<std::path::PathBuf> {
        crate::model::testing::bundled_paths(&["", "windows", "bad", "guarantees"])
    }

    #[test]
    fn the_schema_finds_nothing_wrong_in_the_bundled_models() {
        let walk = SchemaWalk::new();
        let files = bundled();
        assert!(files.len() > 40);
        for path in files {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let found: Vec<String> = walk
                .findings(&v)
                .into_iter()
                .map(|f| match f {
                    Finding::Missing { object, message }
                    | Finding::At {
                        path: object,
                        message,
                    } => {
                        format!("{object}: {message}")
                    }
                })
                .collect();
            assert!(found.is_empty(), "{}: {found:?}", path.display());
        }
    }

    #[test]
    fn schema_paths_reach_every_kind_of_field() {
        let walk = SchemaWalk::new();
        for (path, what) in [
            ("faults", "an array such as"),
            (
                "faults[3].crash_worker",
                "an object such as {\"attempt\": 1, \"point\": \"after_send\"}",
            ),
            (
                "provider",
                "a preset name or a provider object such as \"stripe_v1\"",
            ),
            ("provider.processing_ms", "a duration in milliseconds"),
            ("network.reply_loss", "a probability such as \"1/20\""),
            (
                "expect.same_key.hold[0]",
                "a property name such as \"no_duplicate\"",
            ),
            (
                "expect.same_key",
                "an object with the fields `explore_max_runs`, `hold`, `violate`",
            ),
            ("workers.journal", "one of \"durable\", \"volatile\""),
            (
                "designs",
                "\"all\" or an array of design names such as [\"no_dedup\", \"same_key\", \"journal\"]",
            ),
        ] {
            let s = walk.at(path).unwrap_or_else(|| panic!("{path}"));
            let shape = walk
                .shape(s)
                .unwrap_or_else(|| panic!("{path} has no shape"));
            assert!(shape.starts_with(what), "{path}: {shape}");
        }
        assert!(walk.at("provider.nope").is_none());
    }
}

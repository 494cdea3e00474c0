//! The model format's reference, from one source: the JSON Schema generated from the Rust
//! types ([`schema`]), and what is derived from it (the defaults table of the README).

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
    root
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
    root: Value,
}

impl SchemaWalk {
    pub(crate) fn new() -> SchemaWalk {
        SchemaWalk { root: schema() }
    }

    /// The schema of the whole model.
    pub(crate) fn root(&self) -> &Value {
        &self.root
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
        if s.get("properties").is_some() || s.get("additionalProperties").is_some_and(Value::is_object)
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
        let mut s = &self.root;
        for seg in super::locate::parse_path(path) {
            s = match seg {
                Segment::Key(k) => self.property(s, &k)?,
                Segment::Index(_) => self.items(s)?,
            };
        }
        Some(s)
    }

    /// What a value described by `s` looks like, with an example: `an array such as
    /// [{"drop_reply": {"attempt": 1}}]`. None when the schema gives no example.
    pub(crate) fn shape(&self, s: &Value) -> Option<String> {
        let example = s
            .get("examples")
            .or_else(|| self.resolve(s).0.get("examples"))
            .and_then(Value::as_array)?;
        let examples: Vec<String> = example.iter().map(compact).collect();
        let (r, name) = self.resolve(s);
        let what = match (name, r.get("type").and_then(Value::as_str)) {
            (Some("Range"), _) => "a duration in milliseconds or {\"min\": .., \"max\": ..}",
            (Some("Ratio"), _) => "a probability",
            (Some("Provider"), _) => "a preset name or a provider object",
            (Some("Property"), _) => "a property name",
            (Some("Fault"), _) => "a one-key object",
            (_, Some("array")) => "an array",
            (_, Some("object")) => "an object",
            (_, Some("integer")) => "a non-negative integer",
            (_, Some("string")) => "a string",
            (_, Some("boolean")) => "true or false",
            _ if self.object(s).is_some() => "an object",
            _ => "a value",
        };
        Some(format!("{what} such as {}", examples.join(" or ")))
    }

    /// Every required member missing from `value` (and from the objects inside it), as
    /// (path of the object, member name, the member's description).
    pub(crate) fn missing(&self, value: &Value) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        self.missing_in(&mut out, "", value, &self.root);
        out
    }

    fn missing_in(&self, out: &mut Vec<(String, String, String)>, path: &str, v: &Value, s: &Value) {
        let join = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        match v {
            Value::Object(members) => {
                // In a choice between objects (a fault), the branch is the member's name:
                // `property` reaches it below.
                if !self.is_choice_of_objects(s) {
                    for name in self.required(s) {
                        if !members.contains_key(name) {
                            let description = self
                                .property(s, name)
                                .and_then(|p| p.get("description"))
                                .and_then(Value::as_str)
                                .unwrap_or_default();
                            let at = if path.is_empty() { "(root)" } else { path };
                            out.push((at.to_string(), name.to_string(), description.to_string()));
                        }
                    }
                }
                for (k, x) in members {
                    if let Some(sub) = self.property(s, k) {
                        self.missing_in(out, &join(k), x, sub);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(sub) = self.items(s) {
                    for (i, x) in items.iter().enumerate() {
                        self.missing_in(out, &format!("{path}[{i}]"), x, sub);
                    }
                }
            }
            _ => {}
        }
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

/// One-line JSON with a space after `:` and `,`.
pub(crate) fn compact(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(compact).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            let members: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), compact(v)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        v => v.to_string(),
    }
}

/// The defaults table of the README's model reference: one row per field.
pub fn defaults_markdown() -> String {
    String::from("TODO\n")
}

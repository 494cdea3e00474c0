//! The effective model: every field with the value a run uses, and where that value comes
//! from (the file, the provider preset, or the default). `retrylab show-model` prints it.
//!
//! The fields are walked in the order the types declare them (the order serde writes them),
//! guided by the JSON Schema ([`super::reference::schema`]) for what is a section and what
//! a value, and for the defaults of the fields serde leaves out when they are at their
//! default.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::provider::PRESETS;
use super::reference::SchemaWalk;
use super::schema::Model;

/// A JSON value whose objects keep the order of their members.
#[derive(Clone, Debug, PartialEq)]
pub enum Ordered {
    Scalar(Value),
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

impl Ordered {
    /// Reads JSON text, keeping member order.
    pub fn parse(text: &str) -> serde_json::Result<Ordered> {
        serde_json::from_str(text)
    }

    /// Writes a value in the order of `T`'s fields.
    pub fn of<T: Serialize>(value: &T) -> Ordered {
        let text = serde_json::to_string(value).expect("a model serializes to JSON");
        Ordered::parse(&text).expect("serde_json reads what it writes")
    }

    /// One-line JSON with a space after `:` and `,`; a range `{"min": a, "max": a}` is
    /// written as the constant `a`.
    pub fn compact(&self) -> String {
        match self {
            Ordered::Scalar(v) => v.to_string(),
            Ordered::Array(items) => {
                let items: Vec<String> = items.iter().map(Ordered::compact).collect();
                format!("[{}]", items.join(", "))
            }
            Ordered::Object(members) => {
                if let Some(c) = self.constant_range() {
                    return c.to_string();
                }
                let members: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), v.compact()))
                    .collect();
                format!("{{{}}}", members.join(", "))
            }
        }
    }

    fn constant_range(&self) -> Option<u64> {
        let Ordered::Object(m) = self else {
            return None;
        };
        match m.as_slice() {
            [(a, Ordered::Scalar(x)), (b, Ordered::Scalar(y))]
                if a == "min" && b == "max" && x == y =>
            {
                x.as_u64()
            }
            _ => None,
        }
    }

    /// As a [`Value`] (member order is then the map's).
    pub fn to_value(&self) -> Value {
        match self {
            Ordered::Scalar(v) => v.clone(),
            Ordered::Array(items) => Value::Array(items.iter().map(Ordered::to_value).collect()),
            Ordered::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }

    fn from_value(v: &Value) -> Ordered {
        match v {
            Value::Array(items) => Ordered::Array(items.iter().map(Ordered::from_value).collect()),
            Value::Object(m) => Ordered::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), Ordered::from_value(v)))
                    .collect(),
            ),
            v => Ordered::Scalar(v.clone()),
        }
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(v.into()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(v.into()))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(v.into()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(x) = seq.next_element()? {
            items.push(x);
        }
        Ok(Ordered::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut members = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Ordered>()? {
            members.push((k, v));
        }
        Ok(Ordered::Object(members))
    }
}

/// Where the value of a field comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The model file sets it.
    Set,
    /// The provider preset of this name sets it.
    Preset(String),
    /// Nobody sets it: the default.
    Default,
    /// `designs` is `"all"`, set by the file or by default: every design of the registry
    /// the model was read with.
    AllDesigns { set: bool },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Set => f.write_str("set"),
            Origin::Preset(name) => write!(f, "preset {name}"),
            Origin::Default => f.write_str("default"),
            Origin::AllDesigns { set: true } => f.write_str("set \"all\": every registered design"),
            Origin::AllDesigns { set: false } => {
                f.write_str("default \"all\": every registered design")
            }
        }
    }
}

/// One field of the effective model.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The path, as in error messages: `provider.retention_ms`, `faults[0]`.
    pub path: String,
    pub value: Ordered,
    pub origin: Origin,
}

/// The effective model of a file.
#[derive(Clone, Debug)]
pub struct Effective {
    /// The provider preset the file names, if any.
    pub preset: Option<String>,
    /// Every field, in declaration order.
    pub fields: Vec<Field>,
}

impl Effective {
    /// The effective model of `model`, read from `text` (the file it was loaded from).
    pub fn of(model: &Model, text: &str) -> Effective {
        let file: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        let preset = match file.get("provider") {
            Some(Value::String(name)) => Some(name.clone()),
            Some(Value::Object(o)) => o.get("preset").and_then(Value::as_str).map(String::from),
            _ => None,
        };
        let preset_file: Value = preset
            .as_deref()
            .and_then(|name| PRESETS.iter().find(|(n, _)| *n == name))
            .and_then(|(_, text)| serde_json::from_str(text).ok())
            .unwrap_or(Value::Null);
        let walk = Walk {
            schema: SchemaWalk::new(),
            file,
            preset: preset.clone(),
            preset_file,
        };
        let mut fields = Vec::new();
        let root = walk.schema.root();
        walk.object(&mut fields, &[], &Ordered::of(model), root);
        // `"all"` is shown as the designs it stands for, and where that came from.
        if model.design_list.is_all() {
            if let Some(f) = fields.iter_mut().find(|f| f.path == "designs") {
                let names = model
                    .designs
                    .iter()
                    .map(|n| Ordered::Scalar(n.as_str().into()));
                f.value = Ordered::Array(names.collect());
                f.origin = Origin::AllDesigns {
                    set: f.origin == Origin::Set,
                };
            }
        }
        Effective { preset, fields }
    }

    /// The text `retrylab show-model` prints: `path = value   # origin` per field, the
    /// provider's `source` and `notes` as wrapped comments.
    pub fn text(&self) -> String {
        let lines: Vec<(String, String)> = self
            .fields
            .iter()
            .map(|f| {
                (
                    format!("{} = {}", f.path, f.value.compact()),
                    f.origin.to_string(),
                )
            })
            .collect();
        let width = lines
            .iter()
            .map(|(l, _)| l.chars().count())
            .filter(|&n| n <= 56)
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        for (field, (line, origin)) in self.fields.iter().zip(&lines) {
            if matches!(field.path.as_str(), "provider.source" | "provider.notes") {
                out.push_str(&format!("# {} ({origin}):\n", field.path));
                let text = field.value.to_value();
                let text = text.as_str().unwrap_or_default();
                if text.is_empty() {
                    out.push_str("#   (empty)\n");
                }
                for l in wrap(text, 96) {
                    out.push_str(&format!("#   {l}\n"));
                }
                continue;
            }
            let pad = width.saturating_sub(line.chars().count());
            out.push_str(&format!("{line}{}   # {origin}\n", " ".repeat(pad)));
        }
        out
    }

    /// The JSON `retrylab show-model --format json` prints.
    pub fn json(&self) -> Value {
        let fields: Vec<Value> = self
            .fields
            .iter()
            .map(|f| {
                let (from, preset) = match &f.origin {
                    Origin::Set | Origin::AllDesigns { set: true } => ("set", None),
                    Origin::Preset(p) => ("preset", Some(p.clone())),
                    Origin::Default | Origin::AllDesigns { set: false } => ("default", None),
                };
                let mut o = serde_json::Map::new();
                o.insert("path".into(), f.path.clone().into());
                o.insert("value".into(), f.value.to_value());
                o.insert("from".into(), from.into());
                if let Some(p) = preset {
                    o.insert("preset".into(), p.into());
                }
                if matches!(f.origin, Origin::AllDesigns { .. }) {
                    // The value is what `"all"` stands for.
                    o.insert("all".into(), true.into());
                }
                Value::Object(o)
            })
            .collect();
        serde_json::json!({ "preset": self.preset, "fields": fields })
    }
}

/// Words of `text` in lines of at most `width` characters (a longer word stands alone).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

struct Walk {
    schema: SchemaWalk,
    file: Value,
    preset: Option<String>,
    preset_file: Value,
}

impl Walk {
    /// The fields of the object `value`, described by `schema`.
    fn object(&self, out: &mut Vec<Field>, path: &[String], value: &Ordered, schema: &Value) {
        let Ordered::Object(members) = value else {
            return;
        };
        let mut members = members.clone();
        // Fields serde leaves out at their default: added, after the others.
        for (name, property) in self.schema.properties(schema) {
            if name == "$schema" || members.iter().any(|(k, _)| *k == name) {
                continue;
            }
            if let Some(default) = property.get("default") {
                members.push((name, Ordered::from_value(default)));
            }
        }
        for (name, v) in &members {
            let mut p = path.to_vec();
            p.push(name.clone());
            let sub = self.schema.property(schema, name);
            self.value(out, &p, v, sub);
        }
    }

    fn value(
        &self,
        out: &mut Vec<Field>,
        path: &[String],
        value: &Ordered,
        schema: Option<&Value>,
    ) {
        let section = schema.filter(|s| self.schema.is_section(s));
        if let (true, Some(name)) = (path == ["provider"], &self.preset) {
            out.push(Field {
                path: "provider.preset".into(),
                value: Ordered::Scalar(name.as_str().into()),
                origin: Origin::Set,
            });
        }
        match (value, section) {
            (Ordered::Object(m), Some(s)) if !m.is_empty() => self.object(out, path, value, s),
            // An array of objects (the faults): one line each.
            (Ordered::Array(items), _)
                if !items.is_empty() && items.iter().all(|x| matches!(x, Ordered::Object(_))) =>
            {
                let origin = self.origin(path);
                let path = path.join(".");
                for (i, x) in items.iter().enumerate() {
                    out.push(Field {
                        path: format!("{path}[{i}]"),
                        value: x.clone(),
                        origin: origin.clone(),
                    });
                }
            }
            _ => out.push(Field {
                path: path.join("."),
                value: value.clone(),
                origin: self.origin(path),
            }),
        }
    }

    fn origin(&self, path: &[String]) -> Origin {
        if lookup(&self.file, path).is_some() {
            return Origin::Set;
        }
        if let (Some(name), Some((first, rest))) = (&self.preset, path.split_first()) {
            if first == "provider" && lookup(&self.preset_file, rest).is_some() {
                return Origin::Preset(name.clone());
            }
        }
        Origin::Default
    }
}

fn lookup<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.as_object()?.get(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"{
      "name": "m", "horizon_ms": 1000, "designs": ["same_key"],
      "workload": {"intents": 1},
      "agent": {"tool_timeout_ms": 100, "max_calls": 1, "on_failure": {"replan": 1}, "on_unknown": {"replan": 1}},
      "network": {"latency_ms": {"min": 5, "max": 80}},
      "provider": "stripe_v1"
    }"#;

    fn field<'a>(e: &'a Effective, path: &str) -> &'a Field {
        e.fields
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("no {path}"))
    }

    #[test]
    fn a_preset_by_name_sets_its_knobs_and_the_rest_is_default() {
        let model = Model::from_json(TEXT, "m.json").unwrap();
        let e = Effective::of(&model, TEXT);
        assert_eq!(e.preset.as_deref(), Some("stripe_v1"));
        let preset = Origin::Preset("stripe_v1".into());
        assert_eq!(field(&e, "provider.preset").origin, Origin::Set);
        assert_eq!(field(&e, "provider.retention_ms").origin, preset);
        assert_eq!(field(&e, "provider.dedup").origin, preset);
        assert_eq!(field(&e, "provider.processing_ms").origin, Origin::Default);
        assert_eq!(field(&e, "provider.processing_ms").value.compact(), "50");
        assert_eq!(field(&e, "network.latency_ms").origin, Origin::Set);
        assert_eq!(
            field(&e, "network.latency_ms").value.compact(),
            "{\"min\": 5, \"max\": 80}"
        );
        // Left out by serde at their defaults, shown all the same.
        assert_eq!(field(&e, "faults").value.compact(), "[]");
        assert_eq!(field(&e, "expect").value.compact(), "{}");
        assert_eq!(field(&e, "explore").value.compact(), "null");
        assert_eq!(
            field(&e, "workload.repeat_across_tenants").origin,
            Origin::Default
        );
    }

    #[test]
    fn all_designs_show_the_designs_and_where_all_comes_from() {
        let listed = Effective::of(&Model::from_json(TEXT, "m.json").unwrap(), TEXT);
        assert_eq!(field(&listed, "designs").value.compact(), "[\"same_key\"]");
        assert_eq!(field(&listed, "designs").origin, Origin::Set);
        let every: Vec<Ordered> = crate::design::names()
            .into_iter()
            .map(|n| Ordered::Scalar(n.into()))
            .collect();
        let said = TEXT.replace("\"designs\": [\"same_key\"]", "\"designs\": \"all\"");
        let left_out = TEXT.replace("\"designs\": [\"same_key\"],", "");
        for (text, set) in [(said, true), (left_out, false)] {
            let e = Effective::of(&Model::from_json(&text, "m.json").unwrap(), &text);
            let f = field(&e, "designs");
            assert_eq!(f.value, Ordered::Array(every.clone()), "{text}");
            assert_eq!(f.origin, Origin::AllDesigns { set });
            let json = e.json();
            let shown = json["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["path"] == "designs")
                .unwrap();
            assert_eq!(shown["from"], if set { "set" } else { "default" });
            assert_eq!(shown["all"], true);
        }
        assert!(
            e_text(&TEXT.replace("\"designs\": [\"same_key\"],", ""))
                .contains("   # default \"all\": every registered design\n")
        );
    }

    fn e_text(text: &str) -> String {
        Effective::of(&Model::from_json(text, "m.json").unwrap(), text).text()
    }

    #[test]
    fn wraps_words_within_the_width() {
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("", 6), Vec::<String>::new());
        assert_eq!(wrap("toolongword x", 4), ["toolongword", "x"]);
    }
}

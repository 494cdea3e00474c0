//! The protocol's JSON Schema, generated from the Rust types of its messages ([`FromExec`]
//! read, [`ToExec`] written, [`ErrorCode`]): the one source the clients' message types are
//! generated from. Committed as `api/protocol.schema.json`; `tests/protocol_schema.rs` fails
//! when the file is not what the types generate.

use serde_json::{Map, Value};

use super::PROTOCOL;
use super::code::ErrorCode;
use super::message::FromExec;
use super::to_exec::ToExec;

/// The schema's `title`.
pub const TITLE: &str = "retrylab executor protocol";

/// The JSON Schema (2020-12) of the executor protocol: `$defs` holds `FromExec` (what a
/// process sends, read strictly: the schema the simulator checks), `ToExec` (what it is
/// sent, as written: every field the simulator writes), `ErrorCode`, and the types they
/// name. Each message is an object schema whose `type` property is a `const`.
pub fn protocol_schema() -> Value {
    let mut defs = Map::new();
    // What a process sends is read (serde's deserialize contract: optional fields and
    // defaults); what it is sent is written (the serialize contract: what is always there).
    let settings = schemars::generate::SchemaSettings::draft2020_12();
    let mut read = settings.clone().for_deserialize().into_generator();
    read.subschema_for::<FromExec>();
    merge(&mut defs, read.take_definitions(true));
    let mut written = settings.for_serialize().into_generator();
    written.subschema_for::<ToExec>();
    written.subschema_for::<ErrorCode>();
    merge(&mut defs, written.take_definitions(true));
    if let Some(Value::Object(t)) = defs
        .get_mut("FromExec")
        .and_then(|f| f.pointer_mut("/oneOf"))
        .and_then(|kinds| {
            kinds
                .as_array_mut()?
                .iter_mut()
                .find(|k| k.pointer("/properties/type/const") == Some(&Value::from("http")))
        })
        .and_then(|http| http.pointer_mut("/properties/timeout_ms"))
    {
        // Absent and `null` differ (the model's timeout, none): no default stands for both.
        t.remove("default");
    }
    let mut root = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": TITLE,
        "description": "The messages between the retrylab simulator and an executor process, one JSON object per line (docs/executor-protocol.md). FromExec: what the process sends (the simulator rejects unknown fields); ToExec: what it is sent (clients ignore fields they do not know, so that a version can grow).",
        "x-protocol-version": PROTOCOL,
        "$defs": defs,
    });
    unwrap_descriptions(&mut root);
    root
}

/// [`protocol_schema`] as the text of `api/protocol.schema.json`.
pub fn protocol_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&protocol_schema()).expect("a schema is JSON");
    text.push('\n');
    text
}

/// Adds a generator's definitions; a name both generate must mean the same schema.
fn merge(defs: &mut Map<String, Value>, more: Map<String, Value>) {
    for (name, schema) in more {
        if let Some(had) = defs.get(&name) {
            assert_eq!(had, &schema, "two schemas named {name}");
        }
        defs.insert(name, schema);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The message kinds of a `$defs` entry, by their `type` const.
    fn kinds(schema: &Value, def: &str) -> Vec<String> {
        schema["$defs"][def]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| {
                k.pointer("/properties/type/const")
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| panic!("{def}: a kind without a type const: {k}"))
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn the_schema_has_the_shape_generators_read() {
        let s = protocol_schema();
        assert_eq!(s["title"], TITLE);
        assert_eq!(s["x-protocol-version"], PROTOCOL);
        let from = kinds(&s, "FromExec");
        let mut read = super::super::message::KINDS.to_vec();
        read.sort();
        let mut sorted = from.clone();
        sorted.sort();
        assert_eq!(sorted, read, "message::KINDS and FromExec");
        let to = kinds(&s, "ToExec");
        assert_eq!(to.len(), 12, "{to:?}");
        // Every field of every message has a description.
        for def in ["FromExec", "ToExec"] {
            for kind in s["$defs"][def]["oneOf"].as_array().unwrap() {
                for (field, p) in kind["properties"].as_object().unwrap() {
                    if field != "type" {
                        assert!(
                            p["description"].as_str().is_some_and(|d| !d.is_empty()),
                            "{def} {}: `{field}` has no description",
                            kind["properties"]["type"]["const"]
                        );
                    }
                }
            }
        }
        // Strict where the simulator reads, and no default for a field whose absence means
        // something of its own.
        let http = &s["$defs"]["FromExec"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["properties"]["type"]["const"] == "http")
            .unwrap();
        assert_eq!(http["additionalProperties"], false);
        assert!(http["properties"]["timeout_ms"].get("default").is_none());
        assert_eq!(
            s["$defs"]["ErrorCode"]["oneOf"].as_array().unwrap().len(),
            10
        );
    }
}

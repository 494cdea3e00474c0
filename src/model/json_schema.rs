//! JSON Schema of the types whose Deserialize is written by hand: each schema describes what
//! the reader accepts, with examples. The derived types are in [`super::schema`].

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};

use super::designs::{ALL, DesignList};
use super::provider::{ProviderKnobs, ProviderModel, preset_names};
use super::range::Range;
use crate::check::Property;
use crate::sim::Ratio;

impl JsonSchema for Range {
    fn schema_name() -> Cow<'static, str> {
        "Range".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A duration in milliseconds: a constant, or {\"min\": a, \"max\": b} drawn uniformly (min <= max).",
            "anyOf": [
                { "type": "integer", "minimum": 0 },
                {
                    "type": "object",
                    "properties": {
                        "min": { "type": "integer", "minimum": 0, "description": "The shortest duration." },
                        "max": { "type": "integer", "minimum": 0, "description": "The longest duration." }
                    },
                    "required": ["min", "max"],
                    "additionalProperties": false
                }
            ],
            "examples": [50, { "min": 20, "max": 300 }]
        })
    }
}

impl JsonSchema for Ratio {
    fn schema_name() -> Cow<'static, str> {
        "Ratio".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A probability: \"n/d\" (exact), 0, 1, or a decimal between 0 and 1 (read as parts per million).",
            "anyOf": [
                { "type": "string", "pattern": "^\\s*[0-9]+\\s*/\\s*[0-9]+\\s*$" },
                { "type": "number", "minimum": 0, "maximum": 1 }
            ],
            "examples": ["1/20", 0.05, 0]
        })
    }
}

impl JsonSchema for DesignList {
    fn schema_name() -> Cow<'static, str> {
        "Designs".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The designs of a model: \"all\", every design the program knows (the built-in ones, then a program's own), or an array of their names.",
            "anyOf": [
                {
                    "description": "Every registered design, in the order `retrylab designs` lists them.",
                    "type": "string",
                    "enum": [ALL]
                },
                {
                    "description": "These designs, in this order (`retrylab designs` lists their names), configured designs (a design under a name of its own with its own executor settings), and external executors: your executor program run under the simulator (docs/executor-protocol.md).",
                    "type": "array",
                    "items": {
                        "anyOf": [
                            { "type": "string" },
                            {
                                "description": "An external executor: a program speaking the executor protocol, run in the current directory without a shell, one process per worker.",
                                "type": "object",
                                "properties": {
                                    "name": { "type": "string", "description": "Its design name in tables, expect and --design." },
                                    "command": { "type": "array", "items": { "type": "string" }, "minItems": 1, "description": "The program and its arguments." },
                                    "params": { "type": "object", "default": {}, "description": "Its own parameters, handed to it in init." },
                                    "executor": { "type": "object", "default": {}, "description": "Fields of the model's executor section it runs with instead (timeout_ms, attempts, ...)." }
                                },
                                "required": ["name", "command"],
                                "additionalProperties": false
                            },
                            {
                                "description": "A configured design: the design `design` under the name `name` (in tables, expect and --design), on the model with the entry's executor fields in place, so that one model compares configurations on the same seeds.",
                                "type": "object",
                                "properties": {
                                    "name": { "type": "string", "description": "Its name in tables, expect and --design; not the name of a design." },
                                    "design": { "type": "string", "description": "The design it configures (`retrylab designs`)." },
                                    "executor": { "type": "object", "default": {}, "description": "Fields of the model's executor section it runs with instead: attempts, backoff_ms, timeout_ms, stack, ..." }
                                },
                                "required": ["name", "design"],
                                "additionalProperties": false
                            }
                        ]
                    }
                }
            ],
            "examples": [ALL, ["no_dedup", "same_key", "journal"], ["same_key", {"name": "same_key_3_retries", "design": "same_key", "executor": {"attempts": 3, "backoff_ms": 500}}]]
        })
    }
}

/// A property named in `expect`: one of [`Property::PLAIN`] or `resolved_within(T)`.
pub(crate) struct PropertyName;

impl JsonSchema for PropertyName {
    fn schema_name() -> Cow<'static, str> {
        "Property".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let plain: Vec<String> = Property::PLAIN.iter().map(|p| p.to_string()).collect();
        json_schema!({
            "description": "A property of a run: a name, or resolved_within(T) with T in milliseconds.",
            "anyOf": [
                { "type": "string", "enum": plain },
                { "type": "string", "pattern": "^resolved_within\\([0-9]+\\)$" }
            ],
            "examples": ["no_duplicate", "resolved_within(60000)"]
        })
    }
}

impl JsonSchema for ProviderModel {
    fn schema_name() -> Cow<'static, str> {
        "Provider".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = preset_names();
        let mut knobs = ProviderKnobs::json_schema(generator);
        let object = knobs.ensure_object();
        object.remove("title");
        object.insert(
            "description".into(),
            "The contract's knobs. With `preset`, the preset's values are the base and the \
             knobs given replace them; without it, `dedup` is required and the other knobs \
             take their defaults."
                .into(),
        );
        if let Some(Value::Object(properties)) = object.get_mut("properties") {
            let mut with_preset = serde_json::Map::new();
            with_preset.insert(
                "preset".into(),
                json!({
                    "description": "The preset to start from (`retrylab presets` lists them).",
                    "type": "string",
                    "enum": names,
                }),
            );
            with_preset.append(properties);
            *properties = with_preset;
        }
        object.insert(
            "anyOf".into(),
            json!([{ "required": ["preset"] }, { "required": ["dedup"] }]),
        );
        json_schema!({
            "description": "The remote API and its idempotency contract: a preset name as it is, a preset with changed knobs, or every knob written out.",
            "anyOf": [
                {
                    "description": "A built-in preset, used as it is.",
                    "type": "string",
                    "enum": names
                },
                knobs
            ],
            "examples": [
                "stripe_v1",
                { "preset": "stripe_v1", "processing_ms": { "min": 20, "max": 300 } },
                { "dedup": "by_key", "retention_ms": 86_400_000 }
            ]
        })
    }
}

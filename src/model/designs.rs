//! A model's `designs`: `"all"` (or the field left out), every design of the registry the
//! model is read with; or a list of names.
//!
//! `"all"` keeps a model free of the roster: a design added to the program, built in or a
//! user's own ([`crate::design::Registry`]), is compared by every model that says `"all"`
//! without a change to the file.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::catalog::Catalog;

/// The designs a model file names (its `designs` field, as written).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DesignList {
    /// `"all"`, or no `designs` field: every registered design, in the registry's order
    /// (the built-in ones, then a program's own).
    #[default]
    All,
    /// These designs, in this order.
    Listed(Vec<String>),
}

/// The words `"all"` is written with in a model file.
pub const ALL: &str = "all";

impl DesignList {
    /// Whether the file says `"all"` (or leaves `designs` out).
    pub fn is_all(&self) -> bool {
        matches!(self, DesignList::All)
    }

    /// The names of the designs compared, in order: a list as written, `"all"` as the
    /// registry's names. The names of a list are not checked here (validation does).
    pub fn resolve(&self, registry: &dyn Catalog) -> Vec<String> {
        match self {
            // A configured design belongs to the model that configures it.
            DesignList::All => registry
                .plain_names()
                .iter()
                .map(|d| d.to_string())
                .collect(),
            DesignList::Listed(names) => names.clone(),
        }
    }
}

impl Serialize for DesignList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DesignList::All => s.serialize_str(ALL),
            DesignList::Listed(names) => names.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for DesignList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DesignListVisitor)
    }
}

struct DesignListVisitor;

impl<'de> Visitor<'de> for DesignListVisitor {
    type Value = DesignList;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"all\" or an array of design names")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<DesignList, E> {
        if v == ALL {
            return Ok(DesignList::All);
        }
        Err(E::custom(format!(
            "invalid value: string {}, expected \"all\" (every registered design) or an array of design names such as [\"no_dedup\", \"same_key\"]",
            serde_json::Value::from(v),
        )))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DesignList, A::Error> {
        let mut names = Vec::new();
        while let Some(entry) = seq.next_element::<serde_json::Value>()? {
            let name = match entry {
                serde_json::Value::String(name) => name,
                serde_json::Value::Object(ref o) if o.contains_key("command") => {
                    external_entry(&entry).map_err(de::Error::custom)?.name
                }
                serde_json::Value::Object(_) => {
                    configured_entry(&entry).map_err(de::Error::custom)?.name
                }
                other => {
                    return Err(de::Error::custom(format!(
                        "invalid entry {other}: expected a design's name, a configured design {{\"name\": ..., \"design\": ..., \"executor\": {{...}}}}, or an external executor {{\"name\": ..., \"command\": [...]}}"
                    )));
                }
            };
            names.push(name);
        }
        Ok(DesignList::Listed(names))
    }
}

/// An external executor a model's `designs` lists: `{"name": ..., "command": [...],
/// "params": {...}}` (docs/executor-protocol.md).
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalEntry {
    pub name: String,
    /// The program and its arguments, run in the current directory, without a shell.
    pub command: Vec<String>,
    /// The design entry's own parameters, handed to the process in `init`.
    pub params: serde_json::Value,
}

/// Reads one object entry of `designs`.
fn external_entry(v: &serde_json::Value) -> Result<ExternalEntry, String> {
    let obj = v.as_object().ok_or("expected an object")?;
    if let Some(k) = obj
        .keys()
        .find(|k| !["name", "command", "params", "executor"].contains(&k.as_str()))
    {
        return Err(format!(
            "unknown field `{k}` of an external executor, expected `name`, `command`, `params` or `executor`"
        ));
    }
    executor_of(obj)?;
    let name = obj
        .get("name")
        .and_then(|n| n.as_str())
        .ok_or("an external executor needs a string `name`")?
        .to_string();
    let command: Vec<String> = match obj.get("command") {
        Some(serde_json::Value::Array(words)) if !words.is_empty() => words
            .iter()
            .map(|w| w.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                format!("external executor {name}: `command` must be an array of strings")
            })?,
        _ => {
            return Err(format!(
                "external executor {name}: `command` must be a non-empty array of strings, such as [\"python3\", \"examples/python/naive_retry.py\"]"
            ));
        }
    };
    let params = match obj.get("params") {
        None => serde_json::json!({}),
        Some(p) if p.is_object() => p.clone(),
        Some(_) => {
            return Err(format!(
                "external executor {name}: `params` must be an object"
            ));
        }
    };
    Ok(ExternalEntry {
        name,
        command,
        params,
    })
}

/// An entry of `designs` that configures a design: `{"name": ..., "design": ..., "executor":
/// {...}}`, the design called `design` under the name `name`, with the model's `executor`
/// section and the entry's fields in place.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfiguredEntry {
    pub name: String,
    /// The design it configures; `None` for an external executor's entry (which runs its
    /// own command).
    pub design: Option<String>,
    /// The `executor` fields it sets (none: the model's section as it is).
    pub executor: serde_json::Map<String, serde_json::Value>,
}

/// The `executor` object of an entry, if any.
fn executor_of(
    obj: &serde_json::Map<String, serde_json::Value>,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match obj.get("executor") {
        None => Ok(serde_json::Map::new()),
        Some(serde_json::Value::Object(o)) => Ok(o.clone()),
        Some(_) => Err(
            "`executor` must be an object: the fields of the model's executor section this entry sets"
                .into(),
        ),
    }
}

/// Reads one configured entry of `designs`.
fn configured_entry(v: &serde_json::Value) -> Result<ConfiguredEntry, String> {
    let obj = v.as_object().ok_or("expected an object")?;
    if let Some(k) = obj
        .keys()
        .find(|k| !["name", "design", "executor"].contains(&k.as_str()))
    {
        return Err(format!(
            "unknown field `{k}` of a configured design, expected `name`, `design` and `executor` (or `command` for an external executor)"
        ));
    }
    let name = obj
        .get("name")
        .and_then(|n| n.as_str())
        .ok_or("a configured design needs a string `name`")?
        .to_string();
    let design = obj
        .get("design")
        .and_then(|n| n.as_str())
        .ok_or_else(|| {
            format!("configured design {name}: `design` must name the design it configures, such as \"same_key\"")
        })?
        .to_string();
    let executor = executor_of(obj).map_err(|e| format!("configured design {name}: {e}"))?;
    Ok(ConfiguredEntry {
        name,
        design: Some(design),
        executor,
    })
}

/// The entries of a model text's `designs` that carry an executor section or configure a
/// design, with their index in the list; none when the text does not parse (loading the
/// model then reports why).
pub fn configured_entries(text: &str) -> Vec<(usize, ConfiguredEntry)> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let Some(list) = v.get("designs").and_then(|d| d.as_array()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let Some(obj) = e.as_object() else {
            continue;
        };
        let entry = if obj.contains_key("command") {
            let Ok(x) = external_entry(e) else {
                continue;
            };
            match executor_of(obj) {
                Ok(executor) if !executor.is_empty() => ConfiguredEntry {
                    name: x.name,
                    design: None,
                    executor,
                },
                _ => continue,
            }
        } else {
            let Ok(c) = configured_entry(e) else {
                continue;
            };
            c
        };
        out.push((i, entry));
    }
    out
}

/// The external executors a model text's `designs` lists, in order; none when the text does
/// not parse (loading the model then reports why).
pub fn external_entries(text: &str) -> Result<Vec<ExternalEntry>, String> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok(Vec::new());
    };
    let Some(list) = v.get("designs").and_then(|d| d.as_array()) else {
        return Ok(Vec::new());
    };
    list.iter()
        .filter(|e| e.is_object())
        .map(external_entry)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<DesignList, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn all_or_a_list() {
        assert_eq!(read("\"all\""), Ok(DesignList::All));
        assert_eq!(
            read("[\"same_key\", \"journal\"]"),
            Ok(DesignList::Listed(vec![
                "same_key".into(),
                "journal".into()
            ]))
        );
        assert_eq!(read("[]"), Ok(DesignList::Listed(Vec::new())));
        let e = read("\"some\"").unwrap_err();
        assert!(
            e.starts_with("invalid value: string \"some\", expected \"all\""),
            "{e}"
        );
        let e = read("3").unwrap_err();
        assert!(
            e.starts_with("invalid type: integer `3`, expected \"all\""),
            "{e}"
        );
    }

    #[test]
    fn external_executors_are_entries_with_a_command() {
        let text = r#"{"designs": ["no_dedup", {"name": "naive", "command": ["python3", "x.py"], "params": {"tries": 3}}]}"#;
        let e = external_entries(text).unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].name, "naive");
        assert_eq!(e[0].command, ["python3", "x.py"]);
        assert_eq!(e[0].params, serde_json::json!({"tries": 3}));
        assert_eq!(
            read(r#"["no_dedup", {"name": "naive", "command": ["python3"]}]"#),
            Ok(DesignList::Listed(vec!["no_dedup".into(), "naive".into()]))
        );
        let e = read(r#"[{"name": "naive", "command": []}]"#).unwrap_err();
        assert!(
            e.contains("`command` must be a non-empty array of strings"),
            "{e}"
        );
        let e = read(r#"[{"name": "naive", "cmd": ["x"]}]"#).unwrap_err();
        assert!(e.contains("unknown field `cmd`"), "{e}");
        let e = read("[3]").unwrap_err();
        assert!(e.contains("invalid entry 3"), "{e}");
    }

    #[test]
    fn written_as_read() {
        for json in ["\"all\"", "[\"same_key\",\"journal\"]"] {
            let d: DesignList = serde_json::from_str(json).unwrap();
            assert_eq!(serde_json::to_string(&d).unwrap(), json);
        }
    }

    #[test]
    fn all_is_the_registry_in_its_order() {
        use crate::design::Registry;
        let r = Registry::builtin();
        let names: Vec<String> = r.names().into_iter().map(String::from).collect();
        assert_eq!(DesignList::All.resolve(&r), names);
        let listed = DesignList::Listed(vec!["journal".into(), "no_dedup".into()]);
        assert_eq!(listed.resolve(&r), ["journal", "no_dedup"]);
    }
}

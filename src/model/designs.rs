//! A model's `designs`: `"all"` (or the field left out), every design of the registry the
//! model is read with; or a list of names.
//!
//! `"all"` keeps a model free of the roster: a design added to the program, built in or a
//! user's own ([`crate::design::Registry`]), is compared by every model that says `"all"`
//! without a change to the file.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::design::Registry;

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
    pub fn resolve(&self, registry: &Registry) -> Vec<String> {
        match self {
            DesignList::All => registry.names().into_iter().map(String::from).collect(),
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
        while let Some(name) = seq.next_element::<String>()? {
            names.push(name);
        }
        Ok(DesignList::Listed(names))
    }
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
    fn written_as_read() {
        for json in ["\"all\"", "[\"same_key\",\"journal\"]"] {
            let d: DesignList = serde_json::from_str(json).unwrap();
            assert_eq!(serde_json::to_string(&d).unwrap(), json);
        }
    }

    #[test]
    fn all_is_the_registry_in_its_order() {
        let r = Registry::builtin();
        let names: Vec<String> = r.names().into_iter().map(String::from).collect();
        assert_eq!(DesignList::All.resolve(&r), names);
        let listed = DesignList::Listed(vec!["journal".into(), "no_dedup".into()]);
        assert_eq!(listed.resolve(&r), ["journal", "no_dedup"]);
    }
}

//! The designs a program knows: the built-in ones, and those a user's binary adds
//! ([`crate::cli::main_with`]).
//!
//! Commands and model validation resolve design names through a [`Registry`], so a model
//! file may list a user's design beside the built-in ones.

use std::path::Path;

use super::Design;
use crate::model::{Catalog, Listing, Model, ModelError};

/// A set of designs with distinct names: the built-in ones first, in their order, then the
/// added ones in the order given.
#[derive(Clone)]
pub struct Registry {
    designs: Vec<&'static dyn Design>,
    builtin: usize,
}

impl Registry {
    /// The built-in designs only.
    pub fn builtin() -> Self {
        let designs = super::all();
        let builtin = designs.len();
        Self { designs, builtin }
    }

    /// The built-in designs and `extra`. Refused, naming it, when a design of `extra` has
    /// an empty name, the name of a built-in design, or the name of another of `extra`.
    pub fn with(extra: &[&'static dyn Design]) -> Result<Self, String> {
        let mut r = Self::builtin();
        for d in extra {
            let name = d.name();
            if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == ',') {
                return Err(format!(
                    "design {name:?}: a design's name must be non-empty, without spaces or commas"
                ));
            }
            match r.designs.iter().position(|k| k.name() == name) {
                Some(i) if i < r.builtin => {
                    return Err(format!(
                        "design \"{name}\": a built-in design has this name; give yours another"
                    ));
                }
                Some(_) => {
                    return Err(format!("design \"{name}\": added twice"));
                }
                None => r.designs.push(*d),
            }
            for prop in d.properties() {
                let known = crate::check::Property::PLAIN
                    .iter()
                    .map(|p| p.def().name)
                    .chain(["resolved_within"]);
                if prop.name.is_empty()
                    || prop
                        .name
                        .chars()
                        .any(|c| c.is_whitespace() || "(),".contains(c))
                {
                    return Err(format!(
                        "design \"{name}\": property {:?}: a property's name must be non-empty, without spaces, commas or parentheses",
                        prop.name
                    ));
                }
                if known.clone().any(|k| k == prop.name) {
                    return Err(format!(
                        "design \"{name}\": property \"{}\" is a built-in property's name; give yours another",
                        prop.name
                    ));
                }
                let same = r
                    .properties()
                    .iter()
                    .filter(|p| p.name == prop.name)
                    .count();
                match r.property_owner(prop.name) {
                    Some(owner) if same > 1 && owner == name => {
                        return Err(format!(
                            "design \"{name}\": property \"{}\" is brought twice",
                            prop.name
                        ));
                    }
                    Some(owner) if same > 1 => {
                        return Err(format!(
                            "design \"{name}\": property \"{}\" is also brought by design \"{owner}\"; give one of them another name",
                            prop.name
                        ));
                    }
                    _ => {}
                }
            }
        }
        Ok(r)
    }

    /// Every design, built-in ones first.
    pub fn all(&self) -> &[&'static dyn Design] {
        &self.designs
    }

    /// The designs added to the built-in ones.
    pub fn added(&self) -> &[&'static dyn Design] {
        &self.designs[self.builtin..]
    }

    /// The design called `name`.
    pub fn find(&self, name: &str) -> Option<&'static dyn Design> {
        self.designs.iter().copied().find(|d| d.name() == name)
    }
}

/// The registry is the catalog models are read against: its designs, in order.
impl Catalog for Registry {
    fn listings(&self) -> Vec<Listing> {
        self.designs
            .iter()
            .map(|d| Listing {
                name: d.name(),
                configured: d.configures().is_some(),
                properties: d.properties(),
            })
            .collect()
    }
}

/// Reading a model against the built-in designs: the model module knows no design, so these
/// live with the registry.
impl Model {
    /// Reads and checks a model file (its designs among the built-in ones; `"all"` is every
    /// built-in design).
    pub fn load(path: &Path) -> Result<Model, ModelError> {
        Model::load_with(path, &Registry::builtin())
    }

    /// Parses and checks model text (its designs among the built-in ones; `"all"` is every
    /// built-in design); `origin` labels the errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Model, ModelError> {
        Model::from_json_with(text, origin, &Registry::builtin())
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::Executor;
    use crate::model::ExecutorModel;

    /// A test design: a name, and the properties it brings.
    struct Named(&'static str, &'static [crate::check::PropertyDef]);

    impl Design for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn summary(&self) -> &str {
            "a test design"
        }
        fn executor(&self, _: &ExecutorModel) -> Box<dyn Executor> {
            unreachable!("never run")
        }
        fn properties(&self) -> &'static [crate::check::PropertyDef] {
            self.1
        }
    }

    static MINE: Named = Named("mine", &[]);

    const fn def(name: &'static str) -> crate::check::PropertyDef {
        crate::check::PropertyDef {
            name,
            meaning: "a test property",
            judge: crate::check::Judge::Violated(|_| false),
        }
    }

    static OWN: [crate::check::PropertyDef; 1] = [def("own")];
    static BUILT_IN_NAME: [crate::check::PropertyDef; 1] = [def("no_duplicate")];
    static TWICE: [crate::check::PropertyDef; 2] = [def("own"), def("own")];
    static SPACE: [crate::check::PropertyDef; 1] = [def("my own")];
    static A: Named = Named("a", &OWN);
    static B: Named = Named("b", &OWN);

    #[test]
    fn properties_designs_bring_have_names_of_their_own() {
        let r = Registry::with(&[&A]).unwrap();
        assert_eq!(r.properties(), [&OWN[0]]);
        assert_eq!(r.property_owner("own"), Some("a"));
        assert_eq!(r.property_owner("no_duplicate"), None);
        let e = Registry::with(&[&A, &B]).unwrap_err();
        assert_eq!(
            e,
            "design \"b\": property \"own\" is also brought by design \"a\"; give one of them another name"
        );
        static C: Named = Named("c", &BUILT_IN_NAME);
        let e = Registry::with(&[&C]).unwrap_err();
        assert_eq!(
            e,
            "design \"c\": property \"no_duplicate\" is a built-in property's name; give yours another"
        );
        static D: Named = Named("d", &TWICE);
        let e = Registry::with(&[&D]).unwrap_err();
        assert_eq!(e, "design \"d\": property \"own\" is brought twice");
        static E: Named = Named("e", &SPACE);
        let e = Registry::with(&[&E]).unwrap_err();
        assert!(e.starts_with("design \"e\": property \"my own\""), "{e}");
    }
    static CLASH: Named = Named("same_key", &[]);
    static SPACED: Named = Named("my design", &[]);

    #[test]
    fn added_designs_follow_the_built_in_ones() {
        let r = Registry::with(&[&MINE]).unwrap();
        assert_eq!(r.all().len(), crate::design::all().len() + 1);
        assert_eq!(r.names().last(), Some(&"mine"));
        assert_eq!(r.added().len(), 1);
        assert!(r.find("mine").is_some());
        assert!(r.find("same_key").is_some());
        assert!(Registry::builtin().find("mine").is_none());
    }

    #[test]
    fn a_clash_is_refused_naming_the_design() {
        let e = Registry::with(&[&CLASH]).unwrap_err();
        assert_eq!(
            e,
            "design \"same_key\": a built-in design has this name; give yours another"
        );
        let e = Registry::with(&[&MINE, &MINE]).unwrap_err();
        assert_eq!(e, "design \"mine\": added twice");
        let e = Registry::with(&[&SPACED]).unwrap_err();
        assert!(e.starts_with("design \"my design\""), "{e}");
    }
}

//! The designs a program knows: the built-in ones, and those a user's binary adds
//! ([`crate::cli::main_with`]).
//!
//! Commands and model validation resolve design names through a [`Registry`], so a model
//! file may list a user's design beside the built-in ones.

use super::Design;

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

    /// Every design's name, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.designs.iter().map(|d| d.name()).collect()
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

    struct Named(&'static str);

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
    }

    static MINE: Named = Named("mine");
    static CLASH: Named = Named("same_key");
    static SPACED: Named = Named("my design");

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

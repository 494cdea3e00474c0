//! What reading a model needs to know of the designs it may name, and nothing more: the
//! model module knows no design. The design layer's registry is the catalog every command
//! reads models with ([`crate::design::Registry`]); [`Model::load`](super::Model::load) and
//! [`Model::from_json`](super::Model::from_json) take the built-in one.

use crate::check::PropertyDef;

/// One design a catalog knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listing {
    pub name: &'static str,
    /// A configured entry of some model (a design with executor fields of its own): only
    /// the model that configures it may name it.
    pub configured: bool,
    /// The properties it brings beyond the built-in ones; `expect` may name them of it.
    pub properties: &'static [PropertyDef],
}

/// The designs a model's names are resolved against, in order.
pub trait Catalog {
    /// Every design, in the order `"all"` lists them.
    fn listings(&self) -> Vec<Listing>;

    /// The design called `name`.
    fn listing(&self, name: &str) -> Option<Listing> {
        self.listings().into_iter().find(|l| l.name == name)
    }

    /// Every design's name, in order.
    fn names(&self) -> Vec<&'static str> {
        self.listings().iter().map(|l| l.name).collect()
    }

    /// The names of the designs that are not configured entries: what `"all"` stands for,
    /// and what an entry may configure.
    fn plain_names(&self) -> Vec<&'static str> {
        let all = self.listings();
        all.iter()
            .filter(|l| !l.configured)
            .map(|l| l.name)
            .collect()
    }

    /// Whether `name` is a configured entry of some model.
    fn is_configured(&self, name: &str) -> bool {
        self.listing(name).is_some_and(|l| l.configured)
    }

    /// The properties the designs bring, in the order of the designs.
    fn properties(&self) -> Vec<&'static PropertyDef> {
        self.listings()
            .iter()
            .flat_map(|l| l.properties.iter())
            .collect()
    }

    /// The design that brings the property called `property`, if one does.
    fn property_owner(&self, property: &str) -> Option<&'static str> {
        self.listings()
            .into_iter()
            .find(|l| l.properties.iter().any(|p| p.name == property))
            .map(|l| l.name)
    }
}

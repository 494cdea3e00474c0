//! A design entry of a model with its own executor configuration: `{"name": ..., "design":
//! ..., "executor": {...}}` in `designs`. It is its base design under another name; what
//! differs is the model it runs on ([`crate::model::Model::for_design`]), whose `executor`
//! section is the shared one with the entry's fields in place. Everything that reads the
//! executor section (the world, the assumptions' judgement, a search's menus) reads that
//! model, so a configured design is judged by the configuration it runs.

use super::{Assumption, Design, Executor};
use crate::model::ExecutorModel;

/// A base design under an entry's name.
pub struct Configured {
    name: String,
    base: &'static dyn Design,
}

impl Configured {
    /// The design `name`, configured from `base`; it lives as long as the program, as the
    /// built-in designs do.
    pub fn leak(name: &str, base: &'static dyn Design) -> &'static Configured {
        Box::leak(Box::new(Configured {
            name: name.to_string(),
            base,
        }))
    }

    /// The design it configures.
    pub fn base(&self) -> &'static dyn Design {
        self.base
    }
}

impl Design for Configured {
    fn name(&self) -> &str {
        &self.name
    }
    fn summary(&self) -> &str {
        self.base.summary()
    }
    fn executor(&self, config: &ExecutorModel) -> Box<dyn Executor> {
        self.base.executor(config)
    }
    fn assumptions(&self) -> Vec<Assumption> {
        self.base.assumptions()
    }
    fn guarantee(&self) -> Vec<crate::check::Property> {
        self.base.guarantee()
    }
    fn time_thresholds(&self, config: &ExecutorModel) -> Vec<(crate::sim::Millis, &'static str)> {
        self.base.time_thresholds(config)
    }
    fn executor_in(&self, model: &crate::model::Model) -> Box<dyn Executor> {
        self.base.executor_in(model)
    }
    fn certificate_caveats(&self) -> Vec<String> {
        self.base.certificate_caveats()
    }
    fn is_external(&self) -> bool {
        self.base.is_external()
    }
    fn check_determinism(
        &self,
        model: &crate::model::Model,
        run: bool,
    ) -> Result<Option<String>, String> {
        self.base.check_determinism(model, run)
    }
    fn parts(&self) -> crate::sim::Parts {
        self.base.parts()
    }
    fn symmetric(&self) -> bool {
        self.base.symmetric()
    }
    fn reads_settled_times(&self) -> bool {
        self.base.reads_settled_times()
    }
    fn runs_model_stack(&self) -> bool {
        self.base.runs_model_stack()
    }
    fn configures(&self) -> Option<&'static dyn Design> {
        Some(self.base)
    }
}

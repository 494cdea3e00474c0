//! The bundled model files (`models/*.json` and `models/windows/*.json`), for tests that go
//! over all of them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use retrylab::model::Model;

/// Every bundled model file, sorted by path.
pub fn bundled_paths() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut paths: Vec<PathBuf> = [root.clone(), root.join("windows")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        // The JSON Schema of the models, not a model.
        .filter(|p| !p.ends_with("schema.json"))
        .collect();
    paths.sort();
    paths
}

/// Every bundled model, loaded, in the order of [`bundled_paths`].
pub fn bundled() -> Vec<Model> {
    bundled_paths()
        .iter()
        .map(|p| Model::load(p).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

//! What the unit tests share: the bundled model files.

use std::path::{Path, PathBuf};

use super::Model;

/// The bundled model `models/<name>`, loaded.
pub(crate) fn bundled_model(name: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(name);
    Model::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Every bundled model file (`models/*.json` and `models/windows/*.json`, not the schema),
/// sorted by path, loaded.
pub(crate) fn bundled_models() -> Vec<Model> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut paths: Vec<PathBuf> = [root.clone(), root.join("windows")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && !p.ends_with("schema.json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| Model::load(p).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

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

/// The model files of `models/<dir>` for each of `dirs` ("" for `models/` itself), the
/// schema left out, sorted by path.
pub(crate) fn bundled_paths(dirs: &[&str]) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut paths: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && !p.ends_with("schema.json"))
        .collect();
    paths.sort();
    paths
}

/// Every model of `models/` and `models/windows/`, loaded, in path order.
pub(crate) fn bundled_models() -> Vec<Model> {
    bundled_paths(&["", "windows"])
        .iter()
        .map(|p| Model::load(p).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

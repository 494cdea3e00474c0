//! Files bundled into the program (`include_str!`), read once. A bundled file that does not
//! read is a defect of the program, found by its tests: the panic names the file and field.

/// Reads every `(name, text)` of `files`, which live in `dir`, with `parse`, and checks that
/// each file calls itself by the name it is bundled under.
pub(crate) fn read_all<T, E: std::fmt::Display>(
    dir: &str,
    files: &[(&str, &str)],
    parse: impl Fn(&str, &str) -> Result<T, E>,
    name_of: impl Fn(&T) -> &str,
) -> Vec<T> {
    files
        .iter()
        .map(|(name, text)| {
            let file = format!("{dir}/{name}.json");
            let p = parse(&file, text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(name_of(&p), *name, "{file}: its name");
            p
        })
        .collect()
}

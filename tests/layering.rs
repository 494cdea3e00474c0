//! The library's modules form layers: a module may use the modules below it, never one above
//! (no import cycle between two of them, and none through a third). The order, bottom first:
//!
//! | layer      | what it holds                                                        |
//! |------------|----------------------------------------------------------------------|
//! | `sync`     | the mutex and atomics shim that loom replaces                        |
//! | `sim`      | virtual time, the event queue, the chooser, replay, hashing          |
//! | `vocab`    | identifiers, protocol messages, records, the trace                   |
//! | `check`    | properties, outcomes, metrics, verdicts: judging a finished run      |
//! | `model`    | the model files: schema, validation, presets                         |
//! | `design`   | the `Design` and `Executor` traits, the journal, the built-in designs |
//! | `world`    | the simulated agent, network, workers, provider and ledger          |
//! | `run`      | one run, or a sweep of seeds                                         |
//! | `external` | an executor in another process, as a design                          |
//! | `explore`  | sweeps, exhaustive search, shrinking, checks                         |
//! | `report`   | tables, JSON, Markdown, HTML, charts, diagrams, reports from models  |
//! | `cli`      | the command line: arguments, output, exit codes                      |
//!
//! The test reads every source file of `src/`, leaves out comments, string literals and
//! `#[cfg(test)]` modules (a unit test may reach anywhere; the library does not), and fails
//! on every path `crate::X` (or `super::` climbing out of its module) naming a module of a
//! higher layer, or of its own layer but another module, with the file and line.

use std::path::Path;

use crate::common::source::{code_only, sources};

const LAYERS: &[&str] = &[
    "sync", "sim", "vocab", "check", "model", "design", "world", "run", "external", "explore",
    "report", "cli", "prelude",
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|m| *m == module)
}

/// `code` with every `#[cfg(test)]` item (a `mod tests { ... }` or a single function)
/// blanked out.
fn without_tests(code: &str) -> String {
    let mut b = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(p) = find(&b, b"#[cfg(test)]", from) {
        // The item runs to its matching closing brace, or to a `;` or `,` before any brace
        // (a field or a variant), or stops before the brace that closes its container.
        let mut i = p;
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b'{' => depth += 1,
                b'}' if depth == 0 => {
                    i -= 1;
                    break;
                }
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b';' | b',' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        let last = i.min(b.len() - 1);
        for c in &mut b[p..=last] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = i;
    }
    String::from_utf8(b).unwrap()
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// The first segments of the paths that `rest` (the text after `crate::` or a climb out of
/// the module) names: `m::...`, each `m` of a group `{m::..., n, ...}`, and `*` for a glob.
fn named_after(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0usize;
        let mut names = Vec::new();
        let mut item = String::new();
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    names.push(item.clone());
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    names.push(std::mem::take(&mut item));
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        names.iter().filter_map(|n| first(n.trim())).collect()
    } else {
        first(rest).into_iter().collect()
    }
}

/// The first segment of a path: an identifier, or `*`, or `self` for `self as x`.
fn first(s: &str) -> Option<String> {
    if s.starts_with('*') {
        return Some("*".into());
    }
    ident(s)
}

fn ident(s: &str) -> Option<String> {
    let id: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!id.is_empty()).then_some(id)
}

/// The paths out of `module` in `code` (the code of one of its files, `depth` modules below
/// it) that it may not take: to a module of a higher layer, a glob of the crate root, or the
/// crate under another name (which this test could not follow). `(line, what it names)`.
fn upward_in(module: &str, depth: usize, code: &str) -> Vec<(usize, String)> {
    let from = rank(module).unwrap_or_else(|| panic!("module {module} has no layer in LAYERS"));
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    let mut check = |at: usize, names: Vec<String>| {
        for to in names {
            let bad = match to.as_str() {
                "*" | "self" => true,
                _ => rank(&to).is_some_and(|r| to != module && r >= from),
            };
            if bad {
                found.push((line_of(at), to));
            }
        }
    };
    let mut at = 0;
    while let Some(p) = code[at..].find("crate") {
        let p = at + p;
        at = p + 1;
        // `$crate::` in a macro is the crate too; `other_crate::` is not.
        let before = code[..p].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = code[p + "crate".len()..].trim_start();
        if let Some(path) = rest.strip_prefix("::") {
            check(p, named_after(path));
        } else if rest.starts_with("as ") {
            check(p, vec!["self".into()]);
        }
    }
    // `super::...` out of the top-level module: one more `super::` than the file is deep.
    let climb = "super::".repeat(depth + 1);
    let mut at = 0;
    while let Some(p) = code[at..].find(&climb) {
        let p = at + p;
        at = p + 1;
        let names: Vec<String> = named_after(&code[p + climb.len()..])
            .into_iter()
            .filter(|n| n != "*")
            .collect();
        check(p, names);
    }
    found
}

/// The library's upward imports: `(file:line, from, to)`.
fn upward(src: &Path) -> Vec<(String, String, String)> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel.iter().next().unwrap().to_str().unwrap();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        // How far below its top-level module the file's code is: `world/mod.rs` and
        // `world.rs` are the module itself, `world/agent.rs` one below.
        let nested = rel.components().count() - 1;
        let depth = if rel.file_name().is_some_and(|f| f == "mod.rs") {
            nested - 1
        } else {
            nested
        };
        let code = without_tests(&code_only(&std::fs::read_to_string(&file).unwrap()));
        for (line, to) in upward_in(&module, depth, &code) {
            found.push((format!("src/{}:{line}", rel.display()), module.clone(), to));
        }
    }
    found
}

#[test]
fn no_module_uses_a_module_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = upward(&src);
    let lines: Vec<String> = found
        .iter()
        .map(|(at, from, to)| format!("{at}: {from} uses {to}, a layer above it"))
        .collect();
    assert!(
        lines.is_empty(),
        "upward imports (layers, bottom first: {}):\n{}",
        LAYERS.join(" < "),
        lines.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let declared: Vec<String> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            l.strip_prefix("mod ")
                .map(|m| m.trim_end_matches(';').trim().to_string())
        })
        .collect();
    assert!(!declared.is_empty());
    for m in &declared {
        assert!(
            rank(m).is_some(),
            "src/lib.rs declares {m}, which has no layer"
        );
    }
    for m in LAYERS {
        assert!(
            declared.iter().any(|d| d == m),
            "{m}: in LAYERS, not in src/lib.rs"
        );
    }
}

/// The detector itself: it finds what it must and nothing in comments, strings or tests.
#[test]
fn the_detector_reads_paths_groups_and_climbs() {
    let code = without_tests(&code_only(
        "use crate::{sim::Millis, world::{World, Event}};\n\
         // crate::cli in a comment\n\
         let s = \"crate::cli\"; let c = '\"'; let q = '\\''; let t = 'a;\n\
         fn f<'a>(x: &'a crate::report::Report) {}\n\
         struct S { #[cfg(test)] t: u32, u: u32 }\n\
         use super::super::{explore::X, run};\n\
         use super::cli::Y;\n\
         use crate::*;\n\
         use crate as root;\n\
         #[cfg(test)]\nmod tests { use crate::cli::Cli; }\n",
    ));
    // In `world`, one module below it (`world/agent.rs`): `report` and `explore` are above;
    // `super::cli` is within `world`; the glob and the alias cannot be followed.
    let found = upward_in("world", 1, &code);
    let names: Vec<&str> = found.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(
        names,
        ["report", "*", "self", "explore", "run"],
        "{found:?}"
    );
    assert_eq!(found[0].0, 4);
    // In `world/mod.rs` (depth 0), `super::` is the crate root: `super::cli` escapes.
    let found = upward_in("world", 0, "use super::cli::Y;\nuse super::{report::Z};\n");
    assert_eq!(found, [(1, "cli".to_string()), (2, "report".to_string())]);
    // Nothing upward from the top layer but globs and aliases.
    assert!(upward_in("cli", 0, "use crate::{report::a, sim::b};").is_empty());
}

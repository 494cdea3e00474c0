//! Issue 39's size limits for `src/`: no file over 1 000 lines, no function over 120 lines,
//! at most 10 functions over 80. Past those sizes a file holds several concepts and a
//! function several steps, and a reader has to find the seams the code does not name.
//!
//! The test reads every `.rs` file under `src/` (tests included: a file's length is all of
//! it) and every function in them: `fn name` and its body, the braces matched on the code
//! with comments and string and character literals blanked (the lexer `layering` uses), from
//! the line of `fn` to the line of its closing brace. A declaration without a body (a trait
//! method ending in `;`) is no function here; a function nested in another counts on its own
//! and in its parent's length too. It fails naming every file and function over a limit,
//! longest first, with its size.

use std::path::{Path, PathBuf};

use crate::common::source::{code_only, sources};

/// No file of `src/` is longer, in lines.
const FILE_LINES: usize = 1000;
/// No function is longer, in lines.
const FN_LINES: usize = 120;
/// A function longer than this is long ...
const LONG_FN_LINES: usize = 80;
/// ... and at most this many are.
const LONG_FNS: usize = 10;

/// What a failure asks for.
const ADVICE: &str = "Split by meaning, not by chopping at a line count: a function into named \
    steps (each name says what it does, comments say why), a file into modules of one concept \
    each (its `//!` doc says which). The limits are issue 39's: no file of src/ over 1000 lines \
    (tests included), no function over 120 lines, at most 10 over 80; a function's length runs \
    from its `fn` line to its closing brace.";

/// A function with a body: where its `fn` is (1-based line), its name, and its length in
/// lines from that line to the line of its closing brace, both included.
#[derive(Debug, PartialEq)]
struct Function {
    line: usize,
    name: String,
    lines: usize,
}

/// The functions of one source file, in the order of their `fn`.
fn functions(text: &str) -> Vec<Function> {
    let code = code_only(text);
    let b = code.as_bytes();
    let newlines: Vec<usize> = (0..b.len()).filter(|&i| b[i] == b'\n').collect();
    let line_of = |at: usize| newlines.partition_point(|&n| n < at) + 1;
    let mut found = Vec::new();
    let mut at = 0;
    while let Some((start, name, after)) = next_fn(b, at) {
        // Nested functions are found after their parent's name, on the next rounds.
        at = after;
        let Some(open) = body(b, after) else {
            continue;
        };
        let (first, last) = (line_of(start), line_of(closing(b, open)));
        found.push(Function {
            line: first,
            name,
            lines: last - first + 1,
        });
    }
    found
}

/// The next `fn NAME` of `code` from `from` on: the offset of `fn`, the name, and the offset
/// just after the name. `fn` is a word of its own, followed by white space and a name (a
/// function pointer type, `fn(u32)`, has none).
fn next_fn(code: &[u8], from: usize) -> Option<(usize, String, usize)> {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || !c.is_ascii();
    for start in from..code.len().saturating_sub(1) {
        if &code[start..start + 2] != b"fn" || (start > 0 && word(code[start - 1])) {
            continue;
        }
        let mut i = start + 2;
        while i < code.len() && code[i].is_ascii_whitespace() {
            i += 1;
        }
        let named = code
            .get(i)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
        if i == start + 2 || !named {
            continue;
        }
        let name_start = i;
        while i < code.len() && (code[i].is_ascii_alphanumeric() || code[i] == b'_') {
            i += 1;
        }
        let name = String::from_utf8_lossy(&code[name_start..i]).into_owned();
        return Some((start, name, i));
    }
    None
}

/// Where the body of a function opens, its signature starting at `from`: the first `{`
/// outside parentheses and brackets, unless a `;` comes first (a declaration without a body;
/// the `;` of an array type, `-> [u8; 4]`, is inside brackets and ends nothing).
fn body(code: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in code.iter().enumerate().skip(from) {
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b'{' if depth == 0 => return Some(i),
            b';' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The offset of the `}` closing the `{` at `open`, or the end of the code if none does.
fn closing(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, &c) in code.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The sizes of the sources under a directory: every file's `(path, lines)` in path order,
/// and every function with its file, longest first (then in file and line order).
struct Sizes {
    files: Vec<(String, usize)>,
    functions: Vec<(String, Function)>,
}

fn sizes(src: &Path) -> Sizes {
    let mut paths: Vec<PathBuf> = Vec::new();
    sources(src, &mut paths);
    let mut files = Vec::new();
    let mut all = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let shown = format!("src/{}", path.strip_prefix(src).unwrap().display());
        files.push((shown.clone(), text.lines().count()));
        all.extend(functions(&text).into_iter().map(|f| (shown.clone(), f)));
    }
    all.sort_by(|(fa, a), (fb, b)| (b.lines, fa, a.line).cmp(&(a.lines, fb, b.line)));
    Sizes {
        files,
        functions: all,
    }
}

/// The sizes of `src/`; a measure that found nothing there would pass every limit.
fn src_sizes() -> Sizes {
    let sizes = sizes(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        sizes.files.len() > 10 && sizes.functions.len() > 100,
        "the measure found {} files and {} functions in src/",
        sizes.files.len(),
        sizes.functions.len()
    );
    sizes
}

impl Sizes {
    /// The functions over `limit` lines, one `file:line name length` line each, longest first.
    fn over(&self, limit: usize) -> Vec<String> {
        self.functions
            .iter()
            .filter(|(_, f)| f.lines > limit)
            .map(|(file, f)| format!("  {file}:{} {} {} lines", f.line, f.name, f.lines))
            .collect()
    }

    /// The measured figures, for a failure message.
    fn figures(&self) -> String {
        let longest = self.files.iter().map(|(_, n)| *n).max().unwrap_or(0);
        format!(
            "measured: {} files (longest {longest} lines, {} over {FILE_LINES}), {} functions \
             ({} over {LONG_FN_LINES} lines, {} over {FN_LINES})",
            self.files.len(),
            self.files.iter().filter(|(_, n)| *n > FILE_LINES).count(),
            self.functions.len(),
            self.over(LONG_FN_LINES).len(),
            self.over(FN_LINES).len(),
        )
    }
}

#[test]
fn no_file_of_src_is_over_1000_lines() {
    let sizes = src_sizes();
    let mut over: Vec<&(String, usize)> = sizes
        .files
        .iter()
        .filter(|(_, n)| *n > FILE_LINES)
        .collect();
    over.sort_by(|(fa, a), (fb, b)| (b, fa).cmp(&(a, fb)));
    let lines: Vec<String> = over
        .iter()
        .map(|(file, n)| format!("  {file} {n} lines"))
        .collect();
    assert!(
        lines.is_empty(),
        "{} file(s) of src/ over {FILE_LINES} lines:\n{}\n{}\n{ADVICE}",
        lines.len(),
        lines.join("\n"),
        sizes.figures(),
    );
}

#[test]
fn no_function_in_src_is_over_120_lines() {
    let sizes = src_sizes();
    let over = sizes.over(FN_LINES);
    assert!(
        over.is_empty(),
        "{} function(s) of src/ over {FN_LINES} lines:\n{}\n{}\n{ADVICE}",
        over.len(),
        over.join("\n"),
        sizes.figures(),
    );
}

#[test]
fn at_most_10_functions_in_src_are_over_80_lines() {
    let sizes = src_sizes();
    let over = sizes.over(LONG_FN_LINES);
    assert!(
        over.len() <= LONG_FNS,
        "{} functions of src/ over {LONG_FN_LINES} lines, at most {LONG_FNS} may be:\n{}\n{}\n{ADVICE}",
        over.len(),
        over.join("\n"),
        sizes.figures(),
    );
}

/// The measure itself: braces in literals and comments do not count, a declaration without a
/// body is no function, nested functions and closures count inside their parent and nested
/// functions on their own too.
#[test]
fn the_measure_matches_the_braces_of_the_code() {
    let text = r###"fn braces_in_literals() {
    let open = "\"{";
    // }
    /* } { */
    let c = '{';
}
trait Named {
    fn name(&self) -> String;
    fn greeting(&self) -> String {
        let raw = r#"{"#;
        format!("{raw} {}", self.name())
    }
}
fn with_closure() -> u32 {
    let f = |x: u32| {
        if x > 1 { x } else { 1 }
    };
    fn nested(y: u32) -> u32 {
        y + 1
    }
    f(nested(2))
}
fn array() -> [u8; 2] {
    [b'}', b'{']
}
fn lifetime<'a>(s: &'a str, p: fn(u32) -> u32) -> &'a str {
    // fn in_a_comment() {
    let _ = "fn in_a_string() {";
    s
}
"###;
    let measured = functions(text);
    let found: Vec<(&str, usize, usize)> = measured
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.lines))
        .collect();
    assert_eq!(
        found,
        [
            ("braces_in_literals", 1, 6),
            ("greeting", 9, 4),
            ("with_closure", 14, 9),
            ("nested", 18, 3),
            ("array", 23, 3),
            ("lifetime", 26, 5),
        ]
    );
}

//! Goldens you can read: committed text snapshots under `tests/snapshots/`, compared with
//! what the code prints now. A difference fails the test with a unified diff of the two
//! (bounded: long diffs and long lines are cut, with a count of what was cut), and the fresh
//! text is written under the target directory (`target/tmp/golden-new/...`, never into the
//! source tree) for a closer look.
//!
//! A deliberate change of behaviour is blessed, never silently: rerun the failing test with
//! `RETRYLAB_BLESS=1` and the committed snapshots are rewritten (stale ones removed); the
//! change is then reviewed as the diff of the commit that carries them.
//!
//! ```text
//! RETRYLAB_BLESS=1 cargo test --release --test suite FILE::
//! ```
//!
//! A test that checks many snapshots collects every mismatch ([`Golden::check`]) and fails
//! once at the end ([`Golden::finish`]), so one run shows every changed snapshot.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use similar::{ChangeTag, TextDiff};

/// The variable that rewrites the committed snapshots instead of comparing with them.
pub const BLESS: &str = "RETRYLAB_BLESS";

/// Diff lines printed per snapshot; the rest are counted.
pub const MAX_DIFF_LINES: usize = 120;
/// Characters printed of one diff line (an HTML or JSON line can be thousands long).
pub const MAX_LINE_CHARS: usize = 240;
/// Snapshots whose diff is printed in full in one failure; the others are named, with their
/// counts of changed lines.
pub const MAX_DIFFS_SHOWN: usize = 8;
/// Differing lines (each side, after the common start and end) the diff algorithm is given:
/// past this the diff shows the first of them only, so that a change of everything costs
/// seconds, not hours, and needs no clock.
pub const MAX_DIFFED_LINES: usize = 20_000;

/// Is `RETRYLAB_BLESS=1` set?
pub fn blessing() -> bool {
    std::env::var_os(BLESS).is_some_and(|v| v == "1")
}

/// Where committed snapshots live: `tests/snapshots/`.
pub fn snapshots_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// Where fresh output of a mismatch goes: `golden-new/` in Cargo's scratch directory for
/// tests, under the target directory.
pub fn fresh_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden-new")
}

/// Compares `actual` with the committed snapshot `tests/snapshots/{path}` and fails with its
/// diff (see the module doc).
pub fn assert_golden(path: &str, actual: &str) {
    let mut g = Golden::new();
    g.check(path, actual);
    g.finish();
}

/// Fails unless `actual` is `expected`, with their bounded diff (`-` expected, `+` actual)
/// after `message`: for text compared with something other than a committed file (a README
/// section, a command's output against a committed file another test keeps current).
#[track_caller]
pub fn assert_same_text(expected: &str, actual: &str, message: &str) {
    if expected != actual {
        let d = diff(expected, actual, MAX_DIFF_LINES);
        panic!(
            "{message}\n--- expected\n+++ actual\n{}({} lines changed)",
            d.text, d.changed_lines
        );
    }
}

/// One mismatch: which snapshot, how many lines changed, what it is in a few words, and the
/// report to print.
#[derive(Debug)]
pub struct Mismatch {
    pub path: String,
    pub changed_lines: usize,
    pub summary: String,
    pub report: String,
}

/// A set of snapshot checks that fails once, listing every mismatch.
pub struct Golden {
    snapshots: PathBuf,
    fresh: PathBuf,
    bless: bool,
    mismatches: Vec<Mismatch>,
    checked: BTreeSet<String>,
    blessed: Vec<String>,
    notes: Vec<String>,
}

impl Default for Golden {
    fn default() -> Self {
        Self::new()
    }
}

impl Golden {
    /// Snapshots in `tests/snapshots/`, fresh output under the target directory, blessing
    /// when `RETRYLAB_BLESS=1`.
    pub fn new() -> Self {
        Self::at(snapshots_dir(), fresh_dir(), blessing())
    }

    /// Committed goldens in `dir` (relative to the project root) rather than
    /// `tests/snapshots/`, for outputs committed elsewhere (`reports/`, `models/schema.json`);
    /// fresh output under `golden-new/{dir}` in the target directory.
    pub fn in_project(dir: &str) -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        Self::at(root.join(dir), fresh_dir().join(dir), blessing())
    }

    /// A line the failure message gives before how to bless (another way to regenerate).
    pub fn note(&mut self, text: &str) {
        self.notes.push(text.to_string());
    }

    /// The same with explicit directories (the helper's own tests use scratch ones).
    pub fn at(snapshots: PathBuf, fresh: PathBuf, bless: bool) -> Self {
        Self {
            snapshots,
            fresh,
            bless,
            mismatches: Vec::new(),
            checked: BTreeSet::new(),
            blessed: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Compares `actual` with the snapshot `path` (relative to the snapshots directory,
    /// `/`-separated); a mismatch or a missing snapshot is kept for [`Golden::finish`], or
    /// with blessing the snapshot is written.
    pub fn check(&mut self, path: &str, actual: &str) {
        assert!(
            self.checked.insert(path.to_string()),
            "snapshot {path} checked twice in one test"
        );
        let file = self.snapshots.join(path);
        let committed = std::fs::read_to_string(&file).ok();
        if committed.as_deref() == Some(actual) {
            return;
        }
        if self.bless {
            write(&file, actual);
            self.blessed.push(path.to_string());
            return;
        }
        let fresh = self.fresh.join(path);
        write(&fresh, actual);
        let (changed_lines, summary, body) = match &committed {
            None => {
                let n = actual.lines().count();
                let summary = "no snapshot yet".to_string();
                (n, summary, format!("no snapshot yet ({n} lines fresh)\n"))
            }
            Some(old) => {
                let d = diff(old, actual, MAX_DIFF_LINES);
                let summary = format!("{} lines changed", d.changed_lines);
                (d.changed_lines, summary, d.text)
            }
        };
        let report = format!(
            "--- committed {}\n+++ fresh {}\n{body}",
            self.label(path),
            fresh.display()
        );
        self.mismatches.push(Mismatch {
            path: path.to_string(),
            changed_lines,
            summary,
            report,
        });
    }

    /// Every `.txt` snapshot under `dir` (relative to the snapshots directory) that no
    /// [`Golden::check`] so far has named is stale: a model or design that is gone. It is a
    /// mismatch, or with blessing it is removed.
    pub fn stale_under(&mut self, dir: &str) {
        let mut files = Vec::new();
        list_txt(&self.snapshots, Path::new(dir), &mut files);
        for path in files {
            if self.checked.contains(&path) {
                continue;
            }
            if self.bless {
                std::fs::remove_file(self.snapshots.join(&path)).unwrap();
                self.blessed.push(format!("{path} (removed)"));
                continue;
            }
            self.mismatches.push(Mismatch {
                report: format!(
                    "--- committed {}\nstale: nothing produces it any more (a model or design \
                     that is gone); remove it\n",
                    self.label(&path)
                ),
                path,
                changed_lines: 0,
                summary: "stale".to_string(),
            });
        }
    }

    pub fn mismatches(&self) -> &[Mismatch] {
        &self.mismatches
    }

    /// Snapshots written or removed by blessing.
    pub fn blessed(&self) -> &[String] {
        &self.blessed
    }

    /// The failure message: every mismatch's diff (the first [`MAX_DIFFS_SHOWN`] in full,
    /// the rest by name), and how to bless. `None` when everything matched.
    pub fn failure(&self) -> Option<String> {
        if self.mismatches.is_empty() {
            return None;
        }
        let mut text = format!(
            "{} golden file(s) differ from what the code makes now:\n",
            self.mismatches.len()
        );
        for m in &self.mismatches {
            let _ = writeln!(text, "  {} ({})", m.path, m.summary);
        }
        text.push('\n');
        for m in self.mismatches.iter().take(MAX_DIFFS_SHOWN) {
            text.push_str(&m.report);
            text.push('\n');
        }
        if self.mismatches.len() > MAX_DIFFS_SHOWN {
            let _ = writeln!(
                text,
                "... diffs of {} more snapshot(s) not shown; the fresh files are under {}",
                self.mismatches.len() - MAX_DIFFS_SHOWN,
                self.fresh.display()
            );
        }
        for note in &self.notes {
            let _ = writeln!(text, "{note}");
        }
        let _ = writeln!(
            text,
            "If the change is intended, rewrite the committed files and review them in the \
             commit:\n  {BLESS}=1 cargo test --release --test {}",
            test_name()
        );
        Some(text)
    }

    /// `path` as a reader finds it: relative to the project root when the goldens are in it.
    fn label(&self, path: &str) -> String {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        match self.snapshots.strip_prefix(root) {
            Ok(dir) => format!("{}/{path}", dir.display()),
            Err(_) => self.snapshots.join(path).display().to_string(),
        }
    }

    /// Fails with [`Golden::failure`] if any snapshot differed; tells what blessing wrote.
    pub fn finish(self) {
        for b in &self.blessed {
            eprintln!("blessed {}", self.label(b));
        }
        if let Some(text) = self.failure() {
            panic!("{text}");
        }
    }
}

/// A bounded unified diff and the number of lines it adds or removes (all of them, shown or
/// not).
#[derive(Debug)]
pub struct Diff {
    pub text: String,
    pub changed_lines: usize,
}

/// The unified diff (three lines of context) of `old` against `new`, line by line: at most
/// `max_lines` lines of it, each cut to [`MAX_LINE_CHARS`], and a last line counting what
/// was cut. Empty when they are equal.
pub fn diff(old: &str, new: &str, max_lines: usize) -> Diff {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    // The common start and end cost nothing to skip, and bound what the diff algorithm sees.
    let start = old_lines
        .iter()
        .zip(&new_lines)
        .take_while(|(a, b)| a == b)
        .count();
    let end = old_lines[start..]
        .iter()
        .rev()
        .zip(new_lines[start..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let from = start.saturating_sub(3);
    let old_mid = &old_lines[from..old_lines.len() - end.saturating_sub(3)];
    let new_mid = &new_lines[from..new_lines.len() - end.saturating_sub(3)];
    let cut = old_mid.len() > MAX_DIFFED_LINES || new_mid.len() > MAX_DIFFED_LINES;
    let old_mid = &old_mid[..old_mid.len().min(MAX_DIFFED_LINES)];
    let new_mid = &new_mid[..new_mid.len().min(MAX_DIFFED_LINES)];

    let d = TextDiff::from_slices(old_mid, new_mid);
    let mut out = Vec::new();
    let mut changed_lines = 0;
    for group in d.grouped_ops(3) {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let (o, n) = (first.old_range().start, first.new_range().start);
        let (o_len, n_len) = (last.old_range().end - o, last.new_range().end - n);
        out.push(format!(
            "@@ -{},{o_len} +{},{n_len} @@",
            from + o + 1,
            from + n + 1
        ));
        for op in &group {
            for change in d.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                if sign != ' ' {
                    changed_lines += 1;
                }
                out.push(format!("{sign}{}", shorten(change.value())));
            }
        }
    }
    let total = out.len();
    let mut text = String::new();
    for line in out.iter().take(max_lines) {
        text.push_str(line);
        text.push('\n');
    }
    if total > max_lines {
        let _ = writeln!(text, "... {} more diff lines not shown", total - max_lines);
    }
    if cut {
        let _ = writeln!(
            text,
            "... only the first {MAX_DIFFED_LINES} differing lines of each side were compared"
        );
    }
    Diff {
        text,
        changed_lines,
    }
}

/// One line for the diff: without its line end (a missing one is said), at most
/// [`MAX_LINE_CHARS`] characters.
fn shorten(line: &str) -> String {
    let (body, newline) = match line.strip_suffix('\n') {
        Some(b) => (b, true),
        None => (line, false),
    };
    let chars = body.chars().count();
    let mut s: String = body.chars().take(MAX_LINE_CHARS).collect();
    if chars > MAX_LINE_CHARS {
        let _ = write!(s, " ... ({} more characters)", chars - MAX_LINE_CHARS);
    }
    if !newline {
        s.push_str(" (no newline at end)");
    }
    s
}

fn write(file: &Path, text: &str) {
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
}

/// The `.txt` files under `root/dir`, as `/`-separated paths relative to `root`, sorted.
fn list_txt(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        let rel = dir.join(p.file_name().unwrap());
        if p.is_dir() {
            list_txt(root, &rel, out);
        } else if p.extension().is_some_and(|e| e == "txt") {
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
}

/// The bless command's filter: the running test's module, the file of `tests/` it is in
/// (libtest names each test's thread after the test, `designs::a_test`).
fn test_name() -> String {
    let thread = std::thread::current();
    match thread.name().and_then(|n| n.split_once("::")) {
        Some((module, _)) => format!("suite {module}::"),
        None => "suite".to_string(),
    }
}

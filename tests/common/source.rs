//! Reading the crate's own source, for the tests that hold it to rules (`layering`, `sizes`):
//! every `.rs` file of a directory, and a file's code with comments and literals blanked.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, in name order.
pub fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `text` with comments and the contents of string and character literals blanked out
/// (newlines kept, so that line numbers stay right).
pub fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if rest.starts_with(b"r#") || rest.starts_with(b"r\"") {
            // A raw string: r"...", r#"..."#, r##"..."##.
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            i += 2 + hashes;
            out.extend(std::iter::repeat_n(b' ', 2 + hashes));
            while i < b.len() && !b[i..].starts_with(&close) {
                blank(&mut out, b[i]);
                i += 1;
            }
            out.extend(std::iter::repeat_n(b' ', close.len()));
            i += close.len();
        } else if b[i] == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    out.push(b' ');
                    i += 1;
                }
                blank(&mut out, b[i]);
                i += 1;
            }
            out.push(b' ');
            i += 1;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}', '"'), or a lifetime ('a).
            let end = if rest.get(1) == Some(&b'\\') {
                rest.iter().skip(3).position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                // `i + 1` is a character boundary: `b[i]` is ASCII.
                text[i + 1..]
                    .chars()
                    .next()
                    .map(char::len_utf8)
                    .filter(|n| rest.get(1 + n) == Some(&b'\''))
                    .map(|n| n + 1)
            };
            match end {
                Some(e) => {
                    out.extend(std::iter::repeat_n(b' ', e + 1));
                    i += e + 1;
                }
                None => {
                    out.push(b'\'');
                    i += 1;
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

//! Finds where a JSON path points in the source text, for error messages.
//!
//! serde reports a line and column for syntax and type errors, but checks made after parsing
//! (a reversed range, an unknown design, a worker index past the count) only know the path.
//! This scanner walks already-valid JSON text along a path such as `faults[2].crash_worker`
//! and returns the 1-based line and column where that value starts, or where the deepest
//! existing part of the path starts.

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// Splits `a.b[3].c` into segments. `(root)` and the empty string are the root.
pub fn parse_path(path: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    if path.is_empty() || path == "(root)" || path == "." {
        return out;
    }
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            out.push(Segment::Key(name.to_string()));
        }
        while let Some(close) = rest.find(']') {
            if let Ok(i) = rest[1..close].parse() {
                out.push(Segment::Index(i));
            }
            rest = &rest[close + 1..];
        }
    }
    out
}

/// The 1-based (line, column) of the value at `path` in `text`.
pub fn locate(text: &str, path: &[Segment]) -> (usize, usize) {
    let mut s = Scanner {
        bytes: text.as_bytes(),
        pos: 0,
    };
    s.skip_ws();
    let pos = s.descend(path);
    line_column(text, pos)
}

/// The 1-based (line, column) of the last character of the value at `path` in `text` (the
/// closing brace of an object, where serde reports a missing field).
pub fn locate_end(text: &str, path: &[Segment]) -> (usize, usize) {
    let mut s = Scanner {
        bytes: text.as_bytes(),
        pos: 0,
    };
    s.skip_ws();
    s.pos = s.descend(path);
    s.skip_value();
    line_column(text, s.pos.saturating_sub(1))
}

fn line_column(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos.min(text.len())];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    (line, column)
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.pos += 1;
        }
    }

    /// At the start of a value: follows `path` and returns where its target starts, or
    /// where the deepest value that exists along it starts.
    fn descend(&mut self, path: &[Segment]) -> usize {
        let start = self.pos;
        let Some((step, rest)) = path.split_first() else {
            return start;
        };
        let found = match (step, self.peek()) {
            (Segment::Key(k), Some(b'{')) => self.find_member(k),
            (Segment::Index(i), Some(b'[')) => self.find_element(*i),
            _ => false,
        };
        if found { self.descend(rest) } else { start }
    }

    /// Inside `{`: moves to the value of member `key`.
    fn find_member(&mut self, key: &str) -> bool {
        self.pos += 1;
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return false;
            }
            let name = self.string();
            self.skip_ws();
            if self.peek() != Some(b':') {
                return false;
            }
            self.pos += 1;
            self.skip_ws();
            if name.as_deref() == Some(key) {
                return true;
            }
            self.skip_value();
            self.skip_ws();
            if self.peek() != Some(b',') {
                return false;
            }
            self.pos += 1;
        }
    }

    /// Inside `[`: moves to element `index`.
    fn find_element(&mut self, index: usize) -> bool {
        self.pos += 1;
        for _ in 0..index {
            self.skip_ws();
            self.skip_value();
            self.skip_ws();
            if self.peek() != Some(b',') {
                return false;
            }
            self.pos += 1;
        }
        self.skip_ws();
        !matches!(self.peek(), Some(b']') | None)
    }

    /// Reads a string at `pos` and returns it decoded (None if it is malformed).
    fn string(&mut self) -> Option<String> {
        let start = self.pos;
        self.pos += 1;
        while let Some(b) = self.peek() {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'"' => break,
                _ => {}
            }
        }
        let raw = std::str::from_utf8(&self.bytes[start..self.pos.min(self.bytes.len())]).ok()?;
        serde_json::from_str(raw).ok()
    }

    fn skip_value(&mut self) {
        match self.peek() {
            Some(b'"') => {
                self.string();
            }
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(b) = self.peek() {
                    match b {
                        b'"' => {
                            self.string();
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return;
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.pos += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "{\n  \"a\": {\"b\": [10, {\"c\": \"x,]}\"}, 30]},\n  \"d\": 4\n}";

    fn at(path: &str) -> (usize, usize) {
        locate(TEXT, &parse_path(path))
    }

    #[test]
    fn parses_paths() {
        assert_eq!(
            parse_path("faults[2].crash_worker"),
            vec![
                Segment::Key("faults".into()),
                Segment::Index(2),
                Segment::Key("crash_worker".into())
            ]
        );
        assert!(parse_path("(root)").is_empty());
    }

    #[test]
    fn finds_values_along_a_path() {
        assert_eq!(at(""), (1, 1));
        assert_eq!(at("a"), (2, 8));
        assert_eq!(at("a.b[0]"), (2, 15));
        assert_eq!(at("a.b[1].c"), (2, 25));
        assert_eq!(at("a.b[2]"), (2, 34));
        assert_eq!(at("d"), (3, 8));
    }

    #[test]
    fn finds_where_values_end() {
        let end = |path: &str| locate_end(TEXT, &parse_path(path));
        assert_eq!(end("a"), (2, 37));
        assert_eq!(end("a.b[1]"), (2, 31));
        assert_eq!(end("d"), (3, 8));
        assert_eq!(end(""), (4, 1));
    }

    #[test]
    fn missing_steps_point_at_the_deepest_existing_value() {
        assert_eq!(at("a.zzz"), (2, 8));
        assert_eq!(at("a.b[9]"), (2, 14));
    }
}

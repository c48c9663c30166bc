//! Splits a large file at top-level boundaries so that each piece can be parsed on its own:
//! a tree-sitter tree takes ~40 bytes per source byte, so a 10 MB file parsed whole would
//! need ~400 MB.
//!
//! A boundary is a line end outside comments, strings and preprocessor lines, with braces,
//! parentheses and `#if` nesting all closed, right after a `}`, a `;` or a preprocessor
//! line. When the file never returns to depth zero (an include guard around everything,
//! unbalanced macros) it stays in one piece.
use std::ops::Range;

/// Splits `text` into consecutive ranges of at least `min_bytes` (the last may be shorter).
pub fn top_level_chunks(text: &str, min_bytes: usize) -> Vec<Range<usize>> {
    if text.len() <= min_bytes {
        return whole(text);
    }
    let bytes = text.as_bytes();
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut scanner = Scanner {
        line_start: true,
        ..Scanner::default()
    };
    let mut i = 0;
    while i < bytes.len() {
        i = scanner.step(bytes, i);
        if scanner.at_boundary && i - start >= min_bytes && i < bytes.len() {
            chunks.push(start..i);
            start = i;
        }
    }
    chunks.push(start..bytes.len());
    chunks
}

/// The whole of `text` as one chunk.
pub fn whole(text: &str) -> Vec<Range<usize>> {
    std::iter::once(0..text.len()).collect()
}

/// How many braces are open at byte `offset` of `text` (comments, literals and directives
/// skipped): 0 at file scope, 1 inside a namespace's braces at its top, and so on.
pub fn brace_depth_at(text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    let end = offset.min(bytes.len());
    let mut scanner = Scanner::default();
    let mut i = 0;
    while i < end {
        i = scanner.step(bytes, i);
    }
    usize::try_from(scanner.braces).unwrap_or(0)
}

#[derive(Default)]
struct Scanner {
    braces: i64,
    parens: i64,
    conditionals: i64,
    /// Only whitespace since the last line end.
    line_start: bool,
    /// The last significant byte closes a top-level item (`}`, `;`, or a directive).
    after_item_end: bool,
    /// True right after a line end that is a boundary.
    at_boundary: bool,
}

impl Scanner {
    /// Consumes one token starting at `i` and returns the index after it.
    fn step(&mut self, bytes: &[u8], i: usize) -> usize {
        self.at_boundary = false;
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        match c {
            b'\n' => {
                self.at_boundary = self.after_item_end
                    && self.braces == 0
                    && self.parens == 0
                    && self.conditionals == 0;
                self.line_start = true;
                return i + 1;
            }
            b' ' | b'\t' | b'\r' => return i + 1,
            _ => {}
        }
        let was_line_start = std::mem::replace(&mut self.line_start, false);
        if c == b'/' && next == Some(b'/') {
            return skip_line(bytes, i);
        }
        if c == b'/' && next == Some(b'*') {
            return find(bytes, i + 2, b"*/").map_or(bytes.len(), |end| end + 2);
        }
        if c == b'#' && was_line_start {
            let end = skip_line(bytes, i);
            let directive = std::str::from_utf8(&bytes[i + 1..end])
                .unwrap_or("")
                .trim_start();
            if ["if", "ifdef", "ifndef"]
                .iter()
                .any(|d| word_is(directive, d))
            {
                self.conditionals += 1;
            } else if word_is(directive, "endif") {
                self.conditionals -= 1;
            }
            self.after_item_end = true;
            return end;
        }
        if c == b'"' || c == b'\'' {
            self.after_item_end = false;
            return skip_quoted(bytes, i);
        }
        // Parentheses matter only between items (a parameter list over several lines); an
        // unbalanced one inside a body (a syntax error) must not hide later boundaries.
        match c {
            b'{' => {
                self.braces += 1;
                self.parens = 0;
            }
            b'}' => self.braces -= 1,
            b'(' if self.braces == 0 => self.parens += 1,
            b')' if self.braces == 0 => self.parens -= 1,
            _ => {}
        }
        self.after_item_end = c == b'}' || c == b';';
        i + 1
    }
}

fn word_is(text: &str, word: &str) -> bool {
    text.strip_prefix(word)
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}

/// The index of the line end of a line starting at `i`, following `\` continuations.
pub(super) fn skip_line(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => i += 2,
            b'\\' if bytes.get(i + 1) == Some(&b'\r') && bytes.get(i + 2) == Some(&b'\n') => i += 3,
            b'\n' => return i,
            _ => i += 1,
        }
    }
    i
}

/// The index after the literal that starts at `i` (at its line end when it is unclosed).
pub(super) fn skip_quoted(bytes: &[u8], i: usize) -> usize {
    let quote = bytes[i];
    let mut j = i + 1;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'\n' => return j,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    bytes.len()
}

pub(super) fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str, min: usize) -> Vec<&str> {
        top_level_chunks(text, min)
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn splits_only_between_top_level_items() {
        let text = "int a;\nvoid f() {\n  if (x) { y; }\n}\n#define M(x) \\\n  { x }\nint b;\n";
        assert_eq!(
            pieces(text, 1),
            [
                "int a;\n",
                "void f() {\n  if (x) { y; }\n}\n",
                "#define M(x) \\\n  { x }\n",
                "int b;\n"
            ]
        );
    }

    #[test]
    fn comments_strings_and_conditionals_do_not_split() {
        let text = "#if A\nint a;\n#endif\n/* } ;\n*/ int b;\nconst char *s = \"}\\n;\";\nint c = f(\n1);\nint d;\n";
        assert_eq!(
            pieces(text, 1),
            [
                "#if A\nint a;\n#endif\n",
                "/* } ;\n*/ int b;\n",
                "const char *s = \"}\\n;\";\n",
                "int c = f(\n1);\n",
                "int d;\n"
            ]
        );
    }

    #[test]
    fn an_unclosed_parenthesis_in_a_body_does_not_hide_later_items() {
        let text = "void f() {\n  x = (1 + ;\n}\nvoid g() {}\n";
        assert_eq!(
            pieces(text, 0),
            ["void f() {\n  x = (1 + ;\n}\n", "void g() {}\n"]
        );
    }

    #[test]
    fn small_files_and_unbalanced_files_stay_whole() {
        assert_eq!(pieces("int a;\nint b;\n", 100), ["int a;\nint b;\n"]);
        let guarded = "#ifndef H\n#define H\nint a;\nint b;\n#endif\n";
        assert_eq!(pieces(guarded, 1), [guarded]);
    }

    #[test]
    fn chunks_cover_the_text_exactly() {
        let text = "int a;\n".repeat(1000);
        let chunks = top_level_chunks(&text, 100);
        assert!(chunks.len() > 10);
        assert_eq!(chunks[0].start, 0);
        assert_eq!(chunks.last().unwrap().end, text.len());
        assert!(chunks.windows(2).all(|w| w[0].end == w[1].start));
        assert!(chunks[..chunks.len() - 1].iter().all(|c| c.len() >= 100));
    }
}

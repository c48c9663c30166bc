//! `#line` directives that make a rewritten file report the original's name and lines, so
//! that nvcc's errors, `__FILE__`, `__LINE__` and `-lineinfo` point at what the user wrote.
use similar::{DiffTag, TextDiff};

/// `output` (a rewrite of `original`) with `#line 1 "shown"` on top and, wherever lines were
/// inserted or removed, a `#line` directive before the next unchanged line of the original
/// that gives it the line and file it had there: its own number, or what the file's own
/// `#line` directives made of it. Inserted lines count on from the line before them. A
/// directive never splits a backslash-continued line (a macro definition): it waits for the
/// line after it.
pub fn with_line_directives(original: &str, output: &str, shown: &str) -> String {
    let name = quoted(shown);
    let mut text = format!("#line 1 {name}\n");
    let diff = TextDiff::from_lines(original, output);
    let old_lines = diff.old_slices();
    let new_lines = diff.new_slices();
    let in_original = presumed_positions(old_lines, &name);
    // Where the compiler puts the next line written.
    let mut presumed = Presumed {
        line: 1,
        file: name.clone(),
    };
    let mut continued = false;
    for op in diff.ops() {
        let new_range = op.new_range();
        match op.tag() {
            DiffTag::Equal => {
                for (k, line) in new_lines[new_range].iter().enumerate() {
                    let wanted = &in_original[op.old_range().start + k];
                    if presumed != *wanted && !continued {
                        text.push_str(&format!("#line {} {}\n", wanted.line, wanted.file));
                        presumed = wanted.clone();
                    }
                    continued = push_line(&mut text, line);
                    presumed.advance(line);
                }
            }
            DiffTag::Delete => {}
            DiffTag::Insert | DiffTag::Replace => {
                for line in &new_lines[new_range] {
                    continued = push_line(&mut text, line);
                    presumed.advance(line);
                }
            }
        }
    }
    text
}

/// The line number and file (as a C string literal) the compiler gives a line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Presumed {
    line: usize,
    file: String,
}

impl Presumed {
    /// Moves past `line`: a `#line N ["file"]` directive (or GNU's `# N "file"`) sets what
    /// the next line is, any other line counts one.
    fn advance(&mut self, line: &str) {
        match line_directive(line) {
            Some((number, file)) => {
                self.line = number;
                if let Some(file) = file {
                    self.file = file;
                }
            }
            None => self.line += 1,
        }
    }
}

/// Where each line of `lines` is as the compiler sees the original (named `name`).
fn presumed_positions(lines: &[&str], name: &str) -> Vec<Presumed> {
    let mut presumed = Presumed {
        line: 1,
        file: name.to_string(),
    };
    lines
        .iter()
        .map(|line| {
            let here = presumed.clone();
            presumed.advance(line);
            here
        })
        .collect()
}

/// A `#line N "file"` or `# N "file"` directive: the number and the file's literal, if any.
fn line_directive(line: &str) -> Option<(usize, Option<String>)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").map_or(rest, str::trim_start);
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let number = rest[..digits].parse().ok()?;
    let after = rest[digits..].trim();
    if !after.is_empty() && !after.starts_with('"') && !after.starts_with("//") {
        return None;
    }
    let file = after
        .strip_prefix('"')
        .and_then(|tail| {
            let mut escaped = false;
            tail.char_indices().find_map(|(i, c)| {
                let end = !escaped && c == '"';
                escaped = !escaped && c == '\\';
                end.then_some(i)
            })
        })
        .map(|end| after[..end + 2].to_string());
    Some((number, file))
}

/// Appends `line`; true when it continues on the next line (ends with a backslash).
fn push_line(text: &mut String, line: &str) -> bool {
    text.push_str(line);
    line.trim_end_matches(['\n', '\r']).ends_with('\\')
}

/// `path` as a C string literal.
fn quoted(path: &str) -> String {
    let mut literal = String::with_capacity(path.len() + 2);
    literal.push('"');
    for c in path.chars() {
        match c {
            '"' | '\\' => {
                literal.push('\\');
                literal.push(c);
            }
            '\n' => literal.push_str("\\n"),
            _ => literal.push(c),
        }
    }
    literal.push('"');
    literal
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The original line the compiler attributes to each line of `text` that is not a
    /// directive, as (presumed line, text).
    fn presumed_lines(text: &str) -> Vec<(usize, &str)> {
        let mut line = 1;
        let mut lines = Vec::new();
        for row in text.lines() {
            if let Some(rest) = row.strip_prefix("#line ") {
                line = rest
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("a line number");
                continue;
            }
            lines.push((line, row));
            line += 1;
        }
        lines
    }

    #[test]
    fn an_unchanged_file_gets_one_directive() {
        let text = "a\nb\n";
        assert_eq!(
            with_line_directives(text, text, "/src/k.cu"),
            "#line 1 \"/src/k.cu\"\na\nb\n"
        );
    }

    #[test]
    fn lines_after_an_insertion_keep_their_numbers() {
        let original = "#define T 32\n__global__ void k()\n{\n    __shared__ float t[T];\n    \
            t[threadIdx.x] = 0;\n}\n";
        let output = "#define T 32\n// map\n__device__ int m(int i) { return i; }\n\
            __global__ void k()\n{\n    // stored through m\n    __shared__ float t[T];\n    \
            t[m(threadIdx.x)] = 0;\n}\n";
        let mapped = with_line_directives(original, output, "/src/k.cu");
        assert_eq!(
            mapped,
            "#line 1 \"/src/k.cu\"\n#define T 32\n// map\n__device__ int m(int i) { return i; }\n\
             #line 2 \"/src/k.cu\"\n__global__ void k()\n{\n    // stored through m\n\
             #line 4 \"/src/k.cu\"\n    __shared__ float t[T];\n    t[m(threadIdx.x)] = 0;\n}\n"
        );
        let lines = presumed_lines(&mapped);
        assert!(lines.contains(&(2, "__global__ void k()")));
        assert!(lines.contains(&(4, "    __shared__ float t[T];")));
        // A changed line keeps its number: it replaces the original one for one.
        assert!(lines.contains(&(5, "    t[m(threadIdx.x)] = 0;")));
        assert!(lines.contains(&(6, "}")));
    }

    #[test]
    fn every_unchanged_line_is_where_it_was() {
        let original: String = (1..=40).map(|n| format!("line {n}\n")).collect();
        let mut output = String::new();
        for n in 1..=40 {
            if n % 7 == 0 {
                output.push_str("inserted\ninserted again\n");
            }
            if n % 11 != 0 {
                output.push_str(&format!("line {n}\n"));
            }
        }
        let mapped = with_line_directives(&original, &output, "k.cu");
        for (presumed, row) in presumed_lines(&mapped) {
            if let Some(n) = row.strip_prefix("line ") {
                assert_eq!(n.parse::<usize>().ok(), Some(presumed), "{row}");
            }
        }
    }

    #[test]
    fn a_directive_waits_for_the_end_of_a_continued_line() {
        let original = "#define F(x) \\\n    (x)\nint a;\n";
        let output = "#define F(x) \\\n    /* added */ \\\n    (x)\nint a;\n";
        let mapped = with_line_directives(original, output, "k.cu");
        assert_eq!(
            mapped,
            "#line 1 \"k.cu\"\n#define F(x) \\\n    /* added */ \\\n    (x)\n#line 3 \"k.cu\"\nint a;\n"
        );
    }

    #[test]
    fn the_files_own_line_directives_are_kept() {
        let original = "a\n#line 100 \"gen.cu\"\nb\nc\n# 7 \"x.cu\" 2\nd\n";
        let output = "a\n#line 100 \"gen.cu\"\nnew\nb\nc\n# 7 \"x.cu\" 2\ninserted\nd\n";
        let mapped = with_line_directives(original, output, "/src/k.cu");
        assert_eq!(
            mapped,
            "#line 1 \"/src/k.cu\"\na\n#line 100 \"gen.cu\"\nnew\n#line 100 \"gen.cu\"\nb\nc\n\
             # 7 \"x.cu\" 2\ninserted\n#line 7 \"x.cu\"\nd\n"
        );
        // Unchanged, the file keeps its own directives and gets only the first.
        assert_eq!(
            with_line_directives(original, original, "k.cu"),
            format!("#line 1 \"k.cu\"\n{original}")
        );
    }

    #[test]
    fn what_is_a_line_directive() {
        assert_eq!(line_directive("#line 12"), Some((12, None)));
        assert_eq!(
            line_directive("  #  line 3 \"a\\\"b.cu\""),
            Some((3, Some("\"a\\\"b.cu\"".into())))
        );
        assert_eq!(
            line_directive("# 7 \"x.cu\" 1 3"),
            Some((7, Some("\"x.cu\"".into())))
        );
        assert_eq!(line_directive("#lineup 3"), None);
        assert_eq!(line_directive("#define X 1"), None);
        assert_eq!(line_directive("x = 1;"), None);
    }

    #[test]
    fn names_are_c_string_literals() {
        assert_eq!(quoted(r#"C:\src\"odd".cu"#), r#""C:\\src\\\"odd\".cu""#);
    }

    #[test]
    fn a_last_line_without_newline_stays_so() {
        let mapped = with_line_directives("a\nb", "x\na\nb", "k.cu");
        assert_eq!(mapped, "#line 1 \"k.cu\"\nx\n#line 1 \"k.cu\"\na\nb");
    }
}

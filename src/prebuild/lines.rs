//! `#line` directives that make a rewritten file report the original's name and lines, so
//! that nvcc's errors, `__FILE__`, `__LINE__` and `-lineinfo` point at what the user wrote.
use similar::{DiffTag, TextDiff};

/// `output` (a rewrite of `original`) with `#line 1 "shown"` on top and, wherever lines were
/// inserted or removed, a `#line N "shown"` before the next unchanged line N of the original.
/// Inserted lines count on from the line before them. A directive never splits a
/// backslash-continued line (a macro definition): it waits for the line after it.
pub fn with_line_directives(original: &str, output: &str, shown: &str) -> String {
    let name = quoted(shown);
    let mut text = format!("#line 1 {name}\n");
    let diff = TextDiff::from_lines(original, output);
    let new_lines = diff.new_slices();
    // The line number the compiler gives the next line written.
    let mut presumed = 1;
    let mut continued = false;
    for op in diff.ops() {
        let new_range = op.new_range();
        match op.tag() {
            DiffTag::Equal => {
                for (k, line) in new_lines[new_range].iter().enumerate() {
                    let original_line = op.old_range().start + k + 1;
                    if presumed != original_line && !continued {
                        text.push_str(&format!("#line {original_line} {name}\n"));
                        presumed = original_line;
                    }
                    continued = push_line(&mut text, line);
                    presumed += 1;
                }
            }
            DiffTag::Delete => {}
            DiffTag::Insert | DiffTag::Replace => {
                for line in &new_lines[new_range] {
                    continued = push_line(&mut text, line);
                    presumed += 1;
                }
            }
        }
    }
    text
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
    fn names_are_c_string_literals() {
        assert_eq!(quoted(r#"C:\src\"odd".cu"#), r#""C:\\src\\\"odd\".cu""#);
    }

    #[test]
    fn a_last_line_without_newline_stays_so() {
        let mapped = with_line_directives("a\nb", "x\na\nb", "k.cu");
        assert_eq!(mapped, "#line 1 \"k.cu\"\nx\n#line 1 \"k.cu\"\na\nb");
    }
}

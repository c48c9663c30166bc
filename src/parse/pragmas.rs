//! Loop pragmas written through macros (`CUTLASS_PRAGMA_UNROLL`, `TCNN_PRAGMA_UNROLL`,
//! `_Pragma("unroll")`) on a line of their own before a loop. The preprocessor turns them into
//! `#pragma unroll`; the grammar, which sees the text before preprocessing, reads a bare name
//! before `for` as a statement missing its `;` and gives up on the function. They say nothing
//! about addresses, so the front end parses the file with those lines blanked (same length,
//! so every offset is the file's own).
use std::borrow::Cow;

/// `src` with each loop-pragma macro line replaced by spaces. A name counts as one when it is
/// alone on its line, the next code line starts a loop, and no definition that the run
/// knows gives it a body other than a pragma (`is_defined_as_code`).
pub fn blank_loop_pragmas<'s>(
    src: &'s str,
    is_defined_as_code: impl Fn(&str) -> bool,
) -> Cow<'s, str> {
    if !src.contains("PRAGMA") && !src.contains("_Pragma") && !src.contains("UNROLL") {
        return Cow::Borrowed(src);
    }
    let lines: Vec<(usize, &str)> = line_starts(src);
    let mut blanks: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, (start, line)) in lines.iter().enumerate() {
        let code = line.split("//").next().unwrap_or(line).trim();
        let is_pragma_call = code.starts_with("_Pragma(") && code.ends_with(')');
        let is_name = !code.is_empty()
            && code.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && code
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !(is_pragma_call || is_name && !is_defined_as_code(code)) {
            continue;
        }
        let next_code = lines[i + 1..]
            .iter()
            .map(|(_, l)| l.trim())
            .find(|l| !l.is_empty() && !l.starts_with("//"));
        let before_loop = next_code.is_some_and(|next| {
            ["for", "while", "do"].iter().any(|kw| {
                next.strip_prefix(kw).is_some_and(|rest| {
                    rest.starts_with(|c: char| c == '(' || c == '{' || c.is_whitespace())
                })
            })
        });
        if before_loop {
            let offset = line.find(code).unwrap_or(0);
            blanks.push(start + offset..start + offset + code.len());
        }
    }
    if blanks.is_empty() {
        return Cow::Borrowed(src);
    }
    let mut text = src.to_string();
    for range in blanks {
        // The range holds ASCII only (an identifier or a `_Pragma("…")` call is checked
        // byte by byte above, or ends at a quote), so spaces keep the text valid UTF-8.
        if text.is_char_boundary(range.start) && text.is_char_boundary(range.end) {
            let spaces = " ".repeat(range.len());
            text.replace_range(range, &spaces);
        }
    }
    Cow::Owned(text)
}

/// Each line of `src` (without its newline) and the offset where it starts.
fn line_starts(src: &str) -> Vec<(usize, &str)> {
    let mut start = 0;
    src.split('\n')
        .map(|line| {
            let at = start;
            start += line.len() + 1;
            (at, line.strip_suffix('\r').unwrap_or(line))
        })
        .collect()
}

/// Whether `body`, a macro's replacement text, is more than a pragma.
pub fn is_code(body: &str) -> bool {
    let body = body.trim();
    // `#define CUTLASS_PRAGMA_UNROLL #pragma unroll`, as CUTLASS writes it for nvcc's device
    // passes (the branch of `#if defined(__CUDA_ARCH__)` the analysis now reads too).
    !(body.is_empty()
        || body.starts_with("_Pragma")
        || body.starts_with("__pragma")
        || body.starts_with("#pragma"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pragma_bodies_are_not_code() {
        for body in [
            "",
            "_Pragma(\"unroll\")",
            "#pragma unroll",
            "#pragma unroll 1",
        ] {
            assert!(!is_code(body), "{body}");
        }
        assert!(is_code("__syncthreads();"));
    }

    #[test]
    fn pragma_macros_before_loops_are_blanked() {
        let src = "void f() {\n  CUTLASS_PRAGMA_UNROLL\n  for (int i = 0; i < 4; ++i) {}\n  _Pragma(\"unroll\")  // why\n  while (x) {}\n}\n";
        let blanked = blank_loop_pragmas(src, |_| false);
        assert_eq!(blanked.len(), src.len());
        assert!(!blanked.contains("CUTLASS_PRAGMA_UNROLL"));
        assert!(!blanked.contains("_Pragma"));
        assert!(blanked.contains("// why"));
    }

    #[test]
    fn names_that_are_code_or_not_before_loops_are_kept() {
        let src = "BEGIN_UNROLL\nfor (;;) {}\nCUTLASS_HOST_DEVICE\nvoid f() {}\nPRAGMA_X\nint a;\n";
        let blanked = blank_loop_pragmas(src, |name| name == "BEGIN_UNROLL");
        assert_eq!(blanked, src);
    }

    #[test]
    fn what_a_macro_body_is() {
        assert!(!is_code(""));
        assert!(!is_code("_Pragma(\"unroll\")"));
        assert!(is_code("{"));
    }
}

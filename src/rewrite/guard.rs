//! What a rewrite rests on, and the guards that say so in the source (docs/ARCHITECTURE.md
//! §7). A map is proven a bijection on the extents bankwise was given: a macro, a `-D` value, a
//! template argument or a launch. The file that `fix` writes outlives those values, so every
//! value a map's constants were derived from is checked where the program is built or run:
//!
//! - an extent as written (`BLOCK_SIZE + 1`) by a `static_assert` after the declaration: a
//!   build with another value stops with the guard's message instead of indexing out of
//!   bounds. Every extent is a constant expression, so the assertion always compiles where
//!   the declaration did, and it sees local `constexpr` names and template parameters alike.
//! - the extent its launches give an `extern __shared__` array, which no compile-time check
//!   can see, by a trap at the top of the function when the dynamic shared memory differs.
//! - the block shape the map was chosen for, by a trap behind `BANKWISE_CHECKS`: only the
//!   conflicts depend on it (the map is a bijection whatever the block), so the check is a
//!   performance test the user opts into, not a correctness guard. `__launch_bounds__` cannot
//!   say it: it bounds the thread count, not the shape, and it changes register allocation.
//!
//! Forms that hold for every value need no guard: a padded declaration (`[R][C + 1]`), a
//! struct of arrays, and a swizzle that reads only extents written as numbers.
use super::edit::Edit;
use super::forms::{line_end, line_start, Source};
use crate::block::{format_shape, Block, BlockSource};
use crate::parse::{identifier_tokens, one_line, Function, SharedArray};
use std::fmt;

/// A value a rewrite's map was derived from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Assumption {
    /// An extent as written (`BLOCK_SIZE + 1`) has the value the map was proven for.
    Extent {
        dimension: usize,
        written: String,
        value: u64,
    },
    /// An `extern __shared__` array has the elements its launches give it.
    DynamicExtent { elements: u64, elem_bytes: u64 },
    /// The block shape the map was chosen for, and where it came from.
    Block { shape: [u32; 3], source: String },
}

/// How an assumption is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// `static_assert` after the declaration: the build stops.
    StaticAssert,
    /// `__trap()` at the top of the function: the launch stops.
    Trap,
    /// `__trap()` at the top of the function when built with `-DBANKWISE_CHECKS`.
    Checks,
}

impl Guard {
    pub fn as_str(self) -> &'static str {
        match self {
            Guard::StaticAssert => "static_assert",
            Guard::Trap => "trap",
            Guard::Checks => "BANKWISE_CHECKS",
        }
    }
}

impl Assumption {
    pub fn guard(&self) -> Guard {
        match self {
            Assumption::Extent { .. } => Guard::StaticAssert,
            Assumption::DynamicExtent { .. } => Guard::Trap,
            Assumption::Block { .. } => Guard::Checks,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Assumption::Extent { .. } => "extent",
            Assumption::DynamicExtent { .. } => "dynamic-extent",
            Assumption::Block { .. } => "block",
        }
    }
}

impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Assumption::Extent { written, value, .. } => write!(f, "`{written}` == {value}"),
            Assumption::DynamicExtent {
                elements,
                elem_bytes,
            } => write!(
                f,
                "{elements} elements of dynamic shared memory ({} bytes)",
                elements * elem_bytes
            ),
            Assumption::Block { shape, source } => {
                write!(f, "blocks of {} ({source})", format_shape(*shape))
            }
        }
    }
}

/// `` ; assumes `TILE` == 32 [static_assert], blocks of 32x8x1 (its launch in this file)
/// [BANKWISE_CHECKS]`` for a fix note; empty when the rewrite rests on nothing.
pub fn assumes_clause(assumptions: &[Assumption]) -> String {
    let mut described: Vec<String> = Vec::new();
    for assumption in assumptions {
        // Two extents written alike (`[N + 1][N + 1]`) are one claim.
        let text = format!("{assumption} [{}]", assumption.guard().as_str());
        if !described.contains(&text) {
            described.push(text);
        }
    }
    if described.is_empty() {
        String::new()
    } else {
        format!("; assumes {}", described.join(", "))
    }
}

/// What the rewrite of `array` rests on: the extents of `proven_dims` (every one when `None`)
/// not written as numbers, the launches' extent of an `extern` array, and the block.
pub fn assumptions(
    array: &SharedArray,
    proven_dims: Option<&[usize]>,
    block: Option<&Block>,
) -> Vec<Assumption> {
    let mut found = Vec::new();
    for (dimension, (dim, written)) in array.dims.iter().zip(&array.dim_texts).enumerate() {
        if proven_dims.is_some_and(|dims| !dims.contains(&dimension)) {
            continue;
        }
        let Some(value) = *dim else { continue };
        if array.is_extern && dimension == 0 {
            found.push(Assumption::DynamicExtent {
                elements: value,
                elem_bytes: array.elem_bytes.unwrap_or(0),
            });
        } else if names_a_value(written) {
            found.push(Assumption::Extent {
                dimension,
                written: one_line(written),
                value,
            });
        }
    }
    if let Some(block) = block {
        // Not a line number: the guard's own lines move the launch. A file name, not a path:
        // the comment is committed, and a path would name the machine that wrote it.
        let source = match &block.source {
            BlockSource::LaunchSite(_) => "its launch in this file".to_string(),
            BlockSource::LaunchElsewhere(path, _) => format!(
                "its launch in {}",
                path.file_name()
                    .unwrap_or(path.as_os_str())
                    .to_string_lossy()
            ),
            other => other.to_string(),
        };
        found.push(Assumption::Block {
            shape: block.shape,
            source,
        });
    }
    found
}

/// Whether an extent's text holds a name (`TILE`, `sizeof(T)`) rather than only numbers.
fn names_a_value(written: &str) -> bool {
    identifier_tokens(written).next().is_some()
}

/// The guard edits for `assumptions` of `array`, declared in `function`.
pub fn guard_edits(
    source: &Source,
    function: &Function,
    array: &SharedArray,
    assumptions: &[Assumption],
) -> Result<Vec<Edit>, String> {
    let mut edits = Vec::new();
    let extents: Vec<(&str, u64)> = assumptions
        .iter()
        .filter_map(|a| match a {
            Assumption::Extent { written, value, .. } => Some((written.as_str(), *value)),
            _ => None,
        })
        .collect();
    if !extents.is_empty() {
        let semicolon = statement_end(source.text, array.decl_span.end)
            .ok_or("no `;` ends the declaration, so no guard can follow it")?;
        let indent = indent_of(source.text, semicolon);
        let guard = static_assert(&array.name, &extents);
        edits.push(lines_after(source, semicolon, &indent, "", &guard));
    }
    let at_top: Vec<String> = assumptions
        .iter()
        .filter_map(|a| match a {
            Assumption::DynamicExtent {
                elements,
                elem_bytes,
            } => Some(dynamic_trap(&array.name, *elements, *elem_bytes)),
            Assumption::Block { shape, source } => Some(block_check(*shape, source)),
            Assumption::Extent { .. } => None,
        })
        .collect();
    if !at_top.is_empty() {
        let open = body_open(source.text, function)
            .ok_or("no `{` opens the function's body, so no guard can start it")?;
        let indent = body_indent(source.text, open);
        // One edit per guard: the arrays of one function share the block check.
        for guard in at_top {
            edits.push(lines_after(source, open, &indent, &indent, &guard));
        }
    }
    Ok(edits)
}

/// `static_assert(TILE == 16 && (TILE + 1) == 17, "bankwise: …");`
fn static_assert(array: &str, extents: &[(&str, u64)]) -> String {
    let mut seen = Vec::new();
    for &(written, value) in extents {
        if !seen.contains(&(written, value)) {
            seen.push((written, value));
        }
    }
    let condition: Vec<String> = seen
        .iter()
        .map(|(written, value)| format!("{} == {value}", operand(written)))
        .collect();
    let claim: Vec<String> = seen
        .iter()
        .map(|(written, value)| format!("{written} == {value}"))
        .collect();
    format!(
        "static_assert({}, \"{}\");",
        condition.join(" && "),
        escaped(&format!(
            // Not backquotes: nvcc prints them as `?`.
            "bankwise: the map of '{array}' assumes {}; re-run bankwise fix",
            claim.join(" and ")
        ))
    )
}

/// A trap when the launch gives an `extern` array other than the extent its map is proven on.
/// The dynamic shared memory's size is PTX's `%dynamic_smem_size`.
fn dynamic_trap(array: &str, elements: u64, elem_bytes: u64) -> String {
    format!(
        "{{ unsigned bankwise_bytes; asm(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(bankwise_bytes)); \
         if (bankwise_bytes / {elem_bytes} != {elements}) __trap(); }} \
         // bankwise: the map of `{array}` is proven on {elements} elements only"
    )
}

fn block_check(shape: [u32; 3], source: &str) -> String {
    let [x, y, z] = shape;
    format!(
        "#ifdef BANKWISE_CHECKS\n\
         if (blockDim.x != {x} || blockDim.y != {y} || blockDim.z != {z}) __trap(); \
         // bankwise: the maps below were chosen for blocks of {} ({source})\n\
         #endif",
        format_shape(shape)
    )
}

/// An extent as an operand of `==`: a name or a number as it is, anything else parenthesised.
fn operand(written: &str) -> String {
    let written = written.trim();
    if written.chars().all(|c| c.is_alphanumeric() || c == '_') {
        written.to_string()
    } else {
        format!("({written})")
    }
}

/// A C string literal's contents.
fn escaped(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The offset of the `;` that ends the statement ending at or after `end`.
fn statement_end(text: &str, end: usize) -> Option<usize> {
    let from = end.checked_sub(1)?;
    Some(from + text.get(from..)?.find(';')?)
}

/// The insertion of `lines` (a `#` line flush left, the others at `indent`) after the
/// character at `after` (a `;` or a `{`), on lines of their own: at the end of its line when
/// nothing but a `//` comment follows it there; otherwise right after it, with what followed
/// moved to the next line, at `rest_indent` (a guard's trailing comment or `#endif` would
/// swallow it). A `//` comment that ends in a backslash goes on over the next line, so a
/// guard after it would join the comment.
fn lines_after(
    source: &Source,
    after: usize,
    indent: &str,
    rest_indent: &str,
    lines: &str,
) -> Edit {
    let (text, newline) = (source.text, source.newline);
    let end = end_of_line(text, after);
    let rest = text[after + 1..end].trim();
    let (at, trailing) = if rest.is_empty() || (rest.starts_with("//") && !rest.ends_with('\\')) {
        (end, String::new())
    } else {
        (after + 1, format!("{newline}{rest_indent}"))
    };
    let mut inserted: String = lines
        .lines()
        .map(|line| {
            let indent = if line.starts_with('#') { "" } else { indent };
            format!("{newline}{indent}{line}")
        })
        .collect();
    inserted.push_str(&trailing);
    Edit::insert(at, inserted)
}

/// The spaces and tabs that start the line holding `offset`.
fn indent_of(text: &str, offset: usize) -> String {
    text[line_start(text, offset)..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// Where the line holding `at` ends: before its `\n` (or `\r\n`). A lone `\r` does not end
/// a line: the grammar reads it as a space.
fn end_of_line(text: &str, at: usize) -> usize {
    let end = line_end(text, at);
    match text[..end].strip_suffix('\r') {
        Some(before) if end < text.len() => before.len(),
        _ => end,
    }
}

/// The offset of the `{` that opens `function`'s body: the first one outside parentheses
/// and comments.
fn body_open(text: &str, function: &Function) -> Option<usize> {
    let span = function.span;
    let own = text.get(span.start..span.end)?;
    let bytes = own.as_bytes();
    let mut depth = 0i32;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i += own[i..].find('\n')?;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += own[i + 2..].find("*/")? + 3;
            }
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'{' if depth == 0 => return Some(span.start + i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The indentation of the body's first line, or four spaces past the brace's line.
fn body_indent(text: &str, open: usize) -> String {
    let after = &text[open + 1..];
    // The first line of code: not blank, not a preprocessor line (flush left).
    let next_line = after.split('\n').skip(1).find(|line| {
        let code = line.trim();
        !code.is_empty() && !code.starts_with('#')
    });
    match next_line {
        Some(line) if !line.trim_start().starts_with('}') => line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect(),
        _ => format!("{}    ", indent_of(text, open)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_extents_that_name_a_value_are_assumed() {
        assert!(names_a_value("BLOCK_SIZE + 1"));
        assert!(names_a_value("sizeof(float4)"));
        assert!(!names_a_value("32"));
        assert!(!names_a_value("0x20u * 2"));
    }

    /// A guard `G` after the statement ending at `end`: where it goes, and what is inserted.
    fn guard_after_statement(text: &str, end: usize) -> (usize, String) {
        let source = Source::new(text);
        let semicolon = statement_end(text, end).expect("a `;`");
        let indent = indent_of(text, semicolon);
        let edit = lines_after(&source, semicolon, &indent, "", "G");
        (edit.range.start, edit.replacement)
    }

    #[test]
    fn a_comment_continued_by_a_backslash_keeps_the_guard_out_of_it() {
        let text = "  int a[N]; // a comment \\\n  continued\n";
        let end = text.find(';').expect("a `;`") + 1;
        let (at, inserted) = guard_after_statement(text, end);
        let (before, indent, after) = ("\n", "  ", "\n");
        assert_eq!(
            (&text[..at], inserted),
            ("  int a[N];", format!("{before}{indent}G{after}"))
        );
    }

    #[test]
    fn a_lone_carriage_return_does_not_end_a_line() {
        let text = "int a[N]; // a\rb\r\nnext";
        assert_eq!(&text[..end_of_line(text, 8)], "int a[N]; // a\rb");
        let text = "int a[N]; // a\rb\nnext";
        assert_eq!(&text[..end_of_line(text, 8)], "int a[N]; // a\rb");
    }

    #[test]
    fn an_extent_continued_over_lines_is_guarded_on_one() {
        assert_eq!(
            one_line("sizeof(float4) / sizeof\\\n(float)"),
            "sizeof(float4) / sizeof(float)"
        );
    }

    #[test]
    fn the_static_assert_names_every_extent_once() {
        assert_eq!(
            static_assert("temp", &[("BLOCK_SIZE + 1", 17), ("BLOCK_SIZE + 1", 17)]),
            "static_assert((BLOCK_SIZE + 1) == 17, \"bankwise: the map of 'temp' assumes \
             BLOCK_SIZE + 1 == 17; re-run bankwise fix\");"
        );
        assert_eq!(
            static_assert("t", &[("TILE", 16), ("N", 4)]),
            "static_assert(TILE == 16 && N == 4, \"bankwise: the map of 't' assumes TILE == \
             16 and N == 4; re-run bankwise fix\");"
        );
    }

    #[test]
    fn a_guard_follows_the_statement_on_its_own_line() {
        let text = "  int a[N]; // tile\n  a[0] = 1;\n";
        let end = text.find(';').expect("a `;`") + 1;
        let (at, inserted) = guard_after_statement(text, end);
        let (before, indent, after) = ("\n", "  ", "");
        assert_eq!(
            (&text[..at], inserted),
            ("  int a[N]; // tile", format!("{before}{indent}G{after}"))
        );
        let text = "  int a[N]; a[0] = 1;\r\n";
        let (at, inserted) = guard_after_statement(text, end);
        let (before, indent, after) = ("\r\n", "  ", "\r\n");
        assert_eq!(
            (&text[..at], inserted),
            ("  int a[N];", format!("{before}{indent}G{after}"))
        );
    }
}

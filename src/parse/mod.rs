//! The front end: CUDA source → functions, `__shared__` arrays, their accesses and escapes,
//! and launch sites. Nothing outside this module sees tree-sitter types.
mod ast;
mod body;
mod chunks;
mod consts;
mod extract;
mod include;
pub mod language;
mod model;
mod packed;
mod pragmas;
mod source;
mod specifiers;
mod statements;
mod suppress;
mod symbols;
mod syntax;
mod types;

pub use ast::{
    one_line, BinaryOp, Expr, ExprKind, Span, TemplateArgs, UnaryOp, MAX_DEPTH as MAX_EXPR_DEPTH,
    TOO_DEEP,
};
pub use chunks::brace_depth_at;
pub use consts::{identifier_tokens, replace_identifiers, Bindings, ConstEnv, Macro};
pub use extract::{is_atomic, Skipped};
pub use include::{
    compiled_quoted_includes, project_include_dirs, quoted_headers, CompiledInclude, HeaderSearch,
};
pub use model::*;
pub use packed::{Body, Packed, PackedVec, PackedVecBuilder};
pub use source::{
    file_kind, is_c_family, is_cuda, is_header, read_source, read_source_from, restored_bytes,
    LineIndex, SourceError, CUDA_EXTENSIONS, MAX_FILE_BYTES,
};
pub use statements::*;
pub use suppress::Suppression;
pub use types::{Member, MemberLayout, TypeTable};

use std::cell::RefCell;
use std::path::Path;
use syntax::SyntaxTree;
use tree_sitter::Parser;

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new({
        let mut parser = Parser::new();
        parser
            .set_language(&language::cuda())
            .expect("the bundled grammar matches the tree-sitter runtime");
        parser
    });
}

/// Parses CUDA text into a [`SyntaxTree`].
pub(crate) fn parse_text(text: &str) -> Option<SyntaxTree> {
    PARSER
        .with(|parser| parser.borrow_mut().parse(text, None))
        .map(|tree| SyntaxTree::of(&tree))
}

/// Parses only the given ranges of `text`; node offsets are offsets into all of `text`.
pub(crate) fn parse_ranges(text: &str, ranges: &[tree_sitter::Range]) -> Option<SyntaxTree> {
    PARSER.with(|parser| {
        let mut parser = parser.borrow_mut();
        parser.set_included_ranges(ranges).ok()?;
        let tree = parser.parse(text, None);
        parser.set_included_ranges(&[]).ok()?;
        // The copy is made here, on the parsing thread, and tree-sitter's tree dropped.
        tree.map(|tree| SyntaxTree::of(&tree))
    })
}

/// Whether `line` parses on its own as one function definition and nothing else: no error,
/// no comment, no line continuation that would join it to the line after it.
pub fn is_one_function_definition(line: &str) -> bool {
    if line.contains(['\n', '\r']) || line.trim_end().ends_with('\\') {
        return false;
    }
    let Some(tree) = parse_text(line) else {
        return false;
    };
    let root = tree.root_node();
    !root.has_error()
        && root.named_child_count() == 1
        && root
            .named_child(0)
            .is_some_and(|child| child.kind() == "function_definition")
}

/// Analyses one translation unit. `defines` are `-D` arguments (`NAME=VALUE` or `NAME`).
pub fn analyse_source(text: &str, defines: &[String]) -> ParsedFile {
    extract::extract(text, defines)
}

/// [`analyse_source`] for the file at `path`, with the macros and types of the files
/// `headers` pre-includes and of the headers it includes (beside it, then in `headers`'
/// include directories), and the kernels whose bodies are not read (`skipped`).
pub fn analyse_file_source(
    path: &Path,
    text: &str,
    defines: &[String],
    headers: HeaderSearch,
    launches_elsewhere: &[LaunchSite],
    skipped: &Skipped,
) -> ParsedFile {
    let (prelude, notes, read) = include::prelude(path, text, headers, defines);
    let mut parsed = extract::extract_with(text, defines, &prelude, launches_elsewhere, skipped);
    parsed.headers = read;
    if !notes.is_empty() {
        parsed.diagnostics.extend(notes);
        parsed.diagnostics.sort_by_key(|d| d.at);
    }
    parsed
}

/// Parses a C expression on its own (a macro body, a `-D` value, a template argument).
pub fn parse_expression_text(text: &str) -> Option<Expr> {
    // A decimal number (a template argument, a `-D` value) needs no parser: it lexes as one
    // `number_literal`, which lowers to what `parse_int_literal` makes of it.
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        if let Some(value) = ast::parse_int_literal(trimmed) {
            let start = text.len() - text.trim_start().len();
            return Some(Expr {
                kind: ExprKind::Int(value),
                span: Span {
                    start,
                    end: start + trimmed.len(),
                },
            });
        }
    }
    const PREFIX: &str = "int bankwise_probe = (";
    let wrapped = format!("{PREFIX}{text}\n);");
    let tree = parse_text(&wrapped)?;
    if tree.root_node().has_error() {
        return None;
    }
    let mut value = None;
    extract::walk(tree.root_node(), |node| {
        if value.is_none() && node.kind() == "init_declarator" {
            value = node.child_by_field_id(symbols::FIELDS.value);
        }
        value.is_none()
    });
    // Lower what is inside the wrapper's parentheses, then make spans offsets into `text`.
    let value = value?;
    let mut cursor = value.walk();
    let inner = value
        .named_children(&mut cursor)
        .find(|child| child.kind() != "comment")?;
    let mut expr = ast::lower(inner, &wrapped);
    expr.rebase(PREFIX.len());
    Some(expr)
}

/// Parses a block shape `32`, `32x8` or `32x8x2` (also with `,` or `*` separators).
pub fn parse_block_shape(text: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = text.split(['x', 'X', ',', '*']).map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!(
            "block shape `{text}` must be X, XxY or XxYxZ (e.g. 32x8)"
        ));
    }
    let mut shape = [1u32; 3];
    for (slot, part) in shape.iter_mut().zip(&parts) {
        *slot =
            part.parse().ok().filter(|&v| v > 0).ok_or_else(|| {
                format!("block shape `{text}`: `{part}` is not a positive integer")
            })?;
    }
    check_block_shape(shape, text)
}

/// Rejects shapes CUDA cannot launch: more than 1024 threads, or z above 64.
pub fn check_block_shape(shape: [u32; 3], text: &str) -> Result<[u32; 3], String> {
    let threads: u64 = shape.iter().map(|&v| u64::from(v)).product();
    if threads > 1024 || shape[2] > 64 {
        return Err(format!(
            "block shape `{text}` has {threads} threads; CUDA allows at most 1024 (and z ≤ 64)"
        ));
    }
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_shapes_parse_and_validate() {
        assert_eq!(parse_block_shape("32x8"), Ok([32, 8, 1]));
        assert_eq!(parse_block_shape("256"), Ok([256, 1, 1]));
        assert_eq!(parse_block_shape("8x8x4"), Ok([8, 8, 4]));
        assert!(parse_block_shape("64x32").is_err());
        assert!(parse_block_shape("0x8").is_err());
        assert!(parse_block_shape("a").is_err());
        assert!(parse_block_shape("1x1x1x1").is_err());
    }

    #[test]
    fn compound_literals_are_calls_of_their_type() {
        let text = "R{a[i], 2}";
        let expr = parse_expression_text(text).expect("parses");
        let ExprKind::Call { callee, args, .. } = &expr.kind else {
            panic!("{expr:?}")
        };
        assert_eq!(callee.kind, ExprKind::Name("R".into()));
        let args: Vec<&str> = args
            .iter()
            .map(|a| &text[a.span.start..a.span.end])
            .collect();
        assert_eq!(args, ["a[i]", "2"]);
    }

    #[test]
    fn expressions_parse_on_their_own() {
        let text = "TILE * 2 + 1";
        let expr = parse_expression_text(text).unwrap();
        assert_eq!(expr.to_string(), "((TILE * 2) + 1)");
        assert_eq!((expr.span.start, expr.span.end), (0, text.len()));
        let ExprKind::Binary { lhs, rhs, .. } = &expr.kind else {
            panic!("{expr:?}")
        };
        assert_eq!(&text[lhs.span.start..lhs.span.end], "TILE * 2");
        assert_eq!(&text[rhs.span.start..rhs.span.end], "1");
        // Parentheses are looked through: `(e)` is `e`, with `e`'s span.
        let text = "a * (t[i])";
        let expr = parse_expression_text(text).unwrap();
        let ExprKind::Binary { rhs, .. } = &expr.kind else {
            panic!("{expr:?}")
        };
        assert!(matches!(rhs.kind, ExprKind::Index { .. }));
        assert_eq!(&text[rhs.span.start..rhs.span.end], "t[i]");
        assert!(parse_expression_text("__shared__ float x[4]").is_none());
        let number = parse_expression_text(" 017 ").unwrap();
        assert_eq!(number.kind, ExprKind::Int(15));
        assert_eq!((number.span.start, number.span.end), (1, 4));
        // Not an octal number: left to the parser, which rejects it.
        assert!(parse_expression_text("08").is_none());
        let commented = parse_expression_text("/* tiles */ 32").unwrap();
        assert_eq!(commented.kind, ExprKind::Int(32));
        assert_eq!((commented.span.start, commented.span.end), (12, 14));
    }
}

#[cfg(test)]
mod body_tests;
#[cfg(test)]
mod frontend_tests;

//! The forms a rewrite takes (docs/ARCHITECTURE.md §7), in order of preference: the index swizzle in
//! place (`tile[r][c ^ r]`), a `__host__ __device__ __forceinline__` map function through which every
//! subscript goes (a multi-dimensional declaration flattened first), and a padded
//! declaration. Every form writes the access's own index expressions as they are in the
//! source, and sizes stay symbolic (`[TILE][TILE + 1]`).
use super::edit::Edit;
use super::guard::Assumption;
use crate::parse::{
    parse_expression_text, Access, BinaryOp, ConstEnv, Expr, ExprKind, Function, FunctionKind,
    Location, SharedArray, Span, UnaryOp,
};
use crate::solve::algebra::low_mask;
use crate::solve::expr::{BinOp, Expr as MapExpr};
use crate::solve::maps::{AddressMap, Padding, Swizzle};
use serde_json::Value;
use std::ops::Range;

mod declaration;
mod map_function;
mod pointers;
mod swizzle;
mod symbolic;
#[cfg(test)]
mod tests;

pub(super) use declaration::declarator;
pub use declaration::padded_declaration;
use declaration::*;
pub use map_function::map_function;
use map_function::*;
use pointers::*;
pub use swizzle::swizzle_in_place;
use swizzle::*;
use symbolic::symbolic;

/// The text being rewritten and its line ending (inserted lines use the file's own).
pub struct Source<'a> {
    pub text: &'a str,
    pub newline: &'static str,
    /// The arrays that struct-of-arrays markers name, found once per file.
    split_members: std::sync::OnceLock<std::collections::HashSet<String>>,
}

impl<'a> Source<'a> {
    pub fn new(text: &'a str) -> Self {
        let crlf = text.find('\n').is_some_and(|at| text[..at].ends_with('\r'));
        Source {
            text,
            newline: if crlf { "\r\n" } else { "\n" },
            split_members: std::sync::OnceLock::new(),
        }
    }

    /// Whether `array` is one of the member arrays a struct-of-arrays rewrite made (its
    /// marker lists them): they hold what one array held, and are not rewritten again.
    fn split_from(&self, array: &str) -> bool {
        self.split_members
            .get_or_init(|| {
                self.text
                    .lines()
                    .filter(|line| line.trim_start().starts_with("// bankwise: `"))
                    .filter_map(|line| line.split_once(SPLIT_MARKER).map(|(_, members)| members))
                    // What follows the list: the members dropped, `(never read, …)`.
                    .map(|members| members.split(" (").next().unwrap_or(members))
                    .flat_map(|members| members.split(", "))
                    .map(|member| member.trim().trim_matches('`').to_string())
                    .collect()
            })
            .contains(array)
    }

    fn span(&self, expr: &Expr) -> &'a str {
        self.text.get(expr.span.start..expr.span.end).unwrap_or("")
    }

    /// The source text of an index expression, parenthesised unless it is a primary
    /// expression (a name, a number, a member, a subscript or a call).
    fn operand(&self, expr: &Expr) -> String {
        parenthesised(self.span(expr), is_primary(expr))
    }
}

fn parenthesised(text: &str, primary: bool) -> String {
    if primary {
        text.to_string()
    } else {
        format!("({text})")
    }
}

fn is_primary(expr: &Expr) -> bool {
    matches!(
        expr.kind,
        ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Name(_)
            | ExprKind::Member { .. }
            | ExprKind::Index { .. }
            | ExprKind::Call { .. }
            | ExprKind::SizeofType(_)
            | ExprKind::SizeofExpr(_)
    )
}

/// How an array is rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FormKind {
    /// `t[r][c]` → `t[r][c ^ f(r)]`: one subscript changes, the declaration stays.
    SwizzleInPlace,
    /// `a[i]` → `a[bankwise_a(i)]`.
    MapFunction,
    /// `T a[R][C]` → `T a[R * C]`, and `a[i][j]` → `a[bankwise_a(i * C + j)]`.
    FlattenedMapFunction,
    /// `[R][C]` → `[R][C + p]`: the declaration only.
    PaddedDeclaration,
    /// `T a[N]` → one array per member of the record `T`, `a[i].m` → `a_m[i]`.
    StructOfArrays,
}

impl FormKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FormKind::SwizzleInPlace => "swizzle-in-place",
            FormKind::MapFunction => "map-function",
            FormKind::FlattenedMapFunction => "flattened-map-function",
            FormKind::PaddedDeclaration => "padded-declaration",
            FormKind::StructOfArrays => "struct-of-arrays",
        }
    }

    /// For text reports.
    pub fn describe(self) -> &'static str {
        match self {
            FormKind::SwizzleInPlace => "swizzled in place",
            FormKind::MapFunction => "stored through a map function",
            FormKind::FlattenedMapFunction => "flattened and stored through a map function",
            FormKind::PaddedDeclaration => "padded declaration",
            FormKind::StructOfArrays => "split into one array per member",
        }
    }
}

/// A `__host__ __device__ __forceinline__` map function and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapFunction {
    pub name: String,
    /// Where it is inserted: before the first function that needs it (and the comments
    /// directly above that function).
    pub at: usize,
    /// The comment, the definition and a blank line, in the file's line endings.
    pub text: String,
    /// The definition's line, without its line ending.
    pub definition: String,
    /// The same map as a function-like macro: the analysis evaluates macros but not calls,
    /// so translation validation reads the output with this line in place of `definition`.
    pub macro_definition: String,
    /// The copies of `__device__` functions inserted after it (in `text`): (copy, original).
    pub copies: Vec<(String, String)>,
}

/// One array's rewrite.
#[derive(Debug, Clone)]
pub struct Rewrite {
    pub form: FormKind,
    /// Subscript, declaration and marker edits.
    pub edits: Vec<Edit>,
    pub function: Option<MapFunction>,
    /// Per access of the array: the subscript as rewritten and the ALU instructions added.
    pub accesses: Vec<AccessRewrite>,
    /// Bytes the array grows by.
    pub extra_bytes: u64,
    /// The arrays that take the array's place (a struct of arrays); empty when it keeps its
    /// declaration.
    pub split_into: Vec<String>,
    /// The dimensions whose extents the rewrite is proven for: another extent of any other
    /// dimension (another instance of a template) keeps it a bijection. `None`: all of them.
    pub proven_dims: Option<Vec<usize>>,
    /// The values the map was derived from, each checked by a guard among `edits` (the plan
    /// adds them: see [`crate::rewrite::guard`]).
    pub assumptions: Vec<Assumption>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessRewrite {
    pub text: String,
    pub alu: u32,
}

/// What a form needs about the array and its place in the file.
pub struct Target<'a> {
    pub source: &'a Source<'a>,
    pub array: &'a SharedArray,
    /// The function the array is declared in (a template without its arguments: its
    /// instances share the comment), for the map function's comment.
    pub function: &'a str,
    /// Where a map function would go (see [`definition_start`]).
    pub function_at: Option<usize>,
    /// The function's source text, for what a rewrite through a pointer must keep.
    pub function_text: &'a str,
    /// Where a pointer is made from the array's name (`&tile[ty][0]`, `m`), if anywhere: a
    /// declaration those pointers index cannot change shape.
    pub pointer_made_at: Option<usize>,
    /// The file's functions, for copying those a pointer into the array is passed to.
    pub functions: &'a [Function],
    /// The arrays of the array's function, the array among them.
    pub kernel_arrays: &'a [SharedArray],
    /// Per array of `kernel_arrays`: it has no bank conflict, so `fix` never rewrites it.
    pub clean_arrays: Vec<bool>,
    /// The file's macros, for which names a map function may write (see [`symbolic`]).
    pub constants: &'a ConstEnv,
}

impl Target<'_> {
    /// The extents as written, parenthesised where an operator would bind into them
    /// (`TILE + 1` → `(TILE + 1)`), for linear indices made of them.
    fn extent_texts(&self) -> Vec<String> {
        self.array
            .dim_texts
            .iter()
            .map(|t| parenthesised(t, extent_kind(t).0))
            .collect()
    }

    fn dims(&self) -> Result<Vec<u64>, String> {
        self.array.extents()
    }

    /// The accesses that subscript the array's name, each of every dimension.
    fn subscripts(&self) -> Result<Vec<&Access>, String> {
        let rank = self.array.dims.len();
        self.array
            .accesses
            .iter()
            .filter(|access| access.detail().via_pointer.is_none())
            .map(|access| {
                if access.indices.unpack().len() != rank {
                    Err(format!(
                        "line {}: `{}` is not a subscript of every dimension",
                        access.at.line, access.text
                    ))
                } else {
                    Ok(access)
                }
            })
            .collect()
    }

    fn has_pointer_accesses(&self) -> bool {
        self.array
            .accesses
            .iter()
            .any(|a| a.detail().via_pointer.is_some())
    }

    /// The array's first element as a pointer: `s`, `&tile[0][0]`; `None` for a provider's
    /// array, which has no name.
    fn base(&self) -> Option<String> {
        let name = &self.array.name;
        if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        Some(match self.array.dims.len() {
            1 => name.clone(),
            rank => format!("&{name}{}", "[0]".repeat(rank)),
        })
    }

    /// [`Self::base`] ready to be subscripted: `s`, `(&tile[0][0])`.
    fn subscriptable_base(&self) -> Option<String> {
        let base = self.base()?;
        Some(parenthesised(&base, self.array.dims.len() == 1))
    }

    /// The marker comment above the declaration (when the declaration starts its line), which
    /// tells a reviewer how the array is stored and tells a later `fix` that it already is.
    pub(super) fn marker(&self, description: &str) -> Option<Edit> {
        let text = self.source.text;
        let start = self.array.decl_span.start;
        let line = line_start(text, start);
        let indent = &text[line..start];
        indent.trim().is_empty().then(|| {
            Edit::insert(
                line,
                format!(
                    "{indent}{}{description}{}",
                    marker_prefix(&self.array.name),
                    self.source.newline
                ),
            )
        })
    }
}

/// The start of every marker comment for `array`.
pub fn marker_prefix(array: &str) -> String {
    format!("// bankwise: `{array}` ")
}

/// Whether bankwise already rewrote the array: its declaration carries the marker, or a
/// subscript goes through a bankwise map function. Such an array is never rewritten again.
pub fn already_rewritten(source: &Source, array: &SharedArray) -> bool {
    let text = source.text;
    let line = line_start(text, array.decl_span.start);
    let above = line_start(text, line.saturating_sub(1));
    let end = line_end(text, array.decl_span.end);
    let marked = text
        .get(above..end)
        .is_some_and(|t| t.contains(&marker_prefix(&array.name)));
    marked
        || source.split_from(&array.name)
        || array.accesses.iter().any(|a| a.text.contains("bankwise_"))
}

/// What a struct-of-arrays marker says before the member arrays it lists.
pub(in crate::rewrite) const SPLIT_MARKER: &str = "is stored as a struct of arrays: ";

pub(in crate::rewrite) fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |at| at + 1)
}

pub(in crate::rewrite) fn line_end(text: &str, offset: usize) -> usize {
    text[offset..]
        .find('\n')
        .map_or(text.len(), |at| offset + at)
}

/// `text` without the whitespace, line continuations and comments it ends with.
fn without_trailing_comments(text: &str) -> &str {
    let mut text = text.trim_end();
    loop {
        let line = line_start(text, text.len());
        let last = &text[line..];
        if let Some(comment) = last.find("//") {
            text = text[..line + comment].trim_end();
        } else if text.ends_with("*/") {
            match text.rfind("/*") {
                Some(open) => text = text[..open].trim_end(),
                None => return text,
            }
        } else if let Some(spliced) = text.strip_suffix('\\') {
            // A line continuation joins two lines: as blank as the line end it hides.
            text = spliced.trim_end();
        } else {
            return text;
        }
    }
}

/// Where a map function for a function starting at `start` goes: before its `template <…>`
/// and the comment lines directly above it (which may hold its `// bankwise: block=`
/// annotation), at the start of a line. `None` when that line also holds code that is not
/// part of the function's head (`} __global__ void k()`).
pub fn definition_start(text: &str, start: usize) -> Option<usize> {
    let mut at = start;
    loop {
        // Comments between `template <…>` and the function belong to the template too.
        let before = without_trailing_comments(&text[..at]);
        let Some(open) = before.strip_suffix('>').and_then(matching_open_angle) else {
            break;
        };
        let head = text[..open].trim_end();
        match head.strip_suffix("template") {
            Some(rest) if !rest.ends_with(|c: char| c.is_alphanumeric() || c == '_') => {
                at = rest.len();
            }
            _ => break,
        }
    }
    let mut line = line_start(text, at);
    let prefix = &text[line..at];
    if prefix.contains(['{', '}', ';', '(', ')', '#']) {
        return None;
    }
    while line > 0 {
        let above = line_start(text, line - 1);
        let content = text[above..line].trim();
        if content.starts_with("//") || (content.starts_with("/*") && content.ends_with("*/")) {
            line = above;
        } else if content.ends_with("*/") {
            // The last line of a block comment: continue from the line it opens on.
            let Some(open) = text[..line].rfind("/*") else {
                break;
            };
            let open_line = line_start(text, open);
            if !text[open_line..open].trim().is_empty() {
                break;
            }
            line = open_line;
        } else {
            break;
        }
    }
    // A `// bankwise:` annotation at the end of a line of code (`;// bankwise: block=16`)
    // still belongs to the function: a map function cannot go between them.
    if line > 0 {
        let above = &text[line_start(text, line - 1)..line];
        if above.contains("bankwise:") && !above.trim_start().starts_with("//") {
            return None;
        }
    }
    Some(line)
}

/// The offset of the `<` that opens the angle brackets closed at the end of `inner` (the text
/// before a `>`).
fn matching_open_angle(inner: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in inner.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            ';' | '{' | '}' => return None,
            _ => {}
        }
    }
    None
}

/// `bitvector-xor (k1 = 0, k2 = 1, mask = 31), CuTe Swizzle<5, 0, 1>`.
pub fn describe(map: &dyn AddressMap) -> String {
    let params = match map.params() {
        Value::Object(fields) => fields
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    };
    let cute = map
        .cute()
        .map(|c| format!(", CuTe {c}"))
        .unwrap_or_default();
    format!("{} ({params}){cute}", map.kind())
}

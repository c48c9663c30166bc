//! The forms a rewrite takes (DESIGN.md §7), in order of preference: the index swizzle in
//! place (`tile[r][c ^ r]`), a `__device__ __forceinline__` map function through which every
//! subscript goes (a multi-dimensional declaration flattened first), and a padded
//! declaration. Every form writes the access's own index expressions as they are in the
//! source, and sizes stay symbolic (`[TILE][TILE + 1]`).
use super::edit::Edit;
use crate::parse::{
    parse_expression_text, Access, BinaryOp, Expr, ExprKind, Function, FunctionKind, Location,
    SharedArray, Span, UnaryOp,
};
use crate::solve::algebra::low_mask;
use crate::solve::expr::{BinOp, Expr as MapExpr};
use crate::solve::maps::{AddressMap, Padding, Swizzle};
use serde_json::Value;
use std::ops::Range;

/// The text being rewritten and its line ending (inserted lines use the file's own).
pub struct Source<'a> {
    pub text: &'a str,
    pub newline: &'static str,
}

impl<'a> Source<'a> {
    pub fn new(text: &'a str) -> Self {
        let crlf = text.find('\n').is_some_and(|at| text[..at].ends_with('\r'));
        Source {
            text,
            newline: if crlf { "\r\n" } else { "\n" },
        }
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

/// Whether evaluating `expr` twice is the same as once: no assignment, step or call.
pub(super) fn is_pure(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Name(_) => true,
        ExprKind::SizeofType(_) | ExprKind::SizeofExpr(_) => true,
        ExprKind::Member { base, .. } => is_pure(base),
        ExprKind::Index { base, index } => is_pure(base) && is_pure(index),
        ExprKind::Unary { operand, .. } | ExprKind::Cast { operand, .. } => is_pure(operand),
        ExprKind::Binary { lhs, rhs, .. } => is_pure(lhs) && is_pure(rhs),
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => is_pure(cond) && is_pure(then) && is_pure(otherwise),
        ExprKind::Assign { .. }
        | ExprKind::Step { .. }
        | ExprKind::Call { .. }
        | ExprKind::Comma { .. }
        | ExprKind::Opaque(_) => false,
    }
}

/// How an array is rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A `__device__ __forceinline__` map function and where it goes.
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
}

impl Target<'_> {
    fn dims(&self) -> Result<Vec<u64>, String> {
        self.array
            .dims
            .iter()
            .zip(&self.array.dim_texts)
            .map(|(dim, text)| dim.ok_or_else(|| format!("extent `{text}` is unknown")))
            .collect()
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
pub fn already_rewritten(text: &str, array: &SharedArray) -> bool {
    let line = line_start(text, array.decl_span.start);
    let above = line_start(text, line.saturating_sub(1));
    let end = line_end(text, array.decl_span.end);
    let marked = text
        .get(above..end)
        .is_some_and(|t| t.contains(&marker_prefix(&array.name)));
    marked || array.accesses.iter().any(|a| a.text.contains("bankwise_"))
}

fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |at| at + 1)
}

fn line_end(text: &str, offset: usize) -> usize {
    text[offset..]
        .find('\n')
        .map_or(text.len(), |at| offset + at)
}

/// Where a map function for a function starting at `start` goes: before its `template <…>`
/// and the comment lines directly above it (which may hold its `// bankwise: block=`
/// annotation), at the start of a line. `None` when that line also holds code that is not
/// part of the function's head (`} __global__ void k()`).
pub fn definition_start(text: &str, start: usize) -> Option<usize> {
    let mut at = start;
    loop {
        let before = text[..at].trim_end();
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

/// The byte ranges of the extents inside the brackets of the array's declarator, outermost
/// first.
fn declared_extents(target: &Target) -> Result<Vec<Range<usize>>, String> {
    declarator(target).map(|(_, extents)| extents)
}

/// Where the array's name starts in its declarator, and [`declared_extents`].
pub(super) fn declarator(target: &Target) -> Result<(usize, Vec<Range<usize>>), String> {
    let array = target.array;
    if let Some(name) = &array.declared_by_macro {
        return Err(format!(
            "declared by macro `{name}`: the declaration cannot be edited"
        ));
    }
    let text = target.source.text;
    let span = array.decl_span.start..array.decl_span.end;
    let decl = text
        .get(span.clone())
        .ok_or("the declaration is not in the file")?;
    let mut search = 0;
    while let Some(found) = decl[search..].find(&array.name) {
        let start = search + found;
        let end = start + array.name.len();
        search = end;
        let word_before = decl[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let mut rest = decl[end..].trim_start();
        if word_before || !rest.starts_with('[') {
            continue;
        }
        let mut extents = Vec::new();
        while rest.starts_with('[') {
            let open = decl.len() - rest.len();
            let close = matching_bracket(decl, open).ok_or("an unclosed `[`")?;
            extents.push(span.start + open + 1..span.start + close);
            rest = decl[close + 1..].trim_start();
        }
        let written: Vec<String> = extents
            .iter()
            .map(|r| {
                text[r.clone()]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let expected: Vec<String> = array
            .dim_texts
            .iter()
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        if written != expected {
            return Err(format!(
                "the declarator's extents {written:?} are not the array's {expected:?}"
            ));
        }
        return Ok((span.start + start, extents));
    }
    Err(format!(
        "no declarator `{}[` in the declaration",
        array.name
    ))
}

fn matching_bracket(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// How an extent's text combines with operators: `(primary, additive)`, where additive means
/// `text + k` needs no parentheses.
fn extent_kind(text: &str) -> (bool, bool) {
    match parse_expression_text(text) {
        Some(expr) => {
            let additive = is_primary(&expr)
                || matches!(
                    expr.kind,
                    ExprKind::Binary {
                        op: BinaryOp::Add
                            | BinaryOp::Sub
                            | BinaryOp::Mul
                            | BinaryOp::Div
                            | BinaryOp::Rem,
                        ..
                    }
                );
            (is_primary(&expr), additive)
        }
        None => (false, false),
    }
}

/// `text + k` with parentheses only where needed.
fn plus(text: &str, k: u64) -> String {
    let (_, additive) = extent_kind(text);
    format!("{} + {k}", parenthesised(text, additive))
}

/// The digit of a mixed-radix number (digits `radix`, most significant first, the first one
/// unbounded) that holds all the bits `[lo, hi)`, with the digit's lowest bit; `None` when
/// they straddle digits or a digit below them is not a power of two.
fn bit_owner(radix: &[u64], lo: u32, hi: u32) -> Option<(usize, u32)> {
    let mut offset = 0u32;
    for k in (0..radix.len()).rev() {
        if k == 0 {
            return (lo >= offset).then_some((0, offset));
        }
        if !radix[k].is_power_of_two() {
            return None;
        }
        let width = radix[k].trailing_zeros();
        if lo >= offset && hi <= offset + width {
            return Some((k, offset));
        }
        if lo < offset + width {
            return None;
        }
        offset += width;
    }
    None
}

/// The row-major linear index of `indices` (as map expressions) in an array whose extents
/// (as written) are `extents`.
fn linear_expr(indices: &[MapExpr], extents: &[String]) -> MapExpr {
    let mut linear = indices[0].clone();
    for (index, extent) in indices.iter().zip(extents).skip(1) {
        linear =
            MapExpr::binary(BinOp::Mul, linear, MapExpr::Var(extent.clone())).plus(index.clone());
    }
    linear
}

/// The new subscript of the swizzled dimension, as a map expression over the access's index
/// texts: `(column digit, expression)`. `indices` are the operands of one access.
fn swizzled_index(
    swizzle: &Swizzle,
    dims: &[u64],
    extents: &[String],
    indices: &[String],
) -> Result<(usize, MapExpr), String> {
    let split = (1..dims.len())
        .find(|&d| dims[d..].iter().product::<u64>() == swizzle.columns)
        .ok_or_else(|| format!("rows of {} elements are not a row pitch", swizzle.columns))?;
    let field = swizzle.row_shift..swizzle.row_shift + swizzle.bits;
    let vars: Vec<MapExpr> = indices.iter().map(|t| MapExpr::Var(t.clone())).collect();
    let (row, row_max, shift) = match bit_owner(&dims[..split], field.start, field.end) {
        Some((digit, offset)) => (
            vars[digit].clone(),
            dims[digit] - 1,
            swizzle.row_shift - offset,
        ),
        None => (
            linear_expr(&vars[..split], &extents[..split]),
            dims[..split].iter().product::<u64>() - 1,
            swizzle.row_shift,
        ),
    };
    let (digit, offset) = bit_owner(&dims[split..], swizzle.base, swizzle.base + swizzle.bits)
        .ok_or("the swizzled bits straddle two subscripts")?;
    let mask = low_mask(swizzle.bits);
    let shifted = row.shift_right(shift);
    let masked = if row_max >> shift <= mask {
        shifted
    } else {
        shifted.and(mask)
    };
    let column = split + digit;
    Ok((
        column,
        vars[column]
            .clone()
            .xor(masked.shift_left(swizzle.base - offset)),
    ))
}

/// Names for the subscripts of a marker's description: `[i][j]`, `[i][j][k]`.
fn placeholder_names(rank: usize) -> Vec<String> {
    (0..rank)
        .map(|d| {
            char::from_u32('i' as u32 + d as u32).map_or_else(|| format!("i{d}"), |c| c.to_string())
        })
        .collect()
}

fn subscripts_text(indices: &[String]) -> String {
    indices.iter().map(|i| format!("[{i}]")).collect()
}

/// `t[r][c]` → `t[r][c ^ f(r)]` for a swizzle of rows of one of the array's row pitches;
/// accesses through pointers go through the same map as a map function named `name`.
pub fn swizzle_in_place(target: &Target, swizzle: &Swizzle, name: &str) -> Result<Rewrite, String> {
    let dims = target.dims()?;
    let accesses = target.subscripts()?;
    let extents: Vec<String> = target
        .array
        .dim_texts
        .iter()
        .map(|t| parenthesised(t, extent_kind(t).0))
        .collect();
    let mut edits = Vec::new();
    let mut rewritten = Vec::new();
    for access in accesses {
        let subscripts = access.indices.unpack();
        let indices: Vec<String> = subscripts
            .iter()
            .map(|e| target.source.operand(e))
            .collect();
        let (column, index) = swizzled_index(swizzle, &dims, &extents, &indices)?;
        // The row subscripts now appear twice.
        if let Some(impure) = subscripts.iter().find(|e| !is_pure(e)) {
            return Err(format!(
                "line {}: `{}` would be evaluated twice",
                access.at.line,
                target.source.span(impure)
            ));
        }
        let span = subscripts[column].span;
        let text = index.to_cuda("");
        edits.push(Edit::replace(span.start..span.end, text.clone()));
        let mut new_indices: Vec<String> = subscripts
            .iter()
            .map(|e| target.source.span(e).to_string())
            .collect();
        new_indices[column] = text;
        rewritten.push(AccessRewrite {
            text: format!("{}{}", target.array.name, subscripts_text(&new_indices)),
            alu: index.ops(),
        });
    }
    let names = placeholder_names(dims.len());
    let (column, index) = swizzled_index(swizzle, &dims, &extents, &names)?;
    let mut stored = names.clone();
    stored[column] = index.to_cuda("");
    let mut description = format!(
        "is stored swizzled: element {} at {}",
        subscripts_text(&names),
        subscripts_text(&stored)
    );
    let function = if target.has_pointer_accesses() {
        let expr = swizzle.expr();
        let through = through_pointers(target, &expr, name)?;
        rewritten = in_access_order(target, rewritten, through.accesses);
        edits.extend(through.edits);
        description.push_str(&format!(", through pointers by {name}()"));
        Some(map_function_text(
            target,
            swizzle,
            name,
            &expr,
            through.copies,
        )?)
    } else {
        None
    };
    edits.extend(target.marker(&description));
    Ok(Rewrite {
        form: FormKind::SwizzleInPlace,
        edits,
        function,
        accesses: rewritten,
        extra_bytes: 0,
        split_into: Vec::new(),
    })
}

/// The rewrites of the accesses through pointers.
struct ThroughPointers {
    /// Edits of the array's own function.
    edits: Vec<Edit>,
    accesses: Vec<AccessRewrite>,
    /// Copies of the `__device__` functions the pointer is passed to, whose accesses go
    /// through the map, in the order of their originals.
    copies: Vec<FunctionCopy>,
}

/// A copy of a `__device__` function whose accesses through a pointer into the array go
/// through the array's map.
struct FunctionCopy {
    name: String,
    original: String,
    /// With its comment and a blank line after it.
    text: String,
}

/// The parameter that carries the array's first element into a copied function, when an
/// access there needs it.
const BASE_PARAMETER: &str = "bankwise_base";

/// Every access of the array through a pointer, through the map function `name` (whose
/// body is `expr`): `p[i]` → `p[name(i)]` when `p` points at the array's first element,
/// else `p[i]` → `base[name(&p[i] - base)]` and `*q` → `base[name(q - base)]`, which
/// subscript the array's first element with the map of the element's offset.
///
/// An access inside a `__device__` function the pointer is passed to is rewritten in a copy
/// of that function (`f_name`), and the calls that lead there call the copies: the original
/// stays for its other callers, which may pass other pointers (global memory too). Where an
/// access in a copy needs the first element, the copies take it as a last parameter.
fn through_pointers(
    target: &Target,
    expr: &MapExpr,
    name: &str,
) -> Result<ThroughPointers, String> {
    let alu = expr.ops();
    let pointers: Vec<&Access> = target
        .array
        .accesses
        .iter()
        .filter(|a| a.detail().via_pointer.is_some())
        .collect();
    let graph = CallGraph::of(target, &pointers, name)?;
    // A place reached more than once (a function called twice) has one form for all.
    let at_first = |access: &Access| {
        pointers
            .iter()
            .filter(|a| a.span == access.span)
            .all(|a| a.detail().pointer_offset == Some(0))
    };
    let needs_base = pointers
        .iter()
        .any(|a| graph.container(a.span.start).is_some() && !at_first(a));
    let base_param = needs_base.then_some(BASE_PARAMETER);
    let mut result = ThroughPointers {
        edits: Vec::new(),
        accesses: Vec::new(),
        copies: Vec::new(),
    };
    let mut copy_edits: Vec<Vec<Edit>> = vec![Vec::new(); graph.callees.len()];
    for access in &pointers {
        let (base, function_text) = match graph.container(access.span.start) {
            Some(c) => (base_param.map(str::to_string), graph.text(target, c)),
            None => (target.base(), target.function_text),
        };
        let (edit, rewrite) = pointer_access(
            target,
            access,
            name,
            alu,
            base,
            function_text,
            at_first(access),
        )?;
        match graph.container(access.span.start) {
            Some(c) => copy_edits[c].push(edit),
            None => result.edits.push(edit),
        }
        result.accesses.push(rewrite);
    }
    for &(at, callee) in &graph.calls {
        let text = target.source.text;
        let callee_name = &target.functions[graph.callees[callee]].name;
        let open = at + callee_name.len();
        let close = matching_paren(text, open).ok_or("a call without its `)`")?;
        let mut edits = vec![Edit::replace(at..open, format!("{callee_name}_{name}"))];
        if needs_base {
            let argument = match graph.container(at) {
                Some(_) => BASE_PARAMETER.to_string(),
                None => target.base().ok_or_else(|| {
                    format!(
                        "`{}` is passed to `{callee_name}` and has no name to pass beside it",
                        target.array.name
                    )
                })?,
            };
            let empty = text[open + 1..close].trim().is_empty();
            let separator = if empty { "" } else { ", " };
            edits.push(Edit::insert(close, format!("{separator}{argument}")));
        }
        match graph.container(at) {
            Some(c) => copy_edits[c].extend(edits),
            None => result.edits.extend(edits),
        }
    }
    for (c, mut edits) in copy_edits.into_iter().enumerate() {
        let function = &target.functions[graph.callees[c]];
        let start = function.span.start;
        let text = graph.text(target, c);
        // The same place reached through several calls gives the same edit several times.
        edits.sort_by_key(|e| (e.range.start, e.range.end));
        edits.dedup();
        let mut local: Vec<Edit> = edits
            .into_iter()
            .map(|e| Edit::replace(e.range.start - start..e.range.end - start, e.replacement))
            .collect();
        local.extend(declarator_edits(
            text,
            &function.name,
            name,
            target,
            base_param,
        )?);
        let copy = super::edit::apply(text, &local).map_err(|e| e.to_string())?;
        let newline = target.source.newline;
        result.copies.push(FunctionCopy {
            name: format!("{}_{name}", function.name),
            original: function.name.clone(),
            text: format!(
                "// bankwise: a copy of `{}` whose accesses to `{}` go through {name}(){newline}\
                 {copy}{newline}{newline}",
                function.name, target.array.name
            ),
        });
    }
    Ok(result)
}

/// One access through a pointer, as an edit of its span; `base` is the array's first
/// element where the access is (`None`: there is none to name), `function_text` the text
/// of the function it is in, `at_first` whether its pointer is the first element wherever
/// it is reached.
fn pointer_access(
    target: &Target,
    access: &Access,
    name: &str,
    alu: u32,
    base: Option<String>,
    function_text: &str,
    at_first: bool,
) -> Result<(Edit, AccessRewrite), String> {
    let line = access.at.line;
    let refuse = |why: &str| Err(format!("line {line}: `{}` {why}", access.text));
    if access.detail().member.is_some() {
        return refuse("touches a member through a pointer, which this version does not rewrite");
    }
    let span = access.span.start..access.span.end;
    let text = target.source.text.get(span.clone()).unwrap_or("");
    let Some(element) = parse_expression_text(text) else {
        return refuse("cannot be read back");
    };
    let piece = |e: &Expr| text.get(e.span.start..e.span.end).unwrap_or("");
    match &element.kind {
        // The pointer is the array's first element: its subscript is the element index.
        ExprKind::Index { base, index } if at_first => {
            let argument =
                parenthesised(piece(index), !matches!(index.kind, ExprKind::Comma { .. }));
            let call = format!("{name}({argument})");
            let at = span.start + index.span.start..span.start + index.span.end;
            Ok((
                Edit::replace(at, call.clone()),
                AccessRewrite {
                    text: format!("{}[{call}]", piece(base)),
                    alu,
                },
            ))
        }
        ExprKind::Index { .. }
        | ExprKind::Unary {
            op: UnaryOp::Deref, ..
        } => {
            let Some(first) = base else {
                return refuse(&format!(
                    "goes through a pointer that does not start at `{}`'s first element, and \
                     the array has no name to subscript",
                    target.array.name
                ));
            };
            // The new subscript goes through the array's own name, which would drop a
            // `volatile` the pointer carries.
            if may_be_volatile(function_text, &element, text) {
                return refuse(
                    "may go through a `volatile` pointer, whose qualifier a subscript of the \
                     array would drop",
                );
            }
            let address = match &element.kind {
                ExprKind::Unary { operand, .. } => {
                    parenthesised(piece(operand), is_primary(operand))
                }
                _ => format!("&{text}"),
            };
            let subscriptable = parenthesised(&first, !first.starts_with('&'));
            let new = format!("{subscriptable}[{name}({address} - {first})]");
            // The pointer difference is one subtraction more.
            Ok((
                Edit::replace(span, new.clone()),
                AccessRewrite {
                    text: new,
                    alu: alu + 1,
                },
            ))
        }
        _ => refuse("is not a subscript or a dereference of a pointer"),
    }
}

/// The `__device__` functions a pointer into the array is passed to, and the calls that
/// pass it.
struct CallGraph {
    /// Indices into the file's functions, in source order.
    callees: Vec<usize>,
    /// Their definitions.
    spans: Vec<Span>,
    /// (offset of the call, index into `callees` of the function called), once each.
    calls: Vec<(usize, usize)>,
}

impl CallGraph {
    fn of(target: &Target, pointers: &[&Access], name: &str) -> Result<Self, String> {
        let text = target.source.text;
        let mut graph = CallGraph {
            callees: Vec::new(),
            spans: Vec::new(),
            calls: Vec::new(),
        };
        let mut at_calls: Vec<(usize, usize)> = Vec::new();
        for access in pointers {
            for call in access.detail().via_pointer.iter().flatten() {
                let at = offset_of(text, *call).ok_or("a call outside the file")?;
                if at_calls.iter().any(|(a, _)| *a == at) {
                    continue;
                }
                let callee = callee_at(target, at, name).map_err(|why| {
                    format!(
                        "line {}: `{}` is reached through the call at line {}: {why}",
                        access.at.line, access.text, call.line
                    )
                })?;
                at_calls.push((at, callee));
            }
        }
        let mut callees: Vec<usize> = at_calls.iter().map(|(_, f)| *f).collect();
        callees.sort_by_key(|&f| target.functions[f].span.start);
        callees.dedup();
        graph.calls = at_calls
            .iter()
            .map(|(at, f)| (*at, callees.iter().position(|c| c == f).unwrap_or(0)))
            .collect();
        graph.spans = callees.iter().map(|&f| target.functions[f].span).collect();
        graph.callees = callees;
        // A copy serves one array. Another array may pass through the same call only if
        // `fix` never rewrites it (it would need its own copy there) and none of its
        // accesses in the copied functions is one of this array's (the copy maps those).
        let own = |other: &SharedArray| std::ptr::eq(other, target.array);
        let ours: Vec<Location> = pointers.iter().map(|a| a.at).collect();
        for (other, clean) in target.kernel_arrays.iter().zip(&target.clean_arrays) {
            if own(other) {
                continue;
            }
            let through_calls = |access: &&Access| {
                access.detail().via_pointer.iter().flatten().any(|call| {
                    offset_of(text, *call).is_some_and(|at| graph.calls.iter().any(|c| c.0 == at))
                })
            };
            let Some(shared) = other.accesses.iter().find(through_calls) else {
                continue;
            };
            let entangled = other
                .accesses
                .iter()
                .filter(through_calls)
                .any(|access| ours.contains(&access.at));
            if !clean || entangled {
                let call = shared
                    .detail()
                    .via_pointer
                    .iter()
                    .flatten()
                    .next()
                    .map_or(0, |c| c.line);
                return Err(format!(
                    "`{}` is passed through the same call at line {call}: one copy of the \
                     function cannot serve two arrays",
                    other.name
                ));
            }
        }
        Ok(graph)
    }

    /// The copied function whose original contains `offset`, if one does.
    fn container(&self, offset: usize) -> Option<usize> {
        self.spans
            .iter()
            .position(|s| s.start <= offset && offset < s.end)
    }

    fn text<'t>(&self, target: &Target<'t>, callee: usize) -> &'t str {
        let span = self.spans[callee];
        target.source.text.get(span.start..span.end).unwrap_or("")
    }
}

/// The byte offset of a location.
fn offset_of(text: &str, at: Location) -> Option<usize> {
    let line = if at.line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(at.line - 2)?.0 + 1
    };
    let offset = line + at.col.checked_sub(1)?;
    (offset <= text.len()).then_some(offset)
}

/// The function called at `at`, which can be copied for the map function `name`: a
/// `__device__` function of this file, defined once and before the array's function, not a
/// template, with no shared array of its own (a copy would have its own).
fn callee_at(target: &Target, at: usize, name: &str) -> Result<usize, String> {
    let text = target.source.text;
    let called: String = text[at..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let mut found = target
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name == called);
    let (Some((index, function)), None) = (found.next(), found.next()) else {
        return Err(format!("`{called}` is not one function of this file"));
    };
    let before = text[..function.span.start].trim_end();
    if !function.template_args.is_empty() || before.ends_with('>') {
        return Err(format!("`{called}` is a template"));
    }
    if function.kind != FunctionKind::Device || !function.arrays.is_empty() {
        return Err(format!(
            "`{called}` is not a `__device__` function without shared arrays of its own"
        ));
    }
    if target
        .function_at
        .is_none_or(|start| function.span.end > start)
    {
        return Err(format!(
            "`{called}` is not defined before `{}`",
            target.function
        ));
    }
    if !text[at + called.len()..].starts_with('(') {
        return Err(format!("the call of `{called}` is not `{called}(…)`"));
    }
    let copy = format!("{called}_{name}");
    let taken = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == copy);
    if taken {
        return Err(format!("the name `{copy}` is taken"));
    }
    Ok(index)
}

/// The offset of the `)` that closes the `(` at `open`.
fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.get(open..)?.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The copy's declarator: `f` renamed `f_name`, and the first element's parameter added
/// when the copies need it.
fn declarator_edits(
    text: &str,
    function: &str,
    name: &str,
    target: &Target,
    base_param: Option<&str>,
) -> Result<Vec<Edit>, String> {
    let mut search = 0;
    let at = loop {
        let found = search
            + text[search..]
                .find(function)
                .ok_or_else(|| format!("no declarator of `{function}`"))?;
        search = found + function.len();
        let word_before = text[..found]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !word_before && text[search..].trim_start().starts_with('(') {
            break found;
        }
    };
    let mut edits = vec![Edit::replace(
        at..at + function.len(),
        format!("{function}_{name}"),
    )];
    if let Some(param) = base_param {
        let open = search + text[search..].find('(').unwrap_or(0);
        let close = matching_paren(text, open).ok_or("a declarator without its `)`")?;
        let inner = text[open + 1..close].trim();
        let declared = format!("{} *{param}", target.array.elem_type);
        if inner.is_empty() || inner == "void" {
            edits.push(Edit::replace(open + 1..close, declared));
        } else {
            edits.push(Edit::insert(close, format!(", {declared}")));
        }
    }
    Ok(edits)
}

/// Whether the pointer `element` (whose text is `text`) goes through may be declared
/// `volatile` in `function`: a statement that mentions both `volatile` and the pointer's
/// name; any `volatile` at all when the pointer has no name.
fn may_be_volatile(function: &str, element: &Expr, text: &str) -> bool {
    let words = |t: &str| {
        t.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let Some(pointer) = pointer_name(element).and_then(|e| text.get(e.span.start..e.span.end))
    else {
        return function.contains("volatile");
    };
    function.split([';', '{', '}']).map(words).any(|statement| {
        statement.iter().any(|w| w == "volatile") && statement.iter().any(|w| w == pointer)
    })
}

/// The name of the pointer an element expression starts from: `row` in `row[tx]`, `col` in
/// `*(col + 32 * tx)`.
fn pointer_name(expr: &Expr) -> Option<&Expr> {
    match &expr.kind {
        ExprKind::Name(_) => Some(expr),
        ExprKind::Index { base, .. } => pointer_name(base),
        ExprKind::Unary { operand, .. } => pointer_name(operand),
        ExprKind::Binary {
            op: BinaryOp::Add | BinaryOp::Sub,
            lhs,
            rhs,
        } => pointer_name(lhs).or_else(|| pointer_name(rhs)),
        _ => None,
    }
}

/// The access rewrites in the array's access order, from those of its subscripts and those
/// through pointers (each in its own order).
fn in_access_order(
    target: &Target,
    subscripts: Vec<AccessRewrite>,
    through: Vec<AccessRewrite>,
) -> Vec<AccessRewrite> {
    let (mut subscripts, mut through) = (subscripts.into_iter(), through.into_iter());
    target
        .array
        .accesses
        .iter()
        .filter_map(|access| match access.detail().via_pointer {
            Some(_) => through.next(),
            None => subscripts.next(),
        })
        .collect()
}

/// `[R][C]` → `[R][C + p]` (or a middle extent grown by whole rows): the declaration only.
/// Refused when an access goes through a pointer, which would have been computed with the
/// old pitch.
pub fn padded_declaration(target: &Target, padding: &Padding) -> Result<Rewrite, String> {
    let dims = target.dims()?;
    let accesses = target.subscripts()?;
    if let Some(access) = target
        .array
        .accesses
        .iter()
        .find(|a| a.detail().via_pointer.is_some())
    {
        return Err(format!(
            "line {}: `{}` goes through a pointer computed with the old row pitch",
            access.at.line, access.text
        ));
    }
    if !padding.declared {
        return Err("the padding is not of a declared row".into());
    }
    let split = (1..dims.len())
        .find(|&d| dims[d..].iter().product::<u64>() == padding.pitch)
        .ok_or_else(|| format!("rows of {} elements are not a row pitch", padding.pitch))?;
    let inner: u64 = dims[split + 1..].iter().product();
    if !padding.pad.is_multiple_of(inner) {
        return Err(format!(
            "a pad of {} elements is not a whole number of rows of {inner}",
            padding.pad
        ));
    }
    let grow = padding.pad / inner;
    let extents = declared_extents(target)?;
    let range = extents[split].clone();
    let written = &target.source.text[range.clone()];
    let mut edits = vec![Edit::replace(range, plus(written, grow))];
    let elem_bytes = target.array.elem_bytes.unwrap_or(0);
    let rows: u64 = dims[..split].iter().product();
    let extra_bytes = rows * grow * inner * elem_bytes;
    edits.extend(target.marker(&format!(
        "is padded: extent {} grown by {grow} to move rows of {} elements {} apart",
        split + 1,
        padding.pitch,
        padding.pitch + padding.pad
    )));
    Ok(Rewrite {
        form: FormKind::PaddedDeclaration,
        edits,
        function: None,
        accesses: accesses
            .iter()
            .map(|a| AccessRewrite {
                text: a.text.clone(),
                alu: 0,
            })
            .collect(),
        extra_bytes,
        split_into: Vec::new(),
    })
}

/// `a[i]` → `a[name(i)]` through a map function inserted before the array's function; a
/// multi-dimensional declaration is flattened first (`a[i][j]` → `a[name(i * C + j)]`), and
/// grown when the map needs more room than the array (flat padding). When pointers are made
/// from a multi-dimensional array they index its declared shape, so the declaration stays and
/// its subscripts address the first element (`(&a[0][0])[name(i * C + j)]`).
pub fn map_function(target: &Target, map: &dyn AddressMap, name: &str) -> Result<Rewrite, String> {
    let dims = target.dims()?;
    let accesses = target.subscripts()?;
    let expr = map.expr();
    let through = through_pointers(target, &expr, name)?;
    let extra = map.extent_out() - map.extent();
    let multi = dims.len() > 1;
    let flatten = multi && target.pointer_made_at.is_none();
    if let (true, true, Some(line)) = (multi, extra > 0, target.pointer_made_at) {
        return Err(format!(
            "the map needs {extra} more elements, but the pointer made at line {line} indexes \
             the declared shape"
        ));
    }
    let mut edits = Vec::new();
    if flatten || extra > 0 {
        let extents = declared_extents(target)?;
        let written: Vec<&str> = extents
            .iter()
            .map(|r| &target.source.text[r.clone()])
            .collect();
        let size = if flatten {
            written
                .iter()
                .map(|t| parenthesised(t, extent_kind(t).0))
                .collect::<Vec<_>>()
                .join(" * ")
        } else {
            written[0].to_string()
        };
        let size = if extra > 0 { plus(&size, extra) } else { size };
        let all = extents[0].start - 1..extents[extents.len() - 1].end + 1;
        edits.push(Edit::replace(all, format!("[{size}]")));
    }
    let extents: Vec<String> = target
        .array
        .dim_texts
        .iter()
        .map(|t| parenthesised(t, extent_kind(t).0))
        .collect();
    let mut rewritten = Vec::new();
    for access in accesses {
        let subscripts = access.indices.unpack();
        let indices: Vec<MapExpr> = subscripts
            .iter()
            .map(|e| MapExpr::Var(target.source.operand(e)))
            .collect();
        let argument = if multi {
            linear_text(&linear_expr(&indices, &extents))
        } else {
            // A comma expression needs its parentheses inside the call.
            let index = &subscripts[0];
            let text = target.source.span(index);
            parenthesised(text, !matches!(index.kind, ExprKind::Comma { .. }))
        };
        let call = format!("{name}({argument})");
        let (first, last) = (&subscripts[0].span, &subscripts[dims.len() - 1].span);
        let text = if flatten {
            // From the first subscript's `[` to the last one's `]`.
            let open = target.source.text[..first.start]
                .rfind('[')
                .ok_or("no `[` before the first subscript")?;
            let close = target.source.text[last.end..]
                .find(']')
                .map(|at| last.end + at + 1)
                .ok_or("no `]` after the last subscript")?;
            edits.push(Edit::replace(open..close, format!("[{call}]")));
            format!("{}[{call}]", target.array.name)
        } else if multi {
            let base = target
                .subscriptable_base()
                .ok_or("the array has no name to subscript")?;
            let whole = format!("{base}[{call}]");
            edits.push(Edit::replace(
                access.span.start..access.span.end,
                whole.clone(),
            ));
            whole
        } else {
            edits.push(Edit::replace(first.start..first.end, call.clone()));
            format!("{}[{call}]", target.array.name)
        };
        rewritten.push(AccessRewrite {
            text,
            alu: expr.ops(),
        });
    }
    let rewritten = in_access_order(target, rewritten, through.accesses);
    edits.extend(through.edits);
    let function = map_function_text(target, map, name, &expr, through.copies)?;
    let form = if flatten {
        FormKind::FlattenedMapFunction
    } else {
        FormKind::MapFunction
    };
    let description = if flatten {
        format!("is flattened and stored through {name}()")
    } else if multi {
        format!("is stored through {name}() of its row-major index")
    } else {
        format!("is stored through {name}()")
    };
    edits.extend(target.marker(&description));
    let elem_bytes = target.array.elem_bytes.unwrap_or(0);
    Ok(Rewrite {
        form,
        edits,
        function: Some(function),
        accesses: rewritten,
        extra_bytes: extra * elem_bytes,
        split_into: Vec::new(),
    })
}

/// The map function `name` for `map` (whose body is `expr`), placed before the function.
fn map_function_text(
    target: &Target,
    map: &dyn AddressMap,
    name: &str,
    expr: &MapExpr,
    copies: Vec<FunctionCopy>,
) -> Result<MapFunction, String> {
    if has_table(expr) {
        return Err(format!(
            "the {} map reads a `__constant__` table, which the analysis cannot evaluate, so \
             its rewrite could not be validated",
            map.kind()
        ));
    }
    let at = target
        .function_at
        .ok_or("no line to put the map function on before the function")?;
    let newline = target.source.newline;
    let definition = format!(
        "__device__ __forceinline__ int {name}(int i) {{ return {}; }}",
        expr.to_cuda("i")
    );
    let comment = format!(
        "// bankwise map for `{}` in `{}`: {}",
        target.array.name,
        target.function,
        describe(map)
    );
    let copied: String = copies.iter().map(|copy| copy.text.as_str()).collect();
    Ok(MapFunction {
        name: name.to_string(),
        at,
        text: format!("{comment}{newline}{definition}{newline}{newline}{copied}"),
        copies: copies
            .into_iter()
            .map(|copy| (copy.name, copy.original))
            .collect(),
        macro_definition: format!("#define {name}(i) ({})", expr.to_cuda("(i)")),
        definition,
    })
}

/// `i * C + j`, `(i * B + j) * C + k`: the linear index as a reader would write it.
fn linear_text(expr: &MapExpr) -> String {
    match expr {
        MapExpr::Binary(BinOp::Add, product, index) => {
            format!("{} + {}", linear_text(product), linear_text(index))
        }
        MapExpr::Binary(BinOp::Mul, linear, extent) => {
            let left = match **linear {
                MapExpr::Binary(BinOp::Add, ..) => format!("({})", linear_text(linear)),
                _ => linear_text(linear),
            };
            format!("{left} * {}", linear_text(extent))
        }
        other => other.to_cuda(""),
    }
}

fn has_table(expr: &MapExpr) -> bool {
    match expr {
        MapExpr::Table { .. } => true,
        MapExpr::Binary(_, l, r) => has_table(l) || has_table(r),
        MapExpr::Select {
            lhs,
            rhs,
            then,
            otherwise,
        } => [lhs, rhs, then, otherwise].iter().any(|e| has_table(e)),
        _ => false,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::analysis::{analyse_text, AnalysedFile, Options};
    use crate::block::ConfigBlocks;
    use crate::rewrite::edit::apply;
    use crate::solve::maps::{BitVectorXor, Padding};
    use std::path::Path;

    fn analysed(text: &str) -> AnalysedFile {
        analyse_text(
            Path::new("t.cu"),
            text,
            &Options::default(),
            &ConfigBlocks::default(),
        )
    }

    /// The text after the rewrite `form` makes of the first array of the first function.
    fn rewritten(
        text: &str,
        form: impl Fn(&Target) -> Result<Rewrite, String>,
    ) -> Result<(String, Rewrite), String> {
        let file = analysed(text);
        let function = &file.parsed.functions[0];
        let source = Source::new(text);
        let target = Target {
            source: &source,
            array: &function.arrays[0],
            function: &function.name,
            function_at: definition_start(text, function.span.start),
            function_text: text,
            pointer_made_at: None,
            functions: &file.parsed.functions,
            kernel_arrays: &function.arrays,
            clean_arrays: vec![false; function.arrays.len()],
        };
        let rewrite = form(&target)?;
        let mut edits = rewrite.edits.clone();
        if let Some(function) = &rewrite.function {
            edits.push(Edit::insert(function.at, function.text.clone()));
        }
        let out = apply(text, &edits).map_err(|e| e.to_string())?;
        Ok((out, rewrite))
    }

    const TRANSPOSE: &str = "#define TILE 32\n\
        // bankwise: block=32x8\n\
        __global__ void t(float *o)\n\
        {\n\
        \x20   __shared__ float tile[TILE][TILE]; // the tile\n\
        \x20   for (int j = 0; j < TILE; j += 8)\n\
        \x20       tile[threadIdx.y + j][threadIdx.x] = o[j];\n\
        \x20   for (int j = 0; j < TILE; j += 8)\n\
        \x20       o[j] = tile[threadIdx.x][threadIdx.y + j];\n\
        }\n";

    #[test]
    fn the_transpose_tile_is_swizzled_in_place_with_its_own_index_texts() {
        let swizzle = Swizzle::new(32, 5, 0, 0, 1024).expect("valid");
        let (out, rewrite) = rewritten(TRANSPOSE, |t| swizzle_in_place(t, &swizzle, "bankwise_t"))
            .expect("in place");
        let expected = TRANSPOSE
            .replace(
                "    __shared__",
                "    // bankwise: `tile` is stored swizzled: element [i][j] at [i][j ^ i]\n    \
                 __shared__",
            )
            .replace(
                "tile[threadIdx.y + j][threadIdx.x] =",
                "tile[threadIdx.y + j][threadIdx.x ^ (threadIdx.y + j)] =",
            )
            .replace(
                "= tile[threadIdx.x][threadIdx.y + j];",
                "= tile[threadIdx.x][(threadIdx.y + j) ^ threadIdx.x];",
            );
        assert_eq!(out, expected);
        assert_eq!(rewrite.form, FormKind::SwizzleInPlace);
        assert_eq!(
            rewrite.accesses.iter().map(|a| a.alu).collect::<Vec<_>>(),
            vec![1, 1]
        );
        // The same edits in a CRLF file: the marker ends its line with CRLF too.
        let crlf = TRANSPOSE.replace('\n', "\r\n");
        let (out, _) =
            rewritten(&crlf, |t| swizzle_in_place(t, &swizzle, "bankwise_t")).expect("in place");
        assert_eq!(out, expected.replace('\n', "\r\n"));
    }

    #[test]
    fn a_three_dimensional_tile_swizzles_the_subscript_that_holds_the_bits() {
        let text = "__global__ void b(float *o)\n{\n    __shared__ float cube[4][8][32];\n    \
                    cube[threadIdx.z][threadIdx.y][threadIdx.x] = 1;\n    int l = threadIdx.y * \
                    32 + threadIdx.x;\n    o[l] = cube[threadIdx.z][l % 8][l / 8];\n}\n";
        let swizzle = Swizzle::new(32, 3, 2, 0, 1024).expect("valid");
        let (out, rewrite) =
            rewritten(text, |t| swizzle_in_place(t, &swizzle, "bankwise_t")).expect("in place");
        assert!(
            out.contains("cube[threadIdx.z][threadIdx.y][threadIdx.x ^ (threadIdx.y << 2)] = 1;")
        );
        assert!(out.contains("o[l] = cube[threadIdx.z][l % 8][(l / 8) ^ ((l % 8) << 2)];"));
        assert!(out.contains("element [i][j][k] at [i][j][k ^ (j << 2)]"));
        assert_eq!(rewrite.accesses[0].alu, 2);
        // Rows of 256 swizzled by bits 5 and 6 of z: the middle subscript changes.
        let outer = Swizzle::new(256, 2, 5, 0, 1024).expect("valid");
        let (out, _) =
            rewritten(text, |t| swizzle_in_place(t, &outer, "bankwise_t")).expect("in place");
        assert!(out.contains("cube[threadIdx.z][threadIdx.y ^ threadIdx.z][threadIdx.x] = 1;"));
        // Bits 4 and 5 straddle the last two subscripts.
        let straddling = Swizzle::new(256, 2, 4, 0, 1024).expect("valid");
        assert!(
            rewritten(text, |t| swizzle_in_place(t, &straddling, "bankwise_t"))
                .is_err_and(|why| why.contains("straddle"))
        );
    }

    #[test]
    fn a_row_subscript_with_side_effects_is_not_duplicated() {
        let text = "__global__ void k(float *o, int *n)\n{\n    __shared__ float t[32][32];\n    \
                    t[n[0]++][threadIdx.x] = 1;\n}\n";
        let swizzle = Swizzle::new(32, 5, 0, 0, 1024).expect("valid");
        assert!(
            rewritten(text, |t| swizzle_in_place(t, &swizzle, "bankwise_t"))
                .is_err_and(|why| why.contains("evaluated twice"))
        );
    }

    #[test]
    fn padding_changes_the_declaration_only_and_keeps_sizes_symbolic() {
        let padding = Padding::new(32, 1, true, 1024).expect("valid");
        let (out, rewrite) =
            rewritten(TRANSPOSE, |t| padded_declaration(t, &padding)).expect("padded");
        assert!(out.contains("__shared__ float tile[TILE][TILE + 1]; // the tile\n"));
        assert!(out.contains("tile[threadIdx.x][threadIdx.y + j];"));
        assert_eq!(rewrite.extra_bytes, 128);
        let text = "__global__ void b(float *o)\n{\n    __shared__ float cube[4][8][32];\n    \
                    cube[threadIdx.z][threadIdx.y][threadIdx.x] = 1;\n}\n";
        let rows = Padding::new(256, 32, true, 1024).expect("valid");
        let (out, _) = rewritten(text, |t| padded_declaration(t, &rows)).expect("padded");
        assert!(out.contains("cube[4][8 + 1][32];"));
        let odd = Padding::new(256, 3, true, 1024).expect("valid");
        assert!(rewritten(text, |t| padded_declaration(t, &odd)).is_err());
    }

    #[test]
    fn map_functions_go_above_the_template_head_and_its_comments() {
        let text = "#define N 256\n\n// Doc.\n// bankwise: block=128\ntemplate <int S>\n\
                    __global__ void p(float *o)\n{\n    __shared__ float s[N];\n    \
                    s[threadIdx.x] = 1;\n    o[0] = s[S * threadIdx.x];\n}\n\
                    template __global__ void p<2>(float *);\n";
        let map = BitVectorXor::new(0, 1, 31, 5, 256).expect("valid");
        let (out, rewrite) =
            rewritten(text, |t| map_function(t, &map, "bankwise_s")).expect("a function");
        assert_eq!(
            out,
            "#define N 256\n\n\
             // bankwise map for `s` in `p`: bitvector-xor (k1 = 0, k2 = 1, mask = 31)\n\
             __device__ __forceinline__ int bankwise_s(int i) { return i ^ ((i >> 1) & 31); }\n\n\
             // Doc.\n// bankwise: block=128\ntemplate <int S>\n\
             __global__ void p(float *o)\n{\n    // bankwise: `s` is stored through bankwise_s()\n    \
             __shared__ float s[N];\n    s[bankwise_s(threadIdx.x)] = 1;\n    \
             o[0] = s[bankwise_s(S * threadIdx.x)];\n}\n\
             template __global__ void p<2>(float *);\n"
        );
        let function = rewrite.function.expect("a map function");
        assert_eq!(
            function.macro_definition,
            "#define bankwise_s(i) ((i) ^ (((i) >> 1) & 31))"
        );
        assert_eq!(rewrite.accesses[1].alu, 3);
    }

    #[test]
    fn a_map_function_flattens_a_multi_dimensional_declaration() {
        let map = BitVectorXor::new(0, 5, 31, 5, 1024).expect("valid");
        let (out, rewrite) =
            rewritten(TRANSPOSE, |t| map_function(t, &map, "bankwise_tile")).expect("flattened");
        assert_eq!(rewrite.form, FormKind::FlattenedMapFunction);
        assert!(out.contains("__shared__ float tile[TILE * TILE]; // the tile"));
        assert!(out.contains("tile[bankwise_tile((threadIdx.y + j) * TILE + threadIdx.x)] = o[j];"));
        // Flat padding grows the array to hold the last padded index.
        let padded = Padding::new(32, 1, false, 1024).expect("valid");
        let (out, rewrite) =
            rewritten(TRANSPOSE, |t| map_function(t, &padded, "bankwise_tile")).expect("padded");
        assert!(out.contains("__shared__ float tile[TILE * TILE + 31];"));
        assert_eq!(rewrite.extra_bytes, 31 * 4);
    }

    #[test]
    fn a_declaration_inside_a_macro_cannot_be_edited() {
        let text = "#define DECLARE(T, n, k) __shared__ T n[k][k];\n__global__ void m(float *o)\n\
                    {\n    DECLARE(float, t, 32)\n    t[threadIdx.x][0] = o[0];\n}\n";
        let padding = Padding::new(32, 1, true, 1024).expect("valid");
        assert!(rewritten(text, |t| padded_declaration(t, &padding))
            .is_err_and(|why| why.contains("declared by macro `DECLARE`")));
    }

    #[test]
    fn rewritten_arrays_are_recognised() {
        let swizzle = Swizzle::new(32, 5, 0, 0, 1024).expect("valid");
        let (out, _) = rewritten(TRANSPOSE, |t| swizzle_in_place(t, &swizzle, "bankwise_t"))
            .expect("in place");
        let file = analysed(&out);
        assert!(already_rewritten(&out, &file.parsed.functions[0].arrays[0]));
        let file = analysed(TRANSPOSE);
        assert!(!already_rewritten(
            TRANSPOSE,
            &file.parsed.functions[0].arrays[0]
        ));
    }

    #[test]
    fn bits_are_found_in_one_digit_or_not_at_all() {
        // cube[4][8][32]'s rows: z * 8 + y.
        assert_eq!(bit_owner(&[4, 8], 0, 3), Some((1, 0)));
        assert_eq!(bit_owner(&[4, 8], 3, 5), Some((0, 3)));
        assert_eq!(bit_owner(&[4, 8], 2, 4), None);
        assert_eq!(bit_owner(&[128], 3, 5), Some((0, 0)));
        // A digit below the field that is not a power of two hides the field's position.
        assert_eq!(bit_owner(&[4, 6], 3, 4), None);
    }

    #[test]
    fn definitions_start_above_their_template_head_and_comments() {
        let text = "int x;\n\n// doc\n// bankwise: block=16x16\ntemplate <int T>\n__global__ void k() {}\n";
        let start = text.find("__global__").expect("kernel");
        let doc = text.find("// doc").expect("doc");
        assert_eq!(definition_start(text, start), Some(doc));
        let plain = "#define N 4\n__global__ void k() {}\n";
        let start = plain.find("__global__").expect("kernel");
        assert_eq!(definition_start(plain, start), Some(start));
        let block = "x;\n/* one\n   two */\nextern \"C\" __global__ void k() {}\n";
        let start = block.find("__global__").expect("kernel");
        assert_eq!(definition_start(block, start), block.find("/*"));
        let crowded = "} __global__ void k() {}";
        assert_eq!(definition_start(crowded, 2), None);
    }

    #[test]
    fn extents_grow_with_parentheses_only_where_needed() {
        assert_eq!(plus("TILE", 1), "TILE + 1");
        assert_eq!(plus("TILE + 1", 1), "TILE + 1 + 1");
        assert_eq!(plus("1 << 10", 31), "(1 << 10) + 31");
        assert_eq!(
            plus("sizeof(float4) / sizeof(float)", 1),
            "sizeof(float4) / sizeof(float) + 1"
        );
    }

    #[test]
    fn linear_indices_read_as_written() {
        let var = |s: &str| MapExpr::Var(s.into());
        let two = linear_expr(&[var("r"), var("c")], &["C".into(), "C".into()]);
        assert_eq!(linear_text(&two), "r * C + c");
        let three = linear_expr(
            &[var("z"), var("y"), var("x")],
            &["4".into(), "8".into(), "32".into()],
        );
        assert_eq!(linear_text(&three), "(z * 8 + y) * 32 + x");
    }
}

//! Forms that change a declaration: the extents as written (`declarator`), and the padded
//! declaration `[R][C]` → `[R][C + p]`.
use super::*;

/// The byte ranges of the extents inside the brackets of the array's declarator, outermost
/// first.
pub(super) fn declared_extents(target: &Target) -> Result<Vec<Range<usize>>, String> {
    declarator(target).map(|(_, extents)| extents)
}

/// Where the array's name starts in its declarator, and [`declared_extents`].
pub(in crate::rewrite) fn declarator(
    target: &Target,
) -> Result<(usize, Vec<Range<usize>>), String> {
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
            .map(|r| crate::parse::one_line(&text[r.clone()]))
            .collect();
        let expected: Vec<String> = array
            .dim_texts
            .iter()
            .map(|t| crate::parse::one_line(t))
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

pub(super) fn matching_bracket(text: &str, open: usize) -> Option<usize> {
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
pub(super) fn extent_kind(text: &str) -> (bool, bool) {
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
pub(super) fn plus(text: &str, k: u64) -> String {
    let (_, additive) = extent_kind(text);
    format!("{} + {k}", parenthesised(text, additive))
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
        // Rows grown in the declaration hold every access of any extents.
        proven_dims: Some(Vec::new()),
        assumptions: Vec::new(),
    })
}

//! The index swizzle in place: `t[r][c]` → `t[r][c ^ f(r)]`, one subscript changed and the
//! declaration kept.
use super::*;

/// The digit of a mixed-radix number (digits `radix`, most significant first, the first one
/// unbounded) that holds all the bits `[lo, hi)`, with the digit's lowest bit; `None` when
/// they straddle digits or a digit below them is not a power of two.
pub(super) fn bit_owner(radix: &[u64], lo: u32, hi: u32) -> Option<(usize, u32)> {
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
pub(super) fn linear_expr(indices: &[MapExpr], extents: &[String]) -> MapExpr {
    let mut linear = indices[0].clone();
    for (index, extent) in indices.iter().zip(extents).skip(1) {
        linear =
            MapExpr::binary(BinOp::Mul, linear, MapExpr::Var(extent.clone())).plus(index.clone());
    }
    linear
}

/// The new subscript of the swizzled dimension, as a map expression over the access's index
/// texts: `(column digit, expression, the dimensions it reads)`. `indices` are the operands
/// of one access.
pub(super) fn swizzled_index(
    swizzle: &Swizzle,
    dims: &[u64],
    extents: &[String],
    indices: &[String],
) -> Result<(usize, MapExpr, Vec<usize>), String> {
    let split = (1..dims.len())
        .find(|&d| dims[d..].iter().product::<u64>() == swizzle.columns)
        .ok_or_else(|| format!("rows of {} elements are not a row pitch", swizzle.columns))?;
    let field = swizzle.row_shift..swizzle.row_shift + swizzle.bits;
    let vars: Vec<MapExpr> = indices.iter().map(|t| MapExpr::Var(t.clone())).collect();
    let (row, row_max, shift, rows) = match bit_owner(&dims[..split], field.start, field.end) {
        Some((digit, offset)) => (
            vars[digit].clone(),
            dims[digit] - 1,
            swizzle.row_shift - offset,
            vec![digit],
        ),
        None => (
            linear_expr(&vars[..split], &extents[..split]),
            dims[..split].iter().product::<u64>() - 1,
            swizzle.row_shift,
            (0..split).collect(),
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
    // The column's extent bounds what the XOR may write; the rows' extents, what it reads
    // (the mask is left out where they keep the field within it).
    let mut reads = rows;
    reads.push(column);
    Ok((
        column,
        vars[column]
            .clone()
            .xor(masked.shift_left(swizzle.base - offset)),
        reads,
    ))
}

/// Names for the subscripts of a marker's description: `[i][j]`, `[i][j][k]`.
pub(super) fn placeholder_names(rank: usize) -> Vec<String> {
    (0..rank)
        .map(|d| {
            char::from_u32('i' as u32 + d as u32).map_or_else(|| format!("i{d}"), |c| c.to_string())
        })
        .collect()
}

pub(super) fn subscripts_text(indices: &[String]) -> String {
    indices.iter().map(|i| format!("[{i}]")).collect()
}

/// `t[r][c]` → `t[r][c ^ f(r)]` for a swizzle of rows of one of the array's row pitches;
/// accesses through pointers go through the same map as a map function named `name`.
pub fn swizzle_in_place(target: &Target, swizzle: &Swizzle, name: &str) -> Result<Rewrite, String> {
    let dims = target.dims()?;
    let accesses = target.subscripts()?;
    let extents = target.extent_texts();
    let mut edits = Vec::new();
    let mut rewritten = Vec::new();
    for access in accesses {
        let subscripts = access.indices.unpack();
        let indices: Vec<String> = subscripts
            .iter()
            .map(|e| target.source.operand(e))
            .collect();
        let (column, index, _) = swizzled_index(swizzle, &dims, &extents, &indices)?;
        // The row subscripts now appear twice.
        if let Some(impure) = subscripts.iter().find(|e| !e.is_pure()) {
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
    let (column, index, reads) = swizzled_index(swizzle, &dims, &extents, &names)?;
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
    // A map function on the linear index (for accesses through pointers) is proven on the
    // whole extent only.
    let proven_dims = function.is_none().then_some(reads);
    Ok(Rewrite {
        form: FormKind::SwizzleInPlace,
        edits,
        function,
        accesses: rewritten,
        extra_bytes: 0,
        split_into: Vec::new(),
        proven_dims,
        assumptions: Vec::new(),
    })
}

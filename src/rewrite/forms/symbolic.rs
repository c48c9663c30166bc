//! Maps written in the source's own names (docs/ARCHITECTURE.md §7): a map function whose row
//! length is the declaration's extents as written (`(BLOCK_SIZE + 1)`) rather than the number
//! bankwise evaluated them to, where that keeps it a bijection for every value of them, so
//! that it needs no guard.
use super::*;
use crate::parse::identifier_tokens;
use crate::solve::MapKind;

/// The expression of `map` with its row length as the declaration writes it, when the map is
/// a bijection for every value of the names in it: a row skew of the array's innermost
/// dimensions rotates each row, whatever its length, and such rows tile the array for any
/// extents. Only macros defined above the map function can be named there (not template
/// parameters or local constants). A power of two stays a number: its `%` is a mask.
pub(super) fn symbolic(target: &Target, map: &dyn AddressMap) -> Option<MapExpr> {
    if map.kind() != MapKind::Skew {
        return None;
    }
    let params = map.params();
    let (columns, shift) = (params["columns"].as_u64()?, params["shift"].as_u64()?);
    if columns.is_power_of_two() {
        return None;
    }
    let dims = target.dims().ok()?;
    let split = (1..dims.len()).find(|&d| dims[d..].iter().product::<u64>() == columns)?;
    let written = &target.array.dim_texts[split..];
    let line_of_map = target.source.text[..target.function_at?]
        .matches('\n')
        .count()
        + 1;
    let visible = |name: &str| {
        target
            .constants
            .macro_named(name)
            .is_some_and(|m| m.params.is_none() && m.line < line_of_map)
    };
    let names_only_macros = written
        .iter()
        .all(|text| identifier_tokens(text).all(visible));
    if !names_only_macros {
        return None;
    }
    let factors: Vec<String> = written
        .iter()
        .map(|t| parenthesised(t, extent_kind(t).0))
        .collect();
    // An operand of `%` and `/`: a product binds looser than they do from the left.
    let row_length = MapExpr::Var(parenthesised(&factors.join(" * "), factors.len() == 1));
    let column = MapExpr::binary(BinOp::Rem, MapExpr::Index, row_length.clone());
    let row = MapExpr::binary(BinOp::Div, MapExpr::Index, row_length.clone());
    let rotated = MapExpr::binary(
        BinOp::Rem,
        column.clone().plus(row.times(shift)),
        row_length,
    );
    Some(MapExpr::Index.minus(column).plus(rotated))
}

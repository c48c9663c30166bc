use super::*;
use crate::solve::expr::Expr as MapExpr;

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
    let text =
        "int x;\n\n// doc\n// bankwise: block=16x16\ntemplate <int T>\n__global__ void k() {}\n";
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
    // Comments between the template head and the function (found by the fuzzer): the map
    // function goes above the head, never between it and its function.
    let inside = "int x;
template <int T> // the tile
// bankwise: block=16x16
/* note */
__global__ void k() {}
";
    let start = inside.find("__global__").expect("kernel");
    assert_eq!(definition_start(inside, start), inside.find("template"));
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

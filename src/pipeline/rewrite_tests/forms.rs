//! The rewrite forms on whole kernels (the forms' tests that need the analysis to build
//! their input).
use crate::rewrite::forms::*;
use crate::rewrite::Edit;

use crate::analysis::{analyse_text, AnalysedFile, Options};
use crate::block::ConfigBlocks;
use crate::rewrite::edit::apply;
use crate::solve::maps::{BitVectorXor, Padding, Swizzle};
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
        constants: &file.parsed.constants,
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
    let (out, rewrite) =
        rewritten(TRANSPOSE, |t| swizzle_in_place(t, &swizzle, "bankwise_t")).expect("in place");
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
    assert!(out.contains("cube[threadIdx.z][threadIdx.y][threadIdx.x ^ (threadIdx.y << 2)] = 1;"));
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
    let (out, rewrite) = rewritten(TRANSPOSE, |t| padded_declaration(t, &padding)).expect("padded");
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
         __host__ __device__ __forceinline__ int bankwise_s(int i) { return i ^ ((i >> 1) & 31); }\n\n\
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
    let (out, _) =
        rewritten(TRANSPOSE, |t| swizzle_in_place(t, &swizzle, "bankwise_t")).expect("in place");
    let file = analysed(&out);
    assert!(already_rewritten(
        &Source::new(&out),
        &file.parsed.functions[0].arrays[0]
    ));
    let file = analysed(TRANSPOSE);
    assert!(!already_rewritten(
        &Source::new(TRANSPOSE),
        &file.parsed.functions[0].arrays[0]
    ));
}

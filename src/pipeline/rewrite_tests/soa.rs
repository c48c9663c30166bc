//! The struct-of-arrays rewrite on whole kernels: when the layout applies, its edits, and
//! `fix` with it (the rewrite's tests that need the analysis and the plan).

use crate::analysis::{analyse_text, Options};
use crate::block::ConfigBlocks;
use crate::parse::AccessKind;
use crate::pipeline::{fix_text, FileFix, FixOptions};
use crate::plan::{Action, ArrayOutcome};
use crate::solve::choose::choose;
use crate::solve::kernel::{choose_kernel, TIE_BREAK_LAMBDA};
use crate::solve::soa::{layout, posed, StructOfArrays};
use crate::solve::{ArrayProblem, Family};
use std::path::Path;

const RECORD: &str = "struct R { float v, x, y, z; };\n";

/// A kernel of 128 threads around `body`, with `decl` before it.
fn kernel(decl: &str, body: &str) -> String {
    format!(
        "{RECORD}// bankwise: block=128\n__global__ void k(const R *in, float *out)\n{{\n    \
         {decl}\n    const int t = threadIdx.x;\n{body}}}\n"
    )
}

/// The layout of the first array of `k`, or why it does not apply.
fn layout_of(text: &str) -> Result<StructOfArrays, String> {
    let file = analyse_text(
        Path::new("t.cu"),
        text,
        &Options::default(),
        &ConfigBlocks::default(),
    );
    let function = &file.parsed.functions[0];
    layout(function, &function.arrays[0], &file.parsed.constants.types)
}

fn fixed(text: &str) -> FileFix {
    fix_text(
        Path::new("t.cu"),
        text,
        &FixOptions::default(),
        &ConfigBlocks::default(),
    )
    .expect("fixes and validates")
}

fn outcome<'a>(file: &'a FileFix, array: &str) -> &'a ArrayOutcome {
    file.arrays
        .iter()
        .find(|a| a.array == array)
        .expect("the array is reported")
}

const BODIES: &str = "    __shared__ R a[128];";

#[test]
fn member_reads_lose_their_four_way_conflict_and_record_stores_keep_their_wavefronts() {
    let text = kernel(
        BODIES,
        "    a[t] = in[t];\n    __syncthreads();\n    out[t] = a[t].v + a[t].x;\n    \
         out[t + 128] = a[t].y * a[t].z;\n",
    );
    let file = fixed(&text);
    let a = outcome(&file, "a");
    assert_eq!(a.action, Action::Rewritten);
    assert_eq!(
        a.map.as_ref().map(|m| m.strategy),
        Some(Family::StructOfArrays)
    );
    // Four warps, each read 4-way: 3 excess wavefronts per warp and read.
    let excess: Vec<_> = a
        .accesses
        .iter()
        .map(|x| (x.excess_before, x.excess_after))
        .collect();
    assert_eq!(
        excess,
        vec![
            (Some(0), Some(0)),
            (Some(12), Some(0)),
            (Some(12), Some(0)),
            (Some(12), Some(0)),
            (Some(12), Some(0))
        ]
    );
    assert_eq!(a.split_into, vec!["a_v", "a_x", "a_y", "a_z"]);
    assert!(file
        .output()
        .contains("    __shared__ float a_v[128], a_x[128], a_y[128], a_z[128];\n"));
    assert!(file.output().contains(
        "    {\n        const R bankwise_a = in[t];\n        a_v[t] = bankwise_a.v;\n        \
         a_x[t] = bankwise_a.x;\n        a_y[t] = bankwise_a.y;\n        \
         a_z[t] = bankwise_a.z;\n    }\n"
    ));
    assert!(file.output().contains("out[t] = a_v[t] + a_x[t];"));
    // The 16-byte store took 4 wavefronts per warp (4 phases of 8 lanes); its 4 member
    // stores take one each.
    let wavefronts = |text: &str, arrays: &[&str]| -> u64 {
        let analysed = analyse_text(
            Path::new("t.cu"),
            text,
            &Options::default(),
            &ConfigBlocks::default(),
        );
        let function = &analysed.parsed.functions[0];
        function
            .arrays
            .iter()
            .zip(&analysed.per_function[0].costs)
            .filter(|(array, _)| arrays.contains(&array.name.as_str()))
            .flat_map(|(array, costs)| array.accesses.iter().zip(costs))
            .filter(|(access, _)| access.kind == AccessKind::Store)
            .map(|(_, cost)| cost.as_ref().map_or(0, |c| c.wavefronts))
            .sum()
    };
    assert_eq!(wavefronts(&text, &["a"]), 4 * 4);
    assert_eq!(
        wavefronts(file.output(), &["a_v", "a_x", "a_y", "a_z"]),
        4 * 4
    );
    // Idempotent: the member arrays have no conflicts left.
    assert!(!fixed(file.output()).changed());
}

/// A member no access reads would leave an array that is only written: shared memory for
/// nothing, and nvcc's #550-D warning, which fails a `-Werror` build. It gets no array and
/// the record stores skip it; stored on its own, it keeps the layout out.
#[test]
fn members_never_read_get_no_array_and_their_stores_are_dropped() {
    let text = kernel(
        BODIES,
        "    a[t] = in[t];\n    __syncthreads();\n    out[t] = a[t].v + a[t].x;\n",
    );
    let file = fixed(&text);
    let a = outcome(&file, "a");
    assert_eq!(a.action, Action::Rewritten);
    assert_eq!(a.split_into, vec!["a_v", "a_x"]);
    assert!(file.output().contains(
        "// bankwise: `a` is stored as a struct of arrays: `a_v`, `a_x` (never read, so not \
         stored: `.y`, `.z`)\n"
    ));
    assert!(file
        .output()
        .contains("    __shared__ float a_v[128], a_x[128];\n"));
    assert!(file.output().contains(
        "    {\n        const R bankwise_a = in[t];\n        a_v[t] = bankwise_a.v;\n        \
         a_x[t] = bankwise_a.x;\n    }\n"
    ));
    let alone = kernel(
        BODIES,
        "    a[t] = in[t];\n    a[t].y = 1.0f;\n    __syncthreads();\n    out[t] = a[t].v;\n",
    );
    assert_eq!(
        layout_of(&alone).map(|_| ()),
        Err(
            "line 8: member `y` is written there but never read: its own array would be set \
             and never used"
                .into()
        )
    );
}

#[test]
fn every_kind_of_member_access_and_a_record_read_are_rewritten() {
    let text = kernel(
        BODIES,
        "    if (t < 128) a[t] = in[t];\n    __syncthreads();\n    \
         atomicAdd(&a[(t + 1) % 128].v, 1.0f);\n    a[t].x += 2.0f;\n    a[t].y++;\n    \
         R r = a[127 - t];\n    out[t] = r.v + a[t].z;\n",
    );
    let file = fixed(&text);
    let a = outcome(&file, "a");
    assert_eq!(a.action, Action::Rewritten, "{:?}", a.reason);
    for expected in [
        "if (t < 128) { const R bankwise_a = in[t]; a_v[t] = bankwise_a.v; \
         a_x[t] = bankwise_a.x; a_y[t] = bankwise_a.y; a_z[t] = bankwise_a.z; }\n",
        "atomicAdd(&a_v[(t + 1) % 128], 1.0f);",
        "a_x[t] += 2.0f;",
        "a_y[t]++;",
        "R r = R{a_v[127 - t], a_x[127 - t], a_y[127 - t], a_z[127 - t]};",
        "out[t] = r.v + a_z[t];",
    ] {
        assert!(
            file.output().contains(expected),
            "{expected}\n{}",
            file.output()
        );
    }
    let texts: Vec<&str> = a
        .accesses
        .iter()
        .filter_map(|x| x.new_text.as_deref())
        .collect();
    assert!(texts.contains(&"R{a_v[127 - t], a_x[127 - t], a_y[127 - t], a_z[127 - t]}"));
}

#[test]
fn a_store_whose_index_has_side_effects_evaluates_it_once_after_the_value() {
    let text = kernel(
        BODIES,
        "    int i = t;\n    a[i++] = in[t];\n    __syncthreads();\n    out[t] = a[t].v;\n",
    );
    let file = fixed(&text);
    assert_eq!(outcome(&file, "a").action, Action::Rewritten);
    assert!(file.output().contains(
        "const R bankwise_a = in[t];\n        const int bankwise_i0 = i++;\n        \
         a_v[bankwise_i0] = bankwise_a.v;"
    ));
}

#[test]
fn members_of_different_types_get_a_declaration_each_and_names_do_not_collide() {
    let text = "struct C { int count; float sum; };\nint s_count;\n\
        // bankwise: block=64\n__global__ void k(float *out)\n{\n    \
        __shared__ C s[64];\n    s[threadIdx.x].count = 0;\n    \
        s[threadIdx.x].sum = out[threadIdx.x];\n    \
        out[threadIdx.x] = s[threadIdx.x].sum + s[threadIdx.x].count;\n}\n";
    let file = fixed(text);
    let s = outcome(&file, "s");
    assert_eq!(s.action, Action::Rewritten, "{:?}", s.reason);
    assert_eq!(s.split_into, vec!["s_count_2", "s_sum"]);
    assert!(file
        .output()
        .contains("    __shared__ int s_count_2[64];\n    __shared__ float s_sum[64];\n"));
}

#[test]
fn the_layout_is_refused_with_the_reason() {
    let refused = |decl: &str, body: &str, types: &str| {
        layout_of(&format!("{types}{}", kernel(decl, body))).expect_err("refused")
    };
    assert_eq!(
        refused(
            "__shared__ Q a[128];",
            "    a[t].v[0] = 1;\n",
            "struct Q { float v[4]; };\n"
        ),
        "member `v` of `Q` is an array"
    );
    assert_eq!(
        refused(
            "__shared__ P a[128];",
            "    a[t].x = 1;\n",
            "struct P { char c; float x; };\n"
        ),
        "`P` has padding or overlapping members at member `x` (byte 4, not 1)"
    );
    assert_eq!(
        refused(
            "__shared__ P a[128];",
            "    a[t].x = 1;\n",
            "struct P { float x; char c; };\n"
        ),
        "`P` has 3 padding bytes: its members fill 5 of its 8"
    );
    assert_eq!(
        refused(
            "__shared__ N a[128];",
            "    a[t].p.x = 1;\n",
            "struct N { float2 p; };\n"
        ),
        "member `p` of `N` is a `float2`, not a scalar"
    );
    assert_eq!(
        refused(
            "__shared__ B a[128];",
            "    a[t].f = 1;\n",
            "struct B { int f : 4; };\n"
        ),
        "`B` has no known size"
    );
    assert_eq!(
        refused("__shared__ float2 a[128];", "    a[t].x = 1;\n", ""),
        "the element type `float2` is not a struct"
    );
    // `P{…}` would call no constructor of these, and their copies may do more than copy.
    let more_than_data = "declares more than data members (a constructor, a member \
        function, an operator or a base class): its copies may not go member by member";
    for types in [
        "struct C { float v, x; __device__ C() {} };\n",
        "struct O { float v, x;\n  \
         __device__ O &operator=(const O &o) { v = o.x; return *this; } };\n",
        "struct Base { float v; };\nstruct D : Base { float x; };\n",
    ] {
        let name = &types[types.rfind("struct ").unwrap_or(0) + 7..][..1];
        assert_eq!(
            refused(
                &format!("__shared__ {name} a[128];"),
                "    a[t].x = 1;\n",
                types
            ),
            format!("`{name}` {more_than_data}")
        );
    }
    assert!(
        refused(BODIES, "    float *p = (float *)a;\n    p[t] = 1;\n", "")
            .starts_with("it escapes: cast to `float *`")
    );
    assert_eq!(
        refused(BODIES, "    R r = in[t];\n    a[t] += r;\n", ""),
        "line 8: `a[t]` updates a whole record in place"
    );
    assert_eq!(
        refused(
            BODIES,
            "    int i = t;\n    R r = a[i++];\n    out[t] = r.v;\n",
            ""
        ),
        "line 8: `a[i++]` reads a whole record at an index with side effects"
    );
    assert_eq!(
        refused(
            BODIES,
            "    out[t] = f(a[t]);\n",
            "__device__ float f(R r);\n"
        ),
        "line 8: `a[t]` passes a whole record to a function"
    );
    assert_eq!(
        refused(BODIES, "    out[t] = (a[t] = in[t]).v;\n", ""),
        "line 7: `a[t]` stores a whole record inside a larger expression"
    );
    assert_eq!(
        refused(BODIES, "    const R &r = a[t];\n    out[t] = r.v;\n", ""),
        "it escapes: bound to reference `r` at line 7 (`const R &r = a[t];`)"
    );
    assert_eq!(
        refused(
            "__shared__ R a[128]; __shared__ int idx[128];",
            "    idx[t] = t;\n    a[idx[t]] = in[t];\n",
            ""
        ),
        "line 8: `a[idx[t]]` has an index that reads shared memory, which the rewrite \
         would copy"
    );
}

/// `a[2t].v`: the records' words 8 apart, 4-way. A map of records reaches 2-way (only
/// even banks hold a `.v`); so does the member array `a_v[2t]` (stride 2): the map wins the
/// tie, per array and per kernel.
#[test]
fn a_map_of_records_wins_a_tie_with_the_layout() {
    let text = "struct S { float v, w; };\n// bankwise: block=32\n\
        __global__ void k(float *out)\n{\n    __shared__ S a[64];\n    \
        out[threadIdx.x] = a[2 * threadIdx.x].v;\n}\n";
    let file = analyse_text(
        Path::new("t.cu"),
        text,
        &Options::default(),
        &ConfigBlocks::default(),
    );
    let function = &file.parsed.functions[0];
    let affine = file.per_function[0].affine.as_ref().expect("analysed");
    let config = Options::default().bank;
    let mut problem =
        ArrayProblem::from_analysis(affine, 0, &function.arrays[0], &config).expect("posed");
    problem.struct_of_arrays = posed(function, 0, affine, &file.parsed.constants.types, &config);
    let choice = choose(&problem).expect("solvable");
    assert_eq!(choice.excess_before, 3);
    let layout = choice
        .families
        .iter()
        .find(|f| f.strategy == Family::StructOfArrays)
        .expect("listed");
    assert_eq!(layout.excess_after(), Some(1));
    assert_eq!(choice.chosen().excess_after(), Some(1));
    assert_ne!(choice.chosen().strategy, Family::StructOfArrays);
    let picked =
        choose_kernel(std::slice::from_ref(&choice), 0, TIE_BREAK_LAMBDA).expect("feasible");
    assert_ne!(
        choice.families[picked.picks[0]].strategy,
        Family::StructOfArrays
    );
    assert_eq!(picked.excess, 1);
}

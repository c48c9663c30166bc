//! The conflict figures of whole kernels through the analysis: unknown values evaluated over
//! the residues that matter, and members of records (the cost stage's tests that need the
//! front end and the affine stage to build their input).
use crate::analysis::{analyse_text, AnalysedFile, KeepAffine, Options};
use crate::block::ConfigBlocks;
use std::path::Path;

/// `source` analysed as `k.cu`, with no options.
fn analyse(source: &str) -> AnalysedFile {
    analyse_text(
        Path::new("k.cu"),
        source,
        &Options::default(),
        &ConfigBlocks::default(),
    )
}

mod unknown_values {
    use super::analyse;
    use crate::cost::*;

    /// (excess, how each unknown value was evaluated) of every access of the first kernel.
    fn figures(source: &str) -> Vec<(u64, Vec<(String, Evaluated)>)> {
        let file = analyse(source);
        file.per_function[0]
            .costs
            .iter()
            .flatten()
            .map(|cost| {
                let cost = cost.as_ref().expect("simulated");
                let unknowns = cost
                    .unknown_values
                    .iter()
                    .map(|u| (u.name.clone(), u.evaluated.clone()))
                    .collect();
                (cost.excess(), unknowns)
            })
            .collect()
    }

    #[test]
    fn unknown_values_are_evaluated_over_every_residue_that_matters() {
        let source = r#"
// bankwise: block=32
__global__ void k(float *out, int stride, int offset, int n) {
    __shared__ float s[4096];
    __shared__ char c[4096];
    out[0] = s[threadIdx.x * stride];
    out[1] = s[threadIdx.x + offset];
    out[2] = c[4 * threadIdx.x + offset];
    if (threadIdx.x < n)
        s[threadIdx.x] = 0.0f;
}
"#;
        let residues = |name: &str, modulus, worst| {
            vec![(name.to_string(), Evaluated::Residues { modulus, worst })]
        };
        assert_eq!(
            figures(source),
            vec![
                // A stride that is a multiple of 32 puts every lane in one bank.
                (31, residues("stride", 32, 0)),
                // A 4-byte index moved by any offset keeps its banks' pattern.
                (0, vec![("offset".to_string(), Evaluated::AnyValue)]),
                (0, vec![("n".to_string(), Evaluated::InConditions)]),
                // 1-byte elements 4 apart: an offset of 1..3 only moves within words.
                (0, residues("offset", 4, 0)),
            ]
        );
    }
}

mod members {
    use super::analyse;
    use crate::bank::BankConfig;
    use crate::cost::*;

    /// What one access of the first kernel's first array does in warp 0's first request.
    #[derive(Debug, PartialEq)]
    struct Lanes {
        /// The first 4-byte word each lane touches.
        words: Vec<i64>,
        /// Whether the lanes carry unit indices (a varying member subscript).
        varying: bool,
        /// Conflict degree, wavefronts and excess over the block.
        figures: (u32, u64, u64),
    }

    fn lanes(source: &str) -> Vec<Result<Lanes, String>> {
        let file = analyse(source);
        let array = &file.parsed.functions[0].arrays[0];
        let affine = file.per_function[0]
            .affine
            .as_ref()
            .expect("block shape known");
        let config = BankConfig::default();
        array
            .accesses
            .iter()
            .enumerate()
            .map(|(i, access)| {
                let site = affine.sites[0][i].as_ref().expect("reached");
                let requests = SiteRequests::new(affine, site, array, access, &config)?;
                let units = requests.units();
                let mut words = None;
                requests.for_each(|_, _, lanes| {
                    words.get_or_insert_with(|| {
                        lanes
                            .iter()
                            .map(|l| {
                                let unit = units.of(l.expect("every lane active"));
                                unit * i64::from(units.unit_bytes) / 4
                            })
                            .collect()
                    });
                });
                let cost = measure(&requests, &config)?;
                Ok(Lanes {
                    words: words.expect("one request"),
                    varying: requests.varying_member().is_some(),
                    figures: (cost.conflict_degree, cost.wavefronts, cost.excess()),
                })
            })
            .collect()
    }

    #[test]
    fn a_member_array_subscript_picks_the_word_of_the_element() {
        let source = r#"
#define K 1
struct __align__(16) Quad { float v[4]; };
// bankwise: block=32
__global__ void k(float *out) {
    __shared__ Quad q[32];
    int t = threadIdx.x;
    q[t / 4].v[t % 4] = 1.0f;
    out[t] = q[t / 4].v[3 - t % 4];
    out[t] = q[t].v[t % 2];
    out[t] = q[t].v[K];
}
"#;
        let all = lanes(source);
        // Lane t writes word t: the quads tile the banks.
        let store = all[0].as_ref().expect("simulated");
        assert_eq!(store.words, (0..32).collect::<Vec<i64>>());
        assert_eq!(store.figures, (1, 1, 0));
        assert!(store.varying);
        // Each quad read backwards: lane t reads word 4·(t/4) + 3 − t%4.
        let reversed = all[1].as_ref().expect("simulated");
        assert_eq!(reversed.words[..8], [3, 2, 1, 0, 7, 6, 5, 4]);
        assert_eq!(reversed.figures, (1, 1, 0));
        // Word 4t + t%2: lanes 0, 8, 16, 24 all hit bank 0 (words 0, 32, 64, 96).
        let alternating = all[2].as_ref().expect("simulated");
        assert_eq!(alternating.words[..4], [0, 5, 8, 13]);
        assert_eq!(alternating.figures, (4, 4, 3));
        // A constant subscript (a macro) folds into the unit: the lanes stay elements.
        let constant = all[3].as_ref().expect("simulated");
        assert_eq!(constant.words[..3], [1, 5, 9]);
        assert_eq!(constant.figures, (4, 4, 3));
        assert!(!constant.varying);
    }

    #[test]
    fn a_two_dimensional_member_array_is_linearised_row_major() {
        let source = r#"
struct Tile { float m[4][8]; };
// bankwise: block=32
__global__ void k(float *out) {
    __shared__ Tile g[2];
    int t = threadIdx.x;
    out[t] = g[0].m[t % 4][t / 4];
    out[t] = g[t % 2].m[t / 8][t / 2 % 4];
}
"#;
        let all = lanes(source);
        // Word 8·(t%4) + t/4: a transpose of the 4×8 tile, conflict-free.
        let transposed = all[0].as_ref().expect("simulated");
        assert_eq!(transposed.words[..6], [0, 8, 16, 24, 1, 9]);
        assert_eq!(transposed.figures, (1, 1, 0));
        // Word 32·(t%2) + 8·(t/8) + (t/2)%4: lanes 0 and 1 meet in bank 0 (words 0 and 32).
        let split = all[1].as_ref().expect("simulated");
        assert_eq!(split.words[..4], [0, 32, 1, 33]);
        assert_eq!(split.figures, (2, 2, 1));
    }

    #[test]
    fn a_member_array_of_doubles_is_read_in_two_phases() {
        let source = r#"
struct Acc { float w; double d[3]; };
// bankwise: block=32
__global__ void k(float *out) {
    __shared__ Acc a[16];
    int t = threadIdx.x;
    out[t] = a[t / 2].d[t % 2];
}
"#;
        let all = lanes(source);
        // `d` lies at byte 8 of each 32-byte element: lane t reads the 8 bytes at
        // 32·(t/2) + 8 + 8·(t%2), words 8·(t/2) + 2 + 2·(t%2).
        let read = all[0].as_ref().expect("simulated");
        assert_eq!(read.words[..5], [2, 4, 10, 12, 18]);
        // Each half-warp phase covers 16 elements of 8 words: every bank twice.
        assert_eq!(read.figures, (2, 4, 2));
    }

    #[test]
    fn varying_member_subscripts_are_not_scored_by_maps_on_elements() {
        let source = r#"
struct Quad { float v[4]; };
// bankwise: block=32
__global__ void k(float *out) {
    __shared__ Quad q[32];
    int t = threadIdx.x;
    out[t] = q[t].v[t % 2];
    out[t] = q[t].v[1];
}
"#;
        let file = analyse(source);
        let array = &file.parsed.functions[0].arrays[0];
        let affine = file.per_function[0]
            .affine
            .as_ref()
            .expect("block shape known");
        let config = BankConfig::default();
        let pattern = |i: usize| {
            let site = affine.sites[0][i].as_ref().expect("reached");
            let requests = SiteRequests::new(affine, site, array, &array.accesses[i], &config)?;
            SitePattern::collect(&requests, &config)
        };
        assert_eq!(
            pattern(0),
            Err(
                "member subscripts `.v[t % 2]` vary: a map moves whole elements and is not \
                 scored on the word of the element each lane touches"
                    .to_string()
            )
        );
        assert!(pattern(1).is_ok());
    }

    #[test]
    fn member_subscripts_through_pointers_and_with_side_effects() {
        let source = r#"
struct Quad { float v[4]; };
// bankwise: block=32
__global__ void k(float *out) {
    __shared__ Quad q[8];
    int t = threadIdx.x;
    int j = 0;
    out[t] = q[t / 4].v[j++ % 4];
    Quad *p = &q[t / 4];
    out[t] = p->v[3 - t % 4];
}
"#;
        let all = lanes(source);
        assert_eq!(
            all[0].as_ref().err().map(String::as_str),
            Some(
                "member subscript is data-dependent (`(j++ % 4)`, a member subscript with side \
                 effects)"
            )
        );
        let through_pointer = all[1].as_ref().expect("simulated");
        assert_eq!(through_pointer.words[..8], [3, 2, 1, 0, 7, 6, 5, 4]);
        assert_eq!(through_pointer.figures, (1, 1, 0));
    }
}

mod vectors {
    use super::analyse;

    /// An access's text and its conflict degree and excess over the block, or why it is not
    /// simulated.
    type Figures = (String, Result<(u32, u64), String>);

    /// The figures of every access of the first kernel's first array, and its escapes.
    fn figures(source: &str) -> (Vec<Figures>, Vec<String>) {
        let file = analyse(source);
        let array = &file.parsed.functions[0].arrays[0];
        let accesses = array
            .accesses
            .iter()
            .zip(&file.per_function[0].costs[0])
            .map(|(access, cost)| {
                let cost = cost
                    .as_ref()
                    .map(|c| (c.conflict_degree, c.excess()))
                    .map_err(Clone::clone);
                (access.text.clone(), cost)
            })
            .collect();
        let escapes = array.escapes.iter().map(|e| e.to_string()).collect();
        (accesses, escapes)
    }

    #[test]
    fn vector_views_are_one_request_of_the_vector_per_lane() {
        // One warp: 8 lanes a phase of 16 bytes each. Consecutive float4 fill the 32 banks
        // once; float4 32 bytes apart hit each bank twice; `.y` alone is a 4-byte access at a
        // stride of four floats (8 banks, 4-way).
        let (accesses, escapes) = figures(
            "// bankwise: block=32
__global__ void k(float *out) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    reinterpret_cast<float4 *>(s)[t] = make_float4(0, 0, 0, 0);
    float4 a = *(float4 *)&s[t * 8];
    out[t] = a.x + reinterpret_cast<float4 *>(&s[256])[t].y;
}",
        );
        assert!(escapes.is_empty(), "{escapes:?}");
        assert_eq!(
            accesses,
            [
                ("reinterpret_cast<float4 *>(s)[t]".to_string(), Ok((1, 0))),
                ("*(float4 *)&s[t * 8]".to_string(), Ok((2, 4))),
                (
                    "reinterpret_cast<float4 *>(&s[256])[t].y".to_string(),
                    Ok((4, 3))
                ),
            ]
        );
    }

    #[test]
    fn byte_arrays_read_as_uint4_and_other_widths() {
        // `uint4` over bytes: 16 bytes a lane, consecutive: no conflict. `uint2`: 8 bytes a
        // lane, 16 lanes a phase over 128 bytes: none either. A 12-byte `float3` is not a
        // vector the hardware loads in one request: the array escapes, as before.
        let (accesses, escapes) = figures(
            "// bankwise: block=32
__global__ void k(unsigned int *out) {
    __shared__ unsigned char b[2048];
    int t = threadIdx.x;
    uint4 v = reinterpret_cast<uint4 *>(b)[t];
    uint2 w = reinterpret_cast<uint2 *>(b)[t];
    out[t] = v.x + w.y;
}",
        );
        assert!(escapes.is_empty(), "{escapes:?}");
        assert_eq!(
            accesses,
            [
                ("reinterpret_cast<uint4 *>(b)[t]".to_string(), Ok((1, 0))),
                ("reinterpret_cast<uint2 *>(b)[t]".to_string(), Ok((1, 0))),
            ]
        );
        let (_, escapes) = figures(
            "// bankwise: block=32
__global__ void k(float *out) {
    __shared__ float s[1024];
    out[threadIdx.x] = reinterpret_cast<float3 *>(s)[threadIdx.x].x;
}",
        );
        assert_eq!(escapes.len(), 1, "{escapes:?}");
        // Dynamic shared memory declared as bytes and used as floats: 4-byte accesses, two
        // words apart, each even bank twice.
        let (accesses, escapes) = figures(
            "// bankwise: block=32
__global__ void k(float *out) {
    extern __shared__ unsigned char smem[];
    float *f = reinterpret_cast<float *>(smem);
    f[2 * threadIdx.x] = out[0];
}
void host() { k<<<1, 32, 4096>>>(0); }",
        );
        assert!(escapes.is_empty(), "{escapes:?}");
        assert_eq!(accesses, [("f[2 * threadIdx.x]".to_string(), Ok((2, 1)))]);
        // An `int` array read as `float`: one element per lane, the same words; a stride
        // of four words puts 4 lanes on a bank.
        let (accesses, escapes) = figures(
            "// bankwise: block=32
__global__ void k(float *out) {
    __shared__ int s[512];
    float *f = reinterpret_cast<float *>(s);
    out[0] = f[threadIdx.x * 4];
}",
        );
        assert!(escapes.is_empty(), "{escapes:?}");
        assert_eq!(accesses, [("f[threadIdx.x * 4]".to_string(), Ok((4, 3)))]);
    }

    #[test]
    fn shifts_past_the_width_are_clamped_as_the_gpu_does_and_reported() {
        // `>> 4 + tx` shifts by 4 + tx: lanes 28 and up shift by 32 or more, which the GPU
        // clamps (their index is 0, as lane 0's): C++ leaves it undefined.
        let src = "#define PAD(n) ((n) >> 4 + (n))
// bankwise: block=32
__global__ void k(float *out) {
    __shared__ float s[64];
    out[0] = s[threadIdx.x + PAD(threadIdx.x)];
}";
        let file = analyse(src);
        let function = &file.per_function[0];
        let cost = function.costs[0][0].as_ref().expect("simulated");
        let shift = cost.wide_shift.as_ref().expect("a wide shift");
        assert_eq!(
            (shift.reached, shift.lane, shift.warp, shift.additive),
            (32, 28, 0, true)
        );
        // Every lane counts: none drops out of the request.
        assert_eq!(cost.wavefronts, 1);
    }
}

mod loops {
    use super::analyse;

    /// Per access of the first array: its excess, or why it is not simulated.
    fn excesses(source: &str) -> Vec<Result<u64, String>> {
        let file = analyse(source);
        file.per_function[0].costs[0]
            .iter()
            .map(|c| c.as_ref().map(|c| c.excess()).map_err(|e| e.clone()))
            .collect()
    }

    #[test]
    fn while_and_do_loops_with_a_counter_are_counted() {
        // `i` steps by 4 from 0 below 32: 8 iterations of a 32-way store (31 excess each).
        // `k` runs 0..8 in a do-while whose test holds on entry: linear loads.
        let found = excesses(
            "// bankwise: block=32
__global__ void w(float *o) {
    __shared__ float s[32][32];
    int i = 0;
    while (i < 32) {
        s[threadIdx.x][i] = o[i];
        i += 4;
    }
    int k = 0;
    do {
        o[k] = s[k][threadIdx.x];
        k++;
    } while (k < 8);
}",
        );
        assert_eq!(found, [Ok(248), Ok(0)]);
    }

    #[test]
    fn loops_that_are_not_counted_stay_opaque() {
        // A `continue` skips the step; a do-while whose test fails on entry runs once, not
        // as the `for` it resembles.
        let found = excesses(
            "// bankwise: block=32
__global__ void w(float *o, int n) {
    __shared__ float s[32][32];
    int i = 0;
    while (i < 32) {
        if (o[i] > 0) continue;
        s[threadIdx.x][i] = o[i];
        i += 4;
    }
    int k = 40;
    do {
        o[k] = s[threadIdx.x][k % 32];
        k++;
    } while (k < 8);
}",
        );
        assert!(found.iter().all(Result::is_err), "{found:?}");
    }

    #[test]
    fn a_step_the_analysis_does_not_know_leaves_the_counter_an_unknown_uniform() {
        // `k += stride`: each iteration's `k` is one value for the whole warp, evaluated as
        // any unknown uniform (the store is 32-way whatever it is); `i = tx + …` likewise.
        let file = analyse(
            "// bankwise: block=32
__global__ void w(float *o, int stride) {
    __shared__ float s[32][32];
    for (int k = 0; k < 32; k += stride)
        s[threadIdx.x][k] = o[k];
    for (int i = threadIdx.x; i < 1024; i += stride)
        o[i] = s[0][i % 32];
}",
        );
        let costs = &file.per_function[0].costs[0];
        let store = costs[0].as_ref().expect("simulated");
        assert_eq!((store.conflict_degree, store.excess()), (32, 31));
        assert_eq!(store.per_iteration_of, ["k"]);
        let load = costs[1].as_ref().expect("simulated");
        assert_eq!(load.per_iteration_of, ["i_offset"]);
    }
}

/// The affine analyses a result keeps: all of them, those of functions a fix may rewrite
/// (an array with a simulated conflict), or none; the figures are the same in each.
#[test]
fn keep_affine_keeps_the_analyses_asked_for() {
    let source = "__global__ void conflicted() {\n\
                  __shared__ float t[32][32];\n\
                  t[threadIdx.x][0] = 1.0f;\n\
                  }\n\
                  __global__ void clean() {\n\
                  __shared__ float u[32];\n\
                  u[threadIdx.x] = 1.0f;\n\
                  }\n\
                  void launch() { conflicted<<<1, 32>>>(); clean<<<1, 32>>>(); }\n";
    let with = |keep_affine| {
        let options = Options {
            keep_affine,
            ..Options::default()
        };
        analyse_text(
            Path::new("k.cu"),
            source,
            &options,
            &ConfigBlocks::default(),
        )
    };
    let kept = |file: &AnalysedFile| -> Vec<bool> {
        file.per_function
            .iter()
            .map(|f| f.affine.is_some())
            .collect()
    };
    let excess = |file: &AnalysedFile| -> Vec<Option<u64>> {
        file.per_function
            .iter()
            .map(|f| crate::analysis::array_excess(&f.costs[0]))
            .collect()
    };
    let every = with(KeepAffine::Every);
    assert_eq!(kept(&every), [true, true]);
    assert_eq!(excess(&every), [Some(31), Some(0)]);
    for (keep, expected) in [
        (KeepAffine::ForFixes, [true, false]),
        (KeepAffine::Never, [false, false]),
    ] {
        let file = with(keep);
        assert_eq!(kept(&file), expected, "{keep:?}");
        assert_eq!(excess(&file), excess(&every), "{keep:?}");
    }
}

#[test]
fn a_kernel_body_is_dropped_after_its_batch_unless_a_function_calls_it() {
    // Calling a kernel is not CUDA, but the analysis follows the call like any other.
    let source = "__global__ void called(float *o) { o[threadIdx.x] = 1; }\n\
        __global__ void alone(float *o) { o[threadIdx.x] = 2; }\n\
        __device__ void helper(float *o) { o[0] = 3; }\n\
        __global__ void caller(float *o) { called(o); helper(o); }\n";
    let body_kept = |drop_kernel_bodies: bool| {
        let options = Options {
            drop_kernel_bodies,
            ..Options::default()
        };
        let file = analyse_text(
            Path::new("t.cu"),
            source,
            &options,
            &ConfigBlocks::default(),
        );
        file.parsed
            .functions
            .iter()
            .map(|f| (f.name.clone(), !f.body.is_empty()))
            .collect::<Vec<_>>()
    };
    let names = |kept: &[(&str, bool)]| {
        kept.iter()
            .map(|&(name, kept)| (name.to_string(), kept))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        body_kept(true),
        names(&[
            ("called", true),
            ("alone", false),
            ("helper", true),
            ("caller", false)
        ])
    );
    assert_eq!(
        body_kept(false),
        names(&[
            ("called", true),
            ("alone", true),
            ("helper", true),
            ("caller", true)
        ])
    );
}

//! Pointers into shared arrays: what is followed as an alias and what goes out of sight.
use super::exec::{analyse_function, Callees, FunctionAffine};
use crate::parse::{analyse_source, EscapeKind, ParsedFile};

struct Analysed {
    source: String,
    parsed: ParsedFile,
    affine: FunctionAffine,
}

/// The last function of `source` (helpers first, the kernel last) on `block`.
fn analyse(source: &str, block: [u32; 3]) -> Analysed {
    let parsed = analyse_source(source, &[]);
    let function = parsed.functions.last().expect("a kernel");
    let callees = Callees::new(&parsed.functions);
    let affine = analyse_function(function, &callees, block, &parsed.constants);
    Analysed {
        source: source.to_string(),
        parsed,
        affine,
    }
}

impl Analysed {
    /// (array, source text, kind, normal form, inlined calls) of each access through a pointer.
    fn aliases(&self) -> Vec<(String, String, String, String, usize)> {
        let function = self.parsed.functions.last().expect("a kernel");
        self.affine
            .aliases
            .iter()
            .map(|alias| {
                let form = match &alias.site.form {
                    Ok(form) => form.to_string(),
                    Err(why) => format!("not affine: {why}"),
                };
                (
                    function.arrays[alias.array].name.clone(),
                    self.source[alias.span.start..alias.span.end].to_string(),
                    alias.kind.as_str().to_string(),
                    form,
                    alias.calls.len(),
                )
            })
            .collect()
    }

    /// (array, escape tag) of each pointer that went out of sight.
    fn lost(&self) -> Vec<(String, String)> {
        let function = self.parsed.functions.last().expect("a kernel");
        self.affine
            .pointer_escapes
            .iter()
            .map(|e| {
                (
                    function.arrays[e.array].name.clone(),
                    e.kind.tag().to_string(),
                )
            })
            .collect()
    }

    /// Whether every front-end escape of array `a` that comes from a use of its name was
    /// followed.
    fn all_followed(&self, a: usize) -> bool {
        let array = &self.parsed.functions.last().expect("a kernel").arrays[a];
        array.escapes.iter().all(|e| {
            e.name_use
                .is_some_and(|s| self.affine.followed.contains(&s))
        })
    }
}

fn rows(rows: &[(&str, &str, &str, &str, usize)]) -> Vec<(String, String, String, String, usize)> {
    rows.iter()
        .map(|(a, t, k, f, c)| {
            (
                a.to_string(),
                t.to_string(),
                k.to_string(),
                f.to_string(),
                *c,
            )
        })
        .collect()
}

#[test]
fn row_pointers_column_walks_and_bumped_pointers_are_aliases() {
    let a = analyse(
        r#"
__global__ void k(const float *in, float *out) {
    __shared__ float tile[32][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    float *row = &tile[ty][0];
    row[tx] = in[tx];
    float *same = tile[ty];
    same[tx + 1] += 1.0f;
    const float *p = tile[0] + tx;
    float acc = 0.0f;
    for (int k = 0; k < 4; ++k) {
        acc += *p;
        p += 33;
    }
    const float *q = (const float *)tile + 33 * tx;
    out[tx] = acc + q[ty] + *(q + 1);
}
"#,
        [32, 4, 1],
    );
    assert_eq!(
        a.aliases(),
        rows(&[
            ("tile", "row[tx]", "store", "tx + 33*ty", 0),
            ("tile", "same[tx + 1]", "load", "tx + 33*ty + 1", 0),
            ("tile", "same[tx + 1]", "store", "tx + 33*ty + 1", 0),
            ("tile", "*p", "load", "tx + 33*k", 0),
            ("tile", "q[ty]", "load", "33*tx + ty", 0),
            ("tile", "*(q + 1)", "load", "33*tx + 1", 0),
        ])
    );
    assert_eq!(a.lost(), vec![]);
    assert!(a.all_followed(0));
}

#[test]
fn per_warp_sub_arrays_and_atomics_through_pointers() {
    let a = analyse(
        r#"
#define BINS 64
__global__ void k(const unsigned *data) {
    __shared__ unsigned hist[4 * BINS];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    unsigned *mine = hist + warp * BINS;
    mine[lane] = 0;
    mine[lane + 32] = 0;
    atomicAdd(mine + (data[threadIdx.x] & 63), 1u);
    atomicAdd(&mine[lane], 1u);
}
"#,
        [128, 1, 1],
    );
    let aliases = a.aliases();
    assert_eq!(aliases[0].3, "(tx & 31) + 64*(tx >> 5)");
    assert_eq!(aliases[1].3, "(tx & 31) + 64*(tx >> 5) + 32");
    assert_eq!(aliases[2].2, "atomic");
    assert!(aliases[2].3.starts_with("not affine"));
    assert_eq!(aliases[3].1, "mine[lane]");
    assert_eq!(aliases[3].2, "atomic");
    assert_eq!(a.lost(), vec![]);
}

#[test]
fn device_functions_are_entered_once_per_call_with_their_arguments() {
    let a = analyse(
        r#"
__device__ void put(float *dst, int i, float v) { dst[i] = v; }
__device__ float pair(const float *s, int i) { return s[i] + s[i + 1]; }
__global__ void k(float *out) {
    __shared__ float s[64];
    put(s, threadIdx.x, 1.0f);
    put(s + 32, threadIdx.x, 2.0f);
    out[threadIdx.x] = pair(s, 2 * threadIdx.x);
}
"#,
        [32, 1, 1],
    );
    assert_eq!(
        a.aliases(),
        rows(&[
            ("s", "dst[i]", "store", "tx", 1),
            ("s", "dst[i]", "store", "tx + 32", 1),
            ("s", "s[i]", "load", "2*tx", 1),
            ("s", "s[i + 1]", "load", "2*tx + 1", 1),
        ])
    );
    assert_eq!(a.lost(), vec![]);
    assert!(a.all_followed(0));
}

#[test]
fn pointers_that_leave_the_analysis_are_escapes_with_the_reason() {
    let a = analyse(
        r#"
extern __device__ void sink(float *p);
__device__ float *g_saved;
__device__ void keep(float *p) { g_saved = p; }
#define LOAD(p, i) ((p)[i])
__global__ void k(float *out) {
    __shared__ float cast_to_float3[128];
    __shared__ float unknown_callee[32];
    __shared__ float kept[32];
    __shared__ float maybe_global[32];
    __shared__ float in_macro[32];
    __shared__ float switched_in_loop[32];
    float3 v = ((float3 *)cast_to_float3)[threadIdx.x];
    sink(unknown_callee);
    keep(kept);
    float *p = maybe_global;
    if (threadIdx.x == 0)
        p = out;
    p[threadIdx.x] = v.x;
    float *m = in_macro;
    out[0] = LOAD(m, threadIdx.x);
    float *w = switched_in_loop;
    for (int i = 0; i < 4; ++i) {
        w[threadIdx.x] = 0.0f;
        w = out;
    }
}
"#,
        [32, 1, 1],
    );
    assert_eq!(
        a.lost(),
        vec![
            ("cast_to_float3".to_string(), "cast".to_string()),
            ("unknown_callee".to_string(), "pointer".to_string()),
            ("kept".to_string(), "assigned-to-pointer".to_string()),
            ("maybe_global".to_string(), "pointer".to_string()),
            ("in_macro".to_string(), "pointer".to_string()),
            ("switched_in_loop".to_string(), "pointer".to_string()),
        ]
    );
}

#[test]
fn elements_bound_to_references_are_escapes() {
    let a = analyse(
        r#"
__device__ void bump(float &x) { x += 1.0f; }
__device__ float twice(const float &x) { return 2.0f * x; }
__global__ void k(float *out) {
    __shared__ float bumped[32];
    __shared__ float read_only[32];
    __shared__ float bound[32];
    bump(bumped[threadIdx.x]);
    out[0] = twice(read_only[threadIdx.x]);
    float &r = bound[threadIdx.x];
    r = 0.0f;
}
"#,
        [32, 1, 1],
    );
    assert_eq!(
        a.lost(),
        vec![("bumped".to_string(), "bound-to-reference".to_string())]
    );
    let bound = &a.parsed.functions.last().expect("a kernel").arrays[2];
    assert_eq!(
        bound.escapes[0].kind,
        EscapeKind::BoundToReference("r".into())
    );
}

#[test]
fn functions_returning_the_dynamic_shared_memory_give_an_extern_array() {
    let source = r#"
template <typename T> __device__ T *dynamicShared() {
    extern __shared__ unsigned char bytes[];
    return reinterpret_cast<T *>(bytes);
}
__global__ void k(float *out) {
    double *d = dynamicShared<double>();
    d[2 * threadIdx.x] = 0.0;
    out[threadIdx.x] = d[threadIdx.x];
}
"#;
    let a = analyse(source, [32, 1, 1]);
    let array = &a.parsed.functions.last().expect("a kernel").arrays[0];
    assert_eq!(array.name, "dynamicShared<double>()");
    assert_eq!((array.elem_bytes, array.is_extern), (Some(8), true));
    assert_eq!(
        a.aliases(),
        rows(&[
            (
                "dynamicShared<double>()",
                "d[2 * threadIdx.x]",
                "store",
                "2*tx",
                0
            ),
            ("dynamicShared<double>()", "d[threadIdx.x]", "load", "tx", 0),
        ])
    );
    assert!(a.all_followed(0));

    let two_views = analyse(
        &format!(
            "{source}\n__global__ void both(float *out) {{\n    extern __shared__ float raw[];\n    \
             float *f = dynamicShared<float>();\n    f[threadIdx.x] = raw[threadIdx.x];\n}}\n"
        ),
        [32, 1, 1],
    );
    let arrays = &two_views.parsed.functions.last().expect("a kernel").arrays;
    let shared: Vec<String> = arrays
        .iter()
        .flat_map(|a| &a.escapes)
        .filter(|e| e.name_use.is_none())
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        shared,
        vec![
            "shares the dynamic shared memory with `dynamicShared<float>()` (line 13, `raw`)",
            "shares the dynamic shared memory with `raw` (line 14, `dynamicShared<float>()`)",
        ]
    );
}

#[test]
fn a_pointer_that_reaches_a_name_another_configuration_uses_escapes() {
    // The helper's parameter, a local pointer and an object built from one: each is used
    // where no access of this configuration shows it.
    let analysed = analyse(
        "__device__ void fill(float *h, int t) {
  h[t] = 1;
#ifdef SCALE
  h[t + 32] = 2;
#endif
}
struct Ref { float &v; __device__ Ref(float &x) : v(x) {} };
__device__ void wrap(float *w, int t) {
  Ref r(w[t]);
  r.v = 3;
}
__global__ void k(float *o) {
  __shared__ float a[64], b[64], c[64], d[64];
  fill(a, threadIdx.x);
  float *p = b;
#ifndef SCALE
  p[threadIdx.x] = 1;
#else
  p[threadIdx.x + 1] = 1;
#endif
  wrap(c, threadIdx.x);
  float *q = d;
  q[threadIdx.x] = 4;
  o[0] = a[0] + b[0] + c[0] + d[0];
}",
        [32, 1, 1],
    );
    let lost = analysed.lost();
    for array in ["a", "b", "c"] {
        assert!(
            lost.iter()
                .any(|(name, tag)| name == array
                    && (tag == "inactive-branch" || tag == "unseen-use")),
            "{array}: {lost:?}"
        );
    }
    assert!(lost.iter().all(|(name, _)| name != "d"), "{lost:?}");
    let function = analysed.parsed.functions.last().expect("a kernel");
    let why: Vec<String> = analysed
        .affine
        .pointer_escapes
        .iter()
        .map(|e| {
            let escape = crate::parse::Escape {
                kind: e.kind.clone(),
                at: crate::parse::Location { line: 14, col: 3 },
                text: function.arrays[e.array].name.clone(),
                name_use: None,
                calls: Vec::new(),
            };
            escape.to_string()
        })
        .collect();
    assert!(
        why.contains(
            &"a pointer into it (`a`, line 14) reaches `h`, which line 4 names under `#ifdef \
              SCALE`, a branch this configuration leaves out"
                .to_string()
        ),
        "{why:?}"
    );
    assert!(
        why.iter()
            .any(|w| w.ends_with("reaches `w`, which line 9 gives to the constructor of `r`")),
        "{why:?}"
    );
}

#[test]
fn a_pointer_kept_under_an_undecidable_conditional_or_bound_to_a_reference_escapes() {
    // Both branches of `#if __CUDA_ARCH__` are code; `x` declared in them is seen after the
    // conditional, which the lowered body cannot say. `auto &r = q[i]` writes unseen.
    let analysed = analyse(
        "__global__ void k(float *o) {
  __shared__ float buf[2][64], sel[64];
#if __CUDA_ARCH__ >= 800
  const float *x = buf[0];
#else
  const float *x = buf[1];
#endif
  o[0] = x[threadIdx.x];
  float *q = sel;
  auto &r = q[threadIdx.x];
  r += 1;
}",
        [32, 1, 1],
    );
    let lost = analysed.lost();
    assert!(
        lost.contains(&("buf".to_string(), "unseen-use".to_string())),
        "{lost:?}"
    );
    assert!(
        lost.contains(&("sel".to_string(), "bound-to-reference".to_string())),
        "{lost:?}"
    );
}

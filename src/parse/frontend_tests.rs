//! Front-end tests on small snippets: what counts as an access, what escapes, which
//! constants and launch shapes resolve.
use super::*;

fn parse(src: &str) -> ParsedFile {
    analyse_source(src, &[])
}

fn parse_with(src: &str, defines: &[&str]) -> ParsedFile {
    let defines: Vec<String> = defines.iter().map(|d| d.to_string()).collect();
    analyse_source(src, &defines)
}

/// The block shape of the first launch of `kernel`.
fn launch_block(file: &ParsedFile, kernel: &str) -> Result<[u32; 3], String> {
    file.launches
        .iter()
        .find(|l| l.kernel == kernel)
        .map(|l| l.block.clone())
        .unwrap_or_else(|| panic!("no launch of {kernel}"))
}

fn array<'a>(file: &'a ParsedFile, function: &str, name: &str) -> &'a SharedArray {
    file.functions
        .iter()
        .filter(|f| f.display_name() == function)
        .flat_map(|f| &f.arrays)
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("no array {name} in {function}"))
}

fn kinds(array: &SharedArray) -> Vec<(&'static str, usize)> {
    array
        .accesses
        .iter()
        .map(|a| (a.kind.as_str(), a.at.line))
        .collect()
}

fn escape_tags(array: &SharedArray) -> Vec<&'static str> {
    array.escapes.iter().map(|e| e.kind.tag()).collect()
}

#[test]
fn loads_stores_compound_updates_and_atomics() {
    let file = parse(
        "__global__ void k(float *out, int v) {
  __shared__ float t[32][33];
  __shared__ int h[64];
  t[threadIdx.y][threadIdx.x] = 1.0f;
  out[0] = t[threadIdx.x][threadIdx.y];
  t[0][threadIdx.x] += 2.0f;
  h[threadIdx.x]++;
  --h[1];
  atomicAdd(&h[v & 63], 1);
  atomicCAS(&(h[2]), 0, 1);
  out[1] = sizeof(t) + sizeof(h[0]);
}",
    );
    let t = array(&file, "k", "t");
    assert_eq!(t.dims, vec![Some(32), Some(33)]);
    assert_eq!(t.bytes(), Some(4224));
    assert_eq!(
        kinds(t),
        vec![("store", 4), ("load", 5), ("load", 6), ("store", 6)]
    );
    let h = array(&file, "k", "h");
    assert_eq!(
        kinds(h),
        vec![
            ("load", 7),
            ("store", 7),
            ("load", 8),
            ("store", 8),
            ("atomic", 9),
            ("atomic", 10)
        ]
    );
    assert_eq!(
        h.accesses[4].detail().atomic_op.as_deref(),
        Some("atomicAdd")
    );
    assert_eq!(h.accesses[4].indices.unpack()[0].to_string(), "(v & 63)");
    // A new layout changes `sizeof(t)`, not the size of one scalar element.
    assert_eq!(escape_tags(t), vec!["size-or-type-read"]);
    assert!(!t.rewritable() && h.rewritable());
}

#[test]
fn every_kind_of_escape_is_caught_with_its_line() {
    let file = parse(
        "#define PEEK(i) m[i]
__device__ float use(float *p) { return p[0]; }
__global__ void k(float *out) {
  __shared__ float a[8][8], b[64], c[64], d[64], e[64], f[64], g[64], m[64], ok[64];
  float *pa = &a[0][0];
  float *pb = b + 4;
  out[0] = use(c);
  float *pd = d;
  float4 v = reinterpret_cast<float4*>(e)[0];
  asm volatile(\"st.shared.f32 [%0], %1;\" :: \"r\"(f), \"f\"(1.0f));
  float *pg;
  pg = g;
  out[1] = PEEK(3) + ok[threadIdx.x];
}",
    );
    let expect = [
        ("a", "address-taken", 5),
        ("b", "pointer-arithmetic", 6),
        ("c", "passed-to-function", 7),
        ("d", "assigned-to-pointer", 8),
        ("e", "cast", 9),
        ("f", "asm", 10),
        ("g", "assigned-to-pointer", 12),
        ("m", "macro-body", 1),
    ];
    for (name, tag, line) in expect {
        let arr = array(&file, "k", name);
        assert_eq!(escape_tags(arr), vec![tag], "{name}");
        assert_eq!(arr.escapes[0].at.line, line, "{name}");
        assert!(!arr.rewritable(), "{name}");
    }
    assert_eq!(
        array(&file, "k", "c").reason().unwrap(),
        "passed to `use` at line 7 (`use(c)`)"
    );
    assert_eq!(
        array(&file, "k", "e").reason().unwrap(),
        "cast to `float4*` at line 9 (`reinterpret_cast<float4*>(e)`)"
    );
    let ok = array(&file, "k", "ok");
    assert!(ok.rewritable());
    assert_eq!(kinds(ok), vec![("load", 13)]);
}

#[test]
fn a_name_in_a_branch_this_configuration_leaves_out_escapes() {
    let file = parse(
        "__global__ void k(float *out, float s) {
  __shared__ float t[32][32];
  __shared__ float u[32][32];
  __shared__ float w[32][32];
  t[threadIdx.y][threadIdx.x] = u[threadIdx.y][threadIdx.x] = w[threadIdx.y][threadIdx.x] = 1;
#ifdef SCALE_INPUT
  out[0] = s * t[threadIdx.x][threadIdx.y];
#else
  out[0] = t[threadIdx.x][threadIdx.y];
#endif
#if 0
  out[1] = u[0][threadIdx.x];
#elif 1
  out[1] = w[0][threadIdx.x];
#else
  out[2] = u[1][threadIdx.x];
#endif
}",
    );
    let t = array(&file, "k", "t");
    assert_eq!(escape_tags(t), vec!["inactive-branch"]);
    assert_eq!(
        t.reason().unwrap(),
        "named at line 7 under `#ifdef SCALE_INPUT`, a branch this configuration leaves out; \
         every configuration must be rewritten alike"
    );
    let u = array(&file, "k", "u");
    assert_eq!(escape_tags(u), vec!["inactive-branch"]);
    assert_eq!(u.escapes[0].at.line, 12);
    // `w` is named in the live branch only.
    assert!(array(&file, "k", "w").rewritable());
    // Defined, the other branch is the dead one.
    let defined = parse_with(
        "__global__ void k(float *out) {
  __shared__ float t[32][32];
  t[threadIdx.y][threadIdx.x] = 1;
#ifdef SCALE_INPUT
  out[0] = t[threadIdx.x][threadIdx.y];
#else
  out[0] = t[threadIdx.x][threadIdx.y] + 1;
#endif
}",
        &["SCALE_INPUT"],
    );
    let t = array(&defined, "k", "t");
    assert_eq!(
        t.reason().unwrap(),
        "named at line 7 under `#else after #ifdef SCALE_INPUT`, a branch this configuration \
         leaves out; every configuration must be rewritten alike"
    );
}

#[test]
fn an_extent_that_differs_between_nvccs_passes_escapes() {
    let src = "#if __CUDA_ARCH__ >= 800
#define TILE 64
#else
#define TILE 32
#endif
#define ROWS (TILE / 4)
#ifdef __CUDA_ARCH__
#define WIDTH 32
#else
#define WIDTH 32
#endif
__global__ void k(float *o) {
  __shared__ float t[ROWS][33];
  __shared__ float u[WIDTH];
  t[threadIdx.x % 8][threadIdx.x] = u[threadIdx.x] = 1;
#if __CUDA_ARCH__ >= 700
  o[0] = t[0][threadIdx.x] + u[threadIdx.x];
#else
  o[0] = t[1][threadIdx.x] + u[0];
#endif
}";
    let file = parse(src);
    let t = array(&file, "k", "t");
    assert_eq!(escape_tags(t), vec!["ambiguous-extent"]);
    assert_eq!(
        t.reason().unwrap(),
        "its extent uses `TILE`, which `#if __CUDA_ARCH__ >= 800` defines two ways: nvcc's \
         passes (host, each architecture) see different sizes"
    );
    // The same definition twice is one extent; both branches of `__CUDA_ARCH__` are code
    // nvcc compiles, so both are accesses.
    let u = array(&file, "k", "u");
    assert!(u.rewritable());
    assert_eq!(kinds(u), vec![("store", 15), ("load", 17), ("load", 19)]);
    // Fixed on the command line, the architecture decides: one extent, and the branch for
    // older ones is left out.
    let file = parse_with(src, &["__CUDA_ARCH__=900"]);
    let t = array(&file, "k", "t");
    assert_eq!(t.dims, vec![Some(16), Some(33)]);
    assert_eq!(escape_tags(t), vec!["inactive-branch"]);
}

#[test]
fn an_array_declared_in_both_branches_of_an_undecidable_conditional_escapes() {
    let file = parse(
        "__global__ void k(float *o) {
#if __CUDA_ARCH__ >= 800
  __shared__ float v[64];
#else
  __shared__ float v[32];
#endif
  v[threadIdx.x] = 1;
  o[0] = v[threadIdx.x ^ 1];
}",
    );
    let function = &file.functions[0];
    let declared: Vec<_> = function.arrays.iter().filter(|a| a.name == "v").collect();
    assert_eq!(declared.len(), 2);
    for v in declared {
        assert_eq!(escape_tags(v), vec!["declared-in-branches"]);
    }
    let reasons: Vec<String> = function.arrays.iter().filter_map(|a| a.reason()).collect();
    assert!(reasons.contains(
        &"declared at line 5 and again at line 3, in branches of a preprocessor conditional: \
          a rewrite would change one declaration"
            .to_string()
    ));
}

#[test]
fn an_element_given_to_a_constructor_escapes() {
    let file = parse(
        "struct Ref { float &v; __device__ Ref(float &x) : v(x) {} };
__global__ void k(float *out) {
  __shared__ float a[32][32], b[32][32], c[32][32], d[32][32];
  Ref r(a[threadIdx.x][threadIdx.y]);
  cuda::atomic_ref<float, cuda::thread_scope_block> ar(b[threadIdx.y][threadIdx.x]);
  Ref q{c[threadIdx.x][threadIdx.y]};
  float v{d[threadIdx.x][threadIdx.y]};
  auto w{d[threadIdx.y][threadIdx.x]};
  // Read as the declaration of a function `e`: not seen as an access, so an escape.
  auto e(c[threadIdx.y][threadIdx.x]);
  out[0] = r.v + q.v + v + w + e + a[0][threadIdx.x];
}",
    );
    for (name, var, line) in [("a", "r", 4), ("b", "ar", 5), ("c", "q", 6)] {
        let arr = array(&file, "k", name);
        assert!(
            escape_tags(arr)
                .iter()
                .all(|t| *t == "constructor-argument"),
            "{name}"
        );
        assert_eq!(arr.escapes[0].at.line, line, "{name}");
        assert!(
            arr.reason()
                .unwrap()
                .contains(&format!("constructor of `{var}`")),
            "{name}"
        );
    }
    // A built-in type only reads the element; `a`'s later use is still seen.
    let d = array(&file, "k", "d");
    assert!(d.rewritable());
    assert_eq!(kinds(d), vec![("load", 7), ("load", 8)]);
    assert_eq!(kinds(array(&file, "k", "a")), vec![("load", 11)]);
}

#[test]
fn sizeof_and_decltype_of_more_than_a_scalar_element_escape() {
    let file = parse(
        "struct Body { float x, m; };
__global__ void k(float *out) {
  __shared__ float a[32][32], b[32][32], c[32][32], d[32][32];
  __shared__ Body s[64];
  out[0] = a[threadIdx.x][0] * sizeof(a[0]);
  out[1] = b[threadIdx.x][0] * sizeof(b);
  out[2] = c[threadIdx.x][0] + sizeof(decltype(c));
  decltype(d[0][0]) z = d[threadIdx.x][0] * sizeof(d[1][2]) + sizeof((d[0][1]));
  out[3] = z;
  decltype(s[0].m) m = s[threadIdx.x].m;
  out[4] = m;
}",
    );
    for (name, line) in [("a", 5), ("b", 6), ("c", 7), ("s", 10)] {
        let arr = array(&file, "k", name);
        assert_eq!(escape_tags(arr), vec!["size-or-type-read"], "{name}");
        assert_eq!(arr.escapes[0].at.line, line, "{name}");
    }
    assert!(array(&file, "k", "d").rewritable());
}

#[test]
fn rows_of_a_tile_used_as_pointers_escape() {
    let file = parse(
        "__global__ void k(float *out) {
  __shared__ float t[4][32];
  float *row = t[threadIdx.y];
  out[0] = row[threadIdx.x];
}",
    );
    assert_eq!(
        escape_tags(array(&file, "k", "t")),
        vec!["assigned-to-pointer"]
    );
}

#[test]
fn members_of_vector_elements() {
    let file = parse(
        "__global__ void k(float *out) {
  __shared__ float4 v[32];
  v[threadIdx.x].y = 2.0f;
  out[0] = v[threadIdx.x].x;
}",
    );
    let v = array(&file, "k", "v");
    assert_eq!(v.elem_bytes, Some(16));
    assert_eq!(kinds(v), vec![("store", 3), ("load", 4)]);
    assert_eq!(v.accesses[0].detail().member.as_deref(), Some(".y"));
}

#[test]
fn extents_from_macros_enums_constexpr_sizeof_and_templates() {
    let file = parse(
        "#define TILE 16
#define PAD(n) ((n) + 1)
enum { BLOCK = 128, NEXT };
constexpr int K = 4;
struct __align__(16) P { float x, y, z; };
typedef float2 cplx;
template <int BS, typename T>
__global__ void k(T *out) {
  const int LOCAL = 3;
  __shared__ float a[TILE][PAD(TILE)];
  __shared__ int b[BLOCK / 32][NEXT - BLOCK];
  __shared__ float c[K * sizeof(float4) / sizeof(float)];
  __shared__ T d[BS];
  __shared__ P e[LOCAL];
  __shared__ cplx f[2];
  a[0][0] = b[0][0] + c[0] + d[0] + e[0].x + f[0].x;
}
template __global__ void k<64, double>(double *);",
    );
    let name = "k<64, double>";
    assert_eq!(array(&file, name, "a").dims, vec![Some(16), Some(17)]);
    assert_eq!(array(&file, name, "b").dims, vec![Some(4), Some(1)]);
    assert_eq!(array(&file, name, "c").dims, vec![Some(16)]);
    let d = array(&file, name, "d");
    assert_eq!((d.elem_type.as_str(), d.elem_bytes), ("double", Some(8)));
    assert_eq!(d.dims, vec![Some(64)]);
    let e = array(&file, name, "e");
    assert_eq!((e.elem_bytes, e.dims.clone()), (Some(16), vec![Some(3)]));
    assert_eq!(array(&file, name, "f").elem_bytes, Some(8));
}

#[test]
fn template_values_from_launches_and_command_line() {
    let src = "template <int BS>
__global__ void scan(float *x) { __shared__ float s[BS]; s[threadIdx.x] = x[0]; }
template <int N>
__global__ void other(float *x) { __shared__ float s[N * 2]; s[0] = x[0]; }
void host(float *x) { scan<64><<<1, 64>>>(x); scan<128><<<1, 128>>>(x); }";
    let file = parse(src);
    assert_eq!(array(&file, "scan<64>", "s").dims, vec![Some(64)]);
    assert_eq!(array(&file, "scan<128>", "s").dims, vec![Some(128)]);
    assert_eq!(array(&file, "other", "s").dims, vec![None]);
    assert!(file.diagnostics.iter().any(|d| d
        .message
        .contains("`N` has no known value; pass -D N=<value>")));
    let file = parse_with(src, &["N=16"]);
    assert_eq!(array(&file, "other<16>", "s").dims, vec![Some(32)]);
}

#[test]
fn preprocessor_branches_follow_defines() {
    let src = "#ifdef BIG
#define TILE 64
#else
#define TILE 32
#endif
__global__ void k() { __shared__ float s[TILE]; s[0] = 0; }";
    assert_eq!(array(&parse(src), "k", "s").dims, vec![Some(32)]);
    assert_eq!(
        array(&parse_with(src, &["BIG"]), "k", "s").dims,
        vec![Some(64)]
    );
    assert_eq!(
        array(&parse_with(src, &["TILE=8"]), "k", "s").dims,
        vec![Some(8)]
    );
}

#[test]
fn launch_sites_give_block_shapes() {
    let file = parse(
        "#define ROWS 8
__global__ void a() {}
__global__ void b() {}
__global__ void c() {}
__global__ void d() {}
void host() {
  const int threads = 256;
  dim3 block(16, 16);
  dim3 moved(32, 4);
  moved.x = 64;
  a<<<1, dim3(32, ROWS)>>>();
  b<<<1, threads, 0, 0>>>();
  c<<<1, block>>>();
  d<<<1, moved>>>();
}",
    );
    let block = |name: &str| launch_block(&file, name);
    assert_eq!(block("a"), Ok([32, 8, 1]));
    assert_eq!(block("b"), Ok([256, 1, 1]));
    assert_eq!(block("c"), Ok([16, 16, 1]));
    assert!(block("d").is_err());
}

#[test]
fn launches_in_the_forms_real_projects_write() {
    let file = parse(
        "#define WRAP(x) x
namespace kernel {
template <typename T, int N> __global__ void qualified(T *o) {}
}
__global__ void through_pointer(float *o) {}
__global__ void through_macro(float *o) {}
__global__ void through_api(float *o) {}
__global__ void not_launched(float *o) {}
template <int B> __global__ void local_arg(float *o) {}
__global__ void commented(float *o) {}
void host(float *o, Params p) {
  dim3 grid(4), block(32, 4);
  constexpr int block_x = 64;
  kernel::qualified<float, 32><<<grid, block>>>(o);
  auto k = &through_pointer;
  k<<<grid, block>>>(o);
  CUDA_LAUNCH((through_macro), grid, dim3(16, 16), o);
  void *args[] = {&o};
  cudaLaunchKernel((void *)through_api, grid, dim3(128), args, 0, 0);
  ggml_launch(not_launched, p, o);
  helper(not_launched, p.grid, p.block);
  local_arg<block_x><<<1, block_x>>>(o);
  commented<<<4 /*grid*/, 96 /*block*/>>>(o);
}",
    );
    let block = |name: &str| launch_block(&file, name);
    assert_eq!(block("qualified"), Ok([32, 4, 1]));
    assert_eq!(block("through_pointer"), Ok([32, 4, 1]));
    assert_eq!(block("through_macro"), Ok([16, 16, 1]));
    assert_eq!(block("through_api"), Ok([128, 1, 1]));
    // A call that passes a kernel with values that are not a block shape is no launch.
    assert!(file.launches.iter().all(|l| l.kernel != "not_launched"));
    let local = file
        .launches
        .iter()
        .find(|l| l.kernel == "local_arg")
        .unwrap();
    assert_eq!(local.template_args, ["64"]);
    assert_eq!(block("commented"), Ok([96, 1, 1]));
}

#[test]
fn a_launch_sees_the_value_a_name_has_there() {
    let file = parse(
        "__global__ void a() {}
__global__ void b() {}
__global__ void c() {}
__global__ void d() {}
__global__ void e() {}
__global__ void f() {}
void host(int n) {
  for (int level = 0; level < n; ++level) {
    dim3 fresh(16, 8);
    f<<<1, fresh>>>();
    fresh = dim3(256);
  }
  dim3 threads(16, 16);
  int size = 128;
  a<<<1, threads>>>();
  threads = dim3(256, 1);
  b<<<1, threads>>>();
  if (n) size = 64;
  c<<<1, size>>>();
  for (int i = 0; i < n; ++i) {
    d<<<1, threads>>>();
    threads = dim3(64);
  }
  size = 32;
  e<<<1, size>>>();
}",
    );
    let block = |name: &str| launch_block(&file, name);
    assert_eq!(block("a"), Ok([16, 16, 1]));
    assert_eq!(block("b"), Ok([256, 1, 1]));
    // Set on one path only.
    assert!(block("c").is_err());
    // Set later in a loop around the launch.
    assert!(block("d").is_err());
    assert_eq!(block("e"), Ok([32, 1, 1]));
    // Declared in the loop: each iteration starts from the declaration.
    assert_eq!(block("f"), Ok([16, 8, 1]));
}

#[test]
fn launches_in_a_host_template_are_bound_per_instantiation() {
    let file = parse(
        "template <class T> __global__ void k(T *o) { __shared__ T s[32]; o[0] = s[threadIdx.x]; }
template <class T> void run(T *o) { k<T><<<1, 32>>>(o); }
template <class T> void unbound(T *o) { k<T *><<<1, 64>>>(o); }
template void run<int>(int *);
template void run<double>(double *);",
    );
    let args: Vec<_> = file
        .launches
        .iter()
        .map(|l| (l.template_args.clone(), l.block.clone()))
        .collect();
    assert_eq!(
        args,
        [
            (vec!["int".to_string()], Ok([32, 1, 1])),
            (vec!["double".to_string()], Ok([32, 1, 1])),
            // `unbound` is never instantiated: its launch stays as written.
            (vec!["T *".to_string()], Ok([64, 1, 1])),
        ]
    );
    let instances: Vec<String> = file.functions.iter().map(|f| f.display_name()).collect();
    assert!(instances.contains(&"k<int>".to_string()), "{instances:?}");
    assert!(
        instances.contains(&"k<double>".to_string()),
        "{instances:?}"
    );
}

#[test]
fn function_like_macros_from_the_command_line() {
    let file = parse_with(
        "__global__ void k(float *o) { __shared__ float s[PITCH(32)][32]; o[0] = s[0][threadIdx.x]; }",
        &["PITCH(n)=((n) + 1)"],
    );
    assert_eq!(array(&file, "k", "s").dims, [Some(33), Some(32)]);
}

#[test]
fn kernels_declared_through_macros() {
    let file = parse(
        "#define MY_KERNEL static __global__ void
#define DI inline __device__
MY_KERNEL defined(float *o) { __shared__ float s[32]; o[0] = s[threadIdx.x]; }
DI float helper(float *s) { return s[threadIdx.x]; }
HIDDEN_KERNEL launched(float *o) { __shared__ float s[32]; o[0] = s[threadIdx.x]; }
UNKNOWN_TYPE host_only(float *o) { return o[0]; }
void host(float *o) { launched<<<1, 32>>>(o); }",
    );
    let kind = |name: &str| {
        file.functions
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.kind)
    };
    assert_eq!(kind("defined"), Some(FunctionKind::Kernel));
    assert_eq!(kind("helper"), Some(FunctionKind::Device));
    assert_eq!(kind("launched"), Some(FunctionKind::Kernel));
    assert_eq!(kind("host_only"), None);
}

#[test]
fn a_host_template_launches_with_its_default_arguments() {
    let file = parse(
        "template <typename T, int TPB> __global__ void k(T *o) {}
template <typename T, int TPB = 256> void run(T *o) { k<T, TPB><<<1, TPB>>>(o); }
template <int TPB = 128> void named(float *o) { k<float, TPB><<<1, TPB>>>(o); }
void host(float *o) { run(o); named<512>(o); }",
    );
    let blocks: Vec<_> = file.launches.iter().map(|l| l.block.clone()).collect();
    // `named` is called with an argument in this file: its default says nothing.
    assert_eq!(blocks[0], Ok([256, 1, 1]));
    assert!(blocks[1].is_err());
}

#[test]
fn named_dim3_blocks_read_as_written() {
    let file = parse(
        "#define BX 32
#define BY 8
constexpr int TY = 4;
struct Tile { int v; };
__global__ void a() {}
__global__ void b() {}
__global__ void c() {}
__global__ void d() {}
__global__ void e() {}
__global__ void f() {}
__global__ void g() {}
void host(int n) {
  dim3 threads(BX, BY);
  dim3 mixed(BX, TY);
  dim3 set;
  set.x = 16;
  set.y = BY;
  dim3 branch;
  if (n > 4)
    branch.x = 64;
  dim3 declares(Tile, Tile);
  if (n > 8) {
    dim3 scoped(192);
    f<<<1, scoped>>>();
  } else {
    dim3 scoped(256);
    f<<<1, scoped>>>();
  }
  if (n > 16) {
    dim3 same(BX, 2);
    g<<<1, same>>>();
  } else {
    dim3 same(BX, 2);
    g<<<2, same>>>();
  }
  a<<<1, threads>>>();
  b<<<1, mixed>>>();
  c<<<1, set>>>();
  d<<<1, branch>>>();
  e<<<1, declares>>>();
}",
    );
    let block = |name: &str| launch_block(&file, name);
    // `dim3 threads(BX, BY);` parses as a function declaration (the most vexing parse).
    assert_eq!(block("a"), Ok([32, 8, 1]));
    assert_eq!(block("b"), Ok([32, 4, 1]));
    // Components set afterwards, in the same block, once each.
    assert_eq!(block("c"), Ok([16, 8, 1]));
    // A component set in a branch is not the one launched for certain.
    assert!(block("d").is_err());
    // `Tile` is a type: `declares` is a function, not a dim3.
    assert!(block("e").is_err());
    // One name, two dim3s in two scopes: each launch sees the one in its scope.
    let scoped: Vec<_> = file
        .launches
        .iter()
        .filter(|l| l.kernel == "f")
        .map(|l| l.block.clone())
        .collect();
    assert_eq!(scoped, [Ok([192, 1, 1]), Ok([256, 1, 1])]);
    assert_eq!(block("g"), Ok([32, 2, 1]));
}

#[test]
fn file_scope_arrays_and_shadowing() {
    let file = parse(
        "__shared__ float g[32];
__global__ void uses(float *o) { o[0] = g[threadIdx.x]; }
__global__ void shadows(float *o) { float g[2] = {0, 0}; o[0] = g[1]; }",
    );
    let uses = &file.functions[0];
    assert_eq!(uses.arrays.len(), 1);
    assert!(uses.arrays[0].file_scope);
    assert!(file.functions[1].arrays.is_empty());
}

#[test]
fn arrays_declared_by_a_macro_are_found() {
    let file = parse(
        "#define DECL(T, name, n) __shared__ T name[n];
__global__ void k(float *o) {
  DECL(float, tile, 64)
  tile[threadIdx.x] = o[0];
}",
    );
    let tile = array(&file, "k", "tile");
    assert_eq!(tile.declared_by_macro.as_deref(), Some("DECL"));
    assert_eq!(tile.dims, vec![Some(64)]);
    assert_eq!(kinds(tile), vec![("store", 4)]);
    assert!(tile.rewritable());
}

#[test]
fn block_annotations_and_syntax_errors() {
    let file = parse(
        "// bankwise: block=32x8
__global__ void annotated() { __shared__ float s[4]; s[0] = 1; }
__global__ void broken() { int x = ; }
__global__ void fine() { __shared__ float s[4]; s[1] = 1; }",
    );
    assert_eq!(file.functions[0].annotated_block, Some([32, 8, 1]));
    assert!(file.functions[1].syntax_error.is_some());
    assert!(file.functions[2].syntax_error.is_none());
    assert_eq!(file.functions[2].arrays.len(), 1);
    assert!(!file.syntax_errors.is_empty());
    // Between a template head and its function, as above it.
    let file = parse(
        "template <int T>
// bankwise: block=16x16
__global__ void k() { __shared__ float s[T]; s[0] = 1; }
template __global__ void k<4>();",
    );
    assert_eq!(file.functions[0].annotated_block, Some([16, 16, 1]));
}

#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 10_000;
    let src = format!(
        "__global__ void k(float *o) {{ __shared__ float s[4]; o[0] = {}s[threadIdx.x]{}; }}",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let file = parse(&src);
    let s = array(&file, "k", "s");
    assert_eq!(kinds(s), vec![("load", 1)]);
}

#[test]
fn indexing_a_member_array_is_an_access_of_the_element() {
    let file = parse(
        "struct Quad { float v[4]; };
__global__ void k(float *o) {
  __shared__ Quad q[16];
  q[threadIdx.x / 4].v[threadIdx.x % 4] = o[0];
  q[1].v[2] += 1.0f;
  o[1] = q[threadIdx.x].v[3];
}",
    );
    let q = array(&file, "k", "q");
    assert_eq!(q.elem_bytes, Some(16));
    assert_eq!(
        kinds(q),
        vec![("store", 4), ("load", 5), ("store", 5), ("load", 6)]
    );
    assert_eq!(
        q.accesses[0].detail().member.as_deref(),
        Some(".v[threadIdx.x % 4]")
    );
}

#[test]
fn member_arrays_are_laid_out_by_cpp_rules_with_their_subscripts() {
    let file = parse(
        "struct Cell { float2 p; double w[2]; };
struct __align__(32) Grid { char tag; float m[4][8]; Cell c[3]; };
__global__ void k(float *o) {
  __shared__ Grid g[4];
  o[0] = g[threadIdx.x / 4].m[threadIdx.x % 4][1];
  o[1] = g[0].c[threadIdx.x % 3].w[threadIdx.x / 3];
}",
    );
    let g = array(&file, "k", "g");
    // 1 + 3 padding + 128 + 4 padding (Cell is 8-aligned) + 72, rounded up to 32.
    assert_eq!(g.elem_bytes, Some(224));
    let layout = |offset, size, subscripts: &[(u64, u64)]| {
        Some(MemberLayout {
            offset,
            size,
            subscripts: subscripts.to_vec(),
        })
    };
    let rows = &g.accesses[0];
    assert_eq!(
        rows.detail().member_layout,
        layout(4, 4, &[(32, 4), (4, 8)])
    );
    assert_eq!(rows.detail().member_bytes, None);
    let subscripts: Vec<String> = rows
        .detail()
        .member_subscripts
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(subscripts, ["(threadIdx.x % 4)", "1"]);
    let cells = &g.accesses[1];
    assert_eq!(
        cells.detail().member_layout,
        layout(144, 8, &[(24, 3), (8, 2)])
    );
    assert_eq!(cells.detail().member_subscripts.len(), 2);
}

#[test]
fn names_bind_to_the_nearest_declaration() {
    let file = parse(
        "__shared__ float g[64];
__global__ void k1(float *o) {
  g[threadIdx.x] = 1.0f;
  { float g[4]; g[0] = 2.0f; o[0] = g[1]; }
  o[threadIdx.x] = g[threadIdx.x];
}
__global__ void k2(float *o, float *g) { o[0] = g[0]; }
__global__ void k3(float *o) {
  __shared__ int s[32];
  s[threadIdx.x] = 0;
  auto f = [&](int s) { return s + 1; };
  for (int s = 0; s < 2; ++s) o[s] = 0;
  o[0] = f(s[1]);
  { __shared__ int s[8]; s[threadIdx.x % 8] = 1; }
}",
    );
    assert_eq!(
        kinds(array(&file, "k1", "g")),
        vec![("store", 3), ("load", 5)]
    );
    assert!(file.functions[1].arrays.is_empty());
    let k3 = &file.functions[2];
    assert_eq!(k3.arrays.len(), 2);
    assert_eq!(kinds(&k3.arrays[0]), vec![("store", 10), ("load", 13)]);
    assert!(k3.arrays[0].rewritable());
    assert_eq!(k3.arrays[1].dims, vec![Some(8)]);
    assert_eq!(kinds(&k3.arrays[1]), vec![("store", 14)]);
}

#[test]
fn dead_preprocessor_branches_in_bodies_are_skipped() {
    let src = "#define MODE 2
#if defined(WIDE) && WIDE > 2
#define M 64
#elif MODE == 2
#define M 16
#else
#define M 8
#endif
__global__ void k(float *o) {
  __shared__ float s[M];
#if 0
  __shared__ float dead[4];
  dead[0] = 1;
  s[1] = 5;
#else
  s[2] = 6;
#endif
#ifdef EXTRA
  s[3] = 7;
#endif
}";
    let file = parse(src);
    let k = &file.functions[0];
    assert_eq!(k.arrays.len(), 1);
    assert_eq!(k.arrays[0].dims, vec![Some(16)]);
    assert_eq!(kinds(&k.arrays[0]), vec![("store", 16)]);
    let file = parse_with(src, &["WIDE=3", "EXTRA"]);
    let s = &file.functions[0].arrays[0];
    assert_eq!(s.dims, vec![Some(64)]);
    assert_eq!(kinds(s), vec![("store", 16), ("store", 19)]);
}

#[test]
fn macro_escapes_need_the_name_and_a_use() {
    let file = parse(
        "#define SQ(s) ((s) * (s))
#define NEVER_USED(i) t[i]
#define STORE(v) u[threadIdx.x] = (v)
#define VIA_OTHER(v) STORE(v)
__global__ void k(float *o) {
  __shared__ float s[32], t[32], u[32];
  s[threadIdx.x] = SQ(o[0]);
  t[threadIdx.x] = 0;
  VIA_OTHER(1.0f);
  o[0] = s[1] + t[2] + u[0];
}",
    );
    assert!(array(&file, "k", "s").rewritable());
    assert!(array(&file, "k", "t").rewritable());
    let u = array(&file, "k", "u");
    assert_eq!(escape_tags(u), vec!["macro-body"]);
    assert_eq!(u.escapes[0].at.line, 3);
}

#[test]
fn a_syntax_error_does_not_swallow_the_next_kernel() {
    let file = parse(
        "__global__ void broken(float *o) {
  __shared__ float b[32];
  b[threadIdx.x] = (1 + ;
  o[0] = b[0]
}
__global__ void good(float *o) {
  __shared__ float g[64];
  g[threadIdx.x] = o[0];
}",
    );
    assert!(file.functions[0].syntax_error.is_some());
    assert_eq!(file.functions[1].name, "good");
    assert!(file.functions[1].syntax_error.is_none());
    assert_eq!(kinds(array(&file, "good", "g")), vec![("store", 8)]);
}

#[test]
fn quoted_headers_give_their_macros_and_types() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let inc = dir.path().join("include");
    std::fs::create_dir(&inc).expect("created");
    // Beside the file, then in an include directory, nested, and in a cycle.
    std::fs::write(
        dir.path().join("tile.cuh"),
        "#pragma once\n#include \"inner.cuh\"\n#define TILE (INNER * 2)\n",
    )
    .expect("written");
    std::fs::write(
        inc.join("inner.cuh"),
        "#include \"tile.cuh\"\n#define INNER 16\nstruct Rec { double v, x; };\n",
    )
    .expect("written");
    let path = dir.path().join("k.cu");
    let text = "#include \"tile.cuh\"\n#include \"absent.cuh\"\n#include <cuda.h>\n\
        __global__ void k(float *o) {\n  __shared__ float t[TILE];\n  __shared__ Rec r[4];\n  \
        t[threadIdx.x] = o[0];\n  r[threadIdx.x].x = o[1];\n}\n";
    let file = analyse_file_source(
        &path,
        text,
        &[],
        HeaderSearch {
            include_dirs: std::slice::from_ref(&inc),
            pre_includes: &[],
        },
        &[],
        &Skipped::default(),
    );
    let t = array(&file, "k", "t");
    assert_eq!(t.dims, vec![Some(32)]);
    let r = array(&file, "k", "r");
    assert_eq!(r.elem_bytes, Some(16));
    let notes: Vec<&str> = file
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Note)
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        notes,
        [
            "header \"absent.cuh\" not found beside the file or in the include directories (-I): \
          its macros and types are unknown"
        ]
    );
    // Without the include directory the nested header is not found: INNER is unknown.
    let file = analyse_file_source(
        &path,
        text,
        &[],
        HeaderSearch::default(),
        &[],
        &Skipped::default(),
    );
    assert_eq!(array(&file, "k", "t").dims, vec![None]);
}

/// The most a block computed by a host function of the file can be: `None` when its result
/// is not bounded whatever the run-time values.
fn bounded(helper: &str, launch_block: &str) -> Option<[u32; 3]> {
    let src = format!(
        "__global__ void k(float *o) {{ o[threadIdx.x] = 0; }}\n{helper}\n\
         void run(float *o, unsigned long n, int ilp) {{\n  {launch_block}\n}}\n"
    );
    let file = parse(&src);
    let launch = file
        .launches
        .iter()
        .find(|l| l.kernel == "k")
        .expect("a launch");
    assert!(launch.block.is_err(), "{:?}", launch.block);
    launch.bounded.as_ref().map(|(shape, by)| {
        assert_eq!(by, "size");
        *shape
    })
}

#[test]
fn a_block_size_a_host_function_computes_is_bounded() {
    // apex's SoftMax_getBlockSize: doubled while under half of min(n / ilp, 1024).
    let apex = "const int max_threads = 1024;\n\
        inline dim3 size(int ILP, unsigned long dim_size) {\n\
          unsigned long block_size = 1;\n\
          unsigned long max_block_size = std::min(dim_size / ILP, static_cast<unsigned long>(max_threads));\n\
          while (block_size < (max_block_size / 2)) block_size *= 2;\n\
          block_size = std::max(block_size, static_cast<unsigned long>(32));\n\
          return dim3(block_size);\n}";
    assert_eq!(
        bounded(apex, "dim3 block = size(ilp, n);\n  k<<<1, block>>>(o);"),
        Some([512, 1, 1])
    );
    // An integer helper used as the block argument, with a clamp; a loop with `for`.
    let clamped = "int size(int n) { int t = 32; for (int i = 0; t < n && i < 5; ++i) t *= 2; \
                   return n > 256 ? 256 : t; }";
    assert_eq!(bounded(clamped, "k<<<1, size(n)>>>(o);"), None);
    let clamped = "int size(int n) { return std::min(n, 384); }";
    assert_eq!(bounded(clamped, "k<<<1, size(n)>>>(o);"), Some([384, 1, 1]));
    // Nothing bounds it: the run-time value passes through.
    let unbounded = "int size(int n) { int t = 1; while (t < n) t *= 2; return t; }";
    assert_eq!(bounded(unbounded, "k<<<1, size(n)>>>(o);"), None);
    // Two dimensions, each bounded.
    let two = "dim3 size(int n) { return dim3(32, std::min(n, 8)); }";
    assert_eq!(
        bounded(two, "dim3 b = size(n);\n  k<<<1, b>>>(o);"),
        Some([32, 8, 1])
    );
}

/// A row of a two-dimensional array assigned or stepped as a whole (`t[i] = v`: invalid
/// C++, which the fuzzer makes) is no element access and no pointer the affine stage could
/// follow: the array escapes for good (fuzz seed 15000, input 609213, where the row was
/// left as it was while the rest of the array was rewritten).
#[test]
fn a_row_assigned_as_a_whole_escapes() {
    let file = parse(
        "__global__ void k(const float *src) {
  __shared__ float a[8][32], b[8][32];
  a[threadIdx.y] = src[threadIdx.x];
  (b[threadIdx.y])++;
  a[threadIdx.y][threadIdx.x] = b[threadIdx.y][threadIdx.x];
}",
    );
    for (name, line) in [("a", 3), ("b", 4)] {
        let arr = array(&file, "k", name);
        assert_eq!(escape_tags(arr), ["assigned-as-whole"], "{name}");
        assert_eq!(arr.escapes[0].at.line, line, "{name}");
        assert!(arr.escapes[0].name_use.is_none(), "{name}");
    }
}

/// CUTLASS defines its unroll macro as `#pragma unroll` under `#if defined(__CUDA_ARCH__)`
/// and empty otherwise; both branches are read (nvcc compiles both), and neither body is
/// code: the line before the loop is blanked, and the kernel parses (the corpus's
/// `nhwc_to_nchw_kernel` was lost to a syntax error, 18 -> 14 of 20 conflicts found).
#[test]
fn a_pragma_macro_defined_per_architecture_is_no_code() {
    let file = parse(
        "#if defined(__CUDA_ARCH__)
  #define CUTLASS_PRAGMA_UNROLL #pragma unroll
#else
  #define CUTLASS_PRAGMA_UNROLL
#endif
__global__ void k(float *o) {
  __shared__ float s[32 * 33];
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < 4; i++) {
    s[threadIdx.x * 33 + i] = o[i];
  }
}",
    );
    assert!(file.syntax_errors.is_empty(), "{:?}", file.diagnostics);
    assert_eq!(array(&file, "k", "s").accesses.len(), 1);
}

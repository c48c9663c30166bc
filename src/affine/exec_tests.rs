//! The affine stage on real kernels: source → front end → symbolic execution → forms.
use super::exec::{analyse_function, Callees, FunctionAffine, LoopPoint, WithThread};
use super::{Class, Sym};
use crate::parse::{analyse_source, ParsedFile};

struct Analysed {
    parsed: ParsedFile,
    affine: FunctionAffine,
}

fn analyse(source: &str, block: [u32; 3]) -> Analysed {
    let parsed = analyse_source(source, &[]);
    let function = &parsed.functions[0];
    let callees = Callees::new(&parsed.functions);
    let affine = analyse_function(function, &callees, block, &parsed.constants);
    Analysed { parsed, affine }
}

impl Analysed {
    /// (text, kind, form, class) of every access of array `a`.
    fn sites(&self, array: usize) -> Vec<(String, String, String, String)> {
        let function = &self.parsed.functions[0];
        function.arrays[array]
            .accesses
            .iter()
            .zip(&self.affine.sites[array])
            .map(|(access, site)| {
                let site = site.as_ref().expect("every access is reached");
                let form = match (&site.form, site.iterations.first()) {
                    (Ok(form), _) => form.to_string(),
                    (Err(_), Some(first)) => format!("{} (first iteration)", first.form),
                    (Err(why), None) => format!("not affine: {why}"),
                };
                (
                    access.text.clone(),
                    access.kind.as_str().to_string(),
                    form,
                    site.class.to_string(),
                )
            })
            .collect()
    }

    fn loop_values(&self, array: usize, access: usize) -> Vec<Vec<i64>> {
        let site = self.affine.sites[array][access].as_ref().expect("reached");
        self.affine
            .loop_points(&site.loops, 1 << 20)
            .expect("enumerable")
            .into_iter()
            .map(|p| p.0.into_iter().map(|(_, v)| v).collect())
            .collect()
    }

    /// The element index of warp `warp`'s lanes for loop point `point` (None: inactive).
    fn warp(&self, array: usize, access: usize, point: &LoopPoint, warp: u32) -> Vec<Option<i64>> {
        let site = self.affine.sites[array][access].as_ref().expect("reached");
        (0..32)
            .map_while(|lane| super::lane_thread(self.affine.block(), 32, warp, lane))
            .map(|thread| {
                let at = WithThread {
                    thread,
                    rest: point,
                };
                match site.active.eval(&at) {
                    Some(0) => None,
                    _ => site.index.eval(&at),
                }
            })
            .collect()
    }
}

fn owned(rows: &[(&str, &str, &str, &str)]) -> Vec<(String, String, String, String)> {
    rows.iter()
        .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()))
        .collect()
}

#[test]
fn transpose_tile_32_on_32x8() {
    let a = analyse(
        r#"
#define TILE_DIM 32
#define BLOCK_ROWS 8
__global__ void transpose(float *odata, const float *idata, int width) {
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}
"#,
        [32, 8, 1],
    );
    assert_eq!(
        a.sites(0),
        owned(&[
            (
                "tile[threadIdx.y + j][threadIdx.x]",
                "store",
                "tx + 32*ty + 32*j",
                "linear"
            ),
            (
                "tile[threadIdx.x][threadIdx.y + j]",
                "load",
                "32*tx + ty + j",
                "stride 32"
            ),
        ])
    );
    assert_eq!(
        a.loop_values(0, 1),
        vec![vec![0], vec![8], vec![16], vec![24]]
    );
    let load_loop = a.affine.sites[0][1].as_ref().expect("reached").loops[0];
    let point = LoopPoint(vec![(a.affine.loop_atom(load_loop), 8)]);
    let expected: Vec<Option<i64>> = (0..32).map(|l| Some(32 * l + 3 + 8)).collect();
    assert_eq!(a.warp(0, 1, &point, 3), expected);
}

#[test]
fn transpose_tile_16_on_16x16_is_the_papers_block_pattern() {
    let a = analyse(
        r#"
#define TILE_DIM 16
__global__ void transpose(float *odata, const float *idata) {
    __shared__ float tile[TILE_DIM][TILE_DIM];
    tile[threadIdx.y][threadIdx.x] = idata[threadIdx.x];
    __syncthreads();
    odata[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
"#,
        [16, 16, 1],
    );
    let sites = a.sites(0);
    assert_eq!(sites[0].2, "tx + 16*ty");
    assert_eq!(sites[0].3, "linear");
    assert_eq!(sites[1].2, "16*tx + ty");
    assert_eq!(sites[1].3, "block [16*tx, 1*ty]");
    let expected: Vec<Option<i64>> = (0..16)
        .map(|i| Some(16 * i))
        .chain((0..16).map(|i| Some(16 * i + 1)))
        .collect();
    assert_eq!(a.warp(0, 1, &LoopPoint::default(), 0), expected);
}

#[test]
fn reduction_interleaved_addressing_has_stride_2s() {
    let a = analyse(
        r#"
__global__ void reduce(int *g_idata, int *g_odata) {
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x;
    sdata[tid] = g_idata[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
"#,
        [256, 1, 1],
    );
    let sites = a.sites(0);
    assert_eq!(sites[0].2, "tx");
    assert_eq!(sites[1].2, "(2*s)*tx");
    assert_eq!(sites[1].3, "stride 2*s");
    assert_eq!(sites[3].2, "(2*s)*tx + s");
    assert_eq!(sites[4].2, "0");
    assert_eq!(sites[4].3, "stride 0");
    assert_eq!(
        a.loop_values(0, 1),
        [1, 2, 4, 8, 16, 32, 64, 128].map(|s| vec![s]).to_vec()
    );
    // s = 16: lanes 0..7 are active (32·tx < 256), every other one is off.
    let point = LoopPoint(vec![(a.affine.loop_atom(0), 16)]);
    let lanes = a.warp(0, 1, &point, 0);
    let expected: Vec<Option<i64>> = (0..32).map(|l| (l < 8).then_some(32 * l)).collect();
    assert_eq!(lanes, expected);
    // Only thread 0 of warp 0 stores the result.
    let last = a.warp(0, 4, &LoopPoint::default(), 0);
    assert_eq!(last[0], Some(0));
    assert!(last[1..].iter().all(Option::is_none));
}

#[test]
fn fwt_butterfly_with_stride_8() {
    let a = analyse(
        r#"
__global__ void fwtBatch2(float *d_Output) {
    __shared__ float s_data[1024];
    const int stride = 8;
    int pos = threadIdx.x;
    int lo = pos & (stride - 1);
    int i0 = ((pos - lo) << 2) + lo;
    float D0 = s_data[i0];
    s_data[i0 + stride] = D0;
}
"#,
        [256, 1, 1],
    );
    let sites = a.sites(0);
    assert_eq!(sites[0].2, "(tx & 7) + 32*(tx >> 3)");
    assert_eq!(sites[0].3, "block [1*(tx & 7), 32*(tx >> 3)]");
    let expected: Vec<Option<i64>> = [0, 32, 64, 96]
        .iter()
        .flat_map(|b| (0..8).map(move |i| Some(b + i)))
        .collect();
    assert_eq!(a.warp(0, 0, &LoopPoint::default(), 0), expected);
}

#[test]
fn fwt_loop_mask_by_the_counter_has_a_form_per_iteration() {
    let a = analyse(
        r#"
__global__ void fwt(float *d) {
    __shared__ float s_data[1024];
    int pos = threadIdx.x;
    for (int stride = 256; stride > 0; stride >>= 2) {
        int lo = pos & (stride - 1);
        int i0 = ((pos - lo) << 2) + lo;
        s_data[i0] = s_data[i0 + stride];
    }
}
"#,
        [256, 1, 1],
    );
    let site = a.affine.sites[0][0].as_ref().expect("reached");
    let forms: Vec<String> = site
        .iterations
        .iter()
        .map(|it| format!("{:?} {}", it.loop_values, it.form))
        .collect();
    assert_eq!(
        forms,
        [
            "[(\"stride\", 256)] tx",
            "[(\"stride\", 64)] (tx & 63) + 256*(tx >> 6)",
            "[(\"stride\", 16)] (tx & 15) + 64*(tx >> 4)",
            "[(\"stride\", 4)] (tx & 3) + 16*(tx >> 2)",
            "[(\"stride\", 1)] 4*tx",
        ]
    );
}

#[test]
fn grid_stride_loop_counter_is_a_thread_term() {
    let a = analyse(
        r#"
__global__ void clear(int n) {
    __shared__ int s[1000];
    for (int i = threadIdx.x; i < 1000; i += blockDim.x)
        s[i] = 0;
}
"#,
        [256, 1, 1],
    );
    assert_eq!(a.sites(0)[0].2, "tx + 256*k_i");
    assert_eq!(a.sites(0)[0].3, "linear");
    assert_eq!(
        a.loop_values(0, 0),
        vec![vec![0], vec![1], vec![2], vec![3]]
    );
    // The last iteration: threads 0..231 only (768 + 232 = 1000).
    let point = LoopPoint(vec![(a.affine.loop_atom(0), 3)]);
    let warp7 = a.warp(0, 0, &point, 7);
    assert_eq!(warp7[7], Some(768 + 231));
    assert_eq!(warp7[8], None);
}

#[test]
fn early_return_and_thread_conditions_are_lane_predicates() {
    let a = analyse(
        r#"
__global__ void k(float *out) {
    __shared__ float s[64];
    if (threadIdx.y == 0) {
        s[threadIdx.x] = 1.0f;
    }
    if (threadIdx.x >= 16) return;
    out[threadIdx.x] = s[2 * threadIdx.x];
}
"#,
        [32, 2, 1],
    );
    let first = a.affine.sites[0][0].as_ref().expect("reached");
    assert_eq!(first.active.to_string(), "ty == 0");
    let second = a.affine.sites[0][1].as_ref().expect("reached");
    assert_eq!(second.active.to_string(), "!(tx >= 16)");
    let lanes = a.warp(0, 1, &LoopPoint::default(), 0);
    assert_eq!(lanes[15], Some(30));
    assert_eq!(lanes[16], None);
}

#[test]
fn lane_and_warp_aliases_and_macros() {
    let a = analyse(
        r#"
#define IDX(r, c) ((r) * 33 + (c))
__global__ void k(float *out) {
    __shared__ float s[33 * 32];
    int tid = threadIdx.x + threadIdx.y * blockDim.x;
    int lane = tid & 31;
    int warp = tid / 32;
    s[warp * 32 + lane] = 0;
    out[tid] = s[IDX(lane, warp)];
}
"#,
        [16, 8, 1],
    );
    let sites = a.sites(0);
    assert_eq!(sites[0].2, "tx + 16*ty");
    assert_eq!(sites[0].3, "linear");
    assert_eq!(sites[1].2, "33*tx + 528*(ty & 1) + (ty >> 1)");
    assert_eq!(sites[1].3, "stride 33");
}

#[test]
fn data_dependent_and_non_power_of_two_indices_are_random_with_a_reason() {
    let a = analyse(
        r#"
__global__ void histogram(const unsigned char *data, unsigned int *out) {
    __shared__ unsigned int hist[256];
    __shared__ float t[96];
    hist[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&hist[data[threadIdx.x]], 1);
    t[threadIdx.x / 3] = 0;
}
"#,
        [96, 1, 1],
    );
    let hist = a.sites(0);
    assert_eq!(hist[1].3, "random: data-dependent (`data[threadIdx.x]`)");
    let t = a.sites(1);
    assert_eq!(
        t[0].3,
        "random: division of a thread index by 3, not a power of two"
    );
}

#[test]
fn scan_offset_doubles_as_the_counter_halves() {
    let a = analyse(
        r#"
__global__ void scan(float *g, int n) {
    __shared__ float temp[512];
    int thid = threadIdx.x;
    int offset = 1;
    for (int d = 256; d > 0; d >>= 1) {
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
}
"#,
        [256, 1, 1],
    );
    let sites = a.sites(0);
    assert_eq!(sites[0].3, "stride 2 * (256 / d)");
    // d = 64: offset 4, lanes 0..31 active, ai = 4*(2·tx + 1) − 1 = 8·tx + 3.
    let point = LoopPoint(vec![(a.affine.loop_atom(0), 64)]);
    let ai = a.warp(0, 2, &point, 0);
    let expected: Vec<Option<i64>> = (0..32).map(|l| Some(8 * l + 3)).collect();
    assert_eq!(ai, expected);
    let _ = Sym::Const(0);
    let _ = Class::Linear;
}

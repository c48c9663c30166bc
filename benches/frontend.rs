//! Throughput of parse + extraction on a generated 10 MB CUDA file.
//!
//! `cargo bench --bench frontend` prints MB/s and the process's peak resident memory
//! (VmHWM). Goal (issue 2): ≥ 5 MB/s and ≤ 100 MB.
use std::time::Instant;

const TARGET_BYTES: usize = 10 * 1024 * 1024;

/// A realistic mix: macros, a templated tiled kernel with loops, atomics, a reduction and a
/// launch, repeated with distinct names.
fn kernel(i: usize) -> String {
    format!(
        r#"#define TILE_{i} 32
#define PAD_{i}(n) ((n) + 1)
template <int ROWS>
__global__ void transpose_{i}(float *out, const float *in, int width)
{{
    __shared__ float tile[TILE_{i}][PAD_{i}(TILE_{i})];
    __shared__ unsigned int hist[256];
    int x = blockIdx.x * TILE_{i} + threadIdx.x;
    int y = blockIdx.y * TILE_{i} + threadIdx.y;
    for (int j = 0; j < TILE_{i}; j += ROWS) {{
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    }}
    __syncthreads();
    for (int j = 0; j < TILE_{i}; j += ROWS) {{
        out[(x + j) * width + y] = tile[threadIdx.x][threadIdx.y + j];
        atomicAdd(&hist[(int)tile[threadIdx.x][j] & 255], 1u);
    }}
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {{
        if (threadIdx.x < s) {{
            tile[0][threadIdx.x] += tile[0][threadIdx.x + s];
        }}
        __syncthreads();
    }}
}}

void launch_{i}(float *out, const float *in, int width)
{{
    dim3 grid(width / TILE_{i}, width / TILE_{i});
    transpose_{i}<8><<<grid, dim3(TILE_{i}, 8)>>>(out, in, width);
}}

"#
    )
}

fn peak_resident_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let mut source = String::with_capacity(TARGET_BYTES + 4096);
    let mut kernels = 0;
    while source.len() < TARGET_BYTES {
        source.push_str(&kernel(kernels));
        kernels += 1;
    }
    let mb = source.len() as f64 / (1024.0 * 1024.0);
    let baseline = peak_resident_mb();
    let start = Instant::now();
    let parsed = bankwise::parse::analyse_source(&source, &[]);
    let seconds = start.elapsed().as_secs_f64();
    let accesses: usize = parsed
        .functions
        .iter()
        .flat_map(|f| &f.arrays)
        .map(|a| a.accesses.len())
        .sum();
    assert_eq!(parsed.functions.len(), kernels);
    assert!(parsed.syntax_errors.is_empty());
    println!(
        "frontend: {mb:.1} MB, {kernels} kernels, {accesses} accesses in {seconds:.2} s = {:.1} MB/s",
        mb / seconds
    );
    if let (Some(before), Some(peak)) = (baseline, peak_resident_mb()) {
        println!("frontend: peak resident memory {peak:.0} MB (source text and model included; {before:.0} MB before parsing)");
    }
}

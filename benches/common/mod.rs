//! What both benches share: the generated CUDA file and the memory figure.
//!
//! `BENCH_MB` sets the size of the generated file in MiB (default 10); a small one (`BENCH_MB=1`)
//! is handy under `valgrind --tool=callgrind`, whose instruction counts are repeatable where
//! wall-clock times on a shared machine are not.

/// Bytes of generated source: `BENCH_MB` MiB, 10 by default.
pub fn target_bytes() -> usize {
    let mb = std::env::var("BENCH_MB")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|mb| *mb > 0.0)
        .unwrap_or(10.0);
    (mb * 1024.0 * 1024.0) as usize
}

/// A realistic mix: macros, a templated tiled kernel with shared arrays, loops, a condition,
/// atomics, a reduction and a launch, repeated with distinct names. Every other kernel
/// leaves its tile unpadded, a 32-way conflict that `fix` rewrites (and validates).
pub fn kernel(i: usize) -> String {
    let columns = if i.is_multiple_of(2) {
        format!("PAD_{i}(TILE_{i})")
    } else {
        format!("TILE_{i}")
    };
    format!(
        r#"#define TILE_{i} 32
#define PAD_{i}(n) ((n) + 1)
template <int ROWS>
__global__ void transpose_{i}(float *out, const float *in, int width)
{{
    __shared__ float tile[TILE_{i}][{columns}];
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

/// Kernels appended until the text reaches `target_bytes`: the text and the kernel count.
pub fn generated_source(target_bytes: usize) -> (String, usize) {
    let mut source = String::with_capacity(target_bytes + 4096);
    let mut kernels = 0;
    while source.len() < target_bytes {
        source.push_str(&kernel(kernels));
        kernels += 1;
    }
    (source, kernels)
}

mod memory;
pub use memory::peak_resident_mb;

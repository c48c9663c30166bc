// suite/mri_gridding.cu - TC 2016 benchmarks "MRI-grid-1" .. "MRI-grid-4"
// (Parboil mri-gridding: non-Cartesian MRI samples binned onto a grid).
//
// The application sorts the samples by grid cell (counts per cell, a prefix
// sum of the counts, a scatter) and then accumulates each sample into the
// cells around it. The paper gives only traced bank parameters for its four
// kernels, no code; this re-creation takes four shared-memory phases of
// such a pipeline whose patterns match those parameters:
//   MRI-grid-1 = mriScanCounts: work-efficient (Blelloch) exclusive scan of
//     1024 cell counts with 512 threads: up-sweep and down-sweep read and
//     write s[offset*(2t+1) - 1] and s[offset*(2t+2) - 1], strides 2*offset
//     (the paper's 16.3 average conflict degree comes from such a tree).
//     The CUDPP-style original pads every 32nd slot; this one does not.
//   MRI-grid-2 = mriBinSamples: 64 samples per block; their (kx, ky)
//     coordinates arrive interleaved and are staged coalesced, then each
//     thread reads its own pair: words 2t and 2t + 1, stride 2.
//   MRI-grid-3 = mriWeightSamples: each thread writes its weighted complex
//     value as an interleaved (re, im) pair, words 2t and 2t + 1, then the
//     block copies the pairs out coalesced.
//   MRI-grid-4 = mriGatherRecords: 128 samples of four floats (kx, ky, kz,
//     density weight) staged coalesced; each thread reads the four fields of
//     its record: words 4t + c, stride 4.
// Assumed: block sizes 512, 64, 64 and 128 threads; grid cells of an
// N = 128 grid.
//
// A correct analysis must find:
//   mriScanCounts: block 512x1x1; `s`: unsigned int [1024], 4096 bytes.
//     copy in and out s[t], s[t + 512]: linear; up-sweep and down-sweep
//     accesses under 2*offset*(t + 1) <= 1024: stride 2*offset over 512 /
//     offset threads: 2-, 4-, 8-, 16-way at offsets 1, 2, 4, 8 (16, 8, 4, 2
//     warps), 32-way at 16, then 16-, 8-, 4-, 2-way: 155 excess wavefronts
//     per site and sweep; s[1023] by thread 0.
//   mriBinSamples: block 64x1x1; `coords`: float [128]: stores coords[t],
//     coords[t + 64]: linear; loads coords[2t], coords[2t + 1]: 2-way.
//   mriWeightSamples: block 64x1x1; `pairs`: float [128]: stores pairs[2t],
//     pairs[2t + 1]: 2-way; loads pairs[t], pairs[t + 64]: linear.
//   mriGatherRecords: block 128x1x1; `records`: float [512]: stores
//     records[t + 128r]: linear; loads records[4t + c], c = 0..3: 4-way.

#define SCAN_N 1024
#define SCAN_THREADS (SCAN_N / 2)
#define BIN_THREADS 64
#define RECORD_THREADS 128
#define GRID_N 128

// The grid cell of a k-space coordinate in [-0.5, 0.5), clamped to the grid.
__device__ int gridCell(float k)
{
    const int c = int((k + 0.5f) * GRID_N);
    return c < 0 ? 0 : (c >= GRID_N ? GRID_N - 1 : c);
}

__global__ void mriScanCounts(const unsigned int *counts, unsigned int *starts)
{
    __shared__ unsigned int s[SCAN_N];

    const int t = threadIdx.x;
    const int base = blockIdx.x * SCAN_N;
    s[t] = counts[base + t];
    s[t + SCAN_THREADS] = counts[base + t + SCAN_THREADS];

    for (int offset = 1; offset < SCAN_N; offset *= 2) {   // up-sweep: partial sums
        __syncthreads();
        if (2 * offset * (t + 1) <= SCAN_N)
            s[offset * (2 * t + 2) - 1] += s[offset * (2 * t + 1) - 1];
    }
    __syncthreads();
    if (t == 0)
        s[SCAN_N - 1] = 0;
    for (int offset = SCAN_N / 2; offset > 0; offset /= 2) {   // down-sweep
        __syncthreads();
        if (2 * offset * (t + 1) <= SCAN_N) {
            const unsigned int left = s[offset * (2 * t + 1) - 1];
            s[offset * (2 * t + 1) - 1] = s[offset * (2 * t + 2) - 1];
            s[offset * (2 * t + 2) - 1] += left;
        }
    }
    __syncthreads();

    starts[base + t] = s[t];
    starts[base + t + SCAN_THREADS] = s[t + SCAN_THREADS];
}

__global__ void mriBinSamples(const float *kxy, unsigned int *cells)
{
    __shared__ float coords[2 * BIN_THREADS];

    const int t = threadIdx.x;
    const float *in = kxy + blockIdx.x * 2 * BIN_THREADS;
    coords[t] = in[t];
    coords[t + BIN_THREADS] = in[t + BIN_THREADS];
    __syncthreads();

    const float kx = coords[2 * t];
    const float ky = coords[2 * t + 1];
    cells[blockIdx.x * BIN_THREADS + t] = gridCell(ky) * GRID_N + gridCell(kx);
}

__global__ void mriWeightSamples(const float *re, const float *im, const float *density, float *weighted)
{
    __shared__ float pairs[2 * BIN_THREADS];

    const int t = threadIdx.x;
    const int sample = blockIdx.x * BIN_THREADS + t;
    pairs[2 * t] = re[sample] * density[sample];
    pairs[2 * t + 1] = im[sample] * density[sample];
    __syncthreads();

    float *out = weighted + blockIdx.x * 2 * BIN_THREADS;
    out[t] = pairs[t];
    out[t + BIN_THREADS] = pairs[t + BIN_THREADS];
}

__global__ void mriGatherRecords(const float *samples, float *reach)
{
    __shared__ float records[4 * RECORD_THREADS];

    const int t = threadIdx.x;
    const float *in = samples + blockIdx.x * 4 * RECORD_THREADS;
    for (int r = 0; r < 4; ++r)
        records[t + RECORD_THREADS * r] = in[t + RECORD_THREADS * r];
    __syncthreads();

    const float kx = records[4 * t];
    const float ky = records[4 * t + 1];
    const float kz = records[4 * t + 2];
    const float w = records[4 * t + 3];
    // How far the sample's kernel reaches, weighted: the gridding radius.
    reach[blockIdx.x * RECORD_THREADS + t] = w * sqrtf(kx * kx + ky * ky + kz * kz);
}

int main()
{
    const int samples = 1 << 20;
    unsigned int *counts = nullptr, *starts = nullptr, *cells = nullptr;
    float *kxy = nullptr, *re = nullptr, *im = nullptr, *density = nullptr, *weighted = nullptr;
    float *records = nullptr, *reach = nullptr;
    cudaMalloc(&counts, GRID_N * GRID_N * sizeof(unsigned int));
    cudaMalloc(&starts, GRID_N * GRID_N * sizeof(unsigned int));
    cudaMalloc(&cells, samples * sizeof(unsigned int));
    cudaMalloc(&kxy, 2 * samples * sizeof(float));
    cudaMalloc(&re, samples * sizeof(float));
    cudaMalloc(&im, samples * sizeof(float));
    cudaMalloc(&density, samples * sizeof(float));
    cudaMalloc(&weighted, 2 * samples * sizeof(float));
    cudaMalloc(&records, 4 * samples * sizeof(float));
    cudaMalloc(&reach, samples * sizeof(float));
    mriBinSamples<<<samples / BIN_THREADS, BIN_THREADS>>>(kxy, cells);
    mriScanCounts<<<GRID_N * GRID_N / SCAN_N, SCAN_THREADS>>>(counts, starts);
    mriWeightSamples<<<samples / BIN_THREADS, BIN_THREADS>>>(re, im, density, weighted);
    mriGatherRecords<<<samples / RECORD_THREADS, RECORD_THREADS>>>(records, reach);
    cudaDeviceSynchronize();
    return 0;
}

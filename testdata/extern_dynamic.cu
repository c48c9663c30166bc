// extern_dynamic.cu - dynamic shared memory declared as raw bytes and cast.
//
// Exercises: `extern __shared__ __align__(sizeof(double)) unsigned char smem_raw[];`
// followed by `double *dsm = reinterpret_cast<double*>(smem_raw);`, next to a
// second kernel with a plainly typed dynamic array that stays clean.
//
// A correct analysis must find:
//   kernel dotPartial: block 128x1x1 from `dotPartial<<<blocks, 128, 128 * sizeof(double)>>>`.
//     array `smem_raw`: unsigned char (1 B), extern/dynamic, dims [],
//       1024 bytes at the launch site; alignment 8 (__align__(sizeof(double))).
//       Read as doubles through `dsm = reinterpret_cast<double*>(smem_raw)`:
//       the accesses through dsm (dsm[tid] store, dsm[tid] += dsm[tid + s],
//       dsm[0] load) are 8-byte accesses of smem_raw, simulated as such
//       (consecutive doubles: conflict-free), and never rewritable: fix does
//       not rewrite accesses wider than the element yet.
//   kernel scaleRows: block 64x1x1 from `scaleRows<<<rows, 64, 64 * sizeof(float)>>>`.
//     array `srow`: float (4 B), extern/dynamic, dims [] (256 bytes at the
//       launch = 64 floats), rewritable. store srow[threadIdx.x]; load
//       srow[63 - threadIdx.x] (reversed, conflict-free).

__global__ void dotPartial(const double *a, const double *b, double *partial, int n)
{
    extern __shared__ __align__(sizeof(double)) unsigned char smem_raw[];
    double *dsm = reinterpret_cast<double*>(smem_raw);

    int tid = threadIdx.x;
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x)
        acc += a[i] * b[i];
    dsm[tid] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            dsm[tid] += dsm[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        partial[blockIdx.x] = dsm[0];
}

__global__ void scaleRows(float *m, const float *scale)
{
    extern __shared__ float srow[];
    float *row = m + blockIdx.x * 64;
    srow[threadIdx.x] = row[threadIdx.x] * scale[blockIdx.x];
    __syncthreads();
    row[threadIdx.x] = srow[63 - threadIdx.x];
}

int main()
{
    const int n = 1 << 16, blocks = 32, rows = 256;
    double *d_a, *d_b, *d_partial;
    float *d_m, *d_scale;
    cudaMalloc(&d_a, n * sizeof(double));
    cudaMalloc(&d_b, n * sizeof(double));
    cudaMalloc(&d_partial, blocks * sizeof(double));
    cudaMalloc(&d_m, rows * 64 * sizeof(float));
    cudaMalloc(&d_scale, rows * sizeof(float));
    dotPartial<<<blocks, 128, 128 * sizeof(double)>>>(d_a, d_b, d_partial, n);
    scaleRows<<<rows, 64, 64 * sizeof(float)>>>(d_m, d_scale);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

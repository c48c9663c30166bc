// suite/matrix_scan.cu - TC 2016 benchmark "matrix scan" (the matrix-based
// prefix sum of Dotsenko et al., ICS 2008, as used by StreamScan, PPoPP 2013).
//
// The application: a block scans THREADS * ROW inputs. The inputs are
// staged in shared memory as a THREADS x ROW matrix (coalesced copy); each
// thread scans its own row of ROW consecutive words serially, the row totals
// are scanned across the block, and each thread adds its row's offset to its
// row. The serial row walks read and write `m[t][k]`: lanes 8 words apart.
//
// Assumed: 256 threads and rows of 8 (the paper's trace selects the bits
// 3..7, a stride of 8 over a warp); the scan of the row totals is a
// Hillis-Steele scan on a separate array. The original pads each row (pitch
// ROW + 1); the paper's baseline, and this re-creation, does not.
//
// A correct analysis must find:
//   kernel matrixScan: block 256x1x1 from `<<<blocks, THREADS>>>`.
//   array `m`: float [256][8], 8192 bytes, rewritable.
//     stores and loads through `flat = &m[0][0]`, flat[k * 256 + t]: linear.
//     load m[t][k], store m[t][k] (scan), load+store m[t][k] (add offset):
//       stride 8: 8-way, 7 excess per warp request, 8 warps x 8 columns:
//       448 excess wavefronts per site.
//   array `totals`: float [256]: store totals[t], load totals[t - off]
//     (t >= off), load+store totals[t], load totals[t - 1]: linear.

#define THREADS 256
#define ROW 8

__global__ void matrixScan(const float *in, float *out)
{
    __shared__ float m[THREADS][ROW];
    __shared__ float totals[THREADS];

    const int t = threadIdx.x;
    const float *src = in + blockIdx.x * THREADS * ROW;
    float *dst = out + blockIdx.x * THREADS * ROW;
    float *flat = &m[0][0];

    for (int k = 0; k < ROW; ++k)
        flat[k * THREADS + t] = src[k * THREADS + t];
    __syncthreads();

    float run = 0.0f;
    for (int k = 0; k < ROW; ++k) {
        run += m[t][k];
        m[t][k] = run;
    }
    totals[t] = run;
    __syncthreads();

    for (int off = 1; off < THREADS; off *= 2) {
        const float left = t >= off ? totals[t - off] : 0.0f;
        __syncthreads();
        totals[t] += left;
        __syncthreads();
    }

    const float before = t > 0 ? totals[t - 1] : 0.0f;
    for (int k = 0; k < ROW; ++k)
        m[t][k] += before;
    __syncthreads();

    for (int k = 0; k < ROW; ++k)
        dst[k * THREADS + t] = flat[k * THREADS + t];
}

int main()
{
    const int blocks = 4096;
    float *in = nullptr, *out = nullptr;
    cudaMalloc(&in, blocks * THREADS * ROW * sizeof(float));
    cudaMalloc(&out, blocks * THREADS * ROW * sizeof(float));
    matrixScan<<<blocks, THREADS>>>(in, out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}

// strided.cu - stride-2 float access and a column walk over doubles.
//
// Exercises two patterns from van den Braak et al. (TC 2016, Sec. 3.2):
// a stride-2 index `s[2 * threadIdx.x]` (2-way conflict on 4-byte banks)
// and a column access of a `__shared__ double d[32][32]` (8-byte elements,
// each row 64 words long, so a whole column sits in the same bank pair).
//
// A correct analysis must find:
//   kernel pairSum: block 128x1x1 from `pairSum<<<blocks, 128>>>`.
//     array s: float [256] 1024 B, rewritable.
//     store s[threadIdx.x], store s[threadIdx.x + 128] (conflict-free)
//     load  s[2 * threadIdx.x], s[2 * threadIdx.x + 1] (2-way conflict each)
//   kernel colDot: block 32x1x1 from `colDot<<<blocks, 32>>>`.
//     array d: double (8 B) [32][32] 8192 B, rewritable.
//     store d[r][threadIdx.x] (loop over r; row-wise, conflict-free per phase)
//     load  d[threadIdx.x][k] (loop over k; column: all 32 lanes in banks
//           2k % 32 and 2k % 32 + 1 -> fully serialised; padding to
//           d[32][33] fixes it)

__global__ void pairSum(const float *in, float *out)
{
    __shared__ float s[256];
    const float *src = in + blockIdx.x * 256;
    s[threadIdx.x] = src[threadIdx.x];
    s[threadIdx.x + 128] = src[threadIdx.x + 128];
    __syncthreads();
    out[blockIdx.x * 128 + threadIdx.x] = s[2 * threadIdx.x] + s[2 * threadIdx.x + 1];
}

__global__ void colDot(const double *m, const double *v, double *out)
{
    __shared__ double d[32][32];
    const double *src = m + blockIdx.x * 1024;
    for (int r = 0; r < 32; ++r)
        d[r][threadIdx.x] = src[r * 32 + threadIdx.x];
    __syncthreads();
    double acc = 0.0;
    for (int k = 0; k < 32; ++k)
        acc += d[threadIdx.x][k] * v[k];
    out[blockIdx.x * 32 + threadIdx.x] = acc;
}

int main()
{
    const int blocks = 64;
    float *d_f, *d_fo;
    double *d_m, *d_v, *d_o;
    cudaMalloc(&d_f, blocks * 256 * sizeof(float));
    cudaMalloc(&d_fo, blocks * 128 * sizeof(float));
    cudaMalloc(&d_m, blocks * 1024 * sizeof(double));
    cudaMalloc(&d_v, 32 * sizeof(double));
    cudaMalloc(&d_o, blocks * 32 * sizeof(double));
    pairSum<<<blocks, 128>>>(d_f, d_fo);
    colDot<<<blocks, 32>>>(d_m, d_v, d_o);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

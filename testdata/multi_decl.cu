// multi_decl.cu - several declarators in one __shared__ declaration.
//
// Exercises: `__shared__ float a[32], b[32][33];` (two arrays in one
// declaration, different shapes) and `__shared__ int x, arr[64];` where the
// first declarator is a scalar.
//
// A correct analysis must find:
//   kernel multiDecl: block 64x1x1 from the launch `multiDecl<<<blocks, 64>>>`.
//   arrays (exactly three):
//     a    float (4 B), dims [32],     128 bytes, rewritable
//     b    float (4 B), dims [32][33], 4224 bytes (already padded), rewritable
//     arr  int   (4 B), dims [64],     256 bytes, rewritable
//   `x` is a __shared__ int SCALAR: not an array, must not be reported as
//   one (an analysis may list it as a shared scalar; its only uses are a
//   plain store `x = 0` and `atomicAdd(&x, ...)`, which is not an escape).
//   accesses:
//     arr[tid]               store, then load (inside atomicAdd's argument)
//     a[tid]                 store (guarded by tid < 32), load a[tid % 32]
//     b[r][tid % 32]         store in a loop over r (row-wise, conflict-free)
//     b[tid % 32][tid / 32]  load (column read; the 33 padding makes it conflict-free)

__global__ void multiDecl(const float *in, const int *counts, float *out, int *total)
{
    __shared__ float a[32], b[32][33];
    __shared__ int x, arr[64];

    int tid = threadIdx.x;
    if (tid == 0)
        x = 0;
    arr[tid] = counts[blockIdx.x * 64 + tid];
    if (tid < 32)
        a[tid] = in[blockIdx.x * 32 + tid];
    for (int r = tid / 32; r < 32; r += 2)
        b[r][tid % 32] = in[r * 32 + tid % 32];
    __syncthreads();

    atomicAdd(&x, arr[tid]);
    out[blockIdx.x * 64 + tid] = a[tid % 32] * b[tid % 32][tid / 32];
    __syncthreads();
    if (tid == 0)
        total[blockIdx.x] = x;
}

int main()
{
    const int blocks = 16;
    float *d_in, *d_out;
    int *d_counts, *d_total;
    cudaMalloc(&d_in, 32 * 32 * sizeof(float));
    cudaMalloc(&d_out, blocks * 64 * sizeof(float));
    cudaMalloc(&d_counts, blocks * 64 * sizeof(int));
    cudaMalloc(&d_total, blocks * sizeof(int));
    multiDecl<<<blocks, 64>>>(d_in, d_counts, d_out, d_total);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

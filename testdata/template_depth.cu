// template_depth.cu - a batched transpose whose batch depth is a template parameter.
//
// Exercises: `__shared__ float cube[DEPTH][8][32]` in a kernel template, the
// style of batched GEMM and attention kernels that stack one tile per warp
// group. The conflict is in the [8][32] matrix of each slice; DEPTH only
// counts the slices.
//
// A correct analysis must find:
//   kernel batchedTransposeDepth<4>: block 32x8x4 (from the launch in main()),
//     DEPTH = 4 from the launch's template argument.
//   array `cube`: float (4 bytes), dims [4][8][32], 4096 bytes, rewritable.
//   store cube[threadIdx.z][threadIdx.y][threadIdx.x]   conflict-free.
//   load  cube[threadIdx.z][l % 8][l / 8], l = threadIdx.y * 32 + threadIdx.x:
//         8-way, 224 excess wavefronts.
//   fix: the swizzle in place `[i][j][k ^ (j << 2)]`-style edits only the last
//   subscript, from the second: neither extent depends on DEPTH, so the map is
//   a bijection for every instance and the fix is safe (224 -> 0).

template <int DEPTH>
__global__ void batchedTransposeDepth(const float *in, float *out)
{
    __shared__ float cube[DEPTH][8][32];

    int batch = blockIdx.x * DEPTH + threadIdx.z;
    const float *src = in + batch * 256;
    float *dst = out + batch * 256;

    cube[threadIdx.z][threadIdx.y][threadIdx.x] = src[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();

    int l = threadIdx.y * 32 + threadIdx.x;   // element of the 32x8 output
    dst[l] = cube[threadIdx.z][l % 8][l / 8];
}

int main()
{
    const int batches = 64;
    float *d_in = nullptr, *d_out = nullptr;
    cudaMalloc(&d_in, batches * 256 * sizeof(float));
    cudaMalloc(&d_out, batches * 256 * sizeof(float));
    batchedTransposeDepth<4><<<batches / 4, dim3(32, 8, 4)>>>(d_in, d_out);
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}

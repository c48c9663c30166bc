// vector_views.cu - float4 and float2 views of float arrays, as tuned GEMM and
// transpose kernels load shared memory (issue 17, item 4).
//
// A view is one access of the view's width: a 16-byte view touches 4
// consecutive floats at once and is costed in quarter-warp phases. A fix must
// keep each aligned vector's elements together, so its map moves vectors whole.
//
// A correct analysis must find, for kernel vecTileGemm (block 64x1x1 from its
// launch), two rewritable arrays:
//   As  float [8 * 64]  2048 B  scalar stores As[(c * 4 + k) * 64 + r] (2-way
//                               each, the transposing store of a GEMM A tile);
//                               load As[d * 64 + (t / 8) * 8 + i]
//   Bs  float [8 * 64]  2048 B  store `reinterpret_cast<float4 *>(&Bs[...])[0]`
//                               (16 bytes, conflict-free); load Bs[d * 64 +
//                               (t % 8) * 8 + i] (2-way): fixed by a map that
//                               keeps the float4 stores whole
// and for kernel vecTranspose (block 16x16 from `dim3 threads(16, 16)`):
//   tile  float [16][64]  4096 B  store `*(float4 *)&tile[ty][tx * 4]` (16
//                                 bytes, conflict-free); load
//                                 tile[tx][ty * 4 + k] (a column: 16-way);
//                                 every lane reads word k of its float4,
//                                 so with the stores kept whole 8 banks
//                                 serve 32 lanes: 4-way at best
// and for kernel vecPairs (block 128x1x1):
//   s  float [512]  2048 B  store `reinterpret_cast<float2 *>(s)[t]` and
//                           `reinterpret_cast<float2 *>(s)[t + 128]` (8
//                           bytes, conflict-free); load s[t * 4 + k] (4-way;
//                           2-way at best with the float2 stores kept whole)

#define BK 8
#define BN 64

__global__ void vecTileGemm(const float *A, const float *B, float *C)
{
    __shared__ float As[BK * BN];
    __shared__ float Bs[BK * BN];
    int t = threadIdx.x;
    int r = t / 2, c = t % 2;
    float4 a = reinterpret_cast<const float4 *>(&A[r * BK + c * 4])[0];
    As[(c * 4 + 0) * BN + r] = a.x;
    As[(c * 4 + 1) * BN + r] = a.y;
    As[(c * 4 + 2) * BN + r] = a.z;
    As[(c * 4 + 3) * BN + r] = a.w;
    for (int row = t / 16; row < BK; row += 4)
        reinterpret_cast<float4 *>(&Bs[row * BN + (t % 16) * 4])[0] =
            reinterpret_cast<const float4 *>(&B[row * BN + (t % 16) * 4])[0];
    __syncthreads();
    float acc = 0.0f;
    for (int d = 0; d < BK; ++d)
        for (int i = 0; i < 8; ++i)
            acc += As[d * BN + (t / 8) * 8 + i] * Bs[d * BN + (t % 8) * 8 + i];
    C[blockIdx.x * 64 + t] = acc;
}

__global__ void vecTranspose(const float4 *in, float *out)
{
    __shared__ float tile[16][64];
    int tx = threadIdx.x, ty = threadIdx.y;
    *(float4 *)&tile[ty][tx * 4] = in[blockIdx.x * 256 + ty * 16 + tx];
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < 4; ++k)
        sum += tile[tx][ty * 4 + k];
    out[blockIdx.x * 256 + ty * 16 + tx] = sum;
}

__global__ void vecPairs(const float *in, float *out)
{
    __shared__ float s[512];
    int t = threadIdx.x;
    const float *g = in + blockIdx.x * 512;
    reinterpret_cast<float2 *>(s)[t] = make_float2(g[2 * t], g[2 * t + 1]);
    reinterpret_cast<float2 *>(s)[t + 128] = make_float2(g[2 * t + 256], g[2 * t + 257]);
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < 4; ++k)
        sum += s[t * 4 + k] * (k + 1);
    out[blockIdx.x * 128 + t] = sum;
}

int main()
{
    const int blocks = 4;
    float *d_a, *d_b, *d_c;
    float4 *d_in4;
    cudaMalloc(&d_a, blocks * 64 * 8 * sizeof(float));
    cudaMalloc(&d_b, 8 * 64 * sizeof(float));
    cudaMalloc(&d_c, blocks * 512 * sizeof(float));
    cudaMalloc(&d_in4, blocks * 256 * sizeof(float4));
    vecTileGemm<<<blocks, 64>>>(d_a, d_b, d_c);
    dim3 threads(16, 16);
    vecTranspose<<<blocks, threads>>>(d_in4, d_c);
    vecPairs<<<blocks, 128>>>(d_a, d_c);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

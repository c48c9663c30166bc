// suite/fwt.cu - TC 2016 benchmark "FWT" (CUDA SDK fastWalshTransform, the
// kernel that transforms one 2048-point vector per block in shared memory).
//
// The application: radix-4 butterflies. In a stage of span `stride` (512,
// 128, 32, 8, 2 - the values the paper lists in Sec. 3.2.4) thread `pos`
// owns the group of four elements i0, i0 + stride, i0 + 2*stride,
// i0 + 3*stride with `lo = pos & (stride - 1); i0 = ((pos - lo) << 2) + lo`.
// log2(2048) = 11 is odd, so a last radix-2 stage combines the neighbours
// 2*pos and 2*pos + 1.
//
// Assumed: 2048 points and N/4 = 512 threads per block, the array sized by
// the launch's dynamic shared-memory argument as in the SDK.
//
// A correct analysis must find:
//   kernel fwtVector2048: block 512x1x1 from the launch in main().
//   array `vec`: extern float, 2048 elements (8192 bytes at the launch), rewritable.
//     store vec[pos] / load vec[pos] (copy in and out, 4 iterations): linear.
//     the radix-4 loads and stores vec[i0 + c*stride], c = 0..3: a warp is
//       32 consecutive `pos`, so lanes split into sub-warps of `stride`
//       threads whose groups lie 4*stride apart: conflict-free for
//       stride >= 32, 4-way at stride 8 (words 0-7, 32-39, 64-71, 96-103, the
//       paper's example) and at stride 2 (2 words per group, 16 groups 8 apart).
//     the radix-2 loads and stores vec[2*pos], vec[2*pos + 1]: stride 2, 2-way.

#define LOG2_POINTS 11
#define POINTS (1 << LOG2_POINTS)

__global__ void fwtVector2048(float *data)
{
    extern __shared__ float vec[];
    float *block = data + blockIdx.x * POINTS;

    for (int pos = threadIdx.x; pos < POINTS; pos += blockDim.x)
        vec[pos] = block[pos];

    for (int stride = POINTS >> 2; stride > 0; stride >>= 2) {
        __syncthreads();
        for (int pos = threadIdx.x; pos < POINTS / 4; pos += blockDim.x) {
            int lo = pos & (stride - 1);
            int i0 = ((pos - lo) << 2) + lo;
            float a = vec[i0];
            float b = vec[i0 + stride];
            float c = vec[i0 + 2 * stride];
            float d = vec[i0 + 3 * stride];
            float ac = a + c, a_c = a - c;   // radix-2 over 2 * stride
            float bd = b + d, b_d = b - d;
            vec[i0] = ac + bd;               // radix-2 over stride
            vec[i0 + stride] = ac - bd;
            vec[i0 + 2 * stride] = a_c + b_d;
            vec[i0 + 3 * stride] = a_c - b_d;
        }
    }

    // An odd number of index bits leaves one radix-2 stage over neighbours.
    __syncthreads();
    for (int pos = threadIdx.x; pos < POINTS / 2; pos += blockDim.x) {
        float a = vec[2 * pos];
        float b = vec[2 * pos + 1];
        vec[2 * pos] = a + b;
        vec[2 * pos + 1] = a - b;
    }
    __syncthreads();

    for (int pos = threadIdx.x; pos < POINTS; pos += blockDim.x)
        block[pos] = vec[pos];
}

int main()
{
    const int vectors = 256;
    float *data = nullptr;
    cudaMalloc(&data, vectors * POINTS * sizeof(float));
    fwtVector2048<<<vectors, POINTS / 4, POINTS * sizeof(float)>>>(data);
    cudaDeviceSynchronize();
    cudaFree(data);
    return 0;
}

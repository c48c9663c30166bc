// device_helper.cu - a __device__ helper that owns a shared array.
//
// Exercises a __shared__ array declared inside a __device__ (non-kernel)
// function: it belongs to every kernel that calls the helper, and its block
// shape is the caller's. Also a __shared__ scalar in the kernel.
//
// A correct analysis must find:
//   function blockSumHelper (__device__): array s_warpSums float [32] 128 B,
//     rewritable. store s_warpSums[warp] (lane == 0); load s_warpSums[lane]
//     (warp == 0, lane < nwarps).
//   kernel normalize: block 512x1x1 from `normalize<<<blocks, 512>>>`; it calls
//     blockSumHelper, so s_warpSums is analysed with block 512x1x1.
//     `s_total` is a __shared__ float SCALAR, not an array: not reported as one.
//   No other shared arrays.

__device__ float blockSumHelper(float v)
{
    __shared__ float s_warpSums[32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int nwarps = (blockDim.x + 31) / 32;
    for (int off = 16; off > 0; off /= 2)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0)
        s_warpSums[warp] = v;
    __syncthreads();
    float total = 0.0f;
    if (warp == 0) {
        total = lane < nwarps ? s_warpSums[lane] : 0.0f;
        for (int off = 16; off > 0; off /= 2)
            total += __shfl_down_sync(0xffffffffu, total, off);
    }
    return total;   // valid in thread 0 only
}

__global__ void normalize(float *x, int n)
{
    __shared__ float s_total;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    float sum = blockSumHelper(v * v);
    if (threadIdx.x == 0)
        s_total = sum;
    __syncthreads();
    if (i < n)
        x[i] = v * rsqrtf(s_total + 1e-12f);
}

int main()
{
    const int n = 1 << 20, blocks = n / 512;
    float *d_x;
    cudaMalloc(&d_x, n * sizeof(float));
    normalize<<<blocks, 512>>>(d_x, n);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

// atomics.cu - every kind of read-modify-write on shared arrays.
//
// Exercises: atomicAdd, atomicMax, atomicCAS on `&arr[i]` (atomic accesses,
// not escapes), postfix ++ / prefix -- and compound += / *= (each one a
// load followed by a store of the same element).
//
// A correct analysis must find:
//   kernel warpStats: block 256x1x1 from `warpStats<<<blocks, 256>>>`.
//   arrays, all rewritable (nothing escapes):
//     s_sum    int   (4 B) [8]    store s_sum[tid] (tid < 8); atomic atomicAdd(&s_sum[warp], v); load s_sum[warp]
//     s_max    int   (4 B) [8]    store s_max[tid];           atomic atomicMax(&s_max[warp], v); load s_max[warp]
//     s_owner  int   (4 B) [8]    store s_owner[tid];         atomic atomicCAS(&s_owner[warp], -1, lane); load s_owner[warp]
//     s_count  int   (4 B) [256]  store s_count[tid]; s_count[tid]++ and
//                                 --s_count[tid] (load+store each); load s_count[tid]
//     s_acc    float (4 B) [256]  store s_acc[tid]; s_acc[tid] += ... and
//                                 s_acc[tid] *= 0.5f (load+store each); load s_acc[tid]
//   warp = threadIdx.x / 32, so s_sum/s_max/s_owner see one address per warp
//   (a same-address atomic: serialised by the atomic unit, not a bank conflict).

__global__ void warpStats(const int *in, int *out, float *mean, int n)
{
    __shared__ int s_sum[8];
    __shared__ int s_max[8];
    __shared__ int s_owner[8];
    __shared__ int s_count[256];
    __shared__ float s_acc[256];

    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    if (tid < 8) {
        s_sum[tid] = 0;
        s_max[tid] = -2147483647;
        s_owner[tid] = -1;
    }
    s_count[tid] = 0;
    s_acc[tid] = 0.0f;
    __syncthreads();

    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x) {
        int v = in[i];
        atomicAdd(&s_sum[warp], v);
        atomicMax(&s_max[warp], v);
        s_count[tid]++;
        if (v < 0)
            --s_count[tid];
        s_acc[tid] += (float)v;
    }
    atomicCAS(&s_owner[warp], -1, lane);
    s_acc[tid] *= 0.5f;
    __syncthreads();

    if (lane == s_owner[warp])
        out[(blockIdx.x * 8 + warp) * 2] = s_sum[warp] + s_max[warp];
    mean[blockIdx.x * blockDim.x + tid] = s_acc[tid] / (s_count[tid] + 1);
}

int main()
{
    const int n = 1 << 20, blocks = 128;
    int *d_in, *d_out;
    float *d_mean;
    cudaMalloc(&d_in, n * sizeof(int));
    cudaMalloc(&d_out, blocks * 16 * sizeof(int));
    cudaMalloc(&d_mean, blocks * 256 * sizeof(float));
    warpStats<<<blocks, 256>>>(d_in, d_out, d_mean, n);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

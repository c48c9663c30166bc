// reduction.cu - block sum reductions on a dynamically sized shared array.
//
// Exercises: `extern __shared__ float sdata[];` (no static size: the size
// comes from the third launch argument), the interleaved-addressing pattern
// `sdata[2*s*tid]` (van den Braak et al., TC 2016, Sec. 3.2) and the
// sequential-addressing pattern guarded by `if (tid < s)`.
//
// A correct analysis must find:
//   kernels reduceInterleaved and reduceSequential: block 256x1x1 from the
//     launch sites `<<<blocks, THREADS, THREADS * sizeof(float)>>>`.
//   array `sdata` (declared in each kernel): float (4 B), extern/dynamic,
//     dims [] - 1024 bytes at the launch sites = 256 floats; rewritable.
//   reduceInterleaved:
//     store sdata[tid]
//     load+store (+=) sdata[2 * s * tid], load sdata[2 * s * tid + s], in a
//       loop s = 1, 2, 4, ..., 128: lanes hit words 2s apart -> 2-, 4-, 8-way
//       conflicts at s = 1, 2, 4; 8-way at s = 8 and 16, 4-way at 32, 2-way
//       at 64 (only 16, 8, 4, 2 lanes of warp 0 still active), none at 128.
//     load  sdata[0]  (tid == 0; broadcast)
//   reduceSequential:
//     store sdata[tid]; load+store (+=) sdata[tid], load sdata[tid + s] under
//       `if (tid < s)`: conflict-free; load sdata[0].

#define THREADS 256

__global__ void reduceInterleaved(const float *in, float *out, unsigned n)
{
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (2 * s * tid < blockDim.x)
            sdata[2 * s * tid] += sdata[2 * s * tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

__global__ void reduceSequential(const float *in, float *out, unsigned n)
{
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

int main()
{
    const unsigned n = 1 << 20, blocks = n / THREADS;
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, blocks * sizeof(float));
    reduceInterleaved<<<blocks, THREADS, THREADS * sizeof(float)>>>(d_in, d_out, n);
    reduceSequential<<<blocks, THREADS, THREADS * sizeof(float)>>>(d_in, d_out, n);
    cudaDeviceSynchronize();
    return 0;
}

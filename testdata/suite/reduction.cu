// suite/reduction.cu - TC 2016 benchmark "reduction" (CUDA SDK reduction,
// the interleaved-addressing kernel).
//
// The application: each block sums THREADS inputs in a shared array. In
// round s (s = 1, 2, 4, ...) thread t adds the partial sum s slots to the
// right into slot 2*s*t, so the live partial sums spread out by a factor two
// per round (TC 2016 Sec. 3.2.3: `sdata[2*S*tx] += sdata[2*S*tx + s]`).
//
// Assumed: 256 threads per block, the SDK's default; a static array instead
// of the SDK's dynamically sized one.
//
// A correct analysis must find:
//   kernel reducePairsInterleaved: block 256x1x1 from `<<<blocks, THREADS>>>`.
//   array `partial`: float [256], 1024 bytes, rewritable.
//     store partial[t]: linear.
//     load+store partial[2*s*t] and load partial[2*s*t + s], active while
//       2*s*t < 256, for s = 1 .. 128: stride 2s. Per warp request: 2-way at
//       s = 1, 4-way at 2, 8-way at 4, 8 and 16 (16 and 8 lanes left at 8 and
//       16), 4-way at 32, 2-way at 64, none at 128.
//     load partial[0] by thread 0.

#define THREADS 256

__global__ void reducePairsInterleaved(const float *in, float *out, unsigned int n)
{
    __shared__ float partial[THREADS];

    const unsigned int t = threadIdx.x;
    const unsigned int i = blockIdx.x * THREADS + t;
    partial[t] = i < n ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int s = 1; s < THREADS; s *= 2) {
        if (2 * s * t < THREADS)
            partial[2 * s * t] += partial[2 * s * t + s];
        __syncthreads();
    }

    if (t == 0)
        out[blockIdx.x] = partial[0];
}

int main()
{
    const unsigned int n = 1 << 22;
    float *in = nullptr, *out = nullptr;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, (n / THREADS) * sizeof(float));
    reducePairsInterleaved<<<n / THREADS, THREADS>>>(in, out, n);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}

// histogram.cu - 256-bin histograms with data-dependent shared atomics.
//
// Exercises: `atomicAdd(&hist[bin], 1)` with a bin computed from input data
// (the conflict degree depends on the data, so it cannot be known
// statically), and the per-warp sub-histogram pattern of van den Braak et
// al. (TC 2016, Sec. 3.2), where a pointer `s_Hist + warp * BINS` is formed.
//
// A correct analysis must find:
//   kernel histBlock: block 256x1x1 from `histBlock<<<64, 256>>>`.
//     array `hist`: unsigned int (4 B), dims [256], 1024 bytes, rewritable
//       (the `&hist[...]` inside atomicAdd is an atomic access, NOT an escape).
//     store hist[b] (zeroing loop); atomic atomicAdd(&hist[bin], 1) with a
//       data-dependent index; load hist[b] (final merge).
//   kernel histPerWarp: block 192x1x1 from `histPerWarp<<<64, WARP_COUNT * 32>>>`.
//     array `s_Hist`: unsigned int (4 B), dims [1536] (WARP_COUNT * BINS =
//       6 * 256), 6144 bytes, rewritable: the pointer
//       `s_WarpHist = s_Hist + warp * BINS` is followed, so its atomicAdd on
//       s_WarpHist[(w >> (8 * k)) & 0xFFU] is an (atomic, data-dependent)
//       access of s_Hist at warp * BINS + bin.
//     store s_Hist[i] (zeroing loop), load s_Hist[b + w * BINS] (merge).

#define BINS 256
#define WARP_COUNT 6

__global__ void histBlock(const unsigned char *data, int n, unsigned int *out)
{
    __shared__ unsigned int hist[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        hist[b] = 0;
    __syncthreads();

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned int bin = data[i];
        atomicAdd(&hist[bin], 1);
    }
    __syncthreads();

    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        atomicAdd(&out[b], hist[b]);
}

__global__ void histPerWarp(const unsigned int *words, int n, unsigned int *partial)
{
    __shared__ unsigned int s_Hist[WARP_COUNT * BINS];
    for (int i = threadIdx.x; i < WARP_COUNT * BINS; i += blockDim.x)
        s_Hist[i] = 0;
    __syncthreads();

    int warp = threadIdx.x >> 5;
    unsigned int *s_WarpHist = s_Hist + warp * BINS;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned int w = words[i];   // four 8-bit samples per word
        for (int k = 0; k < 4; ++k)
            atomicAdd(&s_WarpHist[(w >> (8 * k)) & 0xFFU], 1);
    }
    __syncthreads();

    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int sum = 0;
        for (int w = 0; w < WARP_COUNT; ++w)
            sum += s_Hist[b + w * BINS];
        partial[blockIdx.x * BINS + b] = sum;
    }
}

int main()
{
    const int n = 1 << 22;
    unsigned char *d_data;
    unsigned int *d_hist, *d_partial;
    cudaMalloc(&d_data, n);
    cudaMalloc(&d_hist, BINS * sizeof(unsigned int));
    cudaMalloc(&d_partial, 64 * BINS * sizeof(unsigned int));
    histBlock<<<64, 256>>>(d_data, n, d_hist);
    histPerWarp<<<64, WARP_COUNT * 32>>>(reinterpret_cast<unsigned int *>(d_data), n / 4, d_partial);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

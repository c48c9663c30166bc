// suite/histogram64.cu - TC 2016 benchmark "hist64" (the replicated
// shared-memory histogram of the thesis, ch. 3 and 5, with 64 bins).
//
// The application: every block keeps COPIES = 32 private sub-histograms in
// shared memory, one per lane, so that the 32 lanes of a warp never vote in
// the same counter. Sub-histograms are stored one after the other
// (sub-histogram-major, `BIN_INDEX(bin, copy) = copy * BINS + bin`), so the
// same bin of every copy falls in the same bank: two lanes whose pixels map
// to bins with equal `bin mod 32` conflict. The conflicts depend on the
// image.
//
// Assumed: 256 threads per block, 8-bit pixels mapped to 64 bins by
// `pixel >> 2`, a grid-stride loop over the image; the merge sums the copies
// of a bin in a loop and adds them to the global histogram.
//
// A correct analysis must find:
//   kernel histogram64: block 256x1x1 from `<<<blocks, 256>>>`.
//   array `votes`: unsigned int [32 * 64], 8192 bytes, rewritable.
//     store votes[i] (zeroing, 8 iterations): linear.
//     atomic atomicAdd(&votes[copy * BINS + bin], 1u): data-dependent (random
//       class, not simulated); the lanes' copies lie 64 words apart, so only
//       the bins decide the banks.
//     load votes[c * BINS + b] (merge, 64 threads): linear.

#define BINS 64
#define COPIES 32

__global__ void histogram64(const unsigned char *pixels, int n, unsigned int *hist)
{
    __shared__ unsigned int votes[COPIES * BINS];

    const int copy = threadIdx.x % COPIES;
    for (int i = threadIdx.x; i < COPIES * BINS; i += blockDim.x)
        votes[i] = 0;
    __syncthreads();

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const unsigned int bin = pixels[i] >> 2;
        atomicAdd(&votes[copy * BINS + bin], 1u);
    }
    __syncthreads();

    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int sum = 0;
        for (int c = 0; c < COPIES; ++c)
            sum += votes[c * BINS + b];
        atomicAdd(&hist[b], sum);
    }
}

int main()
{
    const int n = 1536 * 1024;
    unsigned char *pixels = nullptr;
    unsigned int *hist = nullptr;
    cudaMalloc(&pixels, n);
    cudaMalloc(&hist, BINS * sizeof(unsigned int));
    histogram64<<<120, 256>>>(pixels, n, hist);
    cudaDeviceSynchronize();
    cudaFree(pixels);
    cudaFree(hist);
    return 0;
}

// suite/dwtHaar1D.cu - TC 2016 benchmark "dwtHaar1D" (CUDA SDK dwtHaar1D:
// the kernel that decomposes one signal block completely in shared memory).
//
// The application: a block loads 2 * THREADS samples, then runs the Haar
// decomposition level by level. At level j the surviving approximation
// coefficients lie `gap` = 2^j slots apart; thread t combines the pair at
// 2*gap*t and 2*gap*t + gap, writes the detail coefficient to global memory
// and keeps the approximation in place, until one value is left.
//
// Assumed: 256 threads and 512 samples per block (the SDK launches up to
// 512 threads on longer signals); approximations kept in place at spreading
// slots, which is the access pattern the paper's trace shows (strides 2, 4,
// ..., 512 in words).
//
// A correct analysis must find:
//   kernel haarDecompose: block 256x1x1 from the launch in main().
//   array `level`: float [512], 2048 bytes, rewritable.
//     stores level[t], level[t + 256]: linear.
//     loads level[2*gap*t], level[2*gap*t + gap], store level[2*gap*t] under
//       2*gap*t < 512, gap = 1 .. 256: stride 2*gap over the 512 / gap
//       active threads: 2-way at gap 1 (8 warps), 4-way at 2 (4 warps),
//       8-way at 4 (2 warps), 16-way at 8 and 16, 8-way at 32, 4-way at 64,
//       2-way at 128: 8 + 12 + 14 + 15 + 15 + 7 + 3 + 1 = 75 excess
//       wavefronts per site and block.
//     load level[0] by thread 0.

#define THREADS 256
#define SAMPLES (2 * THREADS)
#define INV_SQRT2 0.70710678f

__global__ void haarDecompose(const float *signal, float *details, float *approx)
{
    __shared__ float level[SAMPLES];

    const unsigned int t = threadIdx.x;
    const float *in = signal + blockIdx.x * SAMPLES;
    float *detail = details + blockIdx.x * SAMPLES;
    level[t] = in[t];
    level[t + THREADS] = in[t + THREADS];

    // Details of level j go to detail[SAMPLES / 2^(j+1) + t], the usual layout.
    for (unsigned int gap = 1; gap < SAMPLES; gap *= 2) {
        __syncthreads();
        if (2 * gap * t < SAMPLES) {
            const float a = level[2 * gap * t];
            const float b = level[2 * gap * t + gap];
            detail[SAMPLES / (2 * gap) + t] = (a - b) * INV_SQRT2;
            level[2 * gap * t] = (a + b) * INV_SQRT2;
        }
    }
    __syncthreads();

    if (t == 0)
        approx[blockIdx.x] = level[0];
}

int main()
{
    const int blocks = 4096;
    float *signal = nullptr, *details = nullptr, *approx = nullptr;
    cudaMalloc(&signal, blocks * SAMPLES * sizeof(float));
    cudaMalloc(&details, blocks * SAMPLES * sizeof(float));
    cudaMalloc(&approx, blocks * sizeof(float));
    haarDecompose<<<blocks, THREADS>>>(signal, details, approx);
    cudaDeviceSynchronize();
    cudaFree(signal);
    cudaFree(details);
    cudaFree(approx);
    return 0;
}

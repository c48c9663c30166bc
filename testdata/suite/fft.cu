// suite/fft.cu - TC 2016 benchmarks "FFT-1" and "FFT-2" (the shared-memory
// FFT of Gutierrez et al., ICCS 2009, which the paper adds to the SDK and
// Rodinia kernels).
//
// The application: complex data kept in shared memory as interleaved
// (re, im) float pairs, so every access by component is a word stride of 2
// times the element stride.
//   FFT-1 = fftStockham512: a radix-2 Stockham FFT of 512 points, 256
//     threads, one butterfly per thread and stage, ping-ponging between the
//     two halves of `buf`. Thread j reads x[j] and x[j + 256] (word stride 2)
//     and writes y[d] and y[d + span], d = ((j - lo) << 1) + lo with
//     lo = j & (span - 1): the outputs of a warp spread by 2 or more.
//   FFT-2 = fftTwiddle: the twiddle step between the two passes of a
//     four-step FFT: each thread scales its own complex element in place
//     (words 2t and 2t + 1: stride 2).
//
// Assumed: the paper does not give the sizes; 512-point transforms and
// 256-thread blocks; twiddle angles from the element index (cosf/sinf).
//
// A correct analysis must find:
//   kernel fftStockham512: block 256x1x1; array `buf`: float [2][1024], 8192
//     bytes. Copy in buf[0][t + 256*r] and out buf[1][...]: linear. Per
//     stage (9 stages, span = 1 .. 256): loads x[2j], x[2j + 1],
//     x[2(j + 256)], x[2(j + 256) + 1]: 2-way; stores y[2d], y[2d + 1],
//     y[2(d + span)], y[2(d + span) + 1]: 4-way at span 1 (words 4j), 2, 4
//     and 8 (groups of `span` elements 2*span apart), 2-way from span 16 up:
//     72 excess wavefronts per load, 4 * 24 + 5 * 8 = 136 per store.
//   kernel fftTwiddle: block 256x1x1; array `z`: float [512], 2048 bytes.
//     store z[t + 256*r] (copy in) and load z[...] (copy out): linear;
//     load z[2t], z[2t + 1], store z[2t], z[2t + 1]: 2-way, 1 excess per
//     warp request.

#define POINTS 512
#define LOG2_POINTS 9
#define THREADS (POINTS / 2)
#define TWO_PI 6.28318530718f

__global__ void fftStockham512(float *data)
{
    __shared__ float buf[2][2 * POINTS];   // two (re, im) interleaved vectors

    const int j = threadIdx.x;
    float *block = data + blockIdx.x * 2 * POINTS;
    for (int r = 0; r < 4; ++r)
        buf[0][j + THREADS * r] = block[j + THREADS * r];

    for (int stage = 0; stage < LOG2_POINTS; ++stage) {
        __syncthreads();
        const int span = 1 << stage;
        const float *x = buf[stage & 1];
        float *y = buf[(stage + 1) & 1];
        const float are = x[2 * j], aim = x[2 * j + 1];
        const float bre = x[2 * (j + THREADS)], bim = x[2 * (j + THREADS) + 1];
        const int lo = j & (span - 1);
        const float angle = -TWO_PI * lo / (2 * span);
        const float wre = cosf(angle), wim = sinf(angle);
        const float tre = wre * bre - wim * bim, tim = wre * bim + wim * bre;
        const int d = ((j - lo) << 1) + lo;
        y[2 * d] = are + tre;
        y[2 * d + 1] = aim + tim;
        y[2 * (d + span)] = are - tre;
        y[2 * (d + span) + 1] = aim - tim;
    }
    __syncthreads();

    // Nine stages end in the second half.
    for (int r = 0; r < 4; ++r)
        block[j + THREADS * r] = buf[1][j + THREADS * r];
}

__global__ void fftTwiddle(float *data, int row)
{
    __shared__ float z[2 * THREADS];

    const int t = threadIdx.x;
    float *block = data + blockIdx.x * 2 * THREADS;
    z[t] = block[t];
    z[t + THREADS] = block[t + THREADS];
    __syncthreads();

    const float angle = -TWO_PI * row * t / (THREADS * POINTS);
    const float wre = cosf(angle), wim = sinf(angle);
    const float re = z[2 * t], im = z[2 * t + 1];
    z[2 * t] = wre * re - wim * im;
    z[2 * t + 1] = wre * im + wim * re;
    __syncthreads();

    block[t] = z[t];
    block[t + THREADS] = z[t + THREADS];
}

int main()
{
    const int transforms = 1024;
    float *data = nullptr;
    cudaMalloc(&data, transforms * 2 * POINTS * sizeof(float));
    fftStockham512<<<transforms, THREADS>>>(data);
    fftTwiddle<<<transforms * POINTS / THREADS, THREADS>>>(data, 1);
    cudaDeviceSynchronize();
    cudaFree(data);
    return 0;
}

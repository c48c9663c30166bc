// loop_carried.cu - indices a loop carries from one iteration to the next in forms other
// than a counter's own step (issue 36, item 1), each in the style of the code it comes from.
//
// A correct analysis must find:
//   kernel ringWrite: block 256x1x1. pos = (pos + 1) & (RING - 1) each iteration, from
//     4 * threadIdx.x: lanes 4 words apart, 4-way, in each of the 4 iterations:
//     3 excess wavefronts per warp and iteration, 96 per block.
//   kernel ringStride: block 64x1x1. p = (p + 8) & 2047 from 32 * threadIdx.x: every lane
//     in one bank, 32-way: 31 per warp and iteration, 248 per block; the read after it,
//     buf[32 * threadIdx.x], 62.
// Each thread writes its own slots (no two threads write one word between barriers: the
// GPU would decide such a race, and no comparison of results could be trusted).
//   kernel waveletLevels: block 128x1x1. idx = idx * 2 per level from threadIdx.x: stride
//     1, 2, 4: 0, 1 and 3 excess wavefronts per warp, 16 per block.
//   kernel halvingStride: block 128x1x1. stride >>= 1 per step from 8 (its loop counts
//     steps, not the stride): strides 8, 4, 2, 1 of threadIdx.x: 7, 3, 1, 0 excess per warp,
//     44 per block.

#define RING 1024

__global__ void ringWrite(const float *in, float *out)
{
    __shared__ float ring[RING];
    int pos = threadIdx.x * 4;
    for (int k = 0; k < 4; ++k) {
        ring[pos] = in[k * 256 + threadIdx.x];
        pos = (pos + 1) & (RING - 1);
    }
    __syncthreads();
    out[threadIdx.x] = ring[threadIdx.x];
}

__global__ void ringStride(const float *in, float *out)
{
    __shared__ float buf[2048];
    int p = threadIdx.x * 32;
    for (int k = 0; k < 4; ++k) {
        buf[p] = in[k * 64 + threadIdx.x];
        p = (p + 8) & 2047;
    }
    __syncthreads();
    out[threadIdx.x] = buf[threadIdx.x * 32];
}

__global__ void waveletLevels(const float *in, float *out)
{
    __shared__ float coeffs[1024];
    int idx = threadIdx.x;
    for (int level = 0; level < 3; ++level) {
        coeffs[idx] = in[level * 128 + threadIdx.x];
        idx = idx * 2;
        __syncthreads();
    }
    out[threadIdx.x] = coeffs[threadIdx.x];
}

__global__ void halvingStride(const float *in, float *out)
{
    __shared__ float partial[1024];
    int stride = 8;
    for (int step = 0; step < 4; ++step) {
        partial[threadIdx.x * stride] = in[step * 128 + threadIdx.x];
        stride >>= 1;
        __syncthreads();
    }
    out[threadIdx.x] = partial[threadIdx.x];
}

int main()
{
    float *in, *out;
    cudaMalloc(&in, 4096 * sizeof(float));
    cudaMalloc(&out, 256 * sizeof(float));
    ringWrite<<<1, 256>>>(in, out);
    ringStride<<<1, 64>>>(in, out);
    waveletLevels<<<1, 128>>>(in, out);
    halvingStride<<<1, 128>>>(in, out);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

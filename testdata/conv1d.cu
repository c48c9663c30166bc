// conv1d.cu - 1-D convolution with a halo loaded into shared memory.
//
// Exercises the tiled-stencil pattern (van den Braak et al., TC 2016,
// Sec. 3.2): each block stages BLOCK inputs plus RADIUS halo cells on each
// side, the halo loaded by the first RADIUS threads under a guard. The
// filter taps live in __constant__ memory, which is not shared memory.
//
// A correct analysis must find:
//   kernel conv1d: block 256x1x1 from `conv1d<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>`.
//   array s_in: float [262] (BLOCK + 2 * RADIUS = 256 + 6) 1048 B, rewritable.
//     store s_in[l] (l = threadIdx.x + RADIUS)
//     store s_in[l - RADIUS] and s_in[l + BLOCK] under `if (threadIdx.x < RADIUS)`
//     load  s_in[l + k] in the tap loop k = -RADIUS..RADIUS (conflict-free)
//   c_weights is __constant__, NOT a shared array: must not be reported.

#define RADIUS 3
#define BLOCK 256

__constant__ float c_weights[2 * RADIUS + 1];

__global__ void conv1d(const float *in, float *out, int n)
{
    __shared__ float s_in[BLOCK + 2 * RADIUS];

    int g = blockIdx.x * BLOCK + threadIdx.x;
    int l = threadIdx.x + RADIUS;
    s_in[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int left = g - RADIUS, right = g + BLOCK;
        s_in[l - RADIUS] = left >= 0 ? in[left] : 0.0f;
        s_in[l + BLOCK] = right < n ? in[right] : 0.0f;
    }
    __syncthreads();

    float acc = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k)
        acc += c_weights[k + RADIUS] * s_in[l + k];
    if (g < n)
        out[g] = acc;
}

int main()
{
    const int n = 1000000;
    const float taps[2 * RADIUS + 1] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    cudaMemcpyToSymbol(c_weights, taps, sizeof(taps));
    conv1d<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(d_in, d_out, n);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

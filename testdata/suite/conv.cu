// suite/conv.cu - TC 2016 benchmarks "conv-1" and "conv-2" (CUDA SDK
// convolutionSeparable: the row pass and the column pass).
//
// The application: a separable 17-tap filter. Each pass stages a strip of
// the image with a one-step halo on both sides in shared memory, then every
// thread computes STEPS outputs, each a 17-term dot product along the strip.
//   conv-1 = convRows: block 16x4; strip `rows[4][160]` (10 steps of 16).
//     A warp holds two image rows (ty = 2w, 2w + 1) of 16 threads; the rows
//     lie 160 = 5 * 32 words apart, so the two half-warps hit the same banks.
//   conv-2 = convColumns: block 16x8; strip `cols[16][80]`, stored
//     transposed (tx picks the strip row, ty walks along it) so that the
//     17 taps of a thread are consecutive. Rows lie 80 words apart: lanes
//     with even tx share 16 banks with the odd ones shifted by 16, 8 each.
//
// Assumed: the SDK's default sizes (radius 8, 8 result steps, 1 halo step,
// blocks 16x4 and 16x8). The SDK pads the column strip to 81 words per row;
// as in the paper's baseline this re-creation does not pad.
//
// A correct analysis must find:
//   kernel convRows: block 16x4x1; array `rows`: float [4][160], 2560 bytes.
//     store rows[ty][tx + 16*s] (10 steps) and load rows[ty][tx + 16*s + k]
//     (8 steps x 17 taps): 2-way each, 1 excess wavefront per warp request;
//     2 warps: 20 + 272 = 292 excess wavefronts per block.
//   kernel convColumns: block 16x8x1; array `cols`: float [16][80], 5120 bytes.
//     store cols[tx][ty + 8*s] and load cols[tx][ty + 8*s + k]: 8-way, 7
//     excess per warp request; 4 warps: 280 + 3808 = 4088 per block.
//   c_taps is __constant__, not shared.

#define RADIUS 8
#define TAPS (2 * RADIUS + 1)
#define ROW_TX 16
#define ROW_TY 4
#define COL_TX 16
#define COL_TY 8
#define STEPS 8
#define HALO 1

__constant__ float c_taps[TAPS];

__global__ void convRows(float *dst, const float *src, int width, int pitch)
{
    __shared__ float rows[ROW_TY][(STEPS + 2 * HALO) * ROW_TX];

    // First column of the strip, halo included: may lie left of the image.
    const int x0 = (blockIdx.x * STEPS - HALO) * ROW_TX + threadIdx.x;
    const int y = blockIdx.y * ROW_TY + threadIdx.y;
    const float *in = src + y * pitch;
    float *out = dst + y * pitch;

    for (int s = 0; s < STEPS + 2 * HALO; ++s) {
        const int x = x0 + s * ROW_TX;
        rows[threadIdx.y][threadIdx.x + s * ROW_TX] = (x >= 0 && x < width) ? in[x] : 0.0f;
    }
    __syncthreads();

    for (int s = HALO; s < HALO + STEPS; ++s) {
        float acc = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; ++k)
            acc += c_taps[RADIUS - k] * rows[threadIdx.y][threadIdx.x + s * ROW_TX + k];
        out[x0 + s * ROW_TX] = acc;
    }
}

__global__ void convColumns(float *dst, const float *src, int height, int pitch)
{
    __shared__ float cols[COL_TX][(STEPS + 2 * HALO) * COL_TY];

    const int x = blockIdx.x * COL_TX + threadIdx.x;
    // First row of the strip, halo included: may lie above the image.
    const int y0 = (blockIdx.y * STEPS - HALO) * COL_TY + threadIdx.y;

    for (int s = 0; s < STEPS + 2 * HALO; ++s) {
        const int y = y0 + s * COL_TY;
        cols[threadIdx.x][threadIdx.y + s * COL_TY] = (y >= 0 && y < height) ? src[y * pitch + x] : 0.0f;
    }
    __syncthreads();

    for (int s = HALO; s < HALO + STEPS; ++s) {
        float acc = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; ++k)
            acc += c_taps[RADIUS - k] * cols[threadIdx.x][threadIdx.y + s * COL_TY + k];
        dst[(y0 + s * COL_TY) * pitch + x] = acc;
    }
}

int main()
{
    const int width = 3072, height = 3072;
    float *image = nullptr, *scratch = nullptr;
    cudaMalloc(&image, width * height * sizeof(float));
    cudaMalloc(&scratch, width * height * sizeof(float));
    convRows<<<dim3(width / (STEPS * ROW_TX), height / ROW_TY), dim3(ROW_TX, ROW_TY)>>>(scratch, image, width, width);
    convColumns<<<dim3(width / COL_TX, height / (STEPS * COL_TY)), dim3(COL_TX, COL_TY)>>>(image, scratch, height, width);
    cudaDeviceSynchronize();
    cudaFree(image);
    cudaFree(scratch);
    return 0;
}

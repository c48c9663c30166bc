// suite/hotspot.cu - TC 2016 conflict-free benchmark "hotspot" (Rodinia
// hotspot: transient chip temperature, several time steps per launch on a
// shrinking "pyramid" of valid cells).
//
// The application: a 16x16 block loads a tile of temperatures and power,
// then runs `steps` explicit time steps in shared memory; each step reads a
// cell and its four neighbours and writes the new temperature to a second
// tile, which is copied back before the next step. The valid region shrinks
// by one cell per step on each side.
//
// Assumed: Rodinia's 16x16 blocks and 2 steps per launch (its default
// pyramid height); the chip's border is not treated specially.
//
// A correct analysis must find no bank conflict:
//   kernel hotspotSteps: block 16x16x1 from the launch in main().
//   arrays `temp`, `power`, `next`: float [16][16]: every access is
//     [ty + a][tx + b] for constants a, b: a warp reads 32 consecutive words
//     (two rows) shifted by a constant.

#define BS 16
#define STEPS 2

__global__ void hotspotSteps(const float *powerIn, const float *tempIn, float *tempOut,
                             int cols, float cap, float rx, float ry, float rz, float amb)
{
    __shared__ float temp[BS][BS];
    __shared__ float power[BS][BS];
    __shared__ float next[BS][BS];

    const int tx = threadIdx.x, ty = threadIdx.y;
    // Blocks overlap by STEPS cells on each side so that the centre stays valid.
    const int x = blockIdx.x * (BS - 2 * STEPS) + tx;
    const int y = blockIdx.y * (BS - 2 * STEPS) + ty;
    temp[ty][tx] = tempIn[y * cols + x];
    power[ty][tx] = powerIn[y * cols + x];
    __syncthreads();

    for (int i = 0; i < STEPS; ++i) {
        const bool inside = tx > i && tx < BS - 1 - i && ty > i && ty < BS - 1 - i;
        if (inside) {
            next[ty][tx] = temp[ty][tx] + cap * (power[ty][tx]
                + (temp[ty + 1][tx] + temp[ty - 1][tx] - 2.0f * temp[ty][tx]) * ry
                + (temp[ty][tx + 1] + temp[ty][tx - 1] - 2.0f * temp[ty][tx]) * rx
                + (amb - temp[ty][tx]) * rz);
        }
        __syncthreads();
        if (inside)
            temp[ty][tx] = next[ty][tx];
        __syncthreads();
    }

    if (tx >= STEPS && tx < BS - STEPS && ty >= STEPS && ty < BS - STEPS)
        tempOut[y * cols + x] = temp[ty][tx];
}

int main()
{
    const int cols = 1024;
    float *power = nullptr, *tempIn = nullptr, *tempOut = nullptr;
    cudaMalloc(&power, cols * cols * sizeof(float));
    cudaMalloc(&tempIn, cols * cols * sizeof(float));
    cudaMalloc(&tempOut, cols * cols * sizeof(float));
    const int blocks = cols / (BS - 2 * STEPS);
    hotspotSteps<<<dim3(blocks, blocks), dim3(BS, BS)>>>(power, tempIn, tempOut, cols, 0.5f, 0.1f, 0.1f, 0.01f, 80.0f);
    cudaDeviceSynchronize();
    cudaFree(power);
    cudaFree(tempIn);
    cudaFree(tempOut);
    return 0;
}

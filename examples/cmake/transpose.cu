// Tiled transpose. The column read `tile[threadIdx.x][threadIdx.y + j]` makes the 32 lanes
// of a warp read words 32 apart: all in one bank, a 32-way bank conflict. Built through
// bankwise, the tile is stored swizzled and the conflict is gone; this file stays as it is.
#include "transpose.h"

#define TILE 32
#define ROWS 8

__global__ void transposeTile(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE][TILE];

    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];

    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

void transpose(float *out, const float *in, int width, int height)
{
    dim3 grid(width / TILE, height / TILE);
    transposeTile<<<grid, dim3(TILE, ROWS)>>>(out, in, width, height);
}

// A kernel defined in a header and launched from rowsum.cu. Lane x of a warp reads row x of
// the tile: words SUM_TILE apart, all in one bank, a 32-way bank conflict. Built through
// bankwise, the tile is stored swizzled in the copy nvcc compiles; this file stays as it is.
#pragma once

#include "tile_config.h"

// Adds the sums of the rows of each SUM_TILE x SUM_TILE tile of `in` (width elements a row) to `sums`.
template <typename T>
__global__ void rowSum(T *sums, const T *in, int width)
{
    __shared__ T tile[SUM_TILE][SUM_TILE];

    int row0 = blockIdx.y * SUM_TILE;
    int col = blockIdx.x * SUM_TILE + threadIdx.x;
    for (int j = 0; j < SUM_TILE; j += SUM_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(row0 + threadIdx.y + j) * width + col];

    __syncthreads();

    T partial = 0;
    for (int j = 0; j < SUM_TILE; j += SUM_ROWS)
        partial += tile[threadIdx.x][threadIdx.y + j];
    atomicAdd(&sums[row0 + threadIdx.x], partial);
}

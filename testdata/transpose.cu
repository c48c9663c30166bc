// transpose.cu - the classic tiled matrix transpose (the README's main example).
//
// Exercises: a 2-D __shared__ tile whose dims come from object-like #defines,
// a store and a load inside a strided for-loop, and a block shape taken from
// a launch site whose dim3 arguments are macros.
//
// A correct analysis must find:
//   kernel transposeCoalesced: block 32x8x1, from the launch site
//     `transposeCoalesced<<<grid, dim3(TILE_DIM, BLOCK_ROWS)>>>` in main().
//   array `tile`: float (4 bytes), dims [32][32] (TILE_DIM = 32), 4096 bytes,
//     no escapes -> rewritable.
//   two accesses, both inside `for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)`
//   (j = 0, 8, 16, 24):
//     store tile[threadIdx.y + j][threadIdx.x]  conflict-free: a warp is one
//           row of the block (x = 0..31), consecutive words, 32 banks.
//     load  tile[threadIdx.x][threadIdx.y + j]  32-way bank conflict: the 32
//           lanes read words 32 apart, all in bank (y + j) % 32.
//   The fix is padding: tile[TILE_DIM][TILE_DIM + 1] makes the load conflict-free.

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transposeCoalesced(float *odata, const float *idata, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];

    __syncthreads();

    // Swap the block coordinates: this block writes the mirrored tile.
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main()
{
    const int width = 1024, height = 1024;
    float *d_in = nullptr, *d_out = nullptr;
    cudaMalloc(&d_in, width * height * sizeof(float));
    cudaMalloc(&d_out, width * height * sizeof(float));

    dim3 grid(width / TILE_DIM, height / TILE_DIM);
    transposeCoalesced<<<grid, dim3(TILE_DIM, BLOCK_ROWS)>>>(d_out, d_in, width, height);
    cudaDeviceSynchronize();

    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}

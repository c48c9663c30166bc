// suite/transpose.cu - TC 2016 benchmark "transpose" (CUDA SDK matrix transpose).
//
// The application: an out-of-place transpose through a shared tile. A block
// copies a TILE x TILE square of the input row by row into the tile
// (coalesced global reads), then writes the mirrored square out row by row,
// reading the tile down its columns (coalesced global writes).
//
// Assumed (the paper's Sec. 3.2.1-3.2.2): TILE = 16 and a 16x16 block, the
// configuration whose warp pattern the paper lists (0, 16, ..., 240, 1, 17,
// ..., 241). The SDK's own fix pads the tile to [TILE][TILE + 1]; as in the
// paper's baseline, this re-creation does not pad.
//
// A correct analysis must find:
//   kernel transposeTile16: block 16x16x1 from `dim3(TILE, TILE)` in main().
//   array `tile`: float [16][16], 1024 bytes, rewritable.
//     store tile[ty][tx]: a warp is two tile rows, 32 consecutive words: no
//       conflict.
//     load  tile[tx][ty]: words 16*tx + ty, tx = 0..15, ty = 2w, 2w + 1:
//       8-way (TC 2016 Sec. 3.2.2), 7 excess wavefronts per warp, 56 per block.

#define TILE 16

__global__ void transposeTile16(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE][TILE];

    int column = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[row * width + column];

    __syncthreads();

    // The block's mirror image: swap the tile coordinates, keep the thread layout.
    column = blockIdx.y * TILE + threadIdx.x;
    row = blockIdx.x * TILE + threadIdx.y;
    out[row * height + column] = tile[threadIdx.x][threadIdx.y];
}

int main()
{
    const int width = 2048, height = 2048;
    float *in = nullptr, *out = nullptr;
    cudaMalloc(&in, width * height * sizeof(float));
    cudaMalloc(&out, width * height * sizeof(float));
    transposeTile16<<<dim3(width / TILE, height / TILE), dim3(TILE, TILE)>>>(out, in, width, height);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}

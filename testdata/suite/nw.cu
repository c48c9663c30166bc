// suite/nw.cu - TC 2016 benchmarks "NW-1" and "NW-2" (Rodinia nw:
// Needleman-Wunsch alignment, the kernels for the upper-left and the
// lower-right half of the score matrix).
//
// The application: the score matrix is processed in 16x16 tiles along
// anti-diagonals of tiles; a block of 16 threads fills one tile. The tile's
// scores and its north row and west column live in `h[17][17]`, the
// similarity scores in `sim[16][16]`. Inside the tile the threads sweep the
// anti-diagonals: on diagonal m thread t (t <= m) computes cell
// (m - t + 1, t + 1), so the lanes' cells lie 17 - 1 = 16 words apart in h
// (8-way: two banks) and 16 - 1 = 15 words apart in sim (odd: no conflict).
// NW-1 = nwUpperLeft and NW-2 = nwLowerRight differ only in which tiles
// their blocks take.
//
// Assumed: Rodinia's tile of 16 and 16-thread blocks (half a warp); the
// tile sweep is shared by both kernels through a device function.
//
// A correct analysis must find (each kernel, the same pattern twice):
//   block 16x1x1; arrays `h`: int [17][17], 1156 bytes, and `sim`: int
//   [16][16], 1024 bytes, both rewritable (passed to a device function of
//   the same file).
//   stores h[t + 1][0], h[0][t + 1] (stride 17, 1), sim[r][t]: conflict-free.
//   the sweep, first triangle (m = 0..15, t <= m) and second (m = 14..0):
//     loads h[y - 1][x - 1], h[y][x - 1], h[y - 1][x] and store h[y][x]:
//       stride 16 in words, up to 8-way; load sim[y - 1][x - 1]: stride 15,
//       conflict-free.
//   loads h[r + 1][t + 1] (copy out): linear.

#define TILE 16

__device__ int best3(int a, int b, int c)
{
    const int ab = a > b ? a : b;
    return ab > c ? ab : c;
}

// Fills the tile whose north-west halo corner is `corner` in `score`.
__device__ void sweepTile(int h[TILE + 1][TILE + 1], int sim[TILE][TILE], int *score,
                          const int *similarity, int cols, int penalty, int corner)
{
    const int t = threadIdx.x;
    for (int r = 0; r < TILE; ++r)
        sim[r][t] = similarity[corner + cols * (r + 1) + t + 1];
    if (t == 0)
        h[0][0] = score[corner];
    h[t + 1][0] = score[corner + cols * (t + 1)];
    h[0][t + 1] = score[corner + t + 1];
    __syncthreads();

    for (int m = 0; m < TILE; ++m) {   // upper-left triangle of the tile
        if (t <= m) {
            const int x = t + 1, y = m - t + 1;
            h[y][x] = best3(h[y - 1][x - 1] + sim[y - 1][x - 1],
                            h[y][x - 1] - penalty, h[y - 1][x] - penalty);
        }
        __syncthreads();
    }
    for (int m = TILE - 2; m >= 0; --m) {   // lower-right triangle
        if (t <= m) {
            const int x = t + TILE - m, y = TILE - t;
            h[y][x] = best3(h[y - 1][x - 1] + sim[y - 1][x - 1],
                            h[y][x - 1] - penalty, h[y - 1][x] - penalty);
        }
        __syncthreads();
    }

    for (int r = 0; r < TILE; ++r)
        score[corner + cols * (r + 1) + t + 1] = h[r + 1][t + 1];
}

// Tiles (bx, diagonal - 1 - bx) of the upper-left half, tile diagonal `diagonal`.
__global__ void nwUpperLeft(int *score, const int *similarity, int cols, int penalty, int diagonal)
{
    __shared__ int h[TILE + 1][TILE + 1];
    __shared__ int sim[TILE][TILE];
    const int bx = blockIdx.x, by = diagonal - 1 - bx;
    sweepTile(h, sim, score, similarity, cols, penalty, cols * TILE * by + TILE * bx);
}

// Tiles of the lower-right half: tile diagonal `diagonal` counted from the last one.
__global__ void nwLowerRight(int *score, const int *similarity, int cols, int penalty, int diagonal, int tiles)
{
    __shared__ int h[TILE + 1][TILE + 1];
    __shared__ int sim[TILE][TILE];
    const int bx = blockIdx.x + tiles - diagonal, by = tiles - 1 - blockIdx.x;
    sweepTile(h, sim, score, similarity, cols, penalty, cols * TILE * by + TILE * bx);
}

int main()
{
    const int tiles = 128, cols = tiles * TILE + 1, penalty = 10;
    int *score = nullptr, *similarity = nullptr;
    cudaMalloc(&score, cols * cols * sizeof(int));
    cudaMalloc(&similarity, cols * cols * sizeof(int));
    for (int d = 1; d <= tiles; ++d)
        nwUpperLeft<<<d, TILE>>>(score, similarity, cols, penalty, d);
    for (int d = tiles - 1; d >= 1; --d)
        nwLowerRight<<<d, TILE>>>(score, similarity, cols, penalty, d, tiles);
    cudaDeviceSynchronize();
    cudaFree(score);
    cudaFree(similarity);
    return 0;
}

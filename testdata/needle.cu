// needle.cu - a Needleman-Wunsch tile whose size is a build-time macro.
//
// Exercises issue 20: the tile's extent is `BLOCK_SIZE + 1`, a macro the
// build may set (`-D BLOCK_SIZE=32`). A map proven for one value must not
// be silently wrong for another: `fix` guards what it derived from the value.
//
// One block of BLOCK_SIZE threads fills a (BLOCK_SIZE + 1)^2 score tile
// whose row 0 and column 0 hold the north and west neighbours. On
// anti-diagonal d, thread t (t <= d) computes cell (d - t + 1, t + 1): the
// lanes' cells lie BLOCK_SIZE + 1 - 1 = 16 words apart in `score`.
//
// A correct analysis must find, with BLOCK_SIZE = 16 (the default, or
// `-D BLOCK_SIZE=16`), for kernel needleTile (block 16x1x1 from the launch
// `needleTile<<<tiles, BLOCK_SIZE>>>`):
//   array score: int [17][17] (BLOCK_SIZE + 1 squared), 1156 B, rewritable;
//   array cost: int [16][16], 1024 B, rewritable.
//   stores score[0][t + 1], score[t + 1][0] (halo), cost[r][t] (loop r);
//   the sweep loads score[y - 1][x - 1], score[y][x - 1], score[y - 1][x],
//   cost[y - 1][x - 1] and stores score[y][x]: 16 words apart in `score`
//   (lanes in two banks), 15 apart in `cost` (conflict-free);
//   the copy out loads score[r + 1][t + 1] (loop r).

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif

__global__ void needleTile(int *matrix, const int *similarity, int cols, int gap)
{
    __shared__ int score[BLOCK_SIZE + 1][BLOCK_SIZE + 1];
    __shared__ int cost[BLOCK_SIZE][BLOCK_SIZE];
    const int t = threadIdx.x;
    const int origin = blockIdx.x * BLOCK_SIZE * (cols + 1);

    score[0][t + 1] = matrix[origin + t + 1];
    score[t + 1][0] = matrix[origin + cols * (t + 1)];
    if (t == 0)
        score[0][0] = matrix[origin];
    for (int r = 0; r < BLOCK_SIZE; ++r)
        cost[r][t] = similarity[origin + cols * (r + 1) + t + 1];
    __syncthreads();

    for (int d = 0; d < BLOCK_SIZE; ++d) {
        if (t <= d) {
            const int x = t + 1, y = d - t + 1;
            const int diagonal = score[y - 1][x - 1] + cost[y - 1][x - 1];
            const int west = score[y][x - 1] - gap;
            const int north = score[y - 1][x] - gap;
            const int best = diagonal > west ? diagonal : west;
            score[y][x] = best > north ? best : north;
        }
        __syncthreads();
    }

    for (int r = 0; r < BLOCK_SIZE; ++r)
        matrix[origin + cols * (r + 1) + t + 1] = score[r + 1][t + 1];
}

int main()
{
    const int tiles = 64, cols = tiles * BLOCK_SIZE + 1;
    int *matrix = nullptr, *similarity = nullptr;
    cudaMalloc(&matrix, cols * cols * sizeof(int));
    cudaMalloc(&similarity, cols * cols * sizeof(int));
    needleTile<<<tiles, BLOCK_SIZE>>>(matrix, similarity, cols, 10);
    cudaDeviceSynchronize();
    return 0;
}

// macro_sizes.cu - array dimensions computed by the preprocessor.
//
// Exercises: an object-like #define, a function-like #define
// `#define PAD(n) ((n) + 1)`, nested macros, and integer arithmetic in a
// dimension (`TILE * 2 + 1`, `HALF_TILE * 4`).
//
// A correct analysis must find, for kernel macroTiles (block 32x8x1 from the
// launch `macroTiles<<<blocks, dim3(TILE, ROWS)>>>` with TILE = 32, ROWS = 8):
//   m_plain  float [32]      128 B   (TILE)
//   m_pad    float [32][33]  4224 B  (TILE x PAD(TILE))
//   m_arith  float [65]      260 B   (TILE * 2 + 1)
//   m_nested int   [8][64]   2048 B  (ROWS x HALF_TILE * 4, HALF_TILE = TILE / 2)
// all rewritable. Accesses:
//   store m_plain[threadIdx.x] (y == 0); load m_plain[threadIdx.y]
//   store m_pad[r][threadIdx.x] (loop r = threadIdx.y; r < TILE; r += ROWS);
//   load  m_pad[threadIdx.x][r] (same loop; column read, conflict-free thanks to PAD)
//   store m_arith[threadIdx.x * 2] (y == 0, 2-way conflict); load m_arith[threadIdx.x + 1]
//   store m_nested[threadIdx.y][threadIdx.x], m_nested[threadIdx.y][threadIdx.x + TILE];
//   load+store (+=) m_nested[threadIdx.y][threadIdx.x], then load m_nested[threadIdx.y][threadIdx.x]

#define TILE 32
#define ROWS 8
#define HALF_TILE (TILE / 2)
#define PAD(n) ((n) + 1)

__global__ void macroTiles(const float *in, float *out)
{
    __shared__ float m_plain[TILE];
    __shared__ float m_pad[TILE][PAD(TILE)];
    __shared__ float m_arith[TILE * 2 + 1];
    __shared__ int m_nested[ROWS][HALF_TILE * 4];

    const float *src = in + blockIdx.x * TILE * TILE;
    int x = threadIdx.x, y = threadIdx.y;
    if (y == 0) {
        m_plain[x] = src[x];
        m_arith[x * 2] = src[x] * 0.5f;
    }
    for (int r = y; r < TILE; r += ROWS)
        m_pad[r][x] = src[r * TILE + x];
    m_nested[y][x] = x * y;
    m_nested[y][x + TILE] = x + y;
    __syncthreads();

    float acc = m_plain[y] + m_arith[x + 1];
    for (int r = y; r < TILE; r += ROWS)
        acc += m_pad[x][r];
    m_nested[y][x] += (int)acc;
    out[(blockIdx.x * ROWS + y) * TILE + x] = acc + m_nested[y][x];
}

int main()
{
    const int blocks = 64;
    float *d_in, *d_out;
    cudaMalloc(&d_in, blocks * TILE * TILE * sizeof(float));
    cudaMalloc(&d_out, blocks * ROWS * TILE * sizeof(float));
    macroTiles<<<blocks, dim3(TILE, ROWS)>>>(d_in, d_out);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

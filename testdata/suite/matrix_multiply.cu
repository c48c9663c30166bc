// suite/matrix_multiply.cu - TC 2016 conflict-free benchmark "matrix
// multiply" (Parboil sgemm: C = A * B with register tiling).
//
// The application: a block of 16x8 threads computes a 128x16 tile of C.
// Each thread keeps one column of 16 results in registers. Per step of 8
// along k, the block stages an 8 x 16 tile of B in shared memory (one
// element per thread, linear); then each thread takes one element of A from
// global memory per k and multiplies it with a whole row of the B tile,
// which every lane reads at the same address (broadcast).
//
// Assumed: Parboil's tile sizes (TILE_N 16, TILE_TB_HEIGHT 8, TILE_M 128);
// column-major A and C as in Parboil; dimensions multiples of the tiles.
//
// A correct analysis must find no bank conflict:
//   kernel sgemmRegisterTiled: block 16x8x1 from the launch in main().
//   array `bTile`: float [8][16], 512 bytes: store bTile[ty][tx] (linear),
//     load bTile[i][j] (broadcast: i and j are loop counters).

#define TILE_N 16
#define TILE_TB_HEIGHT 8
#define TILE_M (TILE_N * TILE_TB_HEIGHT)

__global__ void sgemmRegisterTiled(const float *A, int lda, const float *B, int ldb, float *C, int ldc, int k)
{
    __shared__ float bTile[TILE_TB_HEIGHT][TILE_N];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.x * TILE_M + ty * TILE_N + tx;   // of A and C
    const int col0 = blockIdx.y * TILE_N;                     // first column of B and C
    float c[TILE_N];
    for (int j = 0; j < TILE_N; ++j)
        c[j] = 0.0f;

    for (int k0 = 0; k0 < k; k0 += TILE_TB_HEIGHT) {
        bTile[ty][tx] = B[(col0 + tx) * ldb + k0 + ty];
        __syncthreads();
        for (int i = 0; i < TILE_TB_HEIGHT; ++i) {
            const float a = A[row + (k0 + i) * lda];
            for (int j = 0; j < TILE_N; ++j)
                c[j] += a * bTile[i][j];
        }
        __syncthreads();
    }

    for (int j = 0; j < TILE_N; ++j)
        C[row + (col0 + j) * ldc] = c[j];
}

int main()
{
    const int m = 1024, n = 1024, k = 1024;
    float *A = nullptr, *B = nullptr, *C = nullptr;
    cudaMalloc(&A, m * k * sizeof(float));
    cudaMalloc(&B, k * n * sizeof(float));
    cudaMalloc(&C, m * n * sizeof(float));
    sgemmRegisterTiled<<<dim3(m / TILE_M, n / TILE_N), dim3(TILE_N, TILE_TB_HEIGHT)>>>(A, m, B, k, C, m, k);
    cudaDeviceSynchronize();
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    return 0;
}

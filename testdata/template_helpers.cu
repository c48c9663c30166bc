// template_helpers.cu - shared tiles passed to template __device__ helpers
// called with explicit template arguments, as warp-tiled GEMMs load their
// tiles (issue 17, item 6).
//
// A correct analysis must find, for kernel gemmTiles (block 128x1x1 from its
// launch), two rewritable arrays, each reached through a helper instance that
// the call's template arguments name:
//   As  float [16 * 128]  8192 B  store As[c * BM + r] inside
//                                 loadTransposed<128, 16> (c = t % 16,
//                                 r = t / 16: a column, 16-way); loads
//                                 As[k * TILE_M + t] (linear)
//   Bs  float [16 * 128]  8192 B  store Bs[r * BN + c] inside
//                                 loadRows<16, 128> (linear); loads
//                                 Bs[k * TILE_N + t] (linear)
// and for kernel gemmTilesScoped (block 128x1x1), the same transposing store
// of `As2` through `tiles::loadColumns<TILE_M, TILE_K>`, a helper in a
// namespace.
//
// `fix` copies loadTransposed as a template (`template <int BM, int BK>`
// kept) whose store goes through the map, and calls the copy with the same
// template arguments; the copy of loadColumns is written in a reopened
// `namespace tiles { … }` and called through that namespace.

#define TILE_M 128
#define TILE_N 128
#define TILE_K 16

template <int BM, int BK>
__device__ void loadTransposed(const float *A, float *As, int lda)
{
    const int r = threadIdx.x / BK, c = threadIdx.x % BK;
    for (int row = r; row < BM; row += blockDim.x / BK)
        As[c * BM + row] = A[row * lda + c];
}

template <int BK, int BN>
__device__ void loadRows(const float *B, float *Bs, int ldb)
{
    const int c = threadIdx.x % BN;
    for (int r = threadIdx.x / BN; r < BK; r += blockDim.x / BN)
        Bs[r * BN + c] = B[r * ldb + c];
}

namespace tiles {
template <int BM, int BK>
__device__ void loadColumns(const float *A, float *As, int lda)
{
    const int r = threadIdx.x / BK, c = threadIdx.x % BK;
    for (int row = r; row < BM; row += blockDim.x / BK)
        As[c * BM + row] = A[row * lda + c];
}
} // namespace tiles

__global__ void gemmTiles(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TILE_K * TILE_M];
    __shared__ float Bs[TILE_K * TILE_N];
    const int t = threadIdx.x;
    float acc = 0.0f;
    loadTransposed<TILE_M, TILE_K>(A, As, n);
    loadRows<TILE_K, TILE_N>(B, Bs, n);
    __syncthreads();
    for (int k = 0; k < TILE_K; ++k)
        acc += As[k * TILE_M + t] * Bs[k * TILE_N + t];
    C[t] = acc;
}

__global__ void gemmTilesScoped(const float *A, float *C, int n)
{
    __shared__ float As2[TILE_K * TILE_M];
    const int t = threadIdx.x;
    float acc = 0.0f;
    tiles::loadColumns<TILE_M, TILE_K>(A, As2, n);
    __syncthreads();
    for (int k = 0; k < TILE_K; ++k)
        acc += As2[k * TILE_M + t];
    C[t] = acc;
}

int main()
{
    float *a = nullptr, *b = nullptr, *c = nullptr;
    gemmTiles<<<1, 128>>>(a, b, c, 128);
    gemmTilesScoped<<<1, 128>>>(a, c, 128);
    return 0;
}

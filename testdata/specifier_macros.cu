// specifier_macros.cu - declaration specifiers behind macros, as RAFT
// (`DI`, `HDI`, `RAFT_KERNEL`), tiny-cuda-nn (`TCNN_HOST_DEVICE`) and ggml
// (`GGML_CUDA_RESTRICT`, `GGML_API`) write them (issue 17, item 1). The
// grammar sees the text before preprocessing, where `DI float f(...)` or
// `const float * GGML_CUDA_RESTRICT p` reads as two types in a row: each such
// use is parsed as the preprocessor leaves it, so no function here has a
// syntax error and the helpers keep their `__device__`.
//
// A correct analysis must find:
//   raftTranspose (block 32x8x1 from its launch; `RAFT_KERNEL` stands for
//   `__global__ void`):
//     tile  float [32][32]  4096 B  store tile[ty + j][tx] (linear), load
//                                   tile[tx][ty + j] (a column, 32-way)
//   ggmlColumns (block 32x8x1; its inputs are `GGML_CUDA_RESTRICT` locals):
//     buf   float [32][32]  4096 B  store buf[ty + j][tx] (linear), load
//                                   buf[tx][ty + j] through the `HDI` helper
//                                   `column` (a column, 32-way)
//   tcnnScale (block 256x1x1; `TCNN_HOST_DEVICE` helper, no shared
//   access): vals  float [256]  1024 B  linear, no conflict
// `fix` rewrites tile and buf (32-way -> conflict-free).

#define RAFT_HIDDEN __attribute__((visibility("hidden")))
#define RAFT_KERNEL RAFT_HIDDEN __global__ void
#define DI inline __device__
#define HDI inline __host__ __device__
#define TCNN_HOST_DEVICE __host__ __device__
#if defined(USE_PDL) && defined(__CUDA_ARCH__)
#define GGML_CUDA_RESTRICT
#else
#define GGML_CUDA_RESTRICT __restrict__
#endif
#define GGML_API extern

#define TILE 32
#define ROWS 8

GGML_API void ggml_log_note(const char *text);

template <typename IntType>
constexpr HDI IntType ceildiv(IntType a, IntType b)
{
    return (a + b - 1) / b;
}

DI float twice(float v) { return 2.0f * v; }

HDI float column(const float (*rows)[TILE], int col, int row)
{
    return rows[col][row];
}

RAFT_KERNEL raftTranspose(float *out, const float *in, int n)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * n + x] = twice(tile[threadIdx.x][threadIdx.y + j]);
}

static __global__ void ggmlColumns(const float *src_ptr, float *dst_ptr, int n)
{
    const float * GGML_CUDA_RESTRICT src = src_ptr;
    float * GGML_CUDA_RESTRICT dst = dst_ptr;
    __shared__ float buf[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        buf[threadIdx.y + j][threadIdx.x] = src[(y + j) * n + x];
    __syncthreads();
    for (int j = 0; j < TILE; j += ROWS)
        dst[(y + j) * n + x] = column(buf, threadIdx.x, threadIdx.y + j);
}

struct Scale {
    float factor;
    TCNN_HOST_DEVICE float operator()(float v) const { return factor * v; }
};

__global__ void tcnnScale(float *data, Scale scale)
{
    __shared__ float vals[256];
    vals[threadIdx.x] = data[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    data[blockIdx.x * 256 + threadIdx.x] = scale(vals[threadIdx.x]);
}

int main()
{
    float *in = nullptr, *out = nullptr;
    const int n = 1024;
    dim3 grid(ceildiv(n, TILE), ceildiv(n, TILE));
    dim3 block(TILE, ROWS);
    raftTranspose<<<grid, block>>>(out, in, n);
    ggmlColumns<<<grid, block>>>(in, out, n);
    tcnnScale<<<ceildiv(n * n, 256), 256>>>(out, Scale{2.0f});
    return 0;
}

// const_sizes.cu - array dimensions from C++ constants rather than macros.
//
// Exercises dims taken from a namespace-scope `const int`, a `constexpr int`,
// an anonymous `enum { BLOCK = 128 };`, a `sizeof(float4) / sizeof(float)`
// expression, and arithmetic mixing them.
//
// A correct analysis must find, for kernel stencilConst (block 128x1x1 from
// `__launch_bounds__(BLOCK)`, BLOCK = 128; there is no launch site):
//   k_lanes  float [4][128]  2048 B  (ROWS_PER_BLOCK x BLOCK, const int ROWS_PER_BLOCK = 4)
//   k_halo   float [136]     544 B   (BLOCK + 2 * HALO, constexpr int HALO = 4)
//   k_vec    float [128][4]  2048 B  (BLOCK x sizeof(float4) / sizeof(float))
// all rewritable. Accesses:
//   store k_lanes[r][threadIdx.x] (loop over r < ROWS_PER_BLOCK), load k_lanes[r][threadIdx.x]
//   store k_halo[threadIdx.x + HALO]; store k_halo[threadIdx.x] and
//         k_halo[threadIdx.x + BLOCK + HALO] (threadIdx.x < HALO);
//         load k_halo[threadIdx.x + HALO + d] for d = -HALO..HALO
//   store k_vec[threadIdx.x][c] (loop c < VEC), load k_vec[threadIdx.x][c]
//         (lanes 4 words apart: 4-way conflict)

const int ROWS_PER_BLOCK = 4;
constexpr int HALO = 4;
enum { BLOCK = 128 };
constexpr int VEC = sizeof(float4) / sizeof(float);

__global__ void __launch_bounds__(BLOCK) stencilConst(const float *in, float *out, int n)
{
    __shared__ float k_lanes[ROWS_PER_BLOCK][BLOCK];
    __shared__ float k_halo[BLOCK + 2 * HALO];
    __shared__ float k_vec[BLOCK][sizeof(float4) / sizeof(float)];

    int g = blockIdx.x * BLOCK + threadIdx.x;
    for (int r = 0; r < ROWS_PER_BLOCK; ++r)
        k_lanes[r][threadIdx.x] = in[(r * gridDim.x) * BLOCK + g];
    k_halo[threadIdx.x + HALO] = in[g];
    if (threadIdx.x < HALO) {
        k_halo[threadIdx.x] = g >= HALO ? in[g - HALO] : 0.0f;
        k_halo[threadIdx.x + BLOCK + HALO] = g + BLOCK < n ? in[g + BLOCK] : 0.0f;
    }
    for (int c = 0; c < VEC; ++c)
        k_vec[threadIdx.x][c] = in[g * VEC + c];
    __syncthreads();

    float acc = 0.0f;
    for (int d = -HALO; d <= HALO; ++d)
        acc += k_halo[threadIdx.x + HALO + d];
    for (int r = 0; r < ROWS_PER_BLOCK; ++r)
        acc += k_lanes[r][threadIdx.x];
    for (int c = 0; c < VEC; ++c)
        acc *= k_vec[threadIdx.x][c];
    out[g] = acc;
}

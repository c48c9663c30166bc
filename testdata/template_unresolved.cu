// template_unresolved.cu - a template size the file alone cannot determine.
//
// Exercises a `template <int BS>` kernel that is neither explicitly
// instantiated nor launched in this translation unit (its users live in other
// files), so both its shared array size and its block shape depend on BS.
//
// A correct analysis must find:
//   kernel blockSum<BS>: array s_part float [BS], size UNKNOWN; block shape
//     from `__launch_bounds__(BS)`, also UNKNOWN. The analysis must say that
//     it needs a value for BS (e.g. "pass -D BS=..."), not guess one and not
//     fail the whole file. With bankwise's `-D BS=128`: s_part float [128],
//     512 B, block 128x1x1. (That is a bankwise option binding the template
//     parameter; the same -D given to nvcc would break `template <int BS>`.)
//   array s_part: rewritable once BS is known (without -D BS its extent and the
//     block shape are unknown, so it is not). store s_part[tid]; load+store (+=) s_part[tid],
//     load s_part[tid + s] under `if (tid < s)`; load s_part[0].
//   kernel fixedSum (same file, no template): s_fixed float [256], block
//     256x1x1 from `__launch_bounds__(256)` -- fully known, rewritable;
//     store s_fixed[threadIdx.x], load s_fixed[k] (k = threadIdx.x + 32 * i).

template <int BS>
__global__ void __launch_bounds__(BS) blockSum(const float *in, float *out)
{
    __shared__ float s_part[BS];
    int tid = threadIdx.x;
    s_part[tid] = in[blockIdx.x * BS + tid];
    __syncthreads();
    for (int s = BS / 2; s > 0; s >>= 1) {
        if (tid < s)
            s_part[tid] += s_part[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = s_part[0];
}

__global__ void __launch_bounds__(256) fixedSum(const float *in, float *out)
{
    __shared__ float s_fixed[256];
    s_fixed[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    if (threadIdx.x < 32) {
        float acc = 0.0f;
        for (int k = threadIdx.x; k < 256; k += 32)
            acc += s_fixed[k];
        out[blockIdx.x * 32 + threadIdx.x] = acc;
    }
}

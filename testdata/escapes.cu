// escapes.cu - shared arrays whose address leaves what bankwise can follow.
//
// Exercises four pointers that go out of sight, one per array, next to two
// arrays in the same kernel that are only ever subscripted. A rewrite
// (padding, swizzling) is only safe when every use of the array is an access
// the tool can see; bankwise follows pointers into shared arrays (see
// pointers.cu), so each pointer here is lost in a way no analysis can follow.
//
// A correct analysis must find, for kernel escapeMix (block 32x1x1 from
// `escapeMix<<<blocks, 32>>>`):
//   e_addr   float [32][32] 4096 B  ESCAPES: `flat = &e_addr[0][0]` is passed
//            to printf, which is not defined in this file -> non-rewritable
//   e_arith  float [64]     256 B   ESCAPES: `upper = e_arith + 32` is cast to
//            the integer type size_t -> non-rewritable
//   e_call   float [32]     128 B   ESCAPES: passed to __device__ function
//            `warpTotal(e_call)`, which stores it in the global `g_last`
//            -> non-rewritable
//   e_ptr    float [32]     128 B   ESCAPES: `float *p = e_ptr;` may point to
//            global memory after `if (tid == 0) p = out;` -> non-rewritable
//   clean_a  float [32][33] 4224 B  rewritable; store clean_a[r][tid] in a
//            loop, load clean_a[tid][r] (padded column read, conflict-free)
//   clean_b  float [64]     256 B   rewritable; store clean_b[tid],
//            store clean_b[tid + 32], load clean_b[2 * tid] (2-way conflict)
//   The accesses before the pointers are lost (e.g. store e_addr[r][tid],
//   load flat[tid * 33 % 1024], the loads of v[i] inside warpTotal) are still
//   reported as accesses.

__device__ const float *g_last;

__device__ float warpTotal(const float *v)
{
    float s = 0.0f;
    for (int i = 0; i < 32; ++i)
        s += v[i];
    g_last = v;
    return s;
}

__global__ void escapeMix(const float *in, float *out)
{
    __shared__ float e_addr[32][32];
    __shared__ float e_arith[64];
    __shared__ float e_call[32];
    __shared__ float e_ptr[32];
    __shared__ float clean_a[32][33];
    __shared__ float clean_b[64];

    int tid = threadIdx.x;
    const float *src = in + blockIdx.x * 1024;
    for (int r = 0; r < 32; ++r) {
        e_addr[r][tid] = src[r * 32 + tid];
        clean_a[r][tid] = src[r * 32 + tid] * 2.0f;
    }
    e_arith[tid] = src[tid];
    e_arith[tid + 32] = src[tid + 32];
    e_call[tid] = src[tid] + 1.0f;
    e_ptr[tid] = src[tid] - 1.0f;
    clean_b[tid] = src[tid];
    clean_b[tid + 32] = src[tid + 32];
    __syncthreads();

    float *flat = &e_addr[0][0];
    float *upper = e_arith + 32;
    float *p = e_ptr;
    if (tid == 0)
        p = out;
    float acc = flat[tid * 33 % 1024] + upper[tid] + warpTotal(e_call) + p[31 - tid];
    if (acc < 0.0f)
        printf("%p %llu\n", flat, (unsigned long long)(size_t)upper);
    for (int r = 0; r < 32; ++r)
        acc += clean_a[tid][r];
    out[blockIdx.x * 32 + tid] = acc + clean_b[2 * tid];
}

int main()
{
    const int blocks = 64;
    float *d_in, *d_out;
    cudaMalloc(&d_in, blocks * 1024 * sizeof(float));
    cudaMalloc(&d_out, blocks * 32 * sizeof(float));
    escapeMix<<<blocks, 32>>>(d_in, d_out);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

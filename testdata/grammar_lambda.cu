// nvcc-flags: --extended-lambda
// grammar_lambda.cu - extended __device__ lambdas touching shared arrays.
//
// Line 1 tells scripts/nvcc-env to pass --extended-lambda to nvcc.
// Exercises the `[&] __device__ (int i) { ... }` lambda syntax (capture list,
// then an execution-space specifier, then the parameter list) inside a
// kernel, and a host-side `[=] __device__` lambda passed to a templated kernel.
//
// A correct analysis must find:
//   kernel lambdaInKernel: block 128x1x1 from `lambdaInKernel<<<blocks, 128>>>`.
//     array s_buf float [128] 512 B, rewritable (only ever subscripted,
//     never escapes). Its store `s_buf[i] = ...` sits inside
//     the lambda body `put`, with i the lambda's parameter (bound to
//     threadIdx.x at the only call `put(threadIdx.x)`); load s_buf[127 - threadIdx.x]
//     is a plain access. An analysis that does not follow lambdas must still
//     find the store and report its index as unresolved; it must not crash.
//   kernel applyKernel<F>: block 128x1x1 from the launch in main().
//     array s_vals float [128] 512 B, rewritable; store s_vals[threadIdx.x],
//     load s_vals[(threadIdx.x + 1) % 128].

__global__ void lambdaInKernel(float *out, float scale)
{
    __shared__ float s_buf[128];
    auto put = [&] __device__ (int i) { s_buf[i] = i * scale; };
    put(threadIdx.x);
    __syncthreads();
    out[blockIdx.x * 128 + threadIdx.x] = s_buf[127 - threadIdx.x];
}

template <typename F>
__global__ void applyKernel(float *out, F f)
{
    __shared__ float s_vals[128];
    s_vals[threadIdx.x] = f(blockIdx.x * 128 + threadIdx.x);
    __syncthreads();
    out[blockIdx.x * 128 + threadIdx.x] = s_vals[(threadIdx.x + 1) % 128];
}

int main()
{
    const int blocks = 4;
    float *d_out;
    cudaMalloc(&d_out, blocks * 128 * sizeof(float));
    lambdaInKernel<<<blocks, 128>>>(d_out, 0.5f);
    float bias = 3.0f;
    applyKernel<<<blocks, 128>>>(d_out, [=] __device__ (int i) { return i + bias; });
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

// no_shared.cu - a file with kernels but no shared memory at all.
//
// Exercises the empty case: kernels, a __device__ function, local arrays
// (`float taps[4]`, in registers/local memory, NOT shared) and a __constant__
// array, but no __shared__ declaration anywhere.
//
// A correct analysis must find: kernels saxpy (block 256x1x1 from
// `saxpy<<<..., 256>>>`) and smooth4 (block 128x1x1 from `smooth4<<<..., 128>>>`),
// ZERO shared arrays, ZERO shared accesses, and no bank conflicts. It must
// succeed (not error) on this file; a rewrite must leave it unchanged.

__constant__ float c_gain[4];

__device__ float clampUnit(float v)
{
    return fminf(fmaxf(v, 0.0f), 1.0f);
}

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void smooth4(const float *in, float *out, int n)
{
    float taps[4];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 4; ++k)
        taps[k] = (i + k < n) ? in[i + k] * c_gain[k] : 0.0f;
    if (i < n)
        out[i] = clampUnit(taps[0] + taps[1] + taps[2] + taps[3]);
}

int main()
{
    const int n = 1 << 20;
    float *d_x, *d_y;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, d_x, d_y);
    smooth4<<<(n + 127) / 128, 128>>>(d_x, d_y, n);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

// suite/scalar_product.cu - TC 2016 conflict-free benchmark "scalar product"
// (CUDA SDK scalarProd).
//
// The application: a block computes the dot product of one pair of vectors.
// ACCUM slots each accumulate every ACCUM-th product (a thread serves
// ACCUM / THREADS slots), then a tree halves the slots with sequential
// addressing: slot i adds slot i + stride, so the lanes always read
// consecutive words.
//
// Assumed: the SDK's 1024 accumulators and 256 threads per block; each
// vector's length is a multiple of 1024.
//
// A correct analysis must find no bank conflict:
//   kernel scalarProduct: block 256x1x1 from `<<<pairs, THREADS>>>`.
//   array `accum`: float [1024], 4096 bytes: store accum[slot] (slot = t +
//     256k), load+store accum[slot] and load accum[stride + slot] under
//     slot < stride: linear; load accum[0] by thread 0.

#define ACCUM 1024
#define THREADS 256

__global__ void scalarProduct(float *result, const float *a, const float *b, int length)
{
    __shared__ float accum[ACCUM];

    const float *va = a + blockIdx.x * length;
    const float *vb = b + blockIdx.x * length;
    for (int slot = threadIdx.x; slot < ACCUM; slot += blockDim.x) {
        float sum = 0.0f;
        for (int i = slot; i < length; i += ACCUM)
            sum += va[i] * vb[i];
        accum[slot] = sum;
    }

    for (int stride = ACCUM / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        for (int slot = threadIdx.x; slot < stride; slot += blockDim.x)
            accum[slot] += accum[stride + slot];
    }

    if (threadIdx.x == 0)
        result[blockIdx.x] = accum[0];
}

int main()
{
    const int pairs = 256, length = 4096;
    float *a = nullptr, *b = nullptr, *result = nullptr;
    cudaMalloc(&a, pairs * length * sizeof(float));
    cudaMalloc(&b, pairs * length * sizeof(float));
    cudaMalloc(&result, pairs * sizeof(float));
    scalarProduct<<<pairs, THREADS>>>(result, a, b, length);
    cudaDeviceSynchronize();
    cudaFree(a);
    cudaFree(b);
    cudaFree(result);
    return 0;
}

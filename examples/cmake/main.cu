// Transposes a 1024 x 1024 matrix on the GPU and checks the result on the host.
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

#include "transpose.h"

int main()
{
    const int n = 1024;
    std::vector<float> host(n * n), back(n * n);
    for (int i = 0; i < n * n; ++i)
        host[i] = static_cast<float>(i);
    float *in = nullptr;
    float *out = nullptr;
    if (cudaMalloc(&in, n * n * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&out, n * n * sizeof(float)) != cudaSuccess) {
        std::fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    cudaMemcpy(in, host.data(), n * n * sizeof(float), cudaMemcpyHostToDevice);
    transpose(out, in, n, n);
    cudaMemcpy(back.data(), out, n * n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(in);
    cudaFree(out);
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
            if (back[c * n + r] != host[r * n + c]) {
                std::fprintf(stderr, "wrong at (%d, %d)\n", r, c);
                return 1;
            }
    std::printf("transpose of %d x %d: correct\n", n, n);
    return 0;
}

// Transposes a 1024 x 1024 matrix on the GPU and sums its rows, and checks both on the host.
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

#include "rowsum.h"
#include "transpose.h"

int main()
{
    const int n = 1024;
    std::vector<float> host(n * n), back(n * n);
    for (int i = 0; i < n * n; ++i)
        host[i] = static_cast<float>(i);
    float *in = nullptr;
    float *out = nullptr;
    float *sums = nullptr;
    if (cudaMalloc(&in, n * n * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&out, n * n * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&sums, n * sizeof(float)) != cudaSuccess) {
        std::fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    cudaMemcpy(in, host.data(), n * n * sizeof(float), cudaMemcpyHostToDevice);
    transpose(out, in, n, n);
    cudaMemcpy(back.data(), out, n * n * sizeof(float), cudaMemcpyDeviceToHost);
    std::vector<float> row(n);
    cudaMemset(sums, 0, n * sizeof(float));
    row_sums(sums, in, n, n);
    cudaMemcpy(row.data(), sums, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(in);
    cudaFree(out);
    cudaFree(sums);
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
            if (back[c * n + r] != host[r * n + c]) {
                std::fprintf(stderr, "wrong at (%d, %d)\n", r, c);
                return 1;
            }
    for (int r = 0; r < n; ++r) {
        // Each row holds r*n .. r*n + n-1: exact in float up to 2^24 per element, and the
        // sum's rounding depends on the order of the atomics, so compare loosely.
        double expected = static_cast<double>(r) * n * n + n * (n - 1) / 2.0;
        if (row[r] < 0.999 * expected || row[r] > 1.001 * expected) {
            std::fprintf(stderr, "row %d sums to %g, not %g\n", r, row[r], expected);
            return 1;
        }
    }
    std::printf("transpose and row sums of %d x %d: correct\n", n, n);
    return 0;
}

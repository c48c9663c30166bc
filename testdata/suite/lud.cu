// suite/lud.cu - TC 2016 benchmarks "LUD-1" and "LUD-2" (Rodinia lud: the
// diagonal-block kernel and the perimeter kernel of the blocked LU
// decomposition).
//
// The application: the matrix is factorised in BS x BS blocks.
//   LUD-1 = ludDiagonal: one block of BS threads factorises the diagonal
//     block in shared memory. In step i, thread t (t > i) first finishes
//     L(t, i), reading and writing its own row at column i: `d[t][i]`, words
//     16 apart across the lanes; then U(i + 1, t) along row i + 1 (linear).
//   LUD-2 = ludPerimeter: 2 * BS threads. The first BS solve the block to
//     the right of the diagonal (row strip, column t: linear walks down a
//     column), the other BS the block below it (column strip, row t - BS:
//     `left[t - BS][i]`, words 16 apart across the lanes).
//
// Assumed: BS = 16, Rodinia's block size, and its 1-D blocks of 16 and 32
// threads (a warp of LUD-1 has 16 lanes). Written as the textbook Doolittle
// recurrences rather than Rodinia's loop nest; the shared accesses are the
// same.
//
// A correct analysis must find:
//   kernel ludDiagonal: block 16x1x1. Array `d`: float [16][16], 1024 bytes.
//     d[t][i] and d[t][j] in the column step (t > i): 16 lanes at most, stride
//     16: banks i and 16 + i, up to 8-way; d[i][j], d[j][i], d[i][i]:
//     broadcast; d[i + 1][t], d[j][t], d[r][t]: linear.
//   kernel ludPerimeter: block 32x1x1. Arrays `diag`, `right`, `below`:
//     float [16][16] each. below[r][i] and below[r][j] (lanes 16..31, stride
//     16): 8-way; everything else linear or broadcast.

#define BS 16

__global__ void ludDiagonal(float *a, int n, int offset)
{
    __shared__ float d[BS][BS];

    const int t = threadIdx.x;
    float *corner = a + offset * n + offset;
    for (int r = 0; r < BS; ++r)
        d[r][t] = corner[r * n + t];
    __syncthreads();

    for (int i = 0; i < BS - 1; ++i) {
        // Column i of L below the diagonal: l(t, i) = (a(t, i) - sum_j l(t, j) u(j, i)) / u(i, i).
        if (t > i) {
            float s = d[t][i];
            for (int j = 0; j < i; ++j)
                s -= d[t][j] * d[j][i];
            d[t][i] = s / d[i][i];
        }
        __syncthreads();
        // Row i + 1 of U right of the diagonal: u(i+1, t) = a(i+1, t) - sum_j l(i+1, j) u(j, t).
        if (t > i) {
            float s = d[i + 1][t];
            for (int j = 0; j <= i; ++j)
                s -= d[i + 1][j] * d[j][t];
            d[i + 1][t] = s;
        }
        __syncthreads();
    }

    for (int r = 1; r < BS; ++r)
        corner[r * n + t] = d[r][t];
}

__global__ void ludPerimeter(float *a, int n, int offset)
{
    __shared__ float diag[BS][BS];
    __shared__ float right[BS][BS];
    __shared__ float below[BS][BS];

    const int t = threadIdx.x;
    float *corner = a + offset * n + offset;
    const int strip = (blockIdx.x + 1) * BS;
    // Each half loads half of the diagonal block and its own strip.
    if (t < BS) {
        for (int r = 0; r < BS / 2; ++r)
            diag[r][t] = corner[r * n + t];
        for (int r = 0; r < BS; ++r)
            right[r][t] = corner[r * n + strip + t];
    } else {
        const int c = t - BS;
        for (int r = BS / 2; r < BS; ++r)
            diag[r][c] = corner[r * n + c];
        for (int r = 0; r < BS; ++r)
            below[r][c] = corner[(strip + r) * n + c];
    }
    __syncthreads();

    if (t < BS) {
        // Forward substitution with the unit lower triangle, one column per thread.
        const int c = t;
        for (int i = 1; i < BS; ++i)
            for (int j = 0; j < i; ++j)
                right[i][c] -= diag[i][j] * right[j][c];
    } else {
        // Solve x U = b for one row of the strip below per thread.
        const int r = t - BS;
        for (int i = 0; i < BS; ++i) {
            for (int j = 0; j < i; ++j)
                below[r][i] -= below[r][j] * diag[j][i];
            below[r][i] /= diag[i][i];
        }
    }
    __syncthreads();

    if (t < BS) {
        for (int r = 0; r < BS; ++r)
            corner[r * n + strip + t] = right[r][t];
    } else {
        const int c = t - BS;
        for (int r = 0; r < BS; ++r)
            corner[(strip + r) * n + c] = below[r][c];
    }
}

int main()
{
    const int n = 2048;
    float *a = nullptr;
    cudaMalloc(&a, n * n * sizeof(float));
    for (int offset = 0; offset < n - BS; offset += BS) {
        ludDiagonal<<<1, BS>>>(a, n, offset);
        ludPerimeter<<<(n - offset) / BS - 1, 2 * BS>>>(a, n, offset);
    }
    cudaDeviceSynchronize();
    cudaFree(a);
    return 0;
}

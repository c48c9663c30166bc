// fwt.cu - radix-4 Fast Walsh Transform butterflies in shared memory.
//
// Exercises: the FWT index pattern from van den Braak et al. (TC 2016,
// Sec. 3.2): `lo = pos & (stride - 1); i0 = ((pos - lo) << 2) + lo;` with
// the stride shrinking by 4 each stage; sizes from nested #defines.
//
// A correct analysis must find:
//   kernel fwtRadix4: block 256x1x1 from `fwtRadix4<<<batches, FWT_THREADS>>>`.
//   array `s`: float (4 B), dims [1024] (FWT_N = 1 << 10), 4096 bytes, rewritable.
//   accesses:
//     store s[pos]                   initial load loop, conflict-free
//     load  s[i0], s[i1], s[i2], s[i3]; store s[i0], s[i1], s[i2], s[i3]
//       with i1 = i0 + stride, i2 = i1 + stride, i3 = i2 + stride, per stage
//       stride = 256, 64, 16, 4, 1: conflict-free for stride >= 32, 2-way at
//       stride 16, 4-way at stride 4 and at stride 1.
//     load  s[pos]                   final store-out loop, conflict-free

#define LOG2_FWT_N 10
#define FWT_N (1 << LOG2_FWT_N)
#define FWT_THREADS (FWT_N / 4)

__global__ void fwtRadix4(float *data)
{
    __shared__ float s[FWT_N];
    float *base = data + blockIdx.x * FWT_N;

    for (int pos = threadIdx.x; pos < FWT_N; pos += blockDim.x)
        s[pos] = base[pos];

    for (int stride = FWT_N >> 2; stride > 0; stride >>= 2) {
        __syncthreads();
        for (int pos = threadIdx.x; pos < FWT_N / 4; pos += blockDim.x) {
            int lo = pos & (stride - 1);
            int i0 = ((pos - lo) << 2) + lo;
            int i1 = i0 + stride;
            int i2 = i1 + stride;
            int i3 = i2 + stride;

            float d0 = s[i0], d1 = s[i1], d2 = s[i2], d3 = s[i3];
            float e0 = d0 + d2, e2 = d0 - d2;   // butterfly over 2 * stride
            float e1 = d1 + d3, e3 = d1 - d3;
            s[i0] = e0 + e1;                     // butterfly over stride
            s[i1] = e0 - e1;
            s[i2] = e2 + e3;
            s[i3] = e2 - e3;
        }
    }
    __syncthreads();

    for (int pos = threadIdx.x; pos < FWT_N; pos += blockDim.x)
        base[pos] = s[pos];
}

int main()
{
    const int batches = 128;
    float *d_data;
    cudaMalloc(&d_data, batches * FWT_N * sizeof(float));
    fwtRadix4<<<batches, FWT_THREADS>>>(d_data);
    cudaDeviceSynchronize();
    cudaFree(d_data);
    return 0;
}

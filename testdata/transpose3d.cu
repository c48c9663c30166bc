// transpose3d.cu - a 3-D shared tile indexed with threadIdx.x/y/z.
//
// Exercises: three-dimensional __shared__ array, a 3-D block shape from a
// launch site `dim3(32, 8, 4)`, and a load whose indices are derived from the
// thread index through a linearised id.
//
// Each z-slice of `cube` holds one 8x32 matrix of a batch; the kernel writes
// each matrix transposed (32x8).
//
// A correct analysis must find:
//   kernel batchedTranspose8x32: block 32x8x4 (from the launch in main()).
//   array `cube`: float (4 bytes), dims [4][8][32], 4096 bytes, rewritable.
//   store cube[threadIdx.z][threadIdx.y][threadIdx.x]   conflict-free.
//   load  cube[threadIdx.z][l % 8][l / 8], l = threadIdx.y * 32 + threadIdx.x
//         within a warp (fixed y, z; x = 0..31): word = z*256 + (x%8)*32 + y*4 + x/8,
//         bank = y*4 + x/8 -> 4 banks, each hit by 8 distinct words: 8-way conflict.
//         Padding the innermost dim to 33 removes it.

__global__ void batchedTranspose8x32(const float *in, float *out)
{
    __shared__ float cube[4][8][32];

    int batch = blockIdx.x * 4 + threadIdx.z;
    const float *src = in + batch * 256;
    float *dst = out + batch * 256;

    cube[threadIdx.z][threadIdx.y][threadIdx.x] = src[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();

    int l = threadIdx.y * 32 + threadIdx.x;   // element of the 32x8 output
    dst[l] = cube[threadIdx.z][l % 8][l / 8];
}

int main()
{
    const int batches = 64;
    float *d_in = nullptr, *d_out = nullptr;
    cudaMalloc(&d_in, batches * 256 * sizeof(float));
    cudaMalloc(&d_out, batches * 256 * sizeof(float));
    batchedTranspose8x32<<<batches / 4, dim3(32, 8, 4)>>>(d_in, d_out);
    cudaDeviceSynchronize();
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}

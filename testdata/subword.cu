// subword.cu - 1-byte and 2-byte shared arrays (several elements per bank word).
//
// Exercises `char` and `short` element types, where 4 resp. 2 neighbouring
// elements share one 4-byte bank word: lanes touching the same word do not
// conflict, lanes touching different words of the same bank do.
//
// A correct analysis must find:
//   kernel splitPlanes: block 256x1x1 from `splitPlanes<<<blocks, 256>>>`.
//     array s_bytes: char (1 B) [1024] 1024 B, rewritable.
//     store s_bytes[t + 256 * k] (loop k < 4; 4 lanes per word, conflict-free)
//     load  s_bytes[(t % 4) * 256 + t / 4 + 64 * k] (loop k < 4; a byte
//           transpose: a warp reads 8 distinct words in 2 banks -> 4-way conflict)
//   kernel transposeShort: block 32x8x1 from `transposeShort<<<blocks, dim3(32, 8)>>>`.
//     array s_tile: short (2 B) [32][32] 2048 B, rewritable.
//     store s_tile[r][threadIdx.x] (loop r = threadIdx.y; r < 32; r += 8)
//     load  s_tile[threadIdx.x][r] (same loop; column read: 32 distinct words
//           in 2 banks -> 16-way conflict; padding the row to 34 shorts fixes it)

__global__ void splitPlanes(const char *in, char *out)
{
    __shared__ char s_bytes[1024];
    int t = threadIdx.x;
    for (int k = 0; k < 4; ++k)
        s_bytes[t + 256 * k] = in[blockIdx.x * 1024 + t + 256 * k];
    __syncthreads();
    for (int k = 0; k < 4; ++k)
        out[blockIdx.x * 1024 + k * 256 + t] = s_bytes[(t % 4) * 256 + t / 4 + 64 * k];
}

__global__ void transposeShort(const short *in, short *out)
{
    __shared__ short s_tile[32][32];
    const short *src = in + blockIdx.x * 1024;
    for (int r = threadIdx.y; r < 32; r += 8)
        s_tile[r][threadIdx.x] = src[r * 32 + threadIdx.x];
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += 8)
        out[blockIdx.x * 1024 + r * 32 + threadIdx.x] = s_tile[threadIdx.x][r];
}

int main()
{
    const int blocks = 64;
    char *d_c;
    short *d_s;
    cudaMalloc(&d_c, 2 * blocks * 1024);
    cudaMalloc(&d_s, 2 * blocks * 1024 * sizeof(short));
    splitPlanes<<<blocks, 256>>>(d_c, d_c + blocks * 1024);
    transposeShort<<<blocks, dim3(32, 8)>>>(d_s, d_s + blocks * 1024);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

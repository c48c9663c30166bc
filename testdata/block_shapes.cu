// block_shapes.cu - block shapes that come from host launch sites.
//
// Exercises three launch-site forms:
//   rowScale<<<grid, dim3(32, 8)>>>     a dim3 temporary in the launch
//   vecNorm<<<blocks, 256>>>            a plain integer block size
//   dim3 block(16, 16); tile16<<<grid2, block>>>   a named dim3 variable
//
// A correct analysis must find:
//   rowScale: block 32x8x1.  array r_tile float [8][32] 1024 B, rewritable;
//     store r_tile[threadIdx.y][threadIdx.x]; load r_tile[threadIdx.y][31 - threadIdx.x].
//   vecNorm: block 256x1x1.  array v_sq float [256] 1024 B, rewritable;
//     store v_sq[threadIdx.x]; load v_sq[k] in a loop (k = 0..255, broadcast).
//   tile16: block 16x16x1.  array t_tile float [16][16] 1024 B, rewritable;
//     store t_tile[threadIdx.y][threadIdx.x]; load t_tile[threadIdx.x][threadIdx.y]
//     (a warp covers rows y and y + 1; word x * 16 + y lands in 4 banks,
//     e.g. 0, 1, 16, 17 for the first warp, 8 distinct words each -> 8-way).

__global__ void rowScale(float *m, int width)
{
    __shared__ float r_tile[8][32];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    r_tile[threadIdx.y][threadIdx.x] = m[y * width + x];
    __syncthreads();
    m[y * width + x] = r_tile[threadIdx.y][31 - threadIdx.x];
}

__global__ void vecNorm(float *v)
{
    __shared__ float v_sq[256];
    float x = v[blockIdx.x * 256 + threadIdx.x];
    v_sq[threadIdx.x] = x * x;
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < 256; ++k)
        sum += v_sq[k];
    v[blockIdx.x * 256 + threadIdx.x] = x * rsqrtf(sum);
}

__global__ void tile16(float *m, int width)
{
    __shared__ float t_tile[16][16];
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    t_tile[threadIdx.y][threadIdx.x] = m[y * width + x];
    __syncthreads();
    m[y * width + x] = t_tile[threadIdx.x][threadIdx.y];
}

int main()
{
    const int width = 512;
    float *d_m;
    cudaMalloc(&d_m, width * width * sizeof(float));

    dim3 grid(width / 32, width / 8);
    rowScale<<<grid, dim3(32, 8)>>>(d_m, width);

    vecNorm<<<width * width / 256, 256>>>(d_m);

    dim3 block(16, 16);
    dim3 grid2(width / 16, width / 16);
    tile16<<<grid2, block>>>(d_m, width);

    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

// template_sizes.cu - array dimensions from template parameters.
//
// Exercises template non-type parameters used in __shared__ dims, with the
// value found (a) in an explicit instantiation
// `template __global__ void tileSum<16>(float *);` and (b) at a launch site
// `scan<64><<<blocks, 64>>>(...)`.
//
// A correct analysis must find:
//   kernel tileSum<TILE = 16> (the only instantiation): block 16x16x1 from
//     the `// bankwise: block=16x16` comment above it.
//     array s_tile: float [16][17] (TILE x TILE + 1) 1088 B, rewritable.
//     store s_tile[threadIdx.y][threadIdx.x]; load s_tile[threadIdx.x][threadIdx.y]
//     (column read; padding makes it conflict-free); load+store (+=)
//     s_tile[threadIdx.y][0] in the row-sum loop.
//   kernel scan<N = 64>: block 64x1x1 from `scan<64><<<blocks, 64>>>`.
//     array temp: float [128] (2 * N) 512 B, rewritable.
//     store temp[tid]; loads temp[pin * N + tid], temp[pin * N + tid - offset];
//     stores temp[pout * N + tid] (double-buffered Hillis-Steele scan);
//     load temp[pout * N + tid].

// bankwise: block=16x16
template <int TILE>
__global__ void tileSum(float *data)
{
    __shared__ float s_tile[TILE][TILE + 1];
    float *blk = data + blockIdx.x * TILE * TILE;
    s_tile[threadIdx.y][threadIdx.x] = blk[threadIdx.y * TILE + threadIdx.x];
    __syncthreads();
    float t = s_tile[threadIdx.x][threadIdx.y];
    __syncthreads();
    if (threadIdx.x == 0)
        for (int c = 1; c < TILE; ++c)
            s_tile[threadIdx.y][0] += s_tile[threadIdx.y][c];
    __syncthreads();
    blk[threadIdx.y * TILE + threadIdx.x] = t + s_tile[threadIdx.y][0];
}

template __global__ void tileSum<16>(float *);

template <int N>
__global__ void scan(float *out, const float *in)
{
    __shared__ float temp[2 * N];
    int tid = threadIdx.x, pout = 0, pin = 1;
    temp[tid] = in[blockIdx.x * N + tid];
    __syncthreads();
    for (int offset = 1; offset < N; offset <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset)
            temp[pout * N + tid] = temp[pin * N + tid] + temp[pin * N + tid - offset];
        else
            temp[pout * N + tid] = temp[pin * N + tid];
        __syncthreads();
    }
    out[blockIdx.x * N + tid] = temp[pout * N + tid];
}

int main()
{
    const int blocks = 256;
    float *d_in, *d_out;
    cudaMalloc(&d_in, blocks * 64 * sizeof(float));
    cudaMalloc(&d_out, blocks * 64 * sizeof(float));
    scan<64><<<blocks, 64>>>(d_out, d_in);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

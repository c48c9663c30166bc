// pointers.cu - shared arrays reached through local pointers and a __device__
// helper, as real kernels do.
//
// Exercises bankwise's pointer following: a pointer made from a shared array
// (`&a[i][0]`, `a[i]`, `a + k`, `a` itself) that is only subscripted,
// dereferenced, advanced by integers, compared, passed to a __device__
// function defined in this file, or chosen between two places in the same
// array is an alias: its accesses are accesses of the array, and the array
// stays rewritable.
//
// A correct analysis must find, for kernel pointerMix (block 32x8x1 from
// `pointerMix<<<blocks, dim3(32, 8)>>>`), every array rewritable and every
// access below reported "through a pointer":
//   tile  float [32][32] 4096 B:
//         store row[tx] (row = &tile[ty + j][0], loop j = 0, 8, 16, 24):
//           tx + 32*ty + 32*j, linear, conflict-free;
//         load *(col + 32 * (tx + 0) + 8 * k) (col = &tile[0][ty], k < 4):
//           32*tx + ty + 8*k, stride 32, 32-way: 4 x 8 warps x 31 = 992 excess.
//   part  float [8][32] 1024 B: mine = part[ty];
//         store mine[tx], and store dst[i] inside stage(mine, src, tx)
//         (reached through the call at line 51): both tx + 32*ty, linear.
//   red   float [256] 1024 B: store red[t] directly; through
//         `volatile float *vs = red` for t < 16: load vs[t + 16], load and
//         store vs[t] (a warp-synchronous tail), conflict-free.
//   pad   float [32][33] 4224 B: p = pad[0] + tx bumped by `p += 33` in a
//         loop of 8: load *p is tx + 33*k, conflict-free.
//   sel   float [64] 256 B: q = (tx & 1) ? sel + 32 : sel; load q[tx >> 1]
//         (a select, so class random): lanes 2i and 2i+1 read words i and
//         32 + i, 2-way, 1 excess wavefront in each of the 8 warps.
//
// and, for kernel reduceDynamic (block 128x1x1 from its launch), which reaches
// the dynamic shared memory through the CUDA samples' `SharedMemory<T>`
// struct (an `operator T *()` returning its `extern __shared__` array):
//   SharedMemory<float>()  float [] (extern), rewritable:
//         store sdata[tid]; in the loop s = 1, 2, 4, ..., 64 under
//         `index < 128` with index = 2 * s * tid: load sdata[index + s],
//         load and store sdata[index] (stride 2s with fewer lanes active as
//         s grows: 2-way in warps 0-1 at s = 1, 4-way in warp 0 for
//         s = 2..16, 2-way at s = 32: 2+3+3+3+3+1 = 15 excess per access).

template <class T> struct SharedMemory {
    __device__ inline operator T *()
    {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
};

__device__ void stage(float *dst, const float *src, int i)
{
    dst[i] = src[i] * 0.5f;
}

__global__ void pointerMix(const float *in, float *out)
{
    __shared__ float tile[32][32];
    __shared__ float part[8][32];
    __shared__ float red[256];
    __shared__ float pad[32][33];
    __shared__ float sel[64];

    int tx = threadIdx.x, ty = threadIdx.y;
    const float *src = in + blockIdx.x * 1024;

    for (int j = 0; j < 32; j += 8) {
        float *row = &tile[ty + j][0];
        row[tx] = src[(ty + j) * 32 + tx];
    }
    float *mine = part[ty];
    mine[tx] = src[tx];
    stage(mine, src, tx);
    int t = ty * 32 + tx;
    red[t] = src[t];
    pad[ty][tx] = src[t];
    if (t < 64)
        sel[t] = src[t];
    __syncthreads();

    float acc = 0.0f;
    const float *col = &tile[0][ty];
    for (int k = 0; k < 4; ++k)
        acc += *(col + 32 * (tx + 0) + 8 * k);

    if (t < 16) {
        volatile float *vs = red;
        vs[t] += vs[t + 16];
    }

    const float *p = pad[0] + tx;
    for (int k = 0; k < 8; ++k) {
        acc += *p;
        p += 33;
    }

    const float *q = (tx & 1) ? sel + 32 : sel;
    acc += q[tx >> 1];
    out[blockIdx.x * 256 + t] = acc;
}

__global__ void reduceDynamic(const float *in, float *out)
{
    float *sdata = SharedMemory<float>();
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        unsigned int index = 2 * s * tid;
        if (index < blockDim.x)
            sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

int main()
{
    const int blocks = 16;
    float *d_in, *d_out;
    cudaMalloc(&d_in, blocks * 1024 * sizeof(float));
    cudaMalloc(&d_out, blocks * 256 * sizeof(float));
    pointerMix<<<blocks, dim3(32, 8)>>>(d_in, d_out);
    reduceDynamic<<<blocks, 128, 128 * sizeof(float)>>>(d_in, d_out);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

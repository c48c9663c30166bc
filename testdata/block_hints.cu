// block_hints.cu - block shapes without a launch site: hints in the source.
//
// Exercises the block-shape sources other than launch sites:
//   lbReverse   `__launch_bounds__(256)`            -> block 256x1x1
//   hintedTile  `// bankwise: block=32x8` just above -> block 32x8x1
//   mystery     no launch, no bound, no hint         -> UNKNOWN: assumed one
//               warp of its tile's rows (32x1x1), said, `--block mystery=32x4`
//               named (its real host code's shape), fixes on the guess unsafe.
// None of the kernels is launched in this file.
//
// A correct analysis must find:
//   lbReverse:  lb_buf float [256] 1024 B, rewritable; store lb_buf[threadIdx.x],
//               load lb_buf[255 - threadIdx.x].
//   hintedTile: h_tile float [8][32] 1024 B, rewritable; store
//               h_tile[threadIdx.y][threadIdx.x], load h_tile[7 - threadIdx.y][threadIdx.x].
//   mystery:    q_tile float [4][32] 512 B; store
//               q_tile[threadIdx.y][threadIdx.x],
//               load q_tile[threadIdx.x % 4][threadIdx.y * 8 + threadIdx.x / 4]
//               (with --block mystery=32x4: 8 banks x 4 words -> 4-way conflict).
//               Without --block the same 4-way read is found in the one assumed
//               warp (3 excess wavefronts), and its fix is unsafe.

__global__ void __launch_bounds__(256) lbReverse(float *v)
{
    __shared__ float lb_buf[256];
    lb_buf[threadIdx.x] = v[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    v[blockIdx.x * 256 + threadIdx.x] = lb_buf[255 - threadIdx.x];
}

// bankwise: block=32x8
__global__ void hintedTile(float *m)
{
    __shared__ float h_tile[8][32];
    int i = (blockIdx.x * 8 + threadIdx.y) * 32 + threadIdx.x;
    h_tile[threadIdx.y][threadIdx.x] = m[i];
    __syncthreads();
    m[i] = h_tile[7 - threadIdx.y][threadIdx.x];
}

__global__ void mystery(float *m)
{
    __shared__ float q_tile[4][32];
    int i = (blockIdx.x * 4 + threadIdx.y) * 32 + threadIdx.x;
    q_tile[threadIdx.y][threadIdx.x] = m[i];
    __syncthreads();
    m[i] += q_tile[threadIdx.x % 4][threadIdx.y * 8 + threadIdx.x / 4];
}

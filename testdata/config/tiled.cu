// config/tiled.cu - a kernel whose block shape comes from bankwise.toml.
//
// Exercises the per-directory configuration file: this kernel has no launch
// site, no __launch_bounds__ and no `// bankwise:` comment; the sibling file
// testdata/config/bankwise.toml says
//     [block]
//     tiledCopy = [32, 8, 1]
//
// A correct analysis (run on this directory or this file, picking up the
// bankwise.toml next to it) must find:
//   kernel tiledCopy: block 32x8x1 from bankwise.toml.
//   array tile: float [32][32] 4096 B, rewritable.
//     store tile[threadIdx.y + j][threadIdx.x]  (loop j = 0, 8, 16, 24; conflict-free)
//     load  tile[threadIdx.x][threadIdx.y + j]  (same loop; 32-way conflict)
//   Without the config file the block shape is unknown (`--block tiledCopy=32x8`).

__global__ void tiledCopy(const float *in, float *out, int width)
{
    __shared__ float tile[32][32];
    int bx = blockIdx.x * 32, by = blockIdx.y * 32;
    for (int j = 0; j < 32; j += 8)
        tile[threadIdx.y + j][threadIdx.x] = in[(by + threadIdx.y + j) * width + bx + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < 32; j += 8)
        out[(bx + threadIdx.y + j) * width + by + threadIdx.x] = tile[threadIdx.x][threadIdx.y + j];
}

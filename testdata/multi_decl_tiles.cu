// multi_decl_tiles.cu - two tiles declared by one __shared__ declaration.
//
// Exercises: `__shared__ double re[TILE][TILE], im[TILE][TILE];`, the style of
// complex-valued transposes and FFT stages that keep real and imaginary parts
// apart. Each declarator is its own array and gets its own map.
//
// A correct analysis must find:
//   kernel complexTranspose: block 32x32x1 from the launch
//     `complexTranspose<<<grid, dim3(TILE, TILE)>>>`.
//   arrays:
//     re  double (8 B), dims [32][32], 8192 bytes, rewritable
//     im  double (8 B), dims [32][32], 8192 bytes, rewritable
//   accesses:
//     re[ty][tx], im[ty][tx]   stores, row-wise: no bank conflict
//     re[tx][ty], im[tx][ty]   loads, column-wise: stride 32 doubles, 16-way
//                              (two 16-lane phases), 960 excess wavefronts each
//   fix: both arrays swizzled in place (`[i][j ^ i]`), 960 -> 0 each, with a
//   marker comment per array above the one declaration.

#define TILE 32

__global__ void complexTranspose(const double *in_re, const double *in_im,
                                 double *out_re, double *out_im)
{
    __shared__ double re[TILE][TILE], im[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    re[ty][tx] = in_re[ty * TILE + tx];
    im[ty][tx] = in_im[ty * TILE + tx];
    __syncthreads();
    out_re[ty * TILE + tx] = re[tx][ty];
    out_im[ty * TILE + tx] = -im[tx][ty];
}

int main()
{
    dim3 grid(1);
    complexTranspose<<<grid, dim3(TILE, TILE)>>>(0, 0, 0, 0);
    return 0;
}

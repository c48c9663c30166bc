// suite/srad.cu - TC 2016 conflict-free benchmark "srad" (Rodinia srad:
// speckle-reducing anisotropic diffusion, the first kernel: directional
// derivatives and the diffusion coefficient of every pixel).
//
// The application: a 16x16 block stages its tile of the image and the
// rows/columns just outside it, then every thread reads its pixel and its
// four neighbours, taking them from the halo arrays at the tile's edges.
//
// Assumed: Rodinia's 16x16 blocks; the halo rows and columns are kept in
// 1-D arrays of 16 (Rodinia uses full 16x16 arrays for them).
//
// A correct analysis must find no bank conflict:
//   kernel sradCoefficients: block 16x16x1 from the launch in main().
//   array `tile`: float [16][16]: tile[ty][tx], tile[ty -+ 1][tx],
//     tile[ty][tx -+ 1]: a warp reads two rows plus a constant offset, 32
//     consecutive words at most.
//   arrays `north`, `south`, `west`, `east`: float [16], stored by one row
//     or column of threads, read at the edges: consecutive words or a
//     broadcast.

#define BS 16

__global__ void sradCoefficients(const float *image, float *coeff, int cols, int rows, float q0sqr)
{
    __shared__ float tile[BS][BS];
    __shared__ float north[BS], south[BS], west[BS], east[BS];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = blockIdx.x * BS + tx, y = blockIdx.y * BS + ty;
    const int up = y == 0 ? 0 : y - 1, down = y == rows - 1 ? y : y + 1;
    const int left = x == 0 ? 0 : x - 1, right = x == cols - 1 ? x : x + 1;

    tile[ty][tx] = image[y * cols + x];
    if (ty == 0)
        north[tx] = image[up * cols + x];
    if (ty == BS - 1)
        south[tx] = image[down * cols + x];
    if (tx == 0)
        west[ty] = image[y * cols + left];
    if (tx == BS - 1)
        east[ty] = image[y * cols + right];
    __syncthreads();

    const float c = tile[ty][tx];
    const float n = ty > 0 ? tile[ty - 1][tx] : north[tx];
    const float s = ty < BS - 1 ? tile[ty + 1][tx] : south[tx];
    const float w = tx > 0 ? tile[ty][tx - 1] : west[ty];
    const float e = tx < BS - 1 ? tile[ty][tx + 1] : east[ty];

    const float dn = n - c, ds = s - c, dw = w - c, de = e - c;
    const float g2 = (dn * dn + ds * ds + dw * dw + de * de) / (c * c);
    const float l = (dn + ds + dw + de) / c;
    const float num = 0.5f * g2 - 0.0625f * l * l;
    const float den = (1.0f + 0.25f * l) * (1.0f + 0.25f * l);
    const float qsqr = num / den;
    const float k = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    const float d = 1.0f / (1.0f + k);
    coeff[y * cols + x] = d < 0.0f ? 0.0f : (d > 1.0f ? 1.0f : d);
}

int main()
{
    const int cols = 2048, rows = 2048;
    float *image = nullptr, *coeff = nullptr;
    cudaMalloc(&image, cols * rows * sizeof(float));
    cudaMalloc(&coeff, cols * rows * sizeof(float));
    sradCoefficients<<<dim3(cols / BS, rows / BS), dim3(BS, BS)>>>(image, coeff, cols, rows, 0.05f);
    cudaDeviceSynchronize();
    cudaFree(image);
    cudaFree(coeff);
    return 0;
}

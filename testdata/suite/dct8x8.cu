// suite/dct8x8.cu - TC 2016 benchmarks "dct8x8-1" and "dct8x8-2" (CUDA SDK
// dct8x8: the forward and the inverse transform of the shared-memory kernel
// that works on a 32x16 pixel tile, eight 8x8 blocks, with 64 threads).
//
// The application: block (8, 4, 2). Thread (tx, ty, tz) owns tile column
// c = 8*ty + tx and the eight rows 8*tz .. 8*tz + 7 of it. It loads its
// column (coalesced), transforms one 8-point row of its 8x8 block in place
// (row 8*tz + tx, columns 8*ty .. 8*ty + 7: consecutive words), then its own
// column (8 words 32 apart), and stores the column back.
//
// Assumed: the SDK's tile of 16 rows of 32 floats; the SDK pads a tile row
// to 33 words, the paper's baseline (and this re-creation) does not. The
// 8-point transform is a product with a constant 8x8 cosine matrix (the SDK
// uses a butterfly network; the shared accesses are the same: 8 loads and 8
// stores per vector).
//
// A correct analysis must find (each kernel; the same pattern twice):
//   kernels dct8x8Forward, dct8x8Inverse: block 8x4x2 from the launches.
//   array `tile`: float [16 * 32], 2048 bytes, rewritable.
//     column loads/stores tile[(8*tz + i)*32 + c]: a warp (tz fixed) covers
//       c = 0..31 of one row: linear, no conflict.
//     row loads/stores through `row = tile + (8*tz + tx)*32 + 8*ty`, row[k]:
//       words 32*tx + 8*ty + k, the 8 lanes with equal ty share a bank:
//       8-way, 7 excess per warp request; 8 loads + 8 stores, 2 warps:
//       224 excess wavefronts per block.

#define TILE_W 32
#define TILE_H 16
#define N8 8

__constant__ float c_dct[N8][N8];   // c_dct[u][x] = a(u) cos((2x + 1) u pi / 16)

// v <- C v (forward) or v <- C^T v (inverse) on 8 values `stride` words apart.
__device__ void transform8(float *v, int stride, bool inverse)
{
    float in[N8];
    for (int k = 0; k < N8; ++k)
        in[k] = v[k * stride];
    for (int u = 0; u < N8; ++u) {
        float acc = 0.0f;
        for (int k = 0; k < N8; ++k)
            acc += (inverse ? c_dct[k][u] : c_dct[u][k]) * in[k];
        v[u * stride] = acc;
    }
}

// One kernel body for both directions: the SDK has two kernels with the same tile walk.
__device__ void tileTransform(float *tile, float *dst, const float *src, int pitch, bool inverse)
{
    const int c = N8 * threadIdx.y + threadIdx.x;
    const int r0 = N8 * threadIdx.z;
    const int offset = (blockIdx.y * TILE_H + r0) * pitch + blockIdx.x * TILE_W + c;

    for (int i = 0; i < N8; ++i)
        tile[(r0 + i) * TILE_W + c] = src[offset + i * pitch];
    __syncthreads();

    transform8(tile + (r0 + threadIdx.x) * TILE_W + N8 * threadIdx.y, 1, inverse);
    __syncthreads();
    transform8(tile + r0 * TILE_W + c, TILE_W, inverse);
    __syncthreads();

    for (int i = 0; i < N8; ++i)
        dst[offset + i * pitch] = tile[(r0 + i) * TILE_W + c];
}

__global__ void dct8x8Forward(float *dst, const float *src, int pitch)
{
    __shared__ float tile[TILE_H * TILE_W];
    tileTransform(tile, dst, src, pitch, false);
}

__global__ void dct8x8Inverse(float *dst, const float *src, int pitch)
{
    __shared__ float tile[TILE_H * TILE_W];
    tileTransform(tile, dst, src, pitch, true);
}

int main()
{
    const int width = 2048, height = 2048;
    float *image = nullptr, *coeffs = nullptr;
    cudaMalloc(&image, width * height * sizeof(float));
    cudaMalloc(&coeffs, width * height * sizeof(float));
    dim3 grid(width / TILE_W, height / TILE_H);
    dct8x8Forward<<<grid, dim3(8, 4, 2)>>>(coeffs, image, width);
    dct8x8Inverse<<<grid, dim3(8, 4, 2)>>>(image, coeffs, width);
    cudaDeviceSynchronize();
    cudaFree(image);
    cudaFree(coeffs);
    return 0;
}

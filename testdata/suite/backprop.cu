// suite/backprop.cu - TC 2016 conflict-free benchmark "backprop" (Rodinia
// backprop: the forward pass of a layer, per 16x16 block of weights).
//
// The application: a 16x16 block multiplies a 16 x 16 tile of the weight
// matrix by the 16 inputs of its rows and sums each column of products with
// a tree reduction down the tile's rows, all in shared memory.
//
// Assumed: Rodinia's 16x16 blocks; the tree halves the live rows each round
// (rows that are multiples of 2p add the row p below them).
//
// A correct analysis must find no bank conflict:
//   kernel layerForward: block 16x16x1 from the launch in main().
//   array `input`: float [16]: store input[ty] (tx == 0), load input[ty]:
//     broadcast within each half-warp.
//   array `products`: float [16][16]: products[ty][tx] and
//     products[ty + p][tx]: a warp is two full rows, linear; the column
//     totals products[tx][ty]... are read only by tx == 0: products[0][ty]
//     by two lanes per warp, different banks.

#define WIDTH 16
#define HEIGHT 16

__global__ void layerForward(const float *inputs, const float *weights, float *partialSums, int hidden)
{
    __shared__ float input[HEIGHT];
    __shared__ float products[HEIGHT][WIDTH];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * HEIGHT + ty;
    const int column = blockIdx.x * WIDTH + tx;

    if (tx == 0)
        input[ty] = inputs[row];
    __syncthreads();

    products[ty][tx] = weights[row * hidden + column] * input[ty];
    __syncthreads();

    for (int p = 1; p < HEIGHT; p *= 2) {
        if (ty % (2 * p) == 0)
            products[ty][tx] += products[ty + p][tx];
        __syncthreads();
    }

    if (ty == 0)
        partialSums[blockIdx.y * hidden + column] = products[0][tx];
}

int main()
{
    const int inputs = 65536, hidden = 16;
    float *in = nullptr, *weights = nullptr, *partial = nullptr;
    cudaMalloc(&in, inputs * sizeof(float));
    cudaMalloc(&weights, inputs * hidden * sizeof(float));
    cudaMalloc(&partial, (inputs / HEIGHT) * hidden * sizeof(float));
    layerForward<<<dim3(hidden / WIDTH, inputs / HEIGHT), dim3(WIDTH, HEIGHT)>>>(in, weights, partial, hidden);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(weights);
    cudaFree(partial);
    return 0;
}

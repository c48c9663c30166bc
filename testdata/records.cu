// records.cu - arrays of records whose members are read one at a time.
//
// Each thread stages one 16-byte particle record (mass and position) in
// shared memory, then reads single members of consecutive records: 32 lanes
// reading `s_body[t].x` touch words 4 apart, every fourth bank, a 4-way
// conflict whatever order the records are stored in. Bins of 8-byte records
// (a count and a sum) take atomics on their members: 2-way, every other
// bank. Stored as one array per member, both become conflict-free.
//
// A correct analysis must find, for kernel accumulate (block 64x1x1 from the
// launch in main()), two rewritable arrays:
//   s_body  Body 16 B [64] 1024 B
//     whole-record store s_body[t]: 4 phases of 8 lanes, no conflict;
//     whole-record reads s_body[63 - t] and s_body[t]: no conflict;
//     member loads s_body[t].x, s_body[t].y, s_body[t].m (twice: in `+=`
//     and for the atomic) and the store of the `+=`: 4-way, 3 excess in each
//     of 2 warps (30 in all).
//   s_bin   Bin 8 B [32] 256 B (int count, float sum)
//     member stores and loads s_bin[t].* for t < 32 (one warp) and the
//     atomics on s_bin[t % 32].* (two): 2-way, 1 excess per warp (8 in all).

#define BODIES 64
#define BINS 32

struct Body { float m, x, y, z; };
typedef struct { int count; float sum; } Bin;

__global__ void accumulate(const Body *bodies, float *out)
{
    __shared__ Body s_body[BODIES];
    __shared__ Bin s_bin[BINS];

    const int t = threadIdx.x;
    s_body[t] = bodies[blockIdx.x * BODIES + t];
    if (t < BINS) {
        s_bin[t].count = 0;
        s_bin[t].sum = 0.0f;
    }
    __syncthreads();

    // The pull between each body and its mirror image adds to its mass.
    Body mirror = s_body[BODIES - 1 - t];
    const float dx = s_body[t].x - mirror.x;
    const float dy = s_body[t].y - mirror.y;
    __syncthreads();  // every mirror is read before any mass changes
    s_body[t].m += 0.5f * (dx * dx + dy * dy);
    atomicAdd(&s_bin[t % BINS].sum, s_body[t].m);
    atomicAdd(&s_bin[t % BINS].count, 1);
    __syncthreads();

    Body mine;
    mine = s_body[t];
    out[blockIdx.x * BODIES + t] = mine.m * mine.x;
    if (t < BINS)
        out[gridDim.x * BODIES + blockIdx.x * BINS + t] = s_bin[t].sum / s_bin[t].count;
}

int main()
{
    const int blocks = 16;
    Body *bodies;
    float *out;
    cudaMalloc(&bodies, blocks * BODIES * sizeof(Body));
    cudaMalloc(&out, blocks * (BODIES + BINS) * sizeof(float));
    accumulate<<<blocks, BODIES>>>(bodies, out);
    cudaDeviceSynchronize();
    cudaFree(bodies);
    cudaFree(out);
    return 0;
}

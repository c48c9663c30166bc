// suite/lavaMD.cu - TC 2016 benchmark "lavaMD" (Rodinia lavaMD: particle
// forces within a box and its neighbour boxes).
//
// The application: a block handles one home box of PARTICLES particles.
// Each particle is a 32-byte record of doubles (potential v and position x,
// y, z), as in Rodinia, whose FOUR_VECTOR holds doubles. The home box's
// records go to shared memory once; then, for the home box and each
// neighbour, the neighbour's records and charges are staged and every thread
// walks them for its own particle: `home[t].v`, `home[t].x` ... read one
// 8-byte field of 32-byte records 8 words apart (4-way), the neighbour's
// `guest[j]` and `charge[j]` are the same word for every lane (broadcast).
//
// Assumed: 128 threads per block (Rodinia's NUMBER_THREADS) and 100
// particles per box; the boxes form a periodic dim^3 grid and a box's
// neighbours are computed from its coordinates (Rodinia reads the same list
// from memory); the number of neighbours is a parameter (Rodinia reads it
// per box: at most 26); the force accumulates in registers and is stored
// once (Rodinia accumulates in global memory).
//
// A correct analysis must find:
//   kernel lavaMDForces: block 128x1x1 from the launch in main().
//   arrays `home`, `guest` (struct FourVector, 32 B, [100], 3200 bytes each)
//     and `charge` (double [100], 800 bytes), all rewritable.
//   whole-record store home[t] (t < 100): 32-byte elements, linear.
//   in the loop over the neighbours, whose count is a kernel parameter:
//     whole-record store guest[t], store charge[t]: linear;
//     member loads home[t].v/.x/.y/.z: 8-byte fields 8 words apart, 4-way in
//     each half-warp phase of the 32-bank model; guest[j].* and charge[j]:
//     broadcast.

#define PARTICLES 100
#define THREADS 128
#define ALPHA 0.5

typedef struct {
    double v, x, y, z;
} FourVector;

// Box number k of the 27 around `box` (k = 0: the box itself), periodic in each axis.
__device__ int neighbourBox(int box, int k, int dim)
{
    const int bx = box % dim, by = box / dim % dim, bz = box / (dim * dim);
    const int m = k == 0 ? 13 : (k <= 13 ? k - 1 : k);   // skip the centre of the 3x3x3 cube
    const int x = (bx + m % 3 - 1 + dim) % dim;
    const int y = (by + m / 3 % 3 - 1 + dim) % dim;
    const int z = (bz + m / 9 - 1 + dim) % dim;
    return (z * dim + y) * dim + x;
}

__global__ void lavaMDForces(const FourVector *positions, const double *charges, FourVector *forces,
                             int dim, int neighbours)
{
    __shared__ FourVector home[PARTICLES];
    __shared__ FourVector guest[PARTICLES];
    __shared__ double charge[PARTICLES];

    const int t = threadIdx.x;
    const int box = blockIdx.x;
    if (t < PARTICLES)
        home[t] = positions[box * PARTICLES + t];

    FourVector f = {0.0, 0.0, 0.0, 0.0};
    for (int k = 0; k <= neighbours; ++k) {
        const int other = neighbourBox(box, k, dim);
        __syncthreads();
        if (t < PARTICLES) {
            guest[t] = positions[other * PARTICLES + t];
            charge[t] = charges[other * PARTICLES + t];
        }
        __syncthreads();
        if (t < PARTICLES) {
            for (int j = 0; j < PARTICLES; ++j) {
                const double r2 = home[t].v + guest[j].v
                    - (home[t].x * guest[j].x + home[t].y * guest[j].y + home[t].z * guest[j].z);
                const double u2 = ALPHA * ALPHA * r2;
                const double vij = exp(-u2);
                const double fs = 2.0 * vij;
                const double dx = home[t].x - guest[j].x;
                const double dy = home[t].y - guest[j].y;
                const double dz = home[t].z - guest[j].z;
                f.v += charge[j] * vij;
                f.x += charge[j] * fs * dx;
                f.y += charge[j] * fs * dy;
                f.z += charge[j] * fs * dz;
            }
        }
    }
    if (t < PARTICLES)
        forces[box * PARTICLES + t] = f;
}

int main()
{
    const int dim = 10, boxes = dim * dim * dim;
    FourVector *positions = nullptr, *forces = nullptr;
    double *charges = nullptr;
    cudaMalloc(&positions, boxes * PARTICLES * sizeof(FourVector));
    cudaMalloc(&forces, boxes * PARTICLES * sizeof(FourVector));
    cudaMalloc(&charges, boxes * PARTICLES * sizeof(double));
    lavaMDForces<<<boxes, THREADS>>>(positions, charges, forces, dim, 26);
    cudaDeviceSynchronize();
    cudaFree(positions);
    cudaFree(forces);
    cudaFree(charges);
    return 0;
}

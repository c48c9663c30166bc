// structs.cu - shared arrays of user-defined element types.
//
// Exercises element sizes that come from user types: a plain struct
// `struct Particle { float x, y, z, w; };` (16 bytes), a typedef of a vector
// type `typedef float2 cplx;` (8 bytes) and an aligned struct
// `struct __align__(16) Vec4 { float a, b, c, d; };` (16 bytes, alignment 16).
//
// A correct analysis must find, for kernel nbodyStep (block 128x1x1 from
// `nbodyStep<<<blocks, 128>>>`), three rewritable arrays:
//   s_p    Particle 16 B [128] 2048 B  store s_p[t]; loads s_p[j].x, s_p[j].y,
//          s_p[j].z in a loop over j (broadcast: every lane reads the same j)
//   s_f    Vec4     16 B [128] 2048 B  store s_f[t]; load s_f[t].a, s_f[t].b
//   s_c    cplx      8 B [128] 1024 B  store s_c[t]; load s_c[127 - t]
// Member accesses read 4 bytes at offsets 0, 4, 8 (x/a, y/b, z) of the element:
// s_p[j].* are broadcasts (no conflict); s_f[t].a and s_f[t].b touch every
// fourth bank, a 4-way conflict: 3 excess wavefronts in each of the 4 warps.

struct Particle { float x, y, z, w; };
typedef float2 cplx;
struct __align__(16) Vec4 { float a, b, c, d; };

__global__ void nbodyStep(Particle *ps, const Vec4 *forces, cplx *phase, float dt)
{
    __shared__ Particle s_p[128];
    __shared__ Vec4 s_f[128];
    __shared__ cplx s_c[128];

    int t = threadIdx.x;
    int g = blockIdx.x * 128 + t;
    Particle me = ps[g];
    s_p[t] = me;
    s_f[t] = forces[g];
    s_c[t] = phase[g];
    __syncthreads();

    float ax = 0.0f, ay = 0.0f;
    for (int j = 0; j < 128; ++j) {
        float dx = s_p[j].x - me.x, dy = s_p[j].y - me.y;
        float inv = rsqrtf(dx * dx + dy * dy + 1e-3f) * s_p[j].z;
        ax += dx * inv;
        ay += dy * inv;
    }
    me.x += dt * (ax + s_f[t].a);
    me.y += dt * (ay + s_f[t].b);
    ps[g] = me;
    phase[g] = s_c[127 - t];
}

int main()
{
    const int blocks = 32;
    Particle *d_p;
    Vec4 *d_f;
    cplx *d_c;
    cudaMalloc(&d_p, blocks * 128 * sizeof(Particle));
    cudaMalloc(&d_f, blocks * 128 * sizeof(Vec4));
    cudaMalloc(&d_c, blocks * 128 * sizeof(cplx));
    nbodyStep<<<blocks, 128>>>(d_p, d_f, d_c, 0.01f);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

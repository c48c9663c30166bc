// vector_types.cu - shared arrays of CUDA vector types and 8-byte scalars.
//
// Exercises element sizes other than 4 bytes: float2 (8), float4 (16),
// double2 (16), int4 (16), double (8), unsigned long long (8); whole-element
// loads/stores and member accesses (`s_f2[t].y += ...`).
//
// A correct analysis must find, for kernel vectorMix (block 64x1x1 from
// `vectorMix<<<blocks, 64>>>`), six rewritable arrays:
//   s_f2   float2              8 B  [64]  512 B   store s_f2[t]; load+store s_f2[t].y (member, +=); load s_f2[63 - t]
//   s_f4   float4             16 B  [64]  1024 B  store s_f4[t]; load s_f4[(t + 1) % 64]
//   s_d2   double2            16 B  [32]  512 B   store s_d2[t / 2] (t even); load s_d2[t % 32].x (member)
//   s_i4   int4               16 B  [64]  1024 B  store s_i4[t]; load s_i4[t ^ 1]
//   s_d    double              8 B  [64]  512 B   store s_d[t]; load s_d[63 - t]
//   s_u64  unsigned long long  8 B  [64]  512 B   store s_u64[t]; load+store (+=) s_u64[t]; load s_u64[t]
// A member access touches 4 (float/int) or 8 (double) bytes at the member's
// offset inside the element.

__global__ void vectorMix(const float4 *in, double *outD, int4 *outI, unsigned long long *outU)
{
    __shared__ float2 s_f2[64];
    __shared__ float4 s_f4[64];
    __shared__ double2 s_d2[32];
    __shared__ int4 s_i4[64];
    __shared__ double s_d[64];
    __shared__ unsigned long long s_u64[64];

    int t = threadIdx.x;
    float4 v = in[blockIdx.x * 64 + t];
    s_f4[t] = v;
    s_f2[t] = make_float2(v.x, v.y);
    s_f2[t].y += v.w;
    if (t % 2 == 0)
        s_d2[t / 2] = make_double2(v.x, v.z);
    s_i4[t] = make_int4((int)v.x, (int)v.y, (int)v.z, (int)v.w);
    s_d[t] = (double)v.x * v.y;
    s_u64[t] = (unsigned long long)t << 40;
    s_u64[t] += __float_as_uint(v.z);
    __syncthreads();

    float4 n = s_f4[(t + 1) % 64];
    float2 p = s_f2[63 - t];
    outD[blockIdx.x * 64 + t] = s_d[63 - t] + s_d2[t % 32].x + n.x + p.y;
    outI[blockIdx.x * 64 + t] = s_i4[t ^ 1];
    outU[blockIdx.x * 64 + t] = s_u64[t];
}

int main()
{
    const int blocks = 16;
    float4 *d_in;
    double *d_d;
    int4 *d_i;
    unsigned long long *d_u;
    cudaMalloc(&d_in, blocks * 64 * sizeof(float4));
    cudaMalloc(&d_d, blocks * 64 * sizeof(double));
    cudaMalloc(&d_i, blocks * 64 * sizeof(int4));
    cudaMalloc(&d_u, blocks * 64 * sizeof(unsigned long long));
    vectorMix<<<blocks, 64>>>(d_in, d_d, d_i, d_u);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

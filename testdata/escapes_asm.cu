// escapes_asm.cu - escapes through casts, inline PTX and macro bodies.
//
// Exercises two more escapes, one per array, a vectorised view, and one clean
// array in the same kernel:
//   - `reinterpret_cast<float4*>(c_tile)[tid]`: a vectorised view of a float
//     array, followed as one 16-byte access per lane (not an escape)
//   - inline `asm volatile("ld.shared.f32 ...")` whose "r" operand is
//     `(unsigned)__cvta_generic_to_shared(&a_buf[i])`
//   - a macro whose body names the array, `#define LOAD(i) m_buf[i]`, used as
//     `LOAD(tid)`: the subscript only exists after preprocessing, so a
//     source rewrite cannot reach it.
//
// A correct analysis must find, for kernel castAsmMacro (block 64x1x1 from
// `castAsmMacro<<<blocks, 64>>>`):
//   c_tile   float [256] 1024 B  accessed as float4 through the cast: the store
//            `reinterpret_cast<float4 *>(c_tile)[tid]` is simulated (16 bytes a
//            lane, consecutive: conflict-free) -> non-rewritable, as fix does
//            not rewrite wider accesses yet
//   a_buf    float [256] 1024 B  ESCAPES (inline asm operand) -> non-rewritable
//   m_buf    float [256] 1024 B  ESCAPES (used inside macro LOAD) -> non-rewritable
//   clean_c  float [256] 1024 B  rewritable; store clean_c[tid * 4 + k] in a
//            loop over k (4-way conflict: lanes 4 words apart), load clean_c[tid]
//   the stores a_buf[tid + 64 * k], m_buf[tid + 64 * k] and the load
//   c_tile[tid] are ordinary subscripts and must still be reported; the asm
//   load and LOAD(tid) are accesses the analysis cannot model.

#define LOAD(i) m_buf[i]

__global__ void castAsmMacro(const float4 *in, float *out)
{
    __shared__ float c_tile[256];
    __shared__ float a_buf[256];
    __shared__ float m_buf[256];
    __shared__ float clean_c[256];

    int tid = threadIdx.x;
    float4 v = in[blockIdx.x * 64 + tid];
    reinterpret_cast<float4 *>(c_tile)[tid] = v;
    for (int k = 0; k < 4; ++k) {
        a_buf[tid + 64 * k] = v.x * k;
        m_buf[tid + 64 * k] = v.y * k;
        clean_c[tid * 4 + k] = v.z + k;
    }
    __syncthreads();

    float viaAsm;
    asm volatile("ld.shared.f32 %0, [%1];"
                 : "=f"(viaAsm)
                 : "r"((unsigned)__cvta_generic_to_shared(&a_buf[255 - tid])));
    out[blockIdx.x * 64 + tid] = c_tile[tid] + viaAsm + LOAD(tid) + clean_c[tid];
}

int main()
{
    const int blocks = 32;
    float4 *d_in;
    float *d_out;
    cudaMalloc(&d_in, blocks * 64 * sizeof(float4));
    cudaMalloc(&d_out, blocks * 64 * sizeof(float));
    castAsmMacro<<<blocks, 64>>>(d_in, d_out);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

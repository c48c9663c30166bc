// grammar_edge.cu - CUDA syntax that stock C++ grammars tend to choke on.
//
// Exercises, inside one ordinary kernel:
//   - `struct __align__(16) Quad { float v[4]; };`
//   - `__shared__ __align__(16) float buf[64];` (attribute between the
//     qualifier and the type)
//   - `cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(block);`
//     as a NON-first statement of the kernel body (template-id declaration
//     that looks like a comparison expression)
//   - `DECLARE_TILE(float, stile, 64)`: a macro that expands to a __shared__
//     declaration, used WITHOUT a trailing semicolon and followed by a
//     normal statement on the next line.
//
// A correct analysis must find, for kernel edgeKernel (block 64x1x1 from
// `edgeKernel<<<blocks, 64>>>`):
//   buf    float [64] 256 B, alignment 16, rewritable; store buf[t], load buf[63 - t]
//   quads  Quad (16 B, alignment 16) [16] 256 B, rewritable;
//          store quads[t / 4].v[t % 4], load quads[lane / 4].v[3 - lane % 4]
//   stile  float [64] 256 B, declared through the macro DECLARE_TILE. An
//          analysis that expands function-like macros finds it (name stile,
//          float, dim 64; store stile[t], load stile[t ^ 32]). It stays
//          rewritable (an index swizzle edits only the accesses) and is
//          reported with "declared_by_macro": "DECLARE_TILE", so that a
//          rewrite never pads it: that would mean editing the macro.
//   The parser must not lose the statements after tile32's declaration or
//   after the DECLARE_TILE line (the loads/stores below them must be found).

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define DECLARE_TILE(T, name, n) __shared__ T name[n];

struct __align__(16) Quad { float v[4]; };

__global__ void edgeKernel(const float *in, float *out)
{
    cg::thread_block block = cg::this_thread_block();
    __shared__ __align__(16) float buf[64];
    __shared__ Quad quads[16];
    int t = block.thread_rank();
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(block);
    DECLARE_TILE(float, stile, 64)
    int lane = tile32.thread_rank();

    float x = in[blockIdx.x * 64 + t];
    buf[t] = x;
    quads[t / 4].v[t % 4] = x * 2.0f;
    stile[t] = x + 1.0f;
    block.sync();

    float y = buf[63 - t] + quads[lane / 4].v[3 - lane % 4] + stile[t ^ 32];
    y += tile32.shfl_down(y, 16);
    out[blockIdx.x * 64 + t] = y;
}

int main()
{
    const int blocks = 8;
    float *d_in, *d_out;
    cudaMalloc(&d_in, blocks * 64 * sizeof(float));
    cudaMalloc(&d_out, blocks * 64 * sizeof(float));
    edgeKernel<<<blocks, 64>>>(d_in, d_out);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

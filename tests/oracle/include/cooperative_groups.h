// The part of CUDA's cooperative groups that testdata uses, on top of bankwise_cuda.h.
#ifndef BANKWISE_COOPERATIVE_GROUPS_H
#define BANKWISE_COOPERATIVE_GROUPS_H

namespace cooperative_groups {

struct thread_block {
    unsigned thread_rank() const
    {
        return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    }
    void sync() const { __syncthreads(); }
};

inline thread_block this_thread_block() { return {}; }

template <unsigned Size>
struct thread_block_tile {
    unsigned thread_rank() const { return this_thread_block().thread_rank() % Size; }
    template <typename T>
    T shfl_down(T value, unsigned delta) const
    {
        static_assert(Size == 32, "only whole-warp tiles are emulated");
        return __shfl_down_sync(0xffffffffu, value, delta);
    }
};

template <unsigned Size>
thread_block_tile<Size> tiled_partition(const thread_block &) { return {}; }

}  // namespace cooperative_groups

#endif

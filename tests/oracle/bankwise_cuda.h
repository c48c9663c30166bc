// The CUDA execution model, emulated for one block on the CPU (see README.md).
//
// A testdata kernel is compiled as C++ after this header with
// `g++ -O0 -fsanitize=thread`: every memory access then calls a `__tsan_*` hook that
// driver.cpp defines (libtsan is never linked), so the driver sees the address and, through
// the return address, the instruction of every shared-memory load and store. `__shared__`
// arrays become function-local statics, which is how the test finds them in the symbol table.
#ifndef BANKWISE_CUDA_H
#define BANKWISE_CUDA_H

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cstdio>
// Device printf goes to stderr: stdout carries the recorded accesses.
#define printf(...) std::fprintf(stderr, __VA_ARGS__)

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// 128-byte alignment puts every array's first element in bank 0, as bankwise assumes.
#define __shared__ static __attribute__((aligned(128)))
#define __constant__

struct uint3 {
    unsigned x, y, z;
};

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

// Vector types with CUDA's sizes and alignments.
struct __align__(8) float2 { float x, y; };
struct __align__(16) float4 { float x, y, z, w; };
struct __align__(16) double2 { double x, y; };
struct __align__(8) int2 { int x, y; };
struct __align__(16) int4 { int x, y, z, w; };

namespace bankwise {
inline float2 float2_of(float x, float y) { return {x, y}; }
inline float4 float4_of(float x, float y, float z, float w) { return {x, y, z, w}; }
inline double2 double2_of(double x, double y) { return {x, y}; }
inline int2 int2_of(int x, int y) { return {x, y}; }
inline int4 int4_of(int x, int y, int z, int w) { return {x, y, z, w}; }
}  // namespace bankwise

// `s[i] = f(...)` with an aggregate result is a call that writes s[i] itself, which the
// instrumentation does not see; the statement expression makes it a plain, instrumented copy.
#define BANKWISE_MAKE(type, ...)                                 \
    ({                                                           \
        type bankwise_value = bankwise::type##_of(__VA_ARGS__);  \
        bankwise_value;                                          \
    })
#define make_float2(...) BANKWISE_MAKE(float2, __VA_ARGS__)
#define make_float4(...) BANKWISE_MAKE(float4, __VA_ARGS__)
#define make_double2(...) BANKWISE_MAKE(double2, __VA_ARGS__)
#define make_int2(...) BANKWISE_MAKE(int2, __VA_ARGS__)
#define make_int4(...) BANKWISE_MAKE(int4, __VA_ARGS__)

// Set by the driver's scheduler before it resumes a thread.
extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;

extern "C" {
void bankwise_syncthreads(void);
// Replaces `value` (`bytes` bytes) with that of lane (own lane + delta) of the same warp;
// a lane whose source is past the warp keeps its own.
void bankwise_shfl_down(void *value, unsigned bytes, unsigned delta);
// Global-memory buffer `which`, seeded (see driver.cpp).
void *bankwise_buffer(unsigned which);
// Records one atomic access at the call site `site` (atomics are not instrumented).
void bankwise_record_atomic(const void *address, unsigned bytes, const void *site);
// The bytes of dynamic shared memory of the launch (PTX's %dynamic_smem_size).
unsigned bankwise_dynamic_shared_bytes(void);
}

inline void __syncthreads() { bankwise_syncthreads(); }

// The launch ends: the run exits with the status the test reads as a trap.
[[noreturn]] inline void __trap()
{
    std::fprintf(stderr, "__trap()\n");
    std::_Exit(86);
}

namespace bankwise {

// A kernel the driver can run by name; the test generates the table `bankwise_kernels`.
struct Kernel {
    const char *name;
    void (*launch)();
};

// Global-memory argument `which`: a seeded buffer that converts to any pointer type.
struct Buffer {
    unsigned which;
    template <typename T>
    operator T *() const
    {
        return static_cast<T *>(bankwise_buffer(which));
    }
};

inline Buffer buffer(unsigned which) { return Buffer{which}; }

}  // namespace bankwise

template <typename T>
inline T __shfl_down_sync(unsigned, T value, unsigned delta)
{
    bankwise_shfl_down(&value, sizeof(T), delta);
    return value;
}

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }

inline unsigned __float_as_uint(float x)
{
    unsigned bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
}

// Atomics: one thread runs at a time, so a plain read-modify-write is atomic. They are not
// instrumented (the hooks would see a load and a store inside this header); they record one
// atomic access at the caller's instruction instead. noinline keeps that caller exact.
#define BANKWISE_ATOMIC __attribute__((no_sanitize_thread, noinline))

template <typename T, typename U>
BANKWISE_ATOMIC T atomicAdd(T *address, U value)
{
    bankwise_record_atomic(address, sizeof(T), __builtin_return_address(0));
    T old = *address;
    *address = old + static_cast<T>(value);
    return old;
}

template <typename T, typename U>
BANKWISE_ATOMIC T atomicMax(T *address, U value)
{
    bankwise_record_atomic(address, sizeof(T), __builtin_return_address(0));
    T old = *address;
    if (static_cast<T>(value) > old)
        *address = static_cast<T>(value);
    return old;
}

template <typename T, typename U, typename V>
BANKWISE_ATOMIC T atomicCAS(T *address, U compare, V value)
{
    bankwise_record_atomic(address, sizeof(T), __builtin_return_address(0));
    T old = *address;
    if (old == static_cast<T>(compare))
        *address = static_cast<T>(value);
    return old;
}

#endif

// Runs one block of one kernel with one fiber per CUDA thread and prints every shared-memory
// access it makes (see README.md). Compiled without -fsanitize=thread: it defines the hooks
// that the instrumented kernel code calls.
//
// Usage: driver KERNEL X Y Z [BASE:SIZE]...
//   KERNEL   a name in the generated `bankwise_kernels` table
//   X Y Z    the block shape
//   BASE:SIZE (hex) the shared arrays; an access inside array i is printed as
//   `site thread i offset bytes kind epoch` with site the instruction (hex), kind L, S or A,
//   epoch the block barriers passed before it.
// With BANKWISE_DUMP=FILE in the environment, every global buffer is written to FILE after
// the run (in order: a byte 1 and the buffer's bytes, or a byte 0 for one never used), so
// that two builds of a kernel can be compared bit for bit.
#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bankwise_cuda.h"
#undef printf  // the header routes the kernels' printf to stderr; the driver prints accesses

extern "C" const bankwise::Kernel bankwise_kernels[];

uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

// Dynamic shared memory: the test aliases every `extern __shared__` array to it.
extern "C" {
alignas(128) unsigned char bankwise_dynamic_shared[64 * 1024];

// What the launch gives: BANKWISE_DYNAMIC_BYTES, set by the test from bankwise's report.
unsigned bankwise_dynamic_shared_bytes(void)
{
    const char *bytes = std::getenv("BANKWISE_DYNAMIC_BYTES");
    return bytes != nullptr ? std::strtoul(bytes, nullptr, 10) : sizeof bankwise_dynamic_shared;
}
}

namespace {

[[noreturn]] void fail(const char *message)
{
    std::fprintf(stderr, "driver: %s\n", message);
    std::exit(2);
}

// Threads that are still running count; exited ones no longer hold a barrier up.
struct Barrier {
    unsigned live = 0;
    unsigned arrived = 0;
    unsigned generation = 0;
};

struct Thread {
    ucontext_t context;
    void *stack = nullptr;
    uint3 index{};
    unsigned linear = 0;
    bool done = false;
};

constexpr size_t kStackBytes = 256 * 1024;
constexpr unsigned kWarp = 32;
constexpr size_t kBufferBytes = 4 << 20;

struct Warp {
    Barrier barrier;
    unsigned char slots[kWarp][16];
};

struct Array {
    uintptr_t base;
    uintptr_t size;
};

struct Access {
    uintptr_t site;
    unsigned thread;
    unsigned array;
    uintptr_t offset;
    unsigned bytes;
    char kind;
    // Block barriers passed so far: a warp runs an instruction once per barrier interval and
    // iteration, whichever lanes take part.
    unsigned epoch;
};

std::vector<Thread> threads;
std::vector<Warp> warps;
Barrier block_barrier;
ucontext_t scheduler;
Thread *current = nullptr;
const bankwise::Kernel *kernel = nullptr;
// Set whenever a thread gets further; a scheduler round without it is a deadlock.
bool progress = false;
bool running = false;
std::vector<Array> arrays;
std::vector<Access> accesses;
std::vector<void *> buffers;

void yield() { swapcontext(&current->context, &scheduler); }

void release_if_complete(Barrier &barrier)
{
    if (barrier.arrived > 0 && barrier.arrived == barrier.live) {
        barrier.arrived = 0;
        ++barrier.generation;
    }
}

void wait_at(Barrier &barrier)
{
    progress = true;
    unsigned generation = barrier.generation;
    ++barrier.arrived;
    release_if_complete(barrier);
    while (barrier.generation == generation)
        yield();
    progress = true;
}

void thread_main()
{
    kernel->launch();
    current->done = true;
    progress = true;
    --block_barrier.live;
    release_if_complete(block_barrier);
    Barrier &warp = warps[current->linear / kWarp].barrier;
    --warp.live;
    release_if_complete(warp);
}

void record(const void *address, unsigned bytes, char kind, const void *site)
{
    if (!running)
        return;
    auto at = reinterpret_cast<uintptr_t>(address);
    for (unsigned i = 0; i < arrays.size(); ++i) {
        if (at - arrays[i].base < arrays[i].size) {
            accesses.push_back(Access{reinterpret_cast<uintptr_t>(site), current->linear, i,
                                      at - arrays[i].base, bytes, kind,
                                      block_barrier.generation});
            return;
        }
    }
}

void run_block(dim3 shape)
{
    blockDim = shape;
    gridDim = dim3(1, 1, 1);
    blockIdx = uint3{0, 0, 0};
    unsigned count = shape.x * shape.y * shape.z;
    if (count == 0 || count > 1024)
        fail("a block has 1 to 1024 threads");
    threads.resize(count);
    warps.resize((count + kWarp - 1) / kWarp);
    block_barrier.live = count;
    for (unsigned linear = 0; linear < count; ++linear) {
        Thread &thread = threads[linear];
        thread.linear = linear;
        thread.index = uint3{linear % shape.x, linear / shape.x % shape.y,
                             linear / (shape.x * shape.y)};
        ++warps[linear / kWarp].barrier.live;
        thread.stack = std::malloc(kStackBytes);
        if (thread.stack == nullptr || getcontext(&thread.context) != 0)
            fail("cannot create a thread");
        thread.context.uc_stack.ss_sp = thread.stack;
        thread.context.uc_stack.ss_size = kStackBytes;
        thread.context.uc_link = &scheduler;
        makecontext(&thread.context, thread_main, 0);
    }
    running = true;
    for (unsigned remaining = count; remaining > 0;) {
        progress = false;
        remaining = 0;
        for (Thread &thread : threads) {
            if (thread.done)
                continue;
            current = &thread;
            threadIdx = thread.index;
            swapcontext(&scheduler, &thread.context);
            remaining += !thread.done;
        }
        if (remaining > 0 && !progress)
            fail("deadlock: threads wait at barriers that the others never reach");
    }
    running = false;
}

// Writes every buffer to `path` (see the usage above).
void dump_buffers(const char *path)
{
    FILE *out = std::fopen(path, "wb");
    if (out == nullptr)
        fail("cannot open the dump file");
    for (void *buffer : buffers) {
        unsigned char used = buffer != nullptr;
        bool ok = std::fwrite(&used, 1, 1, out) == 1 &&
                  (!used || std::fwrite(buffer, 1, kBufferBytes, out) == kBufferBytes);
        if (!ok)
            fail("cannot write the dump file");
    }
    if (std::fclose(out) != 0)
        fail("cannot write the dump file");
}

}  // namespace

extern "C" {

void bankwise_syncthreads(void) { wait_at(block_barrier); }

void bankwise_shfl_down(void *value, unsigned bytes, unsigned delta)
{
    if (bytes > sizeof warps[0].slots[0])
        fail("__shfl_down_sync on a value wider than 16 bytes");
    Warp &warp = warps[current->linear / kWarp];
    unsigned lane = current->linear % kWarp;
    std::memcpy(warp.slots[lane], value, bytes);
    wait_at(warp.barrier);
    unsigned source = lane + delta;
    if (source < kWarp && current->linear - lane + source < threads.size())
        std::memcpy(value, warp.slots[source], bytes);
    wait_at(warp.barrier);
}

void bankwise_record_atomic(const void *address, unsigned bytes, const void *site)
{
    record(address, bytes, 'A', site);
}

// Deterministic contents: a xorshift stream seeded with the buffer's number.
void *bankwise_buffer(unsigned which)
{
    if (which >= buffers.size())
        buffers.resize(which + 1, nullptr);
    if (buffers[which] == nullptr) {
        auto *words = static_cast<uint64_t *>(std::malloc(kBufferBytes));
        if (words == nullptr)
            fail("cannot allocate a buffer");
        uint64_t state = 0x9e3779b97f4a7c15ull * (which + 1);
        for (size_t i = 0; i < kBufferBytes / sizeof *words; ++i) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            words[i] = state;
        }
        buffers[which] = words;
    }
    return buffers[which];
}

// ThreadSanitizer's instrumentation interface (GCC 12), without the runtime.
void __tsan_init(void) {}
void __tsan_func_entry(void *) {}
void __tsan_func_exit(void) {}
void __tsan_read_range(void *address, unsigned long bytes)
{
    record(address, static_cast<unsigned>(bytes), 'L', __builtin_return_address(0));
}
void __tsan_write_range(void *address, unsigned long bytes)
{
    record(address, static_cast<unsigned>(bytes), 'S', __builtin_return_address(0));
}

#define BANKWISE_HOOKS(bytes)                                                      \
    void __tsan_read##bytes(void *address)                                          \
    {                                                                               \
        record(address, bytes, 'L', __builtin_return_address(0));                  \
    }                                                                               \
    void __tsan_write##bytes(void *address)                                         \
    {                                                                               \
        record(address, bytes, 'S', __builtin_return_address(0));                  \
    }                                                                               \
    void __tsan_unaligned_read##bytes(void *address)                                \
    {                                                                               \
        record(address, bytes, 'L', __builtin_return_address(0));                  \
    }                                                                               \
    void __tsan_unaligned_write##bytes(void *address)                               \
    {                                                                               \
        record(address, bytes, 'S', __builtin_return_address(0));                  \
    }
BANKWISE_HOOKS(1)
BANKWISE_HOOKS(2)
BANKWISE_HOOKS(4)
BANKWISE_HOOKS(8)
BANKWISE_HOOKS(16)
}

int main(int argc, char **argv)
{
    if (argc < 5)
        fail("usage: driver KERNEL X Y Z [BASE:SIZE]...");
    for (const bankwise::Kernel *k = bankwise_kernels; k->name != nullptr; ++k)
        if (std::strcmp(k->name, argv[1]) == 0)
            kernel = k;
    if (kernel == nullptr)
        fail("no such kernel in this build");
    for (int i = 5; i < argc; ++i) {
        Array array{};
        if (std::sscanf(argv[i], "%zx:%zx", &array.base, &array.size) != 2)
            fail("an array is BASE:SIZE in hex");
        arrays.push_back(array);
    }
    run_block(dim3(std::strtoul(argv[2], nullptr, 10), std::strtoul(argv[3], nullptr, 10),
                   std::strtoul(argv[4], nullptr, 10)));
    for (const Access &a : accesses)
        std::printf("%zx %u %u %zu %u %c %u\n", a.site, a.thread, a.array, a.offset, a.bytes,
                    a.kind, a.epoch);
    if (const char *dump = std::getenv("BANKWISE_DUMP"))
        dump_buffers(dump);
    return 0;
}

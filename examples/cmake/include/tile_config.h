// The tile shape of rowsum.cu's launch and of the kernel in tiles.cuh. Found through the
// target's include directories, which CMake hands nvcc in a response file
// (--options-file includes_CUDA.rsp).
#pragma once

#define SUM_TILE 32
#define SUM_ROWS 8

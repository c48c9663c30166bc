// The entry point of transpose.cu, for main.cu.
#pragma once

// Transposes the width x height matrix `in` into `out` (both in device memory).
void transpose(float *out, const float *in, int width, int height);

// The entry point of rowsum.cu, for main.cu.
#pragma once

// Adds the sum of each row of the width x height matrix `in` to `sums` (both in device
// memory; `sums` holds height floats, zeroed by the caller).
void row_sums(float *sums, const float *in, int width, int height);

// What the wavefront model's test (driver.cpp) calls: step 10's own launchers, compiled by
// kernels.cpp at one wavefront width.
#pragma once

#include <cstddef>

struct Step10Entry {
  int width;       // W: __AMDGCN_WAVEFRONT_SIZE of this build
  int kernel_wave; // port::kWaveSize as step 10's code sees it
  void (*block_atomic_int)(const unsigned* in, size_t n, unsigned* out);
  void (*block_atomic_float)(const float* in, size_t n, float* out);
  void (*grid_sync_int)(const unsigned* in, size_t n, unsigned* out, unsigned* partials);
  void (*grid_sync_float)(const float* in, size_t n, float* out, float* partials);
  void (*tile_rows_int)(const unsigned* in, size_t rows, size_t cols, unsigned* out);
  void (*tile_rows_float)(const float* in, size_t rows, size_t cols, float* out);
  unsigned (*grid_sync_blocks)();  // the partials grid_sync needs: one per resident block
};

extern const Step10Entry step10_entry;

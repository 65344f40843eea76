// Step 10's kernels and launchers on the wavefront model, at the width this file is compiled
// for (-D__AMDGCN_WAVEFRONT_SIZE=32 or 64, and -D__HIPCC__: portable.hpp's HIP branch).
// step10_kernels.inc is step10_hip.cu up to its mains, made by prepare_source.py.
#include "step10_kernels.inc"

#include "entry.hpp"

const Step10Entry step10_entry = {
    __AMDGCN_WAVEFRONT_SIZE,
    port::kWaveSize,
    [](const unsigned* in, size_t n, unsigned* out) { block_atomic(in, n, out, nullptr); },
    [](const float* in, size_t n, float* out) { block_atomic(in, n, out, nullptr); },
    [](const unsigned* in, size_t n, unsigned* out, unsigned* partials) { grid_sync(in, n, out, partials, nullptr); },
    [](const float* in, size_t n, float* out, float* partials) { grid_sync(in, n, out, partials, nullptr); },
    [](const unsigned* in, size_t rows, size_t cols, unsigned* out) { tile_rows(in, rows, cols, out, nullptr); },
    [](const float* in, size_t rows, size_t cols, float* out) { tile_rows(in, rows, cols, out, nullptr); },
    [] { return std::max(port::resident_blocks(reduce_grid_sync<unsigned>, kThreads),
                         port::resident_blocks(reduce_grid_sync<float>, kThreads)); },
};

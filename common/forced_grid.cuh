// Step 07's --blocks N: the grid of a cooperative variant (forced, or what n needs), and what
// becomes of a forced grid that cannot be co-resident: a usage error, not a CUDA error.
// run_step stores the flag (harness::forced_blocks); the launchers ask here.
#pragma once

#include <string>

#include "harness.cuh"

namespace harness {

// --blocks N when given (even past the limit: the launch then fails, see check_cooperative),
// else what n needs, capped at co-residency.
inline unsigned cooperative_blocks(size_t n, size_t per_block, unsigned resident) {
  return forced_blocks() ? forced_blocks() : grid_for(n, per_block, resident);
}

// A cooperative launch of more blocks than can be resident at once is refused with
// cudaErrorCooperativeLaunchTooLarge (nothing runs). With --blocks that is the user's doing:
// a usage error, one line, exit 2. Otherwise it is a bug: CudaError at file:line, exit 1.
inline void check_cooperative(cudaError_t err, unsigned blocks, unsigned resident, const char* variant,
                              const char* call, const char* file, int line) {
  if (err == cudaErrorCooperativeLaunchTooLarge && forced_blocks()) {
    (void)cudaGetLastError();  // a launch error is not sticky: clear it
    throw UsageError("--blocks: " + std::to_string(blocks) + " blocks cannot be co-resident on this GPU (at most " +
                     std::to_string(resident) + " for " + variant + "); cudaErrorCooperativeLaunchTooLarge");
  }
  check_cuda(err, call, file, line);
}

}  // namespace harness

// Step 07's --blocks N: the grid of a cooperative variant (forced, or what n needs), and what
// becomes of a forced grid that cannot be co-resident: a usage error, not a CUDA error.
// The flag reaches the launchers in their Launch (ctx.blocks).
#pragma once

#include <string>

#include "launch.cuh"

namespace harness {

// --blocks N when given (even past the limit: the launch then fails, see check_cooperative),
// else what n needs, capped at co-residency.
inline unsigned cooperative_blocks(const Launch& ctx, size_t n, size_t per_block, unsigned resident) {
  return ctx.blocks ? ctx.blocks : grid_for(n, per_block, resident);
}

// A cooperative launch of more blocks than can be resident at once is refused with
// cudaErrorCooperativeLaunchTooLarge (nothing runs). With --blocks that is the user's doing:
// a usage error, one line, exit 2. Otherwise it is a bug: a CudaError naming the call, exit 1.
inline void check_cooperative(cudaError_t err, const Launch& ctx, unsigned blocks, unsigned resident,
                              const char* variant, const char* call) {
  if (err == cudaErrorCooperativeLaunchTooLarge && ctx.blocks) {
    (void)cudaGetLastError();  // a launch error is not sticky: clear it
    throw UsageError("--blocks: " + std::to_string(blocks) + " blocks cannot be co-resident on this GPU (at most " +
                     std::to_string(resident) + " for " + variant + "); cudaErrorCooperativeLaunchTooLarge");
  }
  check_cuda(err, call);
}

}  // namespace harness

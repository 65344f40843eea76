// Step 07's own flag, --blocks N: the grid of a cooperative variant (forced, or what n needs),
// and what becomes of a forced grid that cannot be co-resident: a usage error, not a CUDA error.
// The flag is this program's alone (cli.hpp's OwnFlags): main hands a ForcedGrid to run_step,
// and the launchers find it in their Launch (ctx.own_as<ForcedGrid>()).
#pragma once

#include <string>
#include <vector>

#include "launch.cuh"

namespace harness {

struct ForcedGrid : OwnFlags {
  unsigned blocks = 0;  // --blocks N; 0: automatic (co-resident, capped by n)

  std::vector<FlagGroup> groups() override {
    FlagGroup g;
    g.flags = {"--blocks"};
    g.help =
        "  --blocks N            grid size of the cooperative variants (default: co-resident, capped by n);\n"
        "                        more than fit at once fails with exit 2\n";
    // Above what any GPU holds at once (32 blocks x ~150 SMs < 5,000); two partials per block
    // still fit in the 1 MiB scratch.
    g.parse = [this](const std::string&, const TakeValue& take, Options&) {
      blocks = unsigned(parse_int(take(), "--blocks", 1, 65536));
    };
    return {g};
  }
};

// --blocks N when given (even past the limit: the launch then fails, see check_cooperative),
// else what n needs, capped at co-residency.
inline unsigned cooperative_blocks(const Launch& ctx, size_t n, size_t per_block, unsigned resident) {
  const unsigned forced = ctx.own_as<ForcedGrid>().blocks;
  return forced ? forced : grid_for(n, per_block, resident);
}

// A cooperative launch of more blocks than can be resident at once is refused with
// cudaErrorCooperativeLaunchTooLarge (nothing runs). With --blocks that is the user's doing:
// a usage error, one line, exit 2. Otherwise it is a bug: a CudaError naming the call, exit 1.
inline void check_cooperative(cudaError_t err, const Launch& ctx, unsigned blocks, unsigned resident,
                              const char* variant, const char* call) {
  if (err == cudaErrorCooperativeLaunchTooLarge && ctx.own_as<ForcedGrid>().blocks) {
    (void)cudaGetLastError();  // a launch error is not sticky: clear it
    throw UsageError("--blocks: " + std::to_string(blocks) + " blocks cannot be co-resident on this GPU (at most " +
                     std::to_string(resident) + " for " + variant + "); cudaErrorCooperativeLaunchTooLarge");
  }
  check_cuda(err, call);
}

}  // namespace harness

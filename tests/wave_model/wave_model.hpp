// A CPU model of a GPU that runs its threads in wavefronts of W lanes (W = 32 or 64), written
// for this project (no HIP-on-CPU code is used). It runs step 10's own kernel source, which
// reaches it through the model's <hip/hip_runtime.h> and <hip/hip_cooperative_groups.h>.
//
// What is modelled:
//  - a block is its threads, each a fiber on one host thread (switched by a few instructions of
//    assembly on x86-64, ucontext elsewhere: wave_model.cpp); `__shared__` is a
//    thread_local, so each block has its own copy (zeroed: a GPU's holds whatever was there);
//  - a wavefront is lanes [k*W, (k+1)*W) of its block. Its lanes meet at every wavefront
//    operation (a shuffle, a ballot, a tile's sync): the operation runs when no lane of the
//    wavefront can go on, with the lanes that reached it as the active ones; a lane that left
//    (returned or waits at a barrier) is inactive, and reading it gives 0, as AMD's
//    ds_bpermute does. Lanes are grouped by the operation's KIND only, not by its call site
//    (every shuffle of step 10 goes through one call, port::shfl_down): two shuffles on
//    divergent branches run as one group, so divergent wave operations are NOT modelled
//    (step 10 has none). Between
//    two such operations each lane runs on its own, in lane order: the lockstep of a real
//    wavefront through memory without a barrier is not modelled;
//  - a tile may be at most W wide (warpSize), not HIP 5.2's CG WAVEFRONT_SIZE, which is 64 on
//    gfx1013 and gfx1032-1036 although they run wave32 (step 10 static_asserts kTile <= W);
//  - __syncthreads(): every lane of the block that has not returned; grid.sync(): every block
//    of a cooperative launch, all resident at once (one host thread each), or an error;
//  - atomics are host atomics; nothing is timed.
// Problems the model reports through take_errors() (a block whose lanes wait at __syncthreads()
// and grid.sync() at once, a block that returns while the grid waits, blocks that pass
// grid.sync() different numbers of times); the launch goes on with what it can still run.
// Lanes of one wavefront at different wavefront operations are not reported: they run as
// separate groups, one after the other (run_wave_ops).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct dim3 {
  uint32_t x, y, z;
  constexpr dim3(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace wave_model {

// The modelled GPU: how many compute units, how many threads one holds at once.
struct Device {
  int compute_units = 3;
  int threads_per_cu = 2048;  // two blocks of 1024 at once per CU
  int max_block = 1024;
};
Device& device();

// The lane that runs now (only valid inside a kernel).
struct Lane {
  dim3 thread_idx, block_idx, block_dim, grid_dim;
  unsigned rank = 0;  // threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
  unsigned width = 0; // W
};
const Lane& lane();
inline unsigned lane_id() { return lane().rank % lane().width; }

// The wavefront operations. bpermute: every active lane reads `value` of lane `src` (taken
// modulo W); an inactive or missing source gives 0. ballot: bit i set for each active lane i
// whose predicate is non-zero (bits W..63 are 0). converge: the active lanes meet, no data.
uint64_t bpermute(uint64_t value, int src);
uint64_t ballot(bool predicate);
void converge();
void syncthreads();
void grid_sync();

// Runs `lane_body` for every thread of a grid of `grid` blocks of `block` threads at wavefront
// width `width`. cooperative: all blocks resident at once (grid.sync() allowed); a grid larger
// than resident_blocks(block) is refused (returns false), as HIP refuses the launch.
bool run_grid(dim3 grid, dim3 block, unsigned width, bool cooperative, const std::function<void()>& lane_body);
int resident_blocks(int threads_per_block);

// What went wrong in kernels since the last take_errors() (empty: nothing).
std::vector<std::string> take_errors();
void add_error(const std::string& what);

}  // namespace wave_model

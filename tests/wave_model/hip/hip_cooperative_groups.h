// The wavefront model's <hip/hip_cooperative_groups.h>: the HIP 5.2 groups step 10 uses, on
// the CPU model, as HIP 5.2 defines them (amd_hip_cooperative_groups.h): a tile's rank is the
// block rank's low bits, its shuffles are the wavefront's at the tile's width, a tile may be
// at most a wavefront wide (a compile error above), and its sync() orders memory only (the
// lanes of a wavefront are in lockstep; the model makes them meet).
#pragma once

#include "hip_runtime.h"

namespace cooperative_groups {

class thread_block {
 public:
  uint32_t size() const { return blockDim.x * blockDim.y * blockDim.z; }
  uint32_t thread_rank() const { return ::wave_model::lane().rank; }
  dim3 group_index() const { return blockIdx; }
  dim3 thread_index() const { return threadIdx; }
  bool is_valid() const { return true; }
  void sync() const { __syncthreads(); }
};
inline thread_block this_thread_block() { return {}; }

class grid_group {
 public:
  uint32_t size() const { return blockDim.x * blockDim.y * blockDim.z * gridDim.x * gridDim.y * gridDim.z; }
  uint32_t thread_rank() const {
    const uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    return block * (blockDim.x * blockDim.y * blockDim.z) + ::wave_model::lane().rank;
  }
  bool is_valid() const { return true; }
  void sync() const { ::wave_model::grid_sync(); }
};
inline grid_group this_grid() { return {}; }

// The tile limit is the model's width (warpSize). HIP 5.2 checks CG's WAVEFRONT_SIZE instead,
// which is 32 only on gfx1010-1012/1030/1031 and 64 on gfx1013 and gfx1032-1036 (wave32 GPUs):
// there a tile of 64 compiles; step 10's own static_assert on kTile catches it.
template <unsigned int Size, class Parent = void>
class thread_block_tile {
  static_assert(Size > 0 && (Size & (Size - 1)) == 0 && Size <= unsigned(warpSize),
                "Tile size is either not a power of 2 or greater than the wavefront size");

 public:
  thread_block_tile() = default;
  template <class P>
  thread_block_tile(const thread_block_tile<Size, P>&) {}
  static constexpr unsigned int num_threads_ = Size;
  static unsigned int size() { return Size; }
  static unsigned int thread_rank() { return ::wave_model::lane().rank & (Size - 1); }
  static void sync() { ::wave_model::converge(); }
  template <class T>
  T shfl(T var, int src_rank) const { return __shfl(var, src_rank, int(Size)); }
  template <class T>
  T shfl_down(T var, unsigned int delta) const { return __shfl_down(var, delta, int(Size)); }
  template <class T>
  T shfl_up(T var, unsigned int delta) const { return __shfl_up(var, delta, int(Size)); }
  template <class T>
  T shfl_xor(T var, unsigned int mask) const { return __shfl_xor(var, int(mask), int(Size)); }
};

template <unsigned int Size, class Parent>
thread_block_tile<Size, Parent> tiled_partition(const Parent&) {
  static_assert(Size > 0 && (Size & (Size - 1)) == 0 && Size <= unsigned(warpSize),
                "Tiled partition with size > wavefront size. Currently not supported ");
  return {};
}

}  // namespace cooperative_groups

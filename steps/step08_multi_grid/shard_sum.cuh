// Step 08's two programs (step08_multi_grid.cu, step08_nccl_ranks.cu) reduce each GPU's shard
// with step 07's grid_sync kernel (its 16-byte reads and block sum: common/vector_reads.cuh;
// one step does not include another's source), and the cooperative launch on one shard.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "run_step.cuh"
#include "vector_reads.cuh"

namespace cg = cooperative_groups;
using vector_reads::block_sum;
using vector_reads::thread_sum;

constexpr int kThreads = 1024;
constexpr int kVectorsInFlight = 4;
constexpr size_t kPerBlock = size_t(kThreads) * kVectorsInFlight * 4;

// Step 07's grid_sync reduction of this GPU's shard, up to the combine: every block writes
// its partial, grid.sync(), block 0 adds them in a fixed order. The sum is valid in block 0's
// thread 0 only (0 elsewhere). Ends with no grid-wide barrier pending.
template <typename T>
__device__ T shard_sum(const T* __restrict__ in, size_t n, T* partials) {
  cg::grid_group grid = cg::this_grid();
  const T sum = block_sum(thread_sum<kVectorsInFlight>(in, n, grid.thread_rank(), grid.size()));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
  grid.sync();
  if (blockIdx.x != 0) return T(0);
  T s = 0;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) s += partials[i];
  return block_sum(s);
}

// The shard's sum into *out (this GPU's memory): step 07's grid_sync kernel.
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_shard(const T* __restrict__ in, size_t n, T* partials, T* out) {
  const T s = shard_sum(in, n, partials);
  if (blockIdx.x == 0 && threadIdx.x == 0) *out = s;
}

// A kernel whose first two parameters are a shard (in, n): as many blocks as the shard needs,
// at most all that fit at once on the current GPU (asked once per kernel and GPU), in one
// cooperative launch (all blocks resident, or no launch); the caller has made the GPU current.
template <typename T, typename... Params, typename... Args>
void launch_on_shard(void (*kernel)(const T*, size_t, Params...), cudaStream_t stream, const T* in, size_t n,
                     Args&&... args) {
  const unsigned blocks = harness::grid_for(n, kPerBlock, harness::resident_blocks(kernel, kThreads));
  CUDA_CHECK(harness::launch_cooperative(kernel, blocks, kThreads, 0, stream, in, n, std::forward<Args>(args)...));
}

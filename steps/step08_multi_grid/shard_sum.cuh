// Step 08's two programs (step08_multi_grid.cu, step08_nccl_ranks.cu) reduce each GPU's shard
// with step 07's grid_sync kernel: its pieces, copied from step 07 (one step does not include
// another's source), and the cooperative launch on one shard.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "harness.cuh"

namespace cg = cooperative_groups;

constexpr int kThreads = 1024;
constexpr int kBatch = 4;
constexpr size_t kPerBlock = size_t(kThreads) * kBatch * 4;

template <typename T> struct Vec4;
template <> struct Vec4<unsigned> { using type = uint4; };
template <> struct Vec4<float> { using type = float4; };

template <typename T>
__device__ T block_sum(T value) {  // thread 0 gets the block's sum
  __shared__ T warp_sums[32];
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  const unsigned warp_id = threadIdx.x / 32, warps = blockDim.x / 32;
  value = cg::reduce(warp, value, cg::plus<T>());
  if (warp.thread_rank() == 0) warp_sums[warp_id] = value;
  __syncthreads();
  if (warp_id == 0)
    value = cg::reduce(warp, warp.thread_rank() < warps ? warp_sums[warp.thread_rank()] : T(0), cg::plus<T>());
  return value;
}

template <typename T>
__device__ size_t head_count(const T* in, size_t n) {
  const size_t misaligned = (reinterpret_cast<uintptr_t>(in) % 16) / sizeof(T);
  const size_t head = misaligned ? 4 - misaligned : 0;
  return head < n ? head : n;
}

template <typename T>
__device__ T thread_sum(const T* __restrict__ in, size_t n, size_t thread, size_t stride) {
  using V = typename Vec4<T>::type;
  const size_t head = head_count(in, n);
  const size_t vectors = (n - head) / 4;
  const V* body = reinterpret_cast<const V*>(in + head);
  const size_t tail_begin = head + vectors * 4;
  T sum = 0;
  size_t i = thread;
  for (; i + (kBatch - 1) * stride < vectors; i += kBatch * stride) {
    V v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) v[b] = body[i + b * stride];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);
  }
  for (; i < vectors; i += stride) {
    V v = body[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  if (thread < head) sum += in[thread];
  if (thread < n - tail_begin) sum += in[tail_begin + thread];
  return sum;
}

// Step 07's grid_sync reduction of this GPU's shard, up to the combine: every block writes
// its partial, grid.sync(), block 0 adds them in a fixed order. The sum is valid in block 0's
// thread 0 only (0 elsewhere). Ends with no grid-wide barrier pending.
template <typename T>
__device__ T shard_sum(const T* __restrict__ in, size_t n, T* partials) {
  cg::grid_group grid = cg::this_grid();
  const T sum = block_sum(thread_sum(in, n, grid.thread_rank(), grid.size()));
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

// A cooperative launch (all blocks resident, or no launch) of `blocks` blocks on `stream`;
// the caller has made the stream's GPU current.
template <typename... Params, typename... Args>
void launch_cooperative(void (*kernel)(Params...), unsigned blocks, cudaStream_t stream, Args&&... args) {
  CUDA_CHECK(harness::launch_cooperative(kernel, blocks, kThreads, 0, stream, std::forward<Args>(args)...));
}

// A kernel whose first two parameters are a shard (in, n): as many blocks as the shard needs,
// at most all that fit at once on the current GPU (asked once per kernel and GPU).
template <typename T, typename... Params, typename... Args>
void launch_on_shard(void (*kernel)(const T*, size_t, Params...), cudaStream_t stream, const T* in, size_t n,
                     Args&&... args) {
  const size_t resident = harness::resident_blocks_of(kernel, kThreads);
  const unsigned blocks = unsigned(std::max<size_t>(1, std::min(resident, (n + kPerBlock - 1) / kPerBlock)));
  launch_cooperative(kernel, blocks, stream, in, n, std::forward<Args>(args)...);
}

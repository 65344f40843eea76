// Step 05's 16-byte reads and block sum as pieces, and step 07's float block sum, for steps
// 06-10's larger kernels. Steps 00-05 keep their own copies: each reads as one lesson.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstdint>
#include <type_traits>

namespace vector_reads {

namespace cg = cooperative_groups;

// The 16-byte vector of four elements.
template <typename T> struct Vec4;
template <> struct Vec4<unsigned> { using type = uint4; };
template <> struct Vec4<float> { using type = float4; };

// Elements before the first 16-byte boundary of `in` (at most 3, at most n): read one by one.
template <typename T>
__host__ __device__ size_t head_count(const T* in, size_t n) {
  const size_t misaligned = (reinterpret_cast<uintptr_t>(in) % 16) / sizeof(T);
  const size_t head = misaligned ? 4 - misaligned : 0;
  return head < n ? head : n;
}

// Step 05's loop as a function: this thread's share of the array, for `stride` threads from 0
// (the grid, a block or a warp); scalar head and tail, 16-byte body, Batch vectors in flight.
// For short shares (step 09; each changes registers: measure): EndsFirst loads the ends before
// the body, adds them after; RestBatch reads what the full batches leave as one guarded batch.
template <int Batch, bool EndsFirst = false, bool RestBatch = false, typename T>
__device__ T thread_sum(const T* __restrict__ in, size_t n, size_t thread, size_t stride) {
  using V = typename Vec4<T>::type;
  const size_t head = head_count(in, n);
  const size_t vectors = (n - head) / 4;
  const V* body = reinterpret_cast<const V*>(in + head);
  const size_t tail_begin = head + vectors * 4;
  const T head_value = EndsFirst && thread < head ? in[thread] : T(0);
  const T tail_value = EndsFirst && thread < n - tail_begin ? in[tail_begin + thread] : T(0);
  T sum = 0;
  size_t i = thread;
  for (; i + (Batch - 1) * stride < vectors; i += Batch * stride) {
    V v[Batch];
#pragma unroll
    for (int b = 0; b < Batch; ++b) v[b] = body[i + b * stride];
#pragma unroll
    for (int b = 0; b < Batch; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);
  }
  if constexpr (RestBatch) {  // fewer than Batch vectors each: one round trip, not up to Batch - 1
    V v[Batch];
#pragma unroll
    for (int b = 0; b < Batch; ++b) v[b] = i + b * stride < vectors ? body[i + b * stride] : V{};
#pragma unroll
    for (int b = 0; b < Batch; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);
  } else {
    for (; i < vectors; i += stride) {
      V v = body[i];
      sum += (v.x + v.y) + (v.z + v.w);
    }
  }
  if (thread < head) sum += EndsFirst ? head_value : in[thread];
  if (thread < n - tail_begin) sum += EndsFirst ? tail_value : in[tail_begin + thread];
  return sum;
}

// Step 05's block sum: cg::reduce in each warp, the warp sums through shared memory, warp 0
// reduces them; thread 0 gets the block's sum. Two calls in one kernel must be separated by
// a barrier (__syncthreads or grid.sync, which has one).
template <typename T>
__device__ T block_sum(T value) {
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

// Step 07's float block sum: the warps as above, then thread 0 adds the <= 32 warp sums as 8
// float4 in a fixed tree, not a second chain of 5 shuffle + add rounds (unsigned has REDUX).
// Whether that is faster is within one event pair's noise (results/logs/step07_probe_h100.txt).
__device__ inline float block_sum_quads(float value) {
  __shared__ __align__(16) float warp_sums[32];
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  const unsigned warps = blockDim.x / 32;
  value = cg::reduce(warp, value, cg::plus<float>());
  if (warp.thread_rank() == 0) warp_sums[threadIdx.x / 32] = value;
  if (threadIdx.x < 32 && threadIdx.x >= warps) warp_sums[threadIdx.x] = 0.0f;  // a small block's empty slots
  __syncthreads();
  if (threadIdx.x == 0) {
    const float4* quads = reinterpret_cast<const float4*>(warp_sums);
    float q[8];
#pragma unroll
    for (unsigned k = 0; k < 8; ++k) {
      const float4 v = k * 4 < warps ? quads[k] : make_float4(0, 0, 0, 0);
      q[k] = (v.x + v.y) + (v.z + v.w);
    }
    value = ((q[0] + q[1]) + (q[2] + q[3])) + ((q[4] + q[5]) + (q[6] + q[7]));
  }
  return value;
}

// Step 07's block sum by element type: block_sum for unsigned, block_sum_quads for float.
// Thread 0 gets the block's sum; two calls in one kernel must be separated by a barrier.
template <typename T>
__device__ T block_sum_typed(T value) {
  if constexpr (std::is_same_v<T, float>) return block_sum_quads(value);
  else return block_sum(value);
}

}  // namespace vector_reads

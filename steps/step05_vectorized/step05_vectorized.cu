// Step 05 - 16-byte loads: read the input as int4 / float4, four elements per instruction,
// several vectors in flight per thread. A 16-byte load needs a 16-byte-aligned address,
// and neither the caller's pointer nor n has to cooperate, so the array is cut in three:
//   head  0..3 elements before the first 16-byte boundary (scalar loads)
//   body  whole vectors (vector loads)
//   tail  0..3 elements after the last whole vector (scalar loads)
// Variants: v4_batch1 (one vector per iteration) and v4_batch4 (four in flight).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstdint>

#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

namespace cg = cooperative_groups;

// 1024-thread blocks, two per SM: the same occupancy as step 04's 8 x 256. As sums, in one
// H200 session, they tied (chapter 05); as a plain read (read_probe) 1024 was ahead on the
// H100, tied on the H200.
constexpr int kThreads = 1024;

template <typename T> struct Vec4;  // the 16-byte vector type of T
template <> struct Vec4<unsigned> { using type = uint4; };
template <> struct Vec4<float> { using type = float4; };

// Step 04's block sum. Thread 0 gets the block's sum.
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

// [docs:split]
// Elements before the first 16-byte boundary (0..3), never more than n.
template <typename T>
__host__ __device__ size_t head_count(const T* in, size_t n) {
  const size_t misaligned = (reinterpret_cast<uintptr_t>(in) % 16) / sizeof(T);
  const size_t head = misaligned ? 4 - misaligned : 0;
  return head < n ? head : n;
}
// [/docs:split]

// [docs:vector-kernel]
template <int Batch, typename T>
__global__ void reduce_vectorized(const T* __restrict__ in, size_t n, T* out) {
  using V = typename Vec4<T>::type;
  const size_t head = head_count(in, n);
  const size_t vectors = (n - head) / 4;
  const V* body = reinterpret_cast<const V*>(in + head);  // 16-byte aligned by construction
  const size_t tail_begin = head + vectors * 4;

  const size_t thread = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  T sum = 0;
  size_t i = thread;
  for (; i + (Batch - 1) * stride < vectors; i += Batch * stride) {
    V v[Batch];
#pragma unroll
    for (int b = 0; b < Batch; ++b) v[b] = body[i + b * stride];  // Batch x 16 bytes in flight
#pragma unroll
    for (int b = 0; b < Batch; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);
  }
  for (; i < vectors; i += stride) {
    V v = body[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  if (thread < head) sum += in[thread];                       // scalar head
  if (thread < n - tail_begin) sum += in[tail_begin + thread];  // scalar tail
  sum = block_sum(sum);
  if (threadIdx.x == 0) atomicAdd(out, sum);
}
// [/docs:vector-kernel]

template <int Batch, typename T>
void reduce_vec(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  static const unsigned resident = harness::resident_blocks(reduce_vectorized<Batch, T>, kThreads);
  const size_t per_block = size_t(kThreads) * Batch * 4;  // elements one block takes per iteration
  const unsigned blocks = unsigned(std::min<size_t>(resident, (n + per_block - 1) / per_block));
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), ctx.stream));
  reduce_vectorized<Batch><<<blocks, kThreads, 0, ctx.stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

int main(int argc, char** argv) {
  using harness::Launch;
  return harness::run_step(argc, argv, "step05_vectorized", {
      {"v4_batch1", "16-byte loads, one vector per thread per iteration",
       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_vec<1>(in, n, out, ctx); }},
      {"v4_batch4", "16-byte loads, four vectors in flight per thread",
       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_vec<4>(in, n, out, ctx); }},
  });
}

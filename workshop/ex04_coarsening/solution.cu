// SOLUTION of workshop exercise 04 - thread coarsening (chapter docs/04_thread_coarsening.md).
//
// Exercise 03's one-pass kernel, right but slow: one element per thread, n/256 blocks, and a
// block stage, a __syncthreads() and an atomic for every 256 elements. About 0.27x CUB at
// 2^28 on an H100 (step 03 in results/).
//
// Your job, two TODOs, and the checker then wants at least 0.85x CUB's speed at n = 2^28,
// measured in the same run:
//   1. in the kernel: each thread sums MANY elements with a grid-stride loop, with several
//      independent loads in flight per iteration (Batch of them);
//   2. in the launcher: launch only as many blocks as fit on the GPU at once (occupancy),
//      and no more than the data needs.
//
//   make ex04 && ./ex04 --n 2^28                  time it: the xCUB column
//   ./ex04 --check --n 1,1000,2^20+1 --dtype all  check it
//   bash ../scripts/check_exercise.sh 04
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

namespace cg = cooperative_groups;

constexpr int kThreads = 256;  // threads per block; a multiple of 32
constexpr int kBatch = 8;      // loads in flight per thread per iteration (TODO 1)

// Thread 0 gets the block's sum. (Given.)
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

template <int Batch, typename T>
__global__ void reduce_coarsened(const T* __restrict__ in, size_t n, T* out) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;  // threads in the whole grid
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  T sum = 0;
  // Solution: Batch independent loads in flight, then the rest one stride at a time.
  for (; i + (Batch - 1) * stride < n; i += Batch * stride) {
    T v[Batch];
#pragma unroll
    for (int b = 0; b < Batch; ++b) v[b] = in[i + b * stride];
#pragma unroll
    for (int b = 0; b < Batch; ++b) sum += v[b];
  }
  for (; i < n; i += stride) sum += in[i];
  sum = block_sum(sum);
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

template <int Batch, typename T>
void reduce_coarse(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  // Solution: what fits on the GPU at once, capped by what the data needs.
  static const unsigned resident = harness::resident_blocks(reduce_coarsened<Batch, T>, kThreads);
  const size_t needed = (n + size_t(kThreads) * Batch - 1) / (size_t(kThreads) * Batch);
  const unsigned blocks = unsigned(std::min<size_t>(resident, needed));
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), ctx.stream));
  reduce_coarsened<Batch><<<blocks, kThreads, 0, ctx.stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

int main(int argc, char** argv) {
  return harness::run_step(argc, argv, "ex04_solution", {
      {"coarsened", "grid sized to the GPU, many elements per thread (your kernel and launcher)",
       [](auto in, size_t n, auto out, const harness::Launch& ctx) { reduce_coarse<kBatch>(in, n, out, ctx); }},
  });
}

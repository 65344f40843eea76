// SOLUTION of workshop exercise 03 - one pass with atomics (chapter docs/03_atomic_one_pass.md).
//
// One launch instead of one per level: every block sums its 256 elements and adds its sum
// to *out. As given, thread 0 of each block STORES its block's sum, so the blocks overwrite
// each other and the result is one block's sum, whichever wrote last.
//
// Your job, two TODOs:
//   1. in the kernel: combine the block sums with an atomic;
//   2. in the launcher: make *out start at zero. The harness fills *out with all bits set
//      (2^32-1 for int, NaN for float) before it calls you, on purpose.
//
//   make ex03 && ./ex03 --check --n 2^20+1 --dtype all --repeat-results 5
//   bash ../scripts/check_exercise.sh 03
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

namespace cg = cooperative_groups;

constexpr int kThreads = 256;  // threads per block; a multiple of 32

// Step 02's block sum with cg::reduce for the warps. Thread 0 gets the block's sum. (Given.)
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

template <typename T>
__global__ void reduce_atomic(const T* in, size_t n, T* out) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  T sum = block_sum(i < n ? in[i] : T(0));
  if (threadIdx.x == 0) atomicAdd(out, sum);  // solution: one atomic per block, in any order
}

template <typename T>
void reduce_one_pass(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), ctx.stream));  // solution: zeroed in the stream, before the launch
  const size_t blocks = (n + kThreads - 1) / kThreads;
  reduce_atomic<<<blocks, kThreads, 0, ctx.stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

int main(int argc, char** argv) {
  return harness::run_step(argc, argv, "ex03_solution", {
      {"atomic", "one launch: block sums combined on *out (your kernel and launcher)",
       [](auto in, size_t n, auto out, const harness::Launch& ctx) { reduce_one_pass(in, n, out, ctx); }},
  });
}

// Step 03 - one launch: instead of writing per-block partials and launching again, every
// block adds its sum to the output with one atomicAdd. The output must start at zero, so
// the launcher clears it with cudaMemsetAsync first (in the stream, so in order; inside the
// kernel no block could know that it runs first). The order in which blocks add is up to
// the hardware: for int that changes nothing, for float the rounding differs from run to
// run. See it with --repeat-results 5 --dtype all.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

namespace cg = cooperative_groups;

constexpr int kThreads = 256;  // threads per block; a multiple of 32

// Step 02's block sum, with cg::reduce for the warps. Thread 0 gets the block's sum.
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

// [docs:atomic-kernel]
template <typename T>
__global__ void reduce_atomic(const T* in, size_t n, T* out) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  T sum = block_sum(i < n ? in[i] : T(0));
  if (threadIdx.x == 0) atomicAdd(out, sum);  // one atomic per block, in any order
}

template <typename T>
void reduce_one_pass(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), ctx.stream));  // part of the algorithm: timed
  const size_t blocks = (n + kThreads - 1) / kThreads;
  reduce_atomic<<<blocks, kThreads, 0, ctx.stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}
// [/docs:atomic-kernel]

int main(int argc, char** argv) {
  return harness::run_step(argc, argv, "step03_atomic_one_pass", {
      {"atomic", "one launch: block sums combined with atomicAdd (output zeroed by cudaMemsetAsync)",
       [](auto in, size_t n, auto out, const harness::Launch& ctx) { reduce_one_pass(in, n, out, ctx); }},
  });
}

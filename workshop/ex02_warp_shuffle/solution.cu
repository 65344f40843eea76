// SOLUTION of workshop exercise 02 - a warp sum with __shfl_down_sync (chapter docs/02_warp_shuffle.md).
//
// The block stage below sums 256 values in two rounds of warp sums: every warp sums its 32
// values, lane 0 of each warp puts its warp's sum in shared memory, and the first warp sums
// those 8 values with the same warp_sum(). Only warp_sum() is missing: as given it returns
// each lane's own value, so only lane 0's value reaches the result and the sum is wrong.
//
// Your job: write warp_sum() with __shfl_down_sync, values moving through registers, no
// shared memory. Touch only the function marked TODO.
//
//   make ex02 && ./ex02 --check --n 1000,2^20 --dtype all
//   bash ../scripts/check_exercise.sh 02
#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

constexpr int kThreads = 256;                // threads per block; a multiple of 32
[[maybe_unused]] constexpr unsigned kFullMask = 0xffffffffu;  // all 32 lanes take part in each shuffle

// Called by all 32 lanes of a warp, each with its own v. Must return the sum of the 32 values
// in lane 0 (the other lanes may return anything).
template <typename T>
__device__ T warp_sum(T v) {
  // Solution: a tree through registers; lane 0 ends with the sum.
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

// ---- Given: nothing to change below this line ----------------------------------------------

// Every thread calls this; thread 0 gets the block's sum. One __syncthreads() in total.
template <typename T>
__device__ T block_sum(T value) {
  __shared__ T warp_sums[32];
  const unsigned lane = threadIdx.x % 32, warp_id = threadIdx.x / 32, warps = blockDim.x / 32;
  value = warp_sum(value);
  if (lane == 0) warp_sums[warp_id] = value;
  __syncthreads();
  if (warp_id == 0) value = warp_sum(lane < warps ? warp_sums[lane] : T(0));
  return value;
}

template <typename T>
__global__ void reduce_slices(const T* in, size_t n, T* partials) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  T sum = block_sum(i < n ? in[i] : T(0));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// One launch per level of partial sums, as in steps 00-02.
template <typename T>
void reduce_multi_pass(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const size_t first_blocks = (n + kThreads - 1) / kThreads;
  T* scratch = ctx.scratch_as<T>(2 * first_blocks);
  T* partials[2] = {scratch, scratch + first_blocks};
  const T* src = in;
  for (size_t count = n, pass = 0;; ++pass) {
    const size_t blocks = (count + kThreads - 1) / kThreads;
    T* dst = blocks == 1 ? out : partials[pass % 2];
    reduce_slices<<<blocks, kThreads, 0, ctx.stream>>>(src, count, dst);
    CUDA_CHECK_LAUNCH();
    if (blocks == 1) return;
    src = dst;
    count = blocks;
  }
}

int main(int argc, char** argv) {
  return harness::run_step(argc, argv, "ex02_solution", {
      {"shfl_down", "warp sums with your warp_sum(), one partial per warp in shared memory",
       [](auto in, size_t n, auto out, const harness::Launch& ctx) { reduce_multi_pass(in, n, out, ctx); }},
  });
}

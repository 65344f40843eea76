// Step 02 - warp shuffles: the last levels of the tree move through registers, not shared
// memory. Each warp sums its 32 values with shuffles, one value per warp goes to shared
// memory, and the first warp sums those. Same launches and one element per thread as in
// step 01: only the block stage differs. Four ways to write the warp sum:
//   shfl_down  __shfl_down_sync: lane 0 ends with the sum
//   shfl_xor   __shfl_xor_sync butterfly: every lane ends with the sum
//   cg_tile    the same as shfl_down through a Cooperative Groups tile of 32 threads
//   cg_reduce  cg::reduce on the tile (for int on sm_80+ one redux.sync instruction)
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

namespace cg = cooperative_groups;

constexpr int kThreads = 256;  // threads per block; a multiple of 32
constexpr unsigned kFullMask = 0xffffffffu;  // all 32 lanes take part in each shuffle

// [docs:warp-shuffles]
template <typename T>
__device__ T warp_sum_shfl_down(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;  // complete in lane 0 only
}

template <typename T>
__device__ T warp_sum_shfl_xor(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;  // complete in every lane
}

template <typename T>
__device__ T warp_sum_cg_tile(const cg::thread_block_tile<32>& warp, T v) {
  for (unsigned offset = warp.size() / 2; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
  return v;  // complete in thread_rank() 0 only
}

template <typename T>
__device__ T warp_sum_cg_reduce(const cg::thread_block_tile<32>& warp, T v) {
  return cg::reduce(warp, v, cg::plus<T>());  // complete in every thread of the tile
}
// [/docs:warp-shuffles]

enum class WarpSum { ShflDown, ShflXor, CgTile, CgReduce };

template <WarpSum Kind, typename T>
__device__ T warp_sum(const cg::thread_block_tile<32>& warp, T v) {
  if constexpr (Kind == WarpSum::ShflDown) return warp_sum_shfl_down(v);
  if constexpr (Kind == WarpSum::ShflXor) return warp_sum_shfl_xor(v);
  if constexpr (Kind == WarpSum::CgTile) return warp_sum_cg_tile(warp, v);
  if constexpr (Kind == WarpSum::CgReduce) return warp_sum_cg_reduce(warp, v);
}

// [docs:block-sum]
// Every thread calls this; thread 0 gets the block's sum. One __syncthreads() in total.
template <WarpSum Kind, typename T>
__device__ T block_sum(T value) {
  __shared__ T warp_sums[32];
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  const unsigned warp_id = threadIdx.x / 32, warps = blockDim.x / 32;
  value = warp_sum<Kind>(warp, value);
  if (warp.thread_rank() == 0) warp_sums[warp_id] = value;
  __syncthreads();
  if (warp_id == 0) value = warp_sum<Kind>(warp, warp.thread_rank() < warps ? warp_sums[warp.thread_rank()] : T(0));
  return value;
}
// [/docs:block-sum]

template <WarpSum Kind, typename T>
__global__ void reduce_slices(const T* in, size_t n, T* partials) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  T sum = block_sum<Kind>(i < n ? in[i] : T(0));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}


template <WarpSum Kind, typename T>
void reduce_multi_pass(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const size_t first_blocks = (n + kThreads - 1) / kThreads;
  T* scratch = ctx.scratch_as<T>(2 * first_blocks);
  T* partials[2] = {scratch, scratch + first_blocks};  // ping-pong between two halves
  const T* src = in;
  for (size_t count = n, pass = 0;; ++pass) {
    const size_t blocks = (count + kThreads - 1) / kThreads;
    T* dst = blocks == 1 ? out : partials[pass % 2];
    reduce_slices<Kind><<<blocks, kThreads, 0, ctx.stream>>>(src, count, dst);
    CUDA_CHECK_LAUNCH();
    if (blocks == 1) return;
    src = dst;
    count = blocks;
  }
}

int main(int argc, char** argv) {
  using harness::Launch;
  return harness::run_step(argc, argv, "step02_warp_shuffle", {
      {"shfl_down", "__shfl_down_sync warp sum, one partial per warp in shared memory",
       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_multi_pass<WarpSum::ShflDown>(in, n, out, ctx); }},
      {"shfl_xor", "__shfl_xor_sync butterfly warp sum",
       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_multi_pass<WarpSum::ShflXor>(in, n, out, ctx); }},
      {"cg_tile", "Cooperative Groups tiled_partition<32> + shfl_down",
       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_multi_pass<WarpSum::CgTile>(in, n, out, ctx); }},
      {"cg_reduce", "Cooperative Groups cg::reduce on a 32-thread tile",
       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_multi_pass<WarpSum::CgReduce>(in, n, out, ctx); }},
  });
}

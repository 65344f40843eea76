// Step 04 - thread coarsening: launch only as many blocks as fit on the GPU at once and let
// every thread sum many elements (a grid-stride loop) before the block stage runs. The
// block stage, the __syncthreads() and the atomic now run once per ~thousands of elements
// instead of once per 256. Two variants:
//   grid_stride  one load, one add per iteration
//   batch8       eight independent loads per iteration, issued before any add needs them
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

namespace cg = cooperative_groups;

constexpr int kThreads = 256;  // threads per block; a multiple of 32

// Step 03's block sum. Thread 0 gets the block's sum.
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

// [docs:coarsened-kernel]
template <int Batch, typename T>
__global__ void reduce_coarsened(const T* __restrict__ in, size_t n, T* out) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  T sum = 0;
  for (; i + (Batch - 1) * stride < n; i += Batch * stride) {
    T v[Batch];
#pragma unroll
    for (int b = 0; b < Batch; ++b) v[b] = in[i + b * stride];  // Batch loads in flight
#pragma unroll
    for (int b = 0; b < Batch; ++b) sum += v[b];
  }
  for (; i < n; i += stride) sum += in[i];  // what is left: fewer than Batch strides
  sum = block_sum(sum);
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

template <int Batch, typename T>
void reduce_coarse(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  // Enough blocks to fill every SM, and no more than the data needs.
  static const unsigned resident = harness::resident_blocks(reduce_coarsened<Batch, T>, kThreads);
  const size_t needed = (n + size_t(kThreads) * Batch - 1) / (size_t(kThreads) * Batch);
  const unsigned blocks = unsigned(std::min<size_t>(resident, needed));
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), ctx.stream));
  reduce_coarsened<Batch><<<blocks, kThreads, 0, ctx.stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}
// [/docs:coarsened-kernel]

int main(int argc, char** argv) {
  using harness::Launch;
  return harness::run_step(argc, argv, "step04_thread_coarsening", {
      {"grid_stride", "grid sized to the GPU, grid-stride loop, one load per iteration",
       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_coarse<1>(in, n, out, ctx); }},
      {"batch8", "grid-stride loop with 8 independent loads per iteration",
       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_coarse<8>(in, n, out, ctx); }},
  });
}

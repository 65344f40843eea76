// Step 06, second program - the filter (stream compaction): keep the elements that pass a
// test, in any order. The threads of a warp that keep an element form a coalesced_group,
// and that group can reserve its output slots with one atomicAdd. The lessons:
//   1. coalesced_threads() is the set of threads converged at that point: whatever subset
//      it names, each part reserving its own slots still gives a right output (it is never
//      right for a sum, which must include everyone: step06_cooperative_groups.cu)
//   2. a warp ballot and cg::exclusive_scan on a tile turn per-warp counts into offsets: one
//      atomicAdd per block and tile
// Run with --pass-rate to choose how many elements are kept; CUB's DeviceSelect::If is timed
// beside it and the floor reads the input and writes the kept elements.
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>

#include <cstdint>
#include <type_traits>

#include "filter.cuh"

namespace cg = cooperative_groups;

constexpr int kThreads = 256;  // threads per block in every kernel here

// ---- 1. coalesced_threads() and a warp-aggregated atomic ----------------------------------
// [docs:filter]
// One atomicAdd per kept element, as written. nvcc (13.0, sm_90) aggregates it per warp by
// itself: the SASS has a vote, a popc, one ATOMG per warp and a shuffle of the base (see
// scripts/maintainer/sass_redux.sh BINARY: 2 SHFL where the source has none), and at 2^26 it is as
// fast as warp_aggregated below or a few percent faster (chapter 06's filter tables). Both
// stay far behind CUB at high pass rates: one counter still takes an atomic per warp,
// serialised at that one address.
template <typename T>
__global__ void __launch_bounds__(kThreads) filter_per_thread(const T* in, size_t n, harness::Keep<T> keep, T* out,
                                                               unsigned long long* count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const T x = in[i];
    if (keep(x)) out[atomicAdd(count, 1ull)] = x;
  }
}

// One atomicAdd per warp: inside the `if`, coalesced_threads() names the threads that kept
// an element and are converged there. Its first thread reserves kept.size() slots, the base
// is broadcast with a shuffle, and each thread writes at base + its rank in the group.
// Unlike a sum this needs no particular grouping: were the group split, each part would
// reserve its own slots and the result would still be right.
template <typename T>
__global__ void __launch_bounds__(kThreads) filter_warp_aggregated(const T* in, size_t n, harness::Keep<T> keep, T* out,
                                                                    unsigned long long* count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const T x = in[i];
    if (keep(x)) {
      const cg::coalesced_group kept = cg::coalesced_threads();
      unsigned long long base = 0;
      if (kept.thread_rank() == 0) base = atomicAdd(count, (unsigned long long)kept.size());
      base = kept.shfl(base, 0);
      out[base + kept.thread_rank()] = x;
    }
  }
}
// [/docs:filter]

// ---- 2. A ballot and a scan: one atomicAdd per block and tile -----------------------------
// One atomicAdd per block and tile of 256 elements: the counter then takes 256x fewer atomics
// than above. Each warp counts its kept elements with a ballot, warp 0 turns the 8 counts
// into offsets with cg::exclusive_scan on a tile, and thread 0 reserves the block's slots.
// The loop runs the same number of times in every thread of a block (the bound is the
// tile's start, not the element), so the __syncthreads() inside it are reached by all.
// [docs:filter-block]
template <typename T>
__global__ void __launch_bounds__(kThreads) filter_block_aggregated(const T* in, size_t n, harness::Keep<T> keep,
                                                                     T* out, unsigned long long* count) {
  __shared__ unsigned warp_offset[kThreads / 32];
  __shared__ unsigned long long block_base;
  const auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  const unsigned warp_id = threadIdx.x / 32;
  for (size_t tile = blockIdx.x * size_t(kThreads); tile < n; tile += size_t(gridDim.x) * kThreads) {
    const size_t i = tile + threadIdx.x;
    const T x = i < n ? in[i] : T(0);
    const bool kept = i < n && keep(x);
    const unsigned ballot = warp.ballot(kept);
    const unsigned rank_in_warp = __popc(ballot & ((1u << warp.thread_rank()) - 1));
    if (warp.thread_rank() == 0) warp_offset[warp_id] = __popc(ballot);
    __syncthreads();
    if (warp_id == 0) {
      const unsigned c = warp.thread_rank() < kThreads / 32 ? warp_offset[warp.thread_rank()] : 0;
      const unsigned offset = cg::exclusive_scan(warp, c);
      if (warp.thread_rank() < kThreads / 32) warp_offset[warp.thread_rank()] = offset;
      if (warp.thread_rank() == kThreads / 32 - 1) block_base = atomicAdd(count, (unsigned long long)(offset + c));
    }
    __syncthreads();
    if (kept) out[block_base + warp_offset[warp_id] + rank_in_warp] = x;
    __syncthreads();  // warp_offset and block_base are rewritten by the next tile
  }
}
// [/docs:filter-block]

template <typename Kernel, typename T>
void filter(Kernel kernel, const T* in, size_t n, harness::Keep<T> keep, T* out, unsigned long long* count,
            const harness::Launch& ctx) {
  const unsigned resident = harness::resident_blocks(kernel, kThreads);
  const unsigned blocks = harness::grid_for(n, kThreads, resident);
  CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof *count, ctx.stream));
  kernel<<<blocks, kThreads, 0, ctx.stream>>>(in, n, keep, out, count);
  CUDA_CHECK_LAUNCH();
}

int main(int argc, char** argv) {
  using harness::Launch;
  const char* step = "step06_filter";
  return harness::run_problems(argc, argv, step, {
      harness::filter_problem({
          {"thread_atomic", "one atomicAdd per kept element",
           [](auto in, size_t n, auto keep, auto out, unsigned long long* count, const Launch& ctx) {
             filter(filter_per_thread<harness::elem_t<decltype(in)>>, in, n, keep, out, count, ctx);
           }},
          {"warp_aggregated", "coalesced_threads(): one atomicAdd per warp, slots by thread_rank()",
           [](auto in, size_t n, auto keep, auto out, unsigned long long* count, const Launch& ctx) {
             filter(filter_warp_aggregated<harness::elem_t<decltype(in)>>, in, n, keep, out, count, ctx);
           }},
          {"block_aggregated", "ballot + cg::exclusive_scan of the warp counts: one atomicAdd per block and tile",
           [](auto in, size_t n, auto keep, auto out, unsigned long long* count, const Launch& ctx) {
             filter(filter_block_aggregated<harness::elem_t<decltype(in)>>, in, n, keep, out, count, ctx);
           }},
      }),
  }, harness::kBatch);
}

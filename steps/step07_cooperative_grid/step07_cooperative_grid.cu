// Step 07 - one launch, no memset, no atomics on the result: a cooperative grid.
// Steps 03-05 combine block sums with atomicAdd into an output that a cudaMemsetAsync has
// zeroed first, and the float result changes from run to run. Here every block writes its
// sum to its own slot of a partials array, the blocks wait for each other, and ONE block
// adds the partials in a fixed order and writes *out: two phases in one kernel, a result
// that is bitwise the same every run, and no memset.
//
// How the blocks wait for each other:
//   grid_sync     cg::this_grid().sync(): a barrier across the whole grid. It only works
//                 when every block is resident at once, so the kernel must be launched as
//                 a cooperative kernel (the runtime then refuses a grid that cannot fit).
//   grid_sync_voidpp  the same kernel, launched with cudaLaunchCooperativeKernel (void** args).
//   last_block    no barrier: each block bumps a counter after writing its partial; the
//                 block that arrives last knows that all partials are written and combines
//                 them. Any launch, any grid size.
//   last_block_fence  the classic form of last_block: __threadfence() + atomicInc.
//   naive_rounds  a design often seen in blog posts: one grid.sync per round of a tree over
//                 the partials. Correct, but the later rounds leave the grid idle.
//   one_block     small n: one block (32 to 1024 threads, by n) reads everything; nothing to
//                 combine.
//   packed_slots  each block stores its partial with the launch number in one 64-bit word;
//                 block 0 waits for the words (cooperative launch: it spins on the others).
//   auto          one_block below kOneBlockMaxN (48 Ki) elements, packed_slots above.
//   sync_no_coop  the pitfall, by name only: grid_sync's kernel launched with <<<>>>.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/atomic>

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include "forced_grid.cuh"
#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)
#include "packed_slots.cuh"
#include "vector_reads.cuh"

namespace cg = cooperative_groups;
using harness::check_cooperative;
using harness::cooperative_blocks;  // --blocks N, or what n needs (forced_grid.cuh)
using harness::grid_for;

constexpr int kThreads = 1024;  // step 05's block: 1024 threads, 4 vectors in flight each
constexpr int kVectorsInFlight = 4;
constexpr size_t kPerBlock = size_t(kThreads) * kVectorsInFlight * 4;  // elements a block reads per iteration
constexpr int kNaiveThreads = 256;  // naive_rounds: the blog's 256-thread blocks, scalar loads

// This thread's share, 16-byte loads (vector_reads.cuh: step 05's loop as a function).
template <typename T>
__device__ T thread_sum(const T* __restrict__ in, size_t n, size_t thread, size_t stride) {
  return vector_reads::thread_sum<kVectorsInFlight>(in, n, thread, stride);
}

// The block's sum in thread 0 (vector_reads.cuh's block_sum_typed): step 05's two stages for
// unsigned (cg::reduce is one REDUX instruction there); for float, thread 0 adds the warp sums
// as 8 float4 instead of a second chain of shuffles (block_sum_quads says why). Uses shared
// memory: two calls in one kernel must be separated by a barrier (__syncthreads or grid.sync,
// which has one).
using vector_reads::block_sum_typed;

// One block adds `count` partials in a fixed order (thread t takes t, t+1024, ... then the
// block tree): the same additions every run, so the float result is bitwise reproducible.
// The partials were written by other blocks during this launch: plain loads, no __ldg.
template <typename T>
__device__ void combine_partials(const T* partials, unsigned count, T* out) {
  T sum = 0;
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  sum = block_sum_typed(sum);
  if (threadIdx.x == 0) *out = sum;  // the whole result: nothing to zero beforehand
}

// ---- grid_sync: partials, one grid.sync(), one block combines ----------------------------
// [docs:grid-sync-kernel]
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_grid_sync(const T* __restrict__ in, size_t n, T* partials, T* out) {
  cg::grid_group grid = cg::this_grid();
  const T sum = block_sum_typed(thread_sum(in, n, grid.thread_rank(), grid.size()));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
  // Every block waits here until all have arrived; grid.sync() also orders memory (release
  // on arrival, acquire on departure), so block 0 sees every partial written above.
  grid.sync();
  if (blockIdx.x == 0) combine_partials(partials, gridDim.x, out);
}
// [/docs:grid-sync-kernel]

// The typed form: cudaLaunchKernelEx(&config, kernel, args...) converts each argument to
// the kernel's parameter type at compile time and rejects a wrong count or an impossible
// type, like <<<>>> does. Preferred.
// [docs:launch-typed]
template <typename T>
void grid_sync_typed(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const unsigned resident = harness::resident_blocks(reduce_grid_sync<T>, kThreads);
  const unsigned blocks = cooperative_blocks(ctx, n, kPerBlock, resident);
  T* partials = ctx.scratch_as<T>(blocks);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;  // all blocks resident at once, or no launch
  attr[0].val.cooperative = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = 0;
  config.stream = ctx.stream;
  config.attrs = attr;
  config.numAttrs = 1;
  check_cooperative(cudaLaunchKernelEx(&config, reduce_grid_sync<T>, in, n, partials, out), ctx, blocks, resident,
                    "grid_sync", "cudaLaunchKernelEx");
}
// [/docs:launch-typed]

// The classic form: cudaLaunchCooperativeKernel takes the ADDRESSES of the arguments as
// void*[]. Nothing checks them: pass an int where the kernel expects size_t, forget one, or
// swap two, and it compiles, and the kernel reads garbage (8 bytes from a 4-byte int here).
// [docs:launch-voidpp]
template <typename T>
void grid_sync_voidpp(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const unsigned resident = harness::resident_blocks(reduce_grid_sync<T>, kThreads);
  const unsigned blocks = cooperative_blocks(ctx, n, kPerBlock, resident);
  T* partials = ctx.scratch_as<T>(blocks);
  void* args[] = {&in, &n, &partials, &out};  // must match (const T*, size_t, T*, T*) exactly
  check_cooperative(cudaLaunchCooperativeKernel(reduce_grid_sync<T>, dim3(blocks), dim3(kThreads), args, 0, ctx.stream),
                    ctx, blocks, resident, "grid_sync_voidpp", "cudaLaunchCooperativeKernel");
}
// [/docs:launch-voidpp]

// The pitfall: the same kernel launched with <<<>>>. this_grid() then has no barrier
// workspace (grid.is_valid() is false) and grid.sync() traps: the launch fails and the
// context is lost, so the program stops at the next CUDA call. Opt-in by name only.
template <typename T>
void grid_sync_without_coop(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const unsigned resident = harness::resident_blocks(reduce_grid_sync<T>, kThreads);
  const unsigned blocks = cooperative_blocks(ctx, n, kPerBlock, resident);
  reduce_grid_sync<T><<<blocks, kThreads, 0, ctx.stream>>>(in, n, ctx.scratch_as<T>(blocks), out);
  CUDA_CHECK_LAUNCH();  // the launch itself is accepted: the failure comes while it runs
}

// ---- naive_rounds: a grid.sync per round ---------------------------------------------------
// Round 0: every block reduces its grid-stride share (scalar loads) to one partial. Then,
// round after round, block b sums partials [256 b, 256 b + 256) into one, until one is left;
// a grid.sync between rounds. Two halves of the workspace take turns as source and
// destination, so no block overwrites a partial that another is still reading.
// Why it wastes the grid: with 1056 blocks (8 x 132 SMs) round 1 has 1056 partials for 5
// blocks and round 2 has 5 for 1: after round 0, 1051 of the 1056 blocks (99.5%) do
// nothing but wait at every grid.sync, and each round costs a full grid barrier plus a
// round trip through L2. grid_sync does the same work with one barrier and one block.
// [docs:naive-rounds]
template <typename T>
__global__ void __launch_bounds__(kNaiveThreads) reduce_rounds(const T* __restrict__ in, size_t n, T* workspace, T* out) {
  cg::grid_group grid = cg::this_grid();
  T* src = workspace;
  T* dst = workspace + gridDim.x;
  T sum = 0;
  for (size_t i = grid.thread_rank(); i < n; i += grid.size()) sum += in[i];
  sum = block_sum_typed(sum);
  if (threadIdx.x == 0) src[blockIdx.x] = sum;
  // The loop bounds depend only on gridDim and blockDim: every block makes the same number
  // of grid.sync() calls, as it must (a block that skipped one would deadlock the rest).
  for (unsigned count = gridDim.x; count > 1;) {
    grid.sync();
    const unsigned next = (count + blockDim.x - 1) / blockDim.x;
    if (blockIdx.x < next) {  // the other blocks idle until the next grid.sync
      const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
      const T v = block_sum_typed(i < count ? src[i] : T(0));
      if (threadIdx.x == 0) dst[blockIdx.x] = v;
    }
    T* t = src;
    src = dst;
    dst = t;
    count = next;
  }
  // The last round ran in block 0 alone (or there was one block): its own write.
  if (blockIdx.x == 0 && threadIdx.x == 0) *out = src[0];
}
// [/docs:naive-rounds]

template <typename T>
void naive_rounds(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const unsigned resident = harness::resident_blocks(reduce_rounds<T>, kNaiveThreads);
  const unsigned blocks = cooperative_blocks(ctx, n, kNaiveThreads, resident);
  T* workspace = ctx.scratch_as<T>(2 * size_t(blocks));
  check_cooperative(harness::launch_cooperative(reduce_rounds<T>, blocks, kNaiveThreads, 0, ctx.stream, in, n, workspace, out),
                    ctx, blocks, resident, "naive_rounds", "cudaLaunchKernelEx");
}

// ---- last_block: a counter instead of a barrier ----------------------------------------
// The counters live in a __device__ array: zeroed when the module loads, no cudaMalloc, no
// memset. [0] is last_block's, [1] last_block_fence's. Each launch leaves its counter at
// zero again. Why one counter per kernel is safe here: the harness launches everything in
// one stream, so two launches never overlap, and the next one starts only after the last
// block of the previous one has reset the counter. Launches in two streams at once would
// share the counter (and the partials) and break: they would need one counter each.
__device__ unsigned g_arrivals[2];

// [docs:last-block]
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_last_block(const T* __restrict__ in, size_t n, T* partials,
                                                              unsigned* arrivals, T* out) {
  const T sum = block_sum_typed(thread_sum(in, n, blockIdx.x * size_t(blockDim.x) + threadIdx.x, size_t(gridDim.x) * blockDim.x));
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> arrived(*arrivals);
    // Release: this block's partial is visible before its arrival is counted. Acquire: the
    // block that counts last sees every partial released by the others.
    last = arrived.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
    if (last) arrived.store(0, cuda::memory_order_relaxed);  // ready for the next launch
  }
  __syncthreads();  // shares `last`, and orders thread 0's acquire before the others' loads
  if (last) combine_partials(partials, gridDim.x, out);
}
// [/docs:last-block]

// The classic form (CUDA samples, threadFenceReduction): __threadfence() before a relaxed
// atomicInc. atomicInc(p, m) stores old >= m ? 0 : old + 1, so with m = blocks - 1 the last
// arrival wraps the counter to 0 by itself. The fence on the reading side is needed too
// (fence-atomic ... atomic-fence is what makes the pattern synchronise in the PTX memory
// model); the samples leave it out.
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_last_block_fence(const T* __restrict__ in, size_t n, T* partials,
                                                                    unsigned* arrivals, T* out) {
  const T sum = block_sum_typed(thread_sum(in, n, blockIdx.x * size_t(blockDim.x) + threadIdx.x, size_t(gridDim.x) * blockDim.x));
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    __threadfence();  // the partial before the count
    last = atomicInc(arrivals, gridDim.x - 1) == gridDim.x - 1;
    if (last) __threadfence();  // the count before the reads of the partials
  }
  __syncthreads();
  if (last) combine_partials(partials, gridDim.x, out);
}

template <bool Fence, typename T>
void last_block(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  auto kernel = Fence ? reduce_last_block_fence<T> : reduce_last_block<T>;
  const unsigned resident = harness::resident_blocks(kernel, kThreads);
  static unsigned* arrivals = harness::symbol_address(g_arrivals) + (Fence ? 1 : 0);
  const unsigned blocks = grid_for(n, kPerBlock, resident);
  kernel<<<blocks, kThreads, 0, ctx.stream>>>(in, n, ctx.scratch_as<T>(blocks), arrivals, out);
  CUDA_CHECK_LAUNCH();
}

// ---- packed_slots: the partial carries its own arrival ------------------------------------
// last_block's second phase is three trips to L2 in a row: the release of the partial, the
// counter's atomic, then the last block's read of the partials. Here each block stores its
// partial together with the launch number in one 64-bit word (packed_slots.cuh) and is done;
// block 0 waits for the words, each thread one slot, and the wait IS the read. Block 0 spins
// on the others, so the launch must be cooperative: all blocks resident, or no launch.
// [docs:packed-slots]
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_packed_slots(const T* __restrict__ in, size_t n,
                                                                packed_slots::Board board, T* out) {
  const T sum = block_sum_typed(thread_sum(in, n, blockIdx.x * size_t(blockDim.x) + threadIdx.x, size_t(gridDim.x) * blockDim.x));
  if (blockIdx.x != 0) {
    if (threadIdx.x == 0) packed_slots::publish(board, blockIdx.x, packed_slots::bits_of(sum));
    return;
  }
  // Block 0: thread t adds the partials of blocks t, t + 1024, ... in that order (its own sum
  // for block 0: thread 0 holds it), then the block tree: a fixed order, as in last_block.
  __syncthreads();  // block_sum's shared memory is used again below
  T v = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
    v += b == 0 ? sum : packed_slots::value_of<T>(packed_slots::wait_for(board, b));
  v = block_sum_typed(v);
  if (threadIdx.x == 0) *out = v;
}
// [/docs:packed-slots]

template <typename T>
void packed_slots_reduce(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const unsigned resident = harness::resident_blocks(reduce_packed_slots<T>, kThreads);
  const unsigned blocks = cooperative_blocks(ctx, n, kPerBlock, resident);
  const packed_slots::Board board = packed_slots::next_board(resident, ctx.stream);
  check_cooperative(harness::launch_cooperative(reduce_packed_slots<T>, blocks, kThreads, 0, ctx.stream, in, n, board, out),
                    ctx, blocks, resident, "packed_slots", "cudaLaunchKernelEx");
}

// ---- one_block and auto: small n ---------------------------------------------------------
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_one_block(const T* __restrict__ in, size_t n, T* out) {
  const T sum = block_sum_typed(thread_sum(in, n, threadIdx.x, blockDim.x));
  if (threadIdx.x == 0) *out = sum;
}

// As many threads as give each about one batch of 4 vectors (16 elements), in whole warps,
// 32 to 1024: a tiny input gets a small block, which starts and retires sooner.
template <typename T>
void one_block(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const size_t warps = (n + 16 * 32 - 1) / (16 * 32);
  const unsigned threads = unsigned(std::min<size_t>(kThreads / 32, std::max<size_t>(1, warps))) * 32;
  reduce_one_block<<<1, threads, 0, ctx.stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

// Below this many elements auto uses one block. One block keeps 1024 x 4 x 16 B = 64 KiB in
// flight: 2^14 elements are one round of DRAM latency, 48 Ki about three. More blocks read
// in one round but then pay for the second phase (and packed_slots for a cooperative launch).
// The evidence (chapter 07, "auto"): both GPUs' batched runs
// (results/{h100_80gb_hbm3,h200}/batched_step07_cooperative_grid.csv) make an int
// crossover between 40 Ki and 48 Ki likely for warm back-to-back launches: its margins are
// above the int gaps between identical kernels in the same runs but not all above the float
// ones, so it is not settled; the float crossover (between 56 Ki and 64 Ki) is only
// suggested, and for launches that find the input in DRAM neither is resolved.
constexpr size_t kOneBlockMaxN = size_t(48) << 10;

// Above the threshold: packed_slots, the fastest of the many-block variants in the H100's
// batched runs (warm L2, launches back to back), ahead of last_block with the min-max ranges
// apart from 2^16 to 2^22 (see chapter 07): no counter, no fence, no barrier; one store per
// block and one load per partial.
template <typename T>
void auto_reduce(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  if (n < kOneBlockMaxN) one_block(in, n, out, ctx);
  else packed_slots_reduce(in, n, out, ctx);
}

// ---- main ---------------------------------------------------------------------------------
// A GPU without cooperative launch gets one line and exit 77 (run_step's `needs`);
// --blocks, this program's own flag (forced_grid.cuh), forces the cooperative grids.
int main(int argc, char** argv) {
  using harness::Launch;
  harness::ForcedGrid forced;  // --blocks N
  return harness::run_step(argc, argv, "step07_cooperative_grid", {
      {"one_block", "one block of 32-1024 threads (by n) reads everything (16-byte loads), writes *out: no memset",
       [](auto in, size_t n, auto out, const Launch& ctx) { one_block(in, n, out, ctx); }},
      {"naive_rounds", "cooperative, scalar loads, a grid.sync per round of a tree over the block partials",
       [](auto in, size_t n, auto out, const Launch& ctx) { naive_rounds(in, n, out, ctx); }},
      {"grid_sync", "cooperative (cudaLaunchKernelEx, typed): partials, one grid.sync, block 0 combines",
       [](auto in, size_t n, auto out, const Launch& ctx) { grid_sync_typed(in, n, out, ctx); }},
      {"grid_sync_voidpp", "the same kernel launched with cudaLaunchCooperativeKernel (void** args)",
       [](auto in, size_t n, auto out, const Launch& ctx) { grid_sync_voidpp(in, n, out, ctx); }},
      {"last_block", "partials, atomic_ref fetch_add(acq_rel) counter; the last block combines",
       [](auto in, size_t n, auto out, const Launch& ctx) { last_block<false>(in, n, out, ctx); }},
      {"last_block_fence", "the classic form: __threadfence() + atomicInc; the last block combines",
       [](auto in, size_t n, auto out, const Launch& ctx) { last_block<true>(in, n, out, ctx); }},
      {"packed_slots", "cooperative: each block stores (launch number, partial) in one 64-bit word; block 0 waits for the words",
       [](auto in, size_t n, auto out, const Launch& ctx) { packed_slots_reduce(in, n, out, ctx); }},
      {"auto", "one_block below 48 Ki elements (kOneBlockMaxN), packed_slots from there on",
       [](auto in, size_t n, auto out, const Launch& ctx) { auto_reduce(in, n, out, ctx); }},
      // The pitfall runs only when named: it kills the CUDA context, so `--variant all` leaves it out.
      harness::Variant("sync_no_coop", "PITFALL, by name only: grid_sync's kernel launched with <<<>>>: grid.sync() traps",
                       [](auto in, size_t n, auto out, const Launch& ctx) { grid_sync_without_coop(in, n, out, ctx); })
          .wrong_by_design().by_name_only(),
  }, harness::kBatch, harness::cooperative_unsupported, &forced);
}

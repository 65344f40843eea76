// Step 07, second program - normalization: out[i] = x[i] / max_j |x_j|, an array in and an
// array out, the case study for a grid-wide barrier in the middle of a kernel. Phase 1 needs
// every element (the max); phase 2 needs the max before it can write anything. Four designs:
//
//   two_pass   the textbook: memset the max, kernel 1 (max|x|, one atomicMax per block),
//              kernel 2 (scale). Three operations in the stream; the input is read twice.
//   grid_sync  one cooperative launch: each block writes its max to its own slot,
//              grid.sync(), every block reduces all the slots (no memset, no atomics), then
//              scales. One launch, but the input is still read twice.
//   stateful   like grid_sync, but each block keeps its slice of the input on chip across the
//              grid.sync (registers first, then shared memory opted in to the per-block
//              maximum), so the input is read from DRAM once. Only possible while n fits on
//              chip; above that limit (printed once per dtype) it runs grid_sync's kernel.
//   stateful_slots  stateful with packed slots (packed_slots.cuh) instead of grid.sync: each
//              block stores (launch number, max) in one 64-bit word, every block waits for all.
//
// What each moves (GB/s counts n read + n written for all, see normalize.cuh): two_pass and
// grid_sync read 2n and write n (the second read can hit L2 while the input fits there, 50 MiB
// on an H100); the two stateful designs read n and write n, like the copy floor. Above the
// on-chip limit all four read twice, and the best any of them can do is about 1.5x the copy
// floor's time. The operator (max over keys, the exact division) is normalize.cuh's, shared
// with the host reference, so every output element is checked bit for bit; normalize.cuh also
// has the elementwise pieces (key4, scale4, split_for, thread_scale) that CUB's second pass uses.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "normalize.cuh"
#include "packed_slots.cuh"

namespace cg = cooperative_groups;
using harness::abs_key;
using harness::grid_for;
using harness::key4;
using harness::normalized;
using harness::scale4;
using harness::Split;
using harness::split_for;
using harness::thread_scale;
using vector_reads::Vec4;

constexpr int kThreads = 1024;
constexpr int kVectorsInFlight = 4;
constexpr size_t kPerBlock = size_t(kThreads) * kVectorsInFlight * 4;  // elements a block reads per iteration
constexpr int kRegVectors = 4;  // stateful: 16-byte vectors each thread keeps in registers (16 registers)

// The block's max, returned to EVERY thread: each warp reduces the warp maxima itself, so no
// second barrier and no broadcast slot. cg::reduce with cg::greater on unsigned is one
// redux.sync.max.u32 on sm_80+. Uses shared memory: two calls need a barrier between them
// (the grid.sync in the kernels below is one).
__device__ unsigned block_max(unsigned v) {
  __shared__ unsigned warp_max[32];
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  v = cg::reduce(warp, v, cg::greater<unsigned>());
  if (warp.thread_rank() == 0) warp_max[threadIdx.x / 32] = v;
  __syncthreads();
  const unsigned warps = blockDim.x / 32;
  return cg::reduce(warp, warp.thread_rank() < warps ? warp_max[warp.thread_rank()] : 0u, cg::greater<unsigned>());
}

// This thread's max key over its grid-stride share of the input.
template <typename T>
__device__ unsigned thread_max(const T* __restrict__ in, size_t n, Split s, size_t thread, size_t stride) {
  using V = typename Vec4<T>::type;
  const V* body = reinterpret_cast<const V*>(in + s.head);
  unsigned m = 0;
  size_t i = thread;
  for (; i + (kVectorsInFlight - 1) * stride < s.vectors; i += kVectorsInFlight * stride) {
    V v[kVectorsInFlight];
#pragma unroll
    for (int b = 0; b < kVectorsInFlight; ++b) v[b] = body[i + b * stride];
#pragma unroll
    for (int b = 0; b < kVectorsInFlight; ++b) m = max(m, key4(v[b]));
  }
  for (; i < s.vectors; i += stride) m = max(m, key4(body[i]));
  for (size_t j = thread; j < s.head; j += stride) m = max(m, abs_key(in[j]));
  for (size_t j = s.tail_begin + thread; j < n; j += stride) m = max(m, abs_key(in[j]));
  return m;
}

// After grid.sync: every block reduces all the per-block slots (fixed order; max does not
// care anyway). The slots were written by other blocks during this launch: plain loads, no
// __ldg/__restrict__ (the read-only path may not see them).
__device__ unsigned combine_slots(const unsigned* slots, unsigned count) {
  unsigned m = 0;
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) m = max(m, slots[i]);
  return block_max(m);
}

// The cooperative launches below (harness::launch_cooperative, typed) size their grids from
// the occupancy of the very kernel and shared memory size launched, so
// cudaErrorCooperativeLaunchTooLarge means a bug (or a GPU shared with others, e.g. MPS): it
// is reported like any CUDA error.

// ---- two_pass: memset, max kernel, scale kernel ---------------------------------------------
template <typename T>
__global__ void __launch_bounds__(kThreads) max_abs_kernel(const T* __restrict__ in, size_t n, unsigned* key) {
  const unsigned m = block_max(thread_max(in, n, split_for(in, in, n), blockIdx.x * size_t(blockDim.x) + threadIdx.x,
                                          size_t(gridDim.x) * blockDim.x));
  if (threadIdx.x == 0) atomicMax(key, m);  // one per block; the key was zeroed by the memset
}

template <typename T>
__global__ void __launch_bounds__(kThreads) scale_kernel(const T* __restrict__ in, size_t n, const unsigned* key,
                                                         float* __restrict__ out) {
  const unsigned m = *key;  // the previous kernel's result
  thread_scale<kVectorsInFlight>(in, n, split_for(in, out, n), m, out, blockIdx.x * size_t(blockDim.x) + threadIdx.x,
                                 size_t(gridDim.x) * blockDim.x);
}

template <typename T>
void two_pass(const T* in, size_t n, float* out, const harness::Launch& ctx) {
  static const unsigned resident_max = harness::resident_blocks(max_abs_kernel<T>, kThreads);
  static const unsigned resident_scale = harness::resident_blocks(scale_kernel<T>, kThreads);
  unsigned* key = ctx.scratch_as<unsigned>(1);
  CUDA_CHECK(cudaMemsetAsync(key, 0, sizeof(unsigned), ctx.stream));  // timed: part of the algorithm
  max_abs_kernel<T><<<grid_for(n, kPerBlock, resident_max), kThreads, 0, ctx.stream>>>(in, n, key);
  CUDA_CHECK_LAUNCH();
  scale_kernel<T><<<grid_for(n, kPerBlock, resident_scale), kThreads, 0, ctx.stream>>>(in, n, key, out);
  CUDA_CHECK_LAUNCH();
}

// ---- grid_sync: one launch, slots, grid.sync, every block combines, scale --------------------
// [docs:normalize-grid-sync]
template <typename T>
__global__ void __launch_bounds__(kThreads) normalize_grid_sync(const T* __restrict__ in, size_t n, unsigned* slots,
                                                                float* __restrict__ out) {
  cg::grid_group grid = cg::this_grid();
  const Split s = split_for(in, out, n);
  const unsigned m_block = block_max(thread_max(in, n, s, grid.thread_rank(), grid.size()));
  if (threadIdx.x == 0) slots[blockIdx.x] = m_block;  // the slot is overwritten every launch: no reset
  grid.sync();  // all slots written and visible (release/acquire across the grid)
  const unsigned m = combine_slots(slots, gridDim.x);
  thread_scale<kVectorsInFlight>(in, n, s, m, out, grid.thread_rank(), grid.size());
}
// [/docs:normalize-grid-sync]

template <typename T>
void grid_sync(const T* in, size_t n, float* out, const harness::Launch& ctx) {
  static const unsigned resident = harness::resident_blocks(normalize_grid_sync<T>, kThreads);
  const unsigned blocks = grid_for(n, kPerBlock, resident);
  CUDA_CHECK(harness::launch_cooperative(normalize_grid_sync<T>, blocks, kThreads, 0, ctx.stream, in, n,
                                         ctx.scratch_as<unsigned>(blocks), out));
}

// ---- how the blocks agree on the max ------------------------------------------------------
// Each block has its max (every thread holds it); each exchange returns the grid's max to
// every thread of every block. Both need all blocks resident (cooperative launch).
// [docs:exchanges]
// grid.sync(): slots, a barrier across the grid (it orders memory), then every block reads
// every slot. Two trips through L2: the barrier's (arrive, then poll), then the read of the slots.
struct GridSyncExchange {
  unsigned* slots;
  __device__ unsigned operator()(unsigned block_max_key) const {
    if (threadIdx.x == 0) slots[blockIdx.x] = block_max_key;  // overwritten every launch: no reset
    cg::this_grid().sync();
    return combine_slots(slots, gridDim.x);
  }
};
// Packed slots (packed_slots.cuh): each block stores (launch number, max) in one word, and
// thread t of every block waits for word t. The wait is the read: one trip, no barrier.
struct PackedSlotsExchange {
  packed_slots::Board board;
  __device__ unsigned operator()(unsigned block_max_key) const {
    if (threadIdx.x == 0) packed_slots::publish(board, blockIdx.x, block_max_key);
    unsigned m = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
      m = max(m, b == blockIdx.x ? block_max_key : packed_slots::wait_for(board, b));
    __syncthreads();  // the block_max before this one is done with its shared memory
    return block_max(m);
  }
};
// [/docs:exchanges]

// ---- stateful: the input stays on chip across the grid.sync -------------------------------
// Block b owns the contiguous vectors [b chunk, b chunk + count) of the body. Its thread t
// holds local vectors t + k x 1024: k < kRegVectors in registers, the rest in dynamic shared
// memory at (local - kRegVectors x 1024), consecutive threads on consecutive 16 bytes. The
// scalar head and tail (under 4 elements each) stay in registers of the grid's first threads.
// The launcher guarantees count <= kRegVectors x 1024 + the shared memory's vectors.
template <typename T, typename Exchange>
__global__ void __launch_bounds__(kThreads, 1) normalize_stateful(const T* __restrict__ in, size_t n, size_t chunk,
                                                                  Exchange exchange, float* __restrict__ out) {
  using V = typename Vec4<T>::type;
  extern __shared__ uint4 smem[];  // one declaration for both types (extern arrays may not differ in type)
  V* stash = reinterpret_cast<V*>(smem);
  cg::grid_group grid = cg::this_grid();
  const Split s = split_for(in, out, n);  // aligned alike: the launcher checked
  const V* body = reinterpret_cast<const V*>(in + s.head);
  const size_t first = blockIdx.x * chunk;
  const size_t count = first >= s.vectors ? 0 : s.vectors - first < chunk ? s.vectors - first : chunk;
  const size_t t = threadIdx.x, in_regs = size_t(kRegVectors) * kThreads;
  unsigned m = 0;

  // Phase 1: load once; the max is taken on the way.
  V reg[kRegVectors] = {};
#pragma unroll
  for (int k = 0; k < kRegVectors; ++k)
    if (t + k * kThreads < count) reg[k] = body[first + t + k * kThreads];
#pragma unroll
  for (int k = 0; k < kRegVectors; ++k)
    if (t + k * kThreads < count) m = max(m, key4(reg[k]));
  size_t j = in_regs + t;
  for (; j + (kVectorsInFlight - 1) * kThreads < count; j += kVectorsInFlight * kThreads) {
    V v[kVectorsInFlight];
#pragma unroll
    for (int b = 0; b < kVectorsInFlight; ++b) v[b] = body[first + j + b * kThreads];
#pragma unroll
    for (int b = 0; b < kVectorsInFlight; ++b) {
      m = max(m, key4(v[b]));
      stash[j + b * kThreads - in_regs] = v[b];
    }
  }
  for (; j < count; j += kThreads) {
    const V v = body[first + j];
    m = max(m, key4(v));
    stash[j - in_regs] = v;
  }
  const size_t g = grid.thread_rank();
  const bool has_head = g < s.head, has_tail = g < n - s.tail_begin;
  T head_x{}, tail_x{};
  if (has_head) m = max(m, abs_key(head_x = in[g]));
  if (has_tail) m = max(m, abs_key(tail_x = in[s.tail_begin + g]));

  // [docs:stateful-barrier]
  m = exchange(block_max(m));  // the grid's max; the data stay where they are

  // Phase 2: scale what is on chip; the input is not read again.
  float4* out_body = reinterpret_cast<float4*>(out + s.head);
#pragma unroll
  for (int k = 0; k < kRegVectors; ++k)
    if (t + k * kThreads < count) out_body[first + t + k * kThreads] = scale4(reg[k], m);
  for (j = in_regs + t; j < count; j += kThreads) out_body[first + j] = scale4(stash[j - in_regs], m);
  // [/docs:stateful-barrier]
  if (has_head) out[g] = normalized(head_x, m);
  if (has_tail) out[s.tail_begin + g] = normalized(tail_x, m);
}

// How much fits on chip, worked out once per element type: one 1024-thread block per SM with
// all the shared memory a block may opt in to (cudaDevAttrMaxSharedMemoryPerBlockOptin, the
// per-SM amount less the 1 KiB the system reserves per block) less the kernel's static shared
// memory, plus kRegVectors vectors per thread in registers.
struct StatefulPlan {
  unsigned resident = 0;        // co-resident blocks (SMs x blocks per SM)
  size_t smem_bytes = 0;        // dynamic shared memory per block
  size_t block_vectors = 0;     // 16-byte vectors one block holds
  size_t limit = 0;             // elements: n up to this runs on chip
};

template <typename T, typename Exchange>
const StatefulPlan& stateful_plan(const char* dtype, const char* variant) {
  static const StatefulPlan plan = [dtype, variant] {
    StatefulPlan p;
    int device = 0, optin = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, normalize_stateful<T, Exchange>));
    p.smem_bytes = (size_t(optin) - attr.sharedSizeBytes) / 16 * 16;
    // Without this opt-in a launch with more than 48 KiB of dynamic shared memory fails.
    CUDA_CHECK(cudaFuncSetAttribute(normalize_stateful<T, Exchange>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.smem_bytes)));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, normalize_stateful<T, Exchange>, kThreads, p.smem_bytes));
    if (per_sm < 1) throw std::runtime_error("stateful: a block with " + std::to_string(p.smem_bytes) + " B of shared memory does not fit on an SM");
    p.resident = unsigned(sms) * unsigned(per_sm);
    p.block_vectors = size_t(kRegVectors) * kThreads + p.smem_bytes / 16;
    p.limit = p.resident * p.block_vectors * 4;
    // Any n <= limit fits at any alignment: the body has at most n / 4 vectors, and the head
    // and tail ride in registers besides.
    std::printf("%s (%s): on-chip limit %zu elements = %d SMs x %d block x (%zu in %zu B of shared memory + %zu in "
                "registers); above it the one-pass grid_sync kernel runs\n",
                variant, dtype, p.limit, sms, per_sm, p.smem_bytes / 16 * 4, p.smem_bytes, size_t(kRegVectors) * kThreads * 4);
    return p;
  }();
  return plan;
}

// `variant` names the program's variant in the notes it prints (stateful, stateful_slots).
template <typename Exchange, typename T>
void stateful(const T* in, size_t n, float* out, const harness::Launch& ctx, const char* variant) {
  const char* dtype = std::is_same_v<T, float> ? "float" : "int";
  const StatefulPlan& p = stateful_plan<T, Exchange>(dtype, variant);
  const Split s = split_for(in, out, n);
  const bool aligned_alike = reinterpret_cast<uintptr_t>(in) % 16 == reinterpret_cast<uintptr_t>(out) % 16;
  const bool on_chip = n <= p.limit && aligned_alike;
  const std::string path = on_chip ? "on chip (limit " + std::to_string(p.limit) + ")"
                                    : std::string("one-pass grid_sync kernel (") +
                                          (aligned_alike ? "above the on-chip limit " + std::to_string(p.limit)
                                                         : "input and output not aligned alike") + ")";
  const std::string note = std::string(variant) + " (" + dtype + "): n = " + std::to_string(n) + ": " + path;
  harness::note_once(note);  // which path this n takes, once
  if (!on_chip) return grid_sync(in, n, out, ctx);  // the fallback: one comparison, nothing else
  // All blocks while the body gives each thread a vector or more (spreads the load over every
  // SM); fewer for tiny n. chunk <= block_vectors follows from n <= limit.
  const unsigned blocks = grid_for(s.vectors, kThreads, p.resident);
  const size_t chunk = (s.vectors + blocks - 1) / blocks;
  Exchange exchange;
  if constexpr (std::is_same_v<Exchange, GridSyncExchange>) exchange = {ctx.scratch_as<unsigned>(blocks)};
  else exchange = {packed_slots::next_board(p.resident, ctx.stream)};
  CUDA_CHECK(harness::launch_cooperative(normalize_stateful<T, Exchange>, blocks, kThreads, p.smem_bytes, ctx.stream, in,
                                         n, chunk, exchange, out));
}

// ---- main ---------------------------------------------------------------------------------
// A GPU without cooperative launch gets one line and exit 77 (run_problems' `needs`).
// No --blocks here (its grids follow n and occupancy; a forced grid would move stateful's
// on-chip limit): the flags are --batch and the core ones.
int main(int argc, char** argv) {
  using harness::Launch;
  const char* step = "step07_normalize";
  return harness::run_problems(argc, argv, step, {
      harness::normalize_problem(step, {
          {"two_pass", "memset, max|x| kernel (cg::reduce greater, atomicMax per block), scale kernel",
           [](auto in, size_t n, float* out, const Launch& ctx) { two_pass(in, n, out, ctx); }},
          {"grid_sync", "one cooperative launch: block max to slots, grid.sync, every block combines, scale",
           [](auto in, size_t n, float* out, const Launch& ctx) { grid_sync(in, n, out, ctx); }},
          {"stateful", "grid_sync keeping the input on chip (registers + shared memory) across the sync: "
                       "one DRAM read; grid_sync's kernel above the on-chip limit",
           [](auto in, size_t n, float* out, const Launch& ctx) { stateful<GridSyncExchange>(in, n, out, ctx, "stateful"); }},
          {"stateful_slots", "stateful with packed slots instead of grid.sync: each block stores (launch number, max) "
                             "in one 64-bit word, every block waits for all the words",
           [](auto in, size_t n, float* out, const Launch& ctx) {
             stateful<PackedSlotsExchange>(in, n, out, ctx, "stateful_slots");
           }},
      }),
  }, harness::kBatch, harness::cooperative_unsupported);
}

// Step 09, second program - a CLUSTER per long row: step 06's segmented sum (a rows x cols
// matrix, one sum per row) where the rows are too few to fill the GPU with a block each.
// Step 06's split_rows cut such rows into pieces and added the pieces' sums into a zeroed
// output with atomicAdd (scalar loads, a memset, float sums in atomic order: 0.7x CUB at 64
// rows of 2^20 on an H100). Here the C blocks of a cluster share a row: each reads its slice
// with 16-byte loads, stores its sum into the leader block's shared memory (DSMEM), and after
// cluster.sync() the leader adds the C sums in rank order and writes out[r]. No atomics, no
// memset, and float sums are the same bits every run.
//
//   block_row    the cluster kernel with clusters of 1: a block per row, 16-byte loads (step
//                06's block_v4 idea). The baseline in the same run; --cluster leaves it at 1.
//   cluster_row  clusters of C blocks per row, C chosen from the shape (or --cluster C).
//   warp_row     a warp per row (rows of 17 to 2^17 elements).
//   packed_rows  rows of 1-512 elements (powers of two) packed into 16-byte loads, 4 in flight
//                per thread, summed inside the warp (packed_rows.cuh): short rows at the
//                floor's speed.
//   staged_rows  rows of any length up to 512 (also misaligned): a block reads a tile of whole
//                rows into shared memory with 16-byte loads and sums them there (staged_rows.cuh).
//   auto         what a library would pick from the row length: packed_rows where it fits,
//                else staged_rows up to 512, a warp per row up to 8192, then cluster_row (whose
//                C is 1, i.e. block_row, when rows fill the GPU).
// block_row and cluster_row run on rows of 256 elements or more (a block per shorter row idles).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "clusters.cuh"
#include "packed_rows.cuh"
#include "row_lengths.cuh"  // segmented.cuh's rows x cols problem, and the lengths each variant runs on
#include "staged_rows.cuh"
#include "vector_reads.cuh"

namespace cg = cooperative_groups;
using harness::Launch;

// 512 threads: rows_cluster uses 34 (float, since slice_sum loads its ends first) and 64
// (unsigned) registers (ptxas -v, sm_90, CUDA 13.0), so an SM holds 3 blocks of 512 in float
// and 2 in int; a block of 1024 would hold an SM alone, and a row's end (block sum, cluster
// barrier) would stall all of it. 512 threads x 4 vectors x 16 bytes is 32 KiB of loads in
// flight per block. (__launch_bounds__(512, 3) spills the int code, 40 registers: slower.)
constexpr int kThreads = 512;
constexpr int kVectorsInFlight = 4;
constexpr int kShortSliceVectors = 8;     // slices below 2 x 512 x 4 vectors: one guarded round of 8
constexpr int kWarpVectorsInFlight = 16;  // rows_warp's batch (a warp reads a row of 8192 in 4 rounds)
constexpr int kMaxCluster = 16;  // the largest cluster an H100/H200 launches (non-portable above 8)

// Thresholds of auto and of the cluster size, set from the H100 runs of chapter 09 (the aim:
// at most 1.15x the floor's time, and >= 1.0x CUB or within 5% of the floor, at every length).
// kMinSlice was not tuned here (a guess).
constexpr size_t kTileRowMaxCols = 8192;    // up to here a warp per row (block_row trailed CUB at 4096)
constexpr size_t kMinSlice = 4096;          // a block's slice of a row is never cut below this (a guess)
constexpr size_t kWarpVectorMinCols = 512;  // a warp reads rows this long as 16-byte vectors (H100, rows
                                            // of 32-256: 1.1-1.9x the time of step 06's scalar tiles)

using vector_reads::block_sum_typed;  // step 07's block sum: thread 0 gets the block's sum

// The block's sum of one slice, in thread 0: 16-byte loads with a scalar head and tail, so
// any start and length is right. A slice shorter than two rounds of 4 loads per thread is
// read as ONE guarded round of up to 8 (a row of 12289 is one memory round trip, not two:
// with two blocks per SM, as ints run, a block's second round left the SM short of bytes in
// flight on the H200); longer ones take rounds of 4 and the rest as one guarded round. The
// scalar ends are loaded first, so they overlap the vectors instead of following them
// (rows of 8193, chapter 09); in float that form also cut the kernel's registers (56 to 34).
template <typename T>
__device__ T slice_sum(const T* __restrict__ slice, size_t len) {
  using vector_reads::thread_sum;
  const bool long_slice = len >= size_t(kThreads) * kVectorsInFlight * 4 * 2;
  return block_sum_typed(long_slice ? thread_sum<kVectorsInFlight, true, true>(slice, len, threadIdx.x, kThreads)
                                    : thread_sum<kShortSliceVectors, true, true>(slice, len, threadIdx.x, kThreads));
}

// ---- A cluster per row ---------------------------------------------------------------------
// [docs:cluster-row]
// Launched as gridDim.x / C clusters of C blocks (C = 1: a block per row); the clusters stride
// over the rows. Block b of a cluster sums elements [b * slice, (b + 1) * slice) of each of
// its cluster's rows. Every block of a cluster walks the SAME rows (r depends only on the
// cluster's index), so all of them call each barrier below the same number of times, also
// in the last round, where some clusters have a row and others have none.
template <typename T>
__global__ void __launch_bounds__(kThreads) rows_cluster(const T* __restrict__ in, size_t rows, size_t cols,
                                                         T* __restrict__ out) {
#if CLUSTERS_COMPILED
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
  // Used in the leader (rank 0): sums[k][b] is block b's sum of a row, k alternating per row.
  // Why two sets: after cluster.sync() of row i the leader reads sums[k] while a faster block
  // already reads row i + 1 and stores its sum - into sums[k ^ 1], not over the value being
  // read. It comes back to sums[k] only for row i + 2, after the cluster.sync() of row i + 1,
  // which the leader reaches only once it has finished reading sums[k] (its arrive releases
  // that read, the writer's wait acquires it). So one barrier per row is enough.
  __shared__ T sums[2][kMaxCluster];
  // Slices are multiples of 128 bytes, so each starts as aligned as its row: on a 16-byte
  // aligned row no slice has a scalar head, on a 128-byte aligned one no two blocks share a
  // cache line. A short row leaves the last blocks an empty slice; they still take part in
  // every barrier.
  constexpr size_t kAlign = 128 / sizeof(T);
  const size_t slice = ((cols + size - 1) / size + kAlign - 1) / kAlign * kAlign;
  const size_t begin = min(cols, rank * slice), len = min(cols - begin, slice);
  const size_t clusters = gridDim.x / size;  // the grid is whole clusters
  size_t r = blockIdx.x / size;              // this cluster's first row

  // Another block's shared memory may be written only once that block runs. Arrive now,
  // read the first slice, wait just before the first DSMEM store. The arrive is the relaxed
  // one: "running" needs no memory ordering, and in cluster_cost's sync table a barrier with
  // the releasing arrive (cluster.sync()) costs about 2.7-5.8 times the relaxed arrive + wait.
  if (size > 1) __cluster_barrier_arrive_relaxed();
  T sum = r < rows ? slice_sum(in + r * cols + begin, len) : T(0);
  if (size > 1) __cluster_barrier_wait();
  for (unsigned k = 0; r < rows; r += clusters, k ^= 1) {
    if (size == 1) {  // a block per row: nothing to share, and __syncthreads() is the barrier
      if (threadIdx.x == 0) out[r] = sum;
      __syncthreads();  // separates two block_sum calls
      if (r + clusters < rows) sum = slice_sum(in + (r + clusters) * cols + begin, len);
      continue;
    }
    if (threadIdx.x == 0) *cluster.map_shared_rank(&sums[k][rank], 0) = sum;  // into the leader's
    cluster.sync();  // every block's store is visible in the leader (release / acquire)
    if (rank == 0 && threadIdx.x == 0) {
      T total = 0;
      for (unsigned b = 0; b < size; ++b) total += sums[k][b];  // rank order: the same bits every run
      out[r] = total;
    }
    // The barrier above also separates two block_sum calls, as vector_reads.cuh asks.
    if (r + clusters < rows) sum = slice_sum(in + (r + clusters) * cols + begin, len);
  }
  // No block touches another's shared memory after the last cluster.sync() (the leader reads
  // only its own), so every block may exit here: the leader cannot leave before the others
  // have stored, since it takes part in that barrier.
#endif
}
// [/docs:cluster-row]

// ---- A warp per row (auto's choice from 513 to 8192) -----------------------------------------
// 16-byte loads over rows of 512 or more (one element per lane a round below), cg::reduce in
// registers (one REDUX for ints). No shared memory, no block barrier. A batch of 16 loads per
// lane, the rest as one guarded round, the scalar ends loaded first: a row of 4097 is two
// rounds of loads, not eight (three in the rows where lane 31 misses the second full batch).
// Two blocks per SM in the bounds: without it ptxas picked 41-45 registers (still two blocks
// of 512 per SM) and issued 4 of a round's loads before its first add; with it, 64 registers
// and 10 (the SASS in chapter 09's evidence): more bytes in flight at the same occupancy.
template <typename T>
__global__ void __launch_bounds__(kThreads, 2) rows_warp(const T* __restrict__ in, size_t rows, size_t cols,
                                                      T* __restrict__ out) {
  const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  const size_t warps = size_t(gridDim.x) * (kThreads / 32);
  for (size_t r = (blockIdx.x * size_t(kThreads) + threadIdx.x) / 32; r < rows; r += warps) {
    const T* row = in + r * cols;
    T part = 0;
    if (cols >= kWarpVectorMinCols) {
      part = vector_reads::thread_sum<kWarpVectorsInFlight, true, true>(row, cols, warp.thread_rank(), 32);
    } else {  // a short row as 16-byte vectors leaves most lanes idle: one element per lane a round
      for (size_t j = warp.thread_rank(); j < cols; j += 32) part += row[j];
    }
    const T sum = cg::reduce(warp, part, cg::plus<T>());
    if (warp.thread_rank() == 0) out[r] = sum;
  }
}

// ---- Launchers -----------------------------------------------------------------------------
// Enough blocks for the rows (rows_per_block each), never more than fit at once: they stride.
template <typename T>
void launch_short_rows(void (*kernel)(const T*, size_t, size_t, T*), size_t rows_per_block, const T* in, size_t rows,
                       size_t cols, T* out, const Launch& ctx) {
  if (rows == 0) return;
  const unsigned resident = harness::resident_blocks(kernel, kThreads);
  const unsigned blocks = harness::grid_for(rows, rows_per_block, resident);
  kernel<<<blocks, kThreads, 0, ctx.stream>>>(in, rows, cols, out);
  CUDA_CHECK_LAUNCH();
}

// The cluster size for a shape (--cluster C overrides it): the largest power of two up to
// kMaxCluster whose clusters take ALL rows in one round (rows <= clusters that fit), and no
// slice below kMinSlice (a shorter one spends more on the barrier than on reading). Many rows
// or short rows: C = 1, a block per row. Why not the smallest C with rows x C >= resident
// blocks: then rows > clusters that fit, and a second round runs the leftover rows on a few
// clusters while the rest of the GPU idles. The price: slots left empty. At 64 rows of 2^20 on
// an H100 or H200, int: 62 clusters of 4 fit (2 blocks per SM), so C = 2, 128 blocks; float
// (3 blocks per SM): C = 4, 256 blocks (the note that cluster_rows prints says which C ran).
template <typename T>
int cluster_size_for(size_t rows, size_t cols, const char* variant, const Launch& ctx) {
  if (const int forced = harness::forced_cluster(ctx)) return forced;
  int c = 1;
  while (c < kMaxCluster && cols / (2 * size_t(c)) >= kMinSlice &&
         rows <= harness::clusters_that_fit(rows_cluster<T>, kThreads, 2 * c, 0, variant, ctx))
    c *= 2;
  return c;
}

// Which cluster size ran for a shape, once per variant and shape (the choice is the lesson of
// this program, and the results table cannot show it).
inline void note_cluster_size(const char* variant, size_t rows, size_t cols, int cluster, unsigned clusters) {
  harness::note_once("note: " + std::string(variant) + ": " + std::to_string(rows) + " rows of " + std::to_string(cols) +
                     " in clusters of " + std::to_string(cluster) + " (" + std::to_string(clusters) + " clusters, " +
                     std::to_string(clusters * unsigned(cluster)) + " blocks)");
}

// [docs:cluster-row-launch]
// min(rows, clusters that fit) clusters, so that every cluster starts with a row; the
// clusters stride over the rest.
template <typename T>
void cluster_rows(int cluster, const char* variant, const T* in, size_t rows, size_t cols, T* out, const Launch& ctx) {
  if (rows == 0) return;
  harness::require_cluster_at_most(cluster, kMaxCluster);
  const unsigned fit = harness::clusters_that_fit(rows_cluster<T>, kThreads, cluster, 0, variant, ctx);
  const unsigned clusters = unsigned(std::min<size_t>(rows, fit));
  note_cluster_size(variant, rows, cols, cluster, clusters);
  harness::check_cluster(harness::launch_clusters(rows_cluster<T>, clusters * unsigned(cluster), kThreads, cluster, 0,
                                                  ctx.stream, in, rows, cols, out),
                         ctx, cluster, variant, "cudaLaunchKernelEx");
}
// [/docs:cluster-row-launch]

// Rows too short for a block: packed_rows where the shape fits it (a power-of-two length up
// to 512, a 16-byte aligned matrix and output), else staged_rows up to 512, else a warp per row.
template <typename T>
void short_rows(const char* variant, const T* in, size_t rows, size_t cols, T* out, const Launch& ctx) {
  if (packed_rows::fits(in, out, cols)) return packed_rows::launch(in, rows, cols, out, ctx);
  if (cols <= staged_rows::kMaxCols) {
    harness::note_once("note: " + std::string(variant) + ": rows of " + std::to_string(cols) +
                       " or a matrix or output not 16-byte aligned: staged_rows, not packed_rows");
    return staged_rows::launch(in, rows, cols, out, ctx);
  }
  launch_short_rows(rows_warp<T>, kThreads / 32, in, rows, cols, out, ctx);
}

// auto: the group that suits the row length. Past kTileRowMaxCols it is cluster_row with the
// size cluster_size_for picks: 1 (block_row) when the rows alone fill the GPU, more when they
// are few and long. --cluster forces that size here too, as in cluster_row.
template <typename T>
void auto_rows(const T* in, size_t rows, size_t cols, T* out, const Launch& ctx) {
  if (cols <= kTileRowMaxCols) return short_rows("auto", in, rows, cols, out, ctx);
  cluster_rows(cluster_size_for<T>(rows, cols, "auto", ctx), "auto", in, rows, cols, out, ctx);
}

// ---- main ----------------------------------------------------------------------------------
// A GPU without clusters (before sm_90) gets one line and exit 77 (clusters_unsupported).
int main(int argc, char** argv) {
  harness::ForcedCluster forced;  // --cluster C (clusters.cuh): this program's own flag
  return harness::run_problems(argc, argv, "step09_cluster_rows", {
      harness::segmented_problem({
          {"block_row", "a block per row (the cluster kernel with clusters of 1), 16-byte loads",
           [](auto in, size_t rows, size_t cols, auto out, const Launch& ctx) {
             cluster_rows(1, "block_row", in, rows, cols, out, ctx);
           }, harness::rows_from(256)},
          {"cluster_row", "a cluster of C blocks per row (C from the shape, or --cluster), sums via DSMEM",
           [](auto in, size_t rows, size_t cols, auto out, const Launch& ctx) {
             using T = harness::elem_t<decltype(in)>;
             cluster_rows(cluster_size_for<T>(rows, cols, "cluster_row", ctx), "cluster_row", in, rows, cols, out, ctx);
           }, harness::rows_from(256)},
          {"warp_row", "a warp per row, 16-byte loads, cg::reduce (auto's choice to 8192 where packed_rows does not fit)",
           [](auto in, size_t rows, size_t cols, auto out, const Launch& ctx) {
             launch_short_rows(rows_warp<harness::elem_t<decltype(in)>>, kThreads / 32, in,
                               rows, cols, out, ctx);
           }, harness::rows_between(17, size_t(1) << 17)},
          {"packed_rows", "rows of 1-512 (powers of two) packed into 16-byte loads, summed in the warp",
           [](auto in, size_t rows, size_t cols, auto out, const Launch& ctx) {
             short_rows("packed_rows", in, rows, cols, out, ctx);
           }, harness::rows_up_to(packed_rows::kMaxCols)},
          {"staged_rows", "rows of 1-512 (any length, any alignment) read as tiles into shared memory, summed there",
           [](auto in, size_t rows, size_t cols, auto out, const Launch& ctx) {
             staged_rows::launch(in, rows, cols, out, ctx);
           }, harness::rows_up_to(staged_rows::kMaxCols)},
          {"auto", "packed_rows, staged_rows (cols <= 512), a warp per row (<= 8192), else cluster_row's choice (block_row when rows fill the GPU)",
           [](auto in, size_t rows, size_t cols, auto out, const Launch& ctx) { auto_rows(in, rows, cols, out, ctx); }},
      }),
  }, harness::kBatch | harness::kCols, harness::clusters_unsupported, /*intro=*/nullptr, &forced);
}

// Step 06 - Cooperative Groups: a group of threads is a value you can pass to a function.
// The problem needs groups of different sizes: a rows x cols matrix, one sum per row (a
// segmented sum), where the right group for a row depends on its length (a thread, a tile of
// 4..32 threads, a whole block). The step's second program, step06_filter.cu, is the other
// kind of group: the threads that happen to be converged (coalesced_threads()).
// The lessons, in the order of this file:
//   1. one generic reduce(group, scratch, value), a shared-memory tree with g.sync(), used
//      unchanged with the whole block and with tiled_partition(block, N) tiles of 4..32
//   2. thread_block_tile<N>: the size is a template argument, so shfl_down loops unroll
//   3. cg::reduce on a tile (for ints on sm_80+ tiles of 32 and 16 become one REDUX
//      instruction: scripts/maintainer/sass_redux.sh shows it), and on a 256-thread tile: a block sum
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstdint>

#include "segmented.cuh"
#include "vector_reads.cuh"

namespace cg = cooperative_groups;
using harness::Launch;

constexpr int kThreads = 256;  // threads per block in every kernel here

// ---- 1. One reduction for any group ------------------------------------------------------
// [docs:generic-reduce]
// Sums `value` over the group g with a tree in shared memory. scratch: g.size() elements that
// belong to this group alone. The tree needs g.sync() between levels, so this is only
// correct for groups that can synchronise, and the signature says so: it takes the group.
// g.size() need not be a power of two. The sum is complete in thread_rank() 0.
template <typename Group, typename T>
__device__ T reduce(const Group& g, T* scratch, T value) {
  const unsigned rank = g.thread_rank();
  scratch[rank] = value;
  g.sync();
  for (unsigned count = g.size(); count > 1;) {
    const unsigned half = (count + 1) / 2;  // ranks [half, count) hand their values down
    if (rank + half < count) scratch[rank] = value = value + scratch[rank + half];
    g.sync();
    count = half;
  }
  return value;
}
// [/docs:generic-reduce]

// ---- The matrix as every segmented kernel sees it -----------------------------------------
// Row r is in[r * stride .. r * stride + len). Built in one place (rows_of) so that
// tests/mutation.py can drop the last row, or the last element of each row, from every
// variant with one replacement.
template <typename T>
struct Rows {
  const T* in;
  T* out;         // out[r]: the sum of row r
  size_t count;   // rows to sum
  size_t len;     // elements to sum per row
  size_t stride;  // elements from the start of one row to the next
  __device__ const T* row(size_t r) const { return in + r * stride; }
};

template <typename T>
Rows<T> rows_of(const T* in, size_t rows, size_t cols, T* out) {
  Rows<T> m{in, out, 0, 0, cols};
  m.count = rows;  // every row
  m.len = cols;    // every element of a row
  return m;
}

// Each thread's share of a row: elements first, first + step, ... (plain loads).
template <typename T>
__device__ T strided_sum(const T* row, size_t len, size_t first, size_t step) {
  T sum = 0;
  for (size_t j = first; j < len; j += step) sum += row[j];
  return sum;
}

// [docs:block-tree]
// One block per row (blocks stride over the rows): the generic reduce on the whole block.
template <typename T>
__global__ void __launch_bounds__(kThreads) rows_block_tree(Rows<T> m) {
  __shared__ T scratch[kThreads];
  const cg::thread_block block = cg::this_thread_block();
  for (size_t r = blockIdx.x; r < m.count; r += gridDim.x) {
    T sum = strided_sum(m.row(r), m.len, block.thread_rank(), block.size());
    sum = reduce(block, scratch, sum);
    if (block.thread_rank() == 0) m.out[r] = sum;
  }
}
// [/docs:block-tree]

// [docs:tile-tree]
// A tile of N threads per row, N = 4, 8, 16 or 32 chosen at run time: tiled_partition(block, N)
// returns a plain thread_group, and the same reduce() as above runs on it, with its own slice
// of shared memory. g.sync() is now a __syncwarp over the tile's lanes.
template <typename T>
__global__ void __launch_bounds__(kThreads) rows_tile_tree(Rows<T> m, unsigned tile_size) {
  __shared__ T scratch[kThreads];
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_group tile = cg::tiled_partition(block, tile_size);
  T* my_scratch = scratch + (block.thread_rank() - tile.thread_rank());  // the tile's tile_size slots
  const size_t tiles = size_t(gridDim.x) * (kThreads / tile_size);
  for (size_t r = (blockIdx.x * size_t(blockDim.x) + threadIdx.x) / tile_size; r < m.count; r += tiles) {
    T sum = strided_sum(m.row(r), m.len, tile.thread_rank(), tile_size);
    sum = reduce(tile, my_scratch, sum);
    if (tile.thread_rank() == 0) m.out[r] = sum;
  }
}
// [/docs:tile-tree]

// ---- 2. and 3. Tiles whose size the compiler knows ---------------------------------------
// [docs:static-tiles]
// thread_block_tile<N>: N is a template argument, so the shuffle loop is unrolled and no
// shared memory is needed: values move between registers.
template <unsigned N, typename T>
__device__ T tile_sum_shfl(const cg::thread_block_tile<N>& tile, T v) {
#pragma unroll
  for (unsigned offset = N / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  return v;  // complete in thread_rank() 0
}

// cg::reduce takes a thread_block_tile<N> (N up to 1024) or a coalesced_group; a thread_block
// or a run-time thread_group does not compile. Up to 32 threads it works in registers; a
// larger tile also uses a few bytes of shared memory (see rows_block_cg_tile below).
template <unsigned N, typename T>
__device__ T tile_sum_cg(const cg::thread_block_tile<N>& tile, T v) {
  return cg::reduce(tile, v, cg::plus<T>());  // complete in every thread of the tile
}

enum class TileSum { Shfl, CgReduce };

template <unsigned N, TileSum Kind, typename T>
__global__ void __launch_bounds__(kThreads) rows_tile_static(Rows<T> m) {
  const cg::thread_block_tile<N> tile = cg::tiled_partition<N>(cg::this_thread_block());
  const size_t tiles = size_t(gridDim.x) * (kThreads / N);
  for (size_t r = (blockIdx.x * size_t(blockDim.x) + threadIdx.x) / N; r < m.count; r += tiles) {
    T sum = strided_sum(m.row(r), m.len, tile.thread_rank(), N);
    sum = Kind == TileSum::Shfl ? tile_sum_shfl(tile, sum) : tile_sum_cg(tile, sum);
    if (tile.thread_rank() == 0) m.out[r] = sum;
  }
}
// [/docs:static-tiles]

// [docs:block-sum]
// Block sum from warp tiles: each warp's sum goes to shared memory, then warp 0 adds the 8
// of them. All 32 lanes of warp 0 call cg::reduce, lanes 8..31 with a 0: a collective needs
// a group fixed before the branch (the tile), not coalesced_threads() inside it, which
// names whichever lanes happen to be converged there (the chapter shows why).
template <typename T>
__device__ T block_sum(const cg::thread_block& block, T value) {
  __shared__ T warp_sums[kThreads / 32];
  const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  value = tile_sum_shfl(warp, value);
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = value;
  block.sync();
  if (warp.meta_group_rank() == 0) {  // the whole warp or none of it
    const unsigned lane = warp.thread_rank();
    value = cg::reduce(warp, lane < warp.meta_group_size() ? warp_sums[lane] : T(0), cg::plus<T>());
  }
  block.sync();  // warp_sums is reused for the next row
  return value;  // complete in thread 0
}
// [/docs:block-sum]

template <typename T>
__global__ void __launch_bounds__(kThreads) rows_block_shfl(Rows<T> m) {
  const cg::thread_block block = cg::this_thread_block();
  for (size_t r = blockIdx.x; r < m.count; r += gridDim.x) {
    T sum = strided_sum(m.row(r), m.len, block.thread_rank(), block.size());
    sum = block_sum(block, sum);
    if (block.thread_rank() == 0) m.out[r] = sum;
  }
}

// [docs:block-cg-tile]
// The same block sum in one line: a thread_block_tile<256> is the whole block, and
// cg::reduce takes it (inside, CG does what block_sum does by hand). Before sm_80 a tile of
// more than 32 threads needs its scratch handed over as a block_tile_memory; from sm_80 on
// that type is empty, so it stays. Making the tile syncs the block: it is made once.
// A tile as large as its parent is not promised: the comment above tiled_partition<Size>
// in cooperative_groups.h asks for size(parent) > Size (it predates multi-warp tiles, and
// only a tile parent is checked). CUDA 13.0 runs it right; block_sum relies on no such case.
template <typename T>
__global__ void __launch_bounds__(kThreads) rows_block_cg_tile(Rows<T> m) {
  __shared__ cg::block_tile_memory<kThreads> tile_scratch;
  const cg::thread_block block = cg::this_thread_block(tile_scratch);
  const cg::thread_block_tile<kThreads> whole_block = cg::tiled_partition<kThreads>(block);
  for (size_t r = blockIdx.x; r < m.count; r += gridDim.x) {
    T sum = strided_sum(m.row(r), m.len, block.thread_rank(), block.size());
    sum = cg::reduce(whole_block, sum, cg::plus<T>());  // complete in every thread
    if (block.thread_rank() == 0) m.out[r] = sum;
  }
}
// [/docs:block-cg-tile]

// Long rows: one block per row with step 05's 16-byte loads. A row starts wherever
// r * cols puts it, so each row is cut into a scalar head (to the first 16-byte boundary),
// whole vectors, and a scalar tail. The loop is vector_reads::thread_sum's, written out here:
// called through it, rows of 1-256 elements ran 1-9% slower on an H100
// (git show b3ba59e:plots/data/logs_h100/block_v4_via_vector_reads/README.txt).
using vector_reads::Vec4;

template <typename T>
__global__ void __launch_bounds__(kThreads) rows_block_v4(Rows<T> m) {
  using V = typename Vec4<T>::type;
  const cg::thread_block block = cg::this_thread_block();
  const unsigned t = block.thread_rank();
  for (size_t r = blockIdx.x; r < m.count; r += gridDim.x) {
    const T* row = m.row(r);
    const size_t misaligned = (reinterpret_cast<uintptr_t>(row) % 16) / sizeof(T);
    const size_t head = misaligned == 0 ? 0 : 4 - misaligned < m.len ? 4 - misaligned : m.len;
    const size_t vectors = (m.len - head) / 4, tail_begin = head + vectors * 4;
    const V* body = reinterpret_cast<const V*>(row + head);
    T sum = 0;
    size_t i = t;
    for (; i + 3 * kThreads < vectors; i += 4 * kThreads) {
      V v[4];
#pragma unroll
      for (int b = 0; b < 4; ++b) v[b] = body[i + b * kThreads];  // 4 x 16 bytes in flight
#pragma unroll
      for (int b = 0; b < 4; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);
    }
    for (; i < vectors; i += kThreads) sum += (body[i].x + body[i].y) + (body[i].z + body[i].w);
    if (t < head) sum += row[t];
    if (t < m.len - tail_begin) sum += row[tail_begin + t];
    sum = block_sum(block, sum);
    if (t == 0) m.out[r] = sum;
  }
}

// Rows of a few elements: one thread per row. A warp's 32 rows are contiguous, so together
// its loads still cover whole cache lines.
template <typename T>
__global__ void __launch_bounds__(kThreads) rows_thread(Rows<T> m) {
  for (size_t r = blockIdx.x * size_t(blockDim.x) + threadIdx.x; r < m.count; r += size_t(gridDim.x) * blockDim.x)
    m.out[r] = strided_sum(m.row(r), m.len, 0, 1);
}

// A few long rows (fewer than the GPU holds blocks): a block per row would leave SMs idle, so
// each row is cut into `chunks` pieces, a block each, whose sums are atomicAdded into out[r]
// (zeroed first): float sums depend on the atomics' order (step 03), ints are exact.
template <typename T>
__global__ void __launch_bounds__(kThreads) rows_split(Rows<T> m, size_t chunks) {
  const cg::thread_block block = cg::this_thread_block();
  const size_t chunk_len = (m.len + chunks - 1) / chunks;
  for (size_t piece = blockIdx.x; piece < m.count * chunks; piece += gridDim.x) {
    const size_t r = piece / chunks, begin = piece % chunks * chunk_len;
    const size_t len = begin >= m.len ? 0 : (m.len - begin < chunk_len ? m.len - begin : chunk_len);
    T sum = strided_sum(m.row(r) + begin, len, block.thread_rank(), block.size());
    sum = block_sum(block, sum);
    if (block.thread_rank() == 0) atomicAdd(&m.out[r], sum);
  }
}

// ---- Launchers, one per variant ----------------------------------------------------------
// Every kernel strides over its rows, so the grid is what the GPU holds at once, or fewer
// blocks for fewer rows. The occupancy is asked per kernel (resident_blocks).
template <typename Kernel, typename... Args>
void launch_rows(Kernel kernel, size_t rows_per_block, size_t rows, const Launch& ctx, Args... args) {
  const unsigned resident = harness::resident_blocks(kernel, kThreads);
  const unsigned blocks = unsigned(std::min<size_t>(resident, (rows + rows_per_block - 1) / rows_per_block));
  if (blocks == 0) return;  // no rows: nothing to launch
  kernel<<<blocks, kThreads, 0, ctx.stream>>>(args...);
  CUDA_CHECK_LAUNCH();
}

// The launchers take the matrix as the harness hands it over; sum_rows launches kernel(m),
// rows_per_block rows to a block. The kernel is named without its <T>: T comes from in, out.
template <typename T>
void sum_rows(void (*kernel)(Rows<T>), size_t rows_per_block, const T* in, size_t rows, size_t cols, T* out,
              const Launch& ctx) {
  const Rows<T> m = rows_of(in, rows, cols, out);
  launch_rows(kernel, rows_per_block, m.count, ctx, m);
}

// The tile for a row: the smallest of 4, 8, 16, 32 threads that has a thread per element.
inline unsigned tile_for(size_t cols) { return cols <= 4 ? 4 : cols <= 8 ? 8 : cols <= 16 ? 16 : 32; }

template <typename T>
void tile_tree(const T* in, size_t rows, size_t cols, T* out, const Launch& ctx) {
  const Rows<T> m = rows_of(in, rows, cols, out);
  const unsigned tile = tile_for(cols);
  launch_rows(rows_tile_tree<T>, kThreads / tile, m.count, ctx, m, tile);
}

// thread_block_tile<N> needs N at compile time: one kernel per tile size, picked at run time.
template <TileSum Kind, typename T>
void tile_static(const T* in, size_t rows, size_t cols, T* out, const Launch& ctx) {
  switch (tile_for(cols)) {
    case 4: return sum_rows(rows_tile_static<4, Kind>, kThreads / 4, in, rows, cols, out, ctx);
    case 8: return sum_rows(rows_tile_static<8, Kind>, kThreads / 8, in, rows, cols, out, ctx);
    case 16: return sum_rows(rows_tile_static<16, Kind>, kThreads / 16, in, rows, cols, out, ctx);
    default: return sum_rows(rows_tile_static<32, Kind>, kThreads / 32, in, rows, cols, out, ctx);
  }
}

// At least `resident` pieces in all, rounded up per row: they can outnumber the grid and run
// a second wave. Chapter 06 measures that tail; its exercise makes the pieces fit.
template <typename T>
void split_rows(const T* in, size_t rows, size_t cols, T* out, const Launch& ctx) {
  static const unsigned resident = harness::resident_blocks(rows_split<T>, kThreads);
  const Rows<T> m = rows_of(in, rows, cols, out);
  const size_t chunks = std::max<size_t>(1, (resident + m.count - 1) / std::max<size_t>(1, m.count));
  CUDA_CHECK(cudaMemsetAsync(m.out, 0, m.count * sizeof(T), ctx.stream));  // the atomics add into it: timed
  launch_rows(rows_split<T>, 1, m.count * chunks, ctx, m, chunks);
}

// The group the chapter's measurements favour for the row length; at 64 rows of 2^20 it picks
// split_rows, which loses to block_v4 there (a measured wrong choice, left for the exercise).
template <typename T>
void auto_rows(const T* in, size_t rows, size_t cols, T* out, const Launch& ctx) {
  if (cols <= 16) return sum_rows(rows_thread, kThreads, in, rows, cols, out, ctx);
  if (cols <= 2048) return tile_static<TileSum::CgReduce>(in, rows, cols, out, ctx);
  static const unsigned resident = harness::resident_blocks(rows_block_v4<T>, kThreads);
  if (rows < resident) return split_rows(in, rows, cols, out, ctx);
  sum_rows(rows_block_v4, 1, in, rows, cols, out, ctx);
}

int main(int argc, char** argv) {
  const char* step = "step06_cooperative_groups";
  // Each lambda takes the harness's (in, rows, cols, out, ctx), for either dtype.
  return harness::run_problems(argc, argv, step, {
      harness::segmented_problem({
          {"block_tree", "a block per row, generic reduce(thread_block) tree in shared memory",
           [](const auto&... args) { sum_rows(rows_block_tree, 1, args...); }},
          {"block_shfl", "a block per row, warp shuffles, then warp 0's cg::reduce of the warp sums",
           [](const auto&... args) { sum_rows(rows_block_shfl, 1, args...); }},
          {"block_cg_tile", "a block per row, one cg::reduce over a thread_block_tile<256> (the whole block)",
           [](const auto&... args) { sum_rows(rows_block_cg_tile, 1, args...); }},
          {"block_v4", "a block per row, 16-byte loads (scalar head and tail per row)",
           [](const auto&... args) { sum_rows(rows_block_v4, 1, args...); }},
          {"tile_tree", "a tiled_partition(block, 4..32) per row, the same generic reduce",
           [](const auto&... args) { tile_tree(args...); }, harness::rows_up_to(size_t(1) << 17)},
          {"tile_shfl", "a thread_block_tile<4..32> per row, unrolled shfl_down",
           [](const auto&... args) { tile_static<TileSum::Shfl>(args...); }, harness::rows_up_to(size_t(1) << 17)},
          {"tile_cg_reduce", "a thread_block_tile<4..32> per row, cg::reduce",
           [](const auto&... args) { tile_static<TileSum::CgReduce>(args...); }, harness::rows_up_to(size_t(1) << 17)},
          {"thread_per_row", "a thread per row, plain loop",
           [](const auto&... args) { sum_rows(rows_thread, kThreads, args...); }, harness::rows_up_to(64)},
          {"split_rows", "rows cut into pieces, a block each, atomicAdd per piece (for a few long rows)",
           [](const auto&... args) { split_rows(args...); }},
          {"auto", "thread, tile or block per row (or split rows), chosen from the row length",
           [](const auto&... args) { auto_rows(args...); }},
      }),
  }, harness::kBatch | harness::kCols);
}

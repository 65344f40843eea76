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
//      instruction: scripts/sass_redux.sh shows it), and on a 256-thread tile: a block sum
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstdint>
#include <type_traits>

#include "segmented.cuh"

namespace cg = cooperative_groups;

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
// whole vectors, and a scalar tail.
template <typename T> struct Vec4;
template <> struct Vec4<unsigned> { using type = uint4; };
template <> struct Vec4<float> { using type = float4; };

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
// each row is cut into `chunks` pieces, one block each, and the pieces' sums are added into
// out[r] with an atomicAdd (out zeroed first). Float sums then depend on the order of the
// atomics, as in step 03; for ints they are exact. It reads with scalar loads (no 16-byte
// loads as in rows_block_v4), one of the two reasons it loses to rows_block_v4 at 64 rows of
// 2^20 elements; the other is the tail of split_rows below. Fixing both is chapter 06's
// exercise (not done or measured here).
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

// ---- Segmented launchers ------------------------------------------------------------------
// Every kernel strides over its rows, so the grid is meant to be what the GPU holds at once,
// or fewer blocks when there are fewer rows. The occupancy is asked per kernel
// (resident_blocks_of): launch_rows serves many kernels of one signature.
template <typename Kernel, typename... Args>
void launch_rows(Kernel kernel, size_t rows_per_block, size_t rows, const harness::Launch& ctx, Args... args) {
  const unsigned resident = harness::resident_blocks_of(kernel, kThreads);
  const unsigned blocks = unsigned(std::min<size_t>(resident, (rows + rows_per_block - 1) / rows_per_block));
  if (blocks == 0) return;  // no rows: nothing to launch
  kernel<<<blocks, kThreads, 0, ctx.stream>>>(args...);
  CUDA_CHECK_LAUNCH();
}

// The tile for a row: the smallest of 4, 8, 16, 32 threads that has a thread per element.
inline unsigned tile_for(size_t cols) { return cols <= 4 ? 4 : cols <= 8 ? 8 : cols <= 16 ? 16 : 32; }

// Calls f(std::integral_constant<unsigned, N>) for N = tile_for(cols): the run-time choice of a
// compile-time size.
template <class F>
void with_tile(size_t cols, F&& f) {
  switch (tile_for(cols)) {
    case 4: return f(std::integral_constant<unsigned, 4>{});
    case 8: return f(std::integral_constant<unsigned, 8>{});
    case 16: return f(std::integral_constant<unsigned, 16>{});
    default: return f(std::integral_constant<unsigned, 32>{});
  }
}

enum class RowKernel { BlockTree, BlockShfl, BlockCgTile, BlockV4, TileTree, TileShfl, TileCgReduce, Thread, Split, Auto };

// Rows split into at least `resident` pieces in all, rounded up per row, so the pieces can
// outnumber the grid (launch_rows caps it at resident) and leave a tail. On sm_90 with
// CUDA 13.0, rows_split has 27 registers (ptxas -v): 8 blocks per SM, 1056 on 132 SMs; 64
// rows get ceil(1056 / 64) = 17 pieces each, 1088 for 1056 blocks, and the last 32 run as a
// second wave while the rest of the GPU idles. chunks = max(1, resident / rows) would fit
// the grid; that and 16-byte loads are chapter 06's exercise, not done or measured here.
template <typename T>
void split_rows(const Rows<T>& m, const harness::Launch& ctx) {
  static const unsigned resident = harness::resident_blocks(rows_split<T>, kThreads);
  const size_t chunks = std::max<size_t>(1, (resident + m.count - 1) / std::max<size_t>(1, m.count));
  CUDA_CHECK(cudaMemsetAsync(m.out, 0, m.count * sizeof(T), ctx.stream));  // the atomics add into it: timed
  launch_rows(rows_split<T>, 1, m.count * chunks, ctx, m, chunks);
}

template <RowKernel Kind, typename T>
void segmented_sum(const T* in, size_t rows, size_t cols, T* out, const harness::Launch& ctx) {
  const Rows<T> m = rows_of(in, rows, cols, out);
  if constexpr (Kind == RowKernel::BlockTree) launch_rows(rows_block_tree<T>, 1, m.count, ctx, m);
  if constexpr (Kind == RowKernel::BlockShfl) launch_rows(rows_block_shfl<T>, 1, m.count, ctx, m);
  if constexpr (Kind == RowKernel::BlockCgTile) launch_rows(rows_block_cg_tile<T>, 1, m.count, ctx, m);
  if constexpr (Kind == RowKernel::BlockV4) launch_rows(rows_block_v4<T>, 1, m.count, ctx, m);
  if constexpr (Kind == RowKernel::Thread) launch_rows(rows_thread<T>, kThreads, m.count, ctx, m);
  if constexpr (Kind == RowKernel::Split) split_rows(m, ctx);
  // What a library would pick from the row length, by the measurements of the chapter: a
  // thread per row up to 16 elements, a 32-thread tile with cg::reduce up to 2048, then a
  // block per row with 16-byte loads, or split rows when there are too few rows for the GPU.
  // split_rows as it stands (scalar loads, a tail) is slower than block_v4 at 64 rows of
  // 2^20 elements: a measured wrong choice, left for chapter 06's exercise to fix.
  if constexpr (Kind == RowKernel::Auto) {
    if (cols <= 16) return segmented_sum<RowKernel::Thread>(in, rows, cols, out, ctx);
    if (cols <= 2048) return segmented_sum<RowKernel::TileCgReduce>(in, rows, cols, out, ctx);
    static const unsigned resident = harness::resident_blocks(rows_block_v4<T>, kThreads);
    if (rows < resident) return segmented_sum<RowKernel::Split>(in, rows, cols, out, ctx);
    return segmented_sum<RowKernel::BlockV4>(in, rows, cols, out, ctx);
  }
  if constexpr (Kind == RowKernel::TileTree) {
    const unsigned tile = tile_for(cols);
    launch_rows(rows_tile_tree<T>, kThreads / tile, m.count, ctx, m, tile);
  }
  if constexpr (Kind == RowKernel::TileShfl || Kind == RowKernel::TileCgReduce) {
    with_tile(cols, [&](auto n) {
      constexpr unsigned N = decltype(n)::value;
      constexpr TileSum sum = Kind == RowKernel::TileShfl ? TileSum::Shfl : TileSum::CgReduce;
      launch_rows(rows_tile_static<N, sum, T>, kThreads / N, m.count, ctx, m);
    });
  }
}

int main(int argc, char** argv) {
  using harness::Launch;
  const char* step = "step06_cooperative_groups";
  const auto segmented = [](auto kind) {
    return [](auto in, size_t rows, size_t cols, auto out, const Launch& ctx) {
      segmented_sum<decltype(kind)::value>(in, rows, cols, out, ctx);
    };
  };
  using K = RowKernel;
  return harness::run_problems(argc, argv, step, {
      harness::segmented_problem(step, {
          {"block_tree", "a block per row, generic reduce(thread_block) tree in shared memory",
           segmented(std::integral_constant<K, K::BlockTree>{})},
          {"block_shfl", "a block per row, warp shuffles, then warp 0's cg::reduce of the warp sums",
           segmented(std::integral_constant<K, K::BlockShfl>{})},
          {"block_cg_tile", "a block per row, one cg::reduce over a thread_block_tile<256> (the whole block)",
           segmented(std::integral_constant<K, K::BlockCgTile>{})},
          {"block_v4", "a block per row, 16-byte loads (scalar head and tail per row)",
           segmented(std::integral_constant<K, K::BlockV4>{})},
          {"tile_tree", "a tiled_partition(block, 4..32) per row, the same generic reduce",
           segmented(std::integral_constant<K, K::TileTree>{}), size_t(1) << 17},
          {"tile_shfl", "a thread_block_tile<4..32> per row, unrolled shfl_down",
           segmented(std::integral_constant<K, K::TileShfl>{}), size_t(1) << 17},
          {"tile_cg_reduce", "a thread_block_tile<4..32> per row, cg::reduce",
           segmented(std::integral_constant<K, K::TileCgReduce>{}), size_t(1) << 17},
          {"thread_per_row", "a thread per row, plain loop",
           segmented(std::integral_constant<K, K::Thread>{}), 64},
          {"split_rows", "rows cut into pieces, a block each, atomicAdd per piece (for a few long rows)",
           segmented(std::integral_constant<K, K::Split>{})},
          {"auto", "thread, tile or block per row (or split rows), chosen from the row length",
           segmented(std::integral_constant<K, K::Auto>{})},
      }),
  }, harness::kBatch | harness::kCols);
}

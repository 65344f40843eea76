// Short rows of ANY length up to 512 at the floor's speed: the rows packed_rows cannot take
// (a length that is not a power of two, such as 33 or 300, or a matrix that is not 16-byte
// aligned). A block reads a tile of whole rows - about 4096 elements - with 16-byte loads,
// 4 in flight per thread, into shared memory, then sums the tile's rows from there: a thread
// per row up to 32 elements, a warp per row above. The loads never see a row boundary, so the
// bytes in flight are those of a plain read whatever the length (chapter 09, "Short rows").
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstdint>

#include "launch.cuh"
#include "vector_reads.cuh"

namespace staged_rows {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kLoads = 4;                                     // 16-byte loads in flight per thread
constexpr size_t kTile = size_t(kThreads) * kLoads * 4;       // elements a block reads per round: 4096
constexpr size_t kMaxCols = 512;
constexpr size_t kThreadRowMaxCols = 32;  // up to here a thread sums a row, above a warp does

// The tile's elements are stored at their offset from the 16-byte boundary at or before the
// tile's start, so every body vector lands 16-byte aligned in shared memory as well.
template <typename T>
__global__ void __launch_bounds__(kThreads) rows_staged(const T* __restrict__ in, size_t rows, size_t cols,
                                                       T* __restrict__ out) {
  using V = typename vector_reads::Vec4<T>::type;
  __shared__ __align__(16) T tile[kTile + 4];
  const size_t rows_per_tile = kTile / cols, tiles = (rows + rows_per_tile - 1) / rows_per_tile;
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const size_t first_row = t * rows_per_tile;
    const size_t tile_rows = min(rows_per_tile, rows - first_row);
    const T* src = in + first_row * cols;
    const size_t len = tile_rows * cols;
    // [docs:staged-rows]
    // Read: a scalar head up to the first 16-byte boundary, then up to kLoads vectors per
    // thread (a tile's body is at most kTile / 4 vectors: one round), then a scalar tail.
    const size_t head = vector_reads::head_count(src, len), lead = (4 - head) % 4;  // lead: slots before src[0]
    const size_t vectors = (len - head) / 4, tail_begin = head + vectors * 4;
    const V* body = reinterpret_cast<const V*>(src + head);
    V v[kLoads];
#pragma unroll
    for (int b = 0; b < kLoads; ++b) {
      const size_t i = threadIdx.x + size_t(b) * kThreads;
      if (i < vectors) v[b] = body[i];
    }
    if (threadIdx.x < head) tile[lead + threadIdx.x] = src[threadIdx.x];
    if (threadIdx.x < len - tail_begin) tile[lead + tail_begin + threadIdx.x] = src[tail_begin + threadIdx.x];
#pragma unroll
    for (int b = 0; b < kLoads; ++b) {
      const size_t i = threadIdx.x + size_t(b) * kThreads;
      if (i < vectors) reinterpret_cast<V*>(tile + lead + head)[i] = v[b];
    }
    __syncthreads();
    // Sum: the rows are now in shared memory, where a short row costs no DRAM round trip.
    const T* rows_in_tile = tile + lead;
    if (cols <= kThreadRowMaxCols) {
      for (size_t r = threadIdx.x; r < tile_rows; r += kThreads) {
        T sum = 0;
        for (size_t j = 0; j < cols; ++j) sum += rows_in_tile[r * cols + j];
        out[first_row + r] = sum;
      }
    } else {
      const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
      for (size_t r = threadIdx.x / 32; r < tile_rows; r += kThreads / 32) {
        T part = 0;
        for (size_t j = warp.thread_rank(); j < cols; j += 32) part += rows_in_tile[r * cols + j];
        const T sum = cg::reduce(warp, part, cg::plus<T>());
        if (warp.thread_rank() == 0) out[first_row + r] = sum;
      }
    }
    __syncthreads();  // the next tile overwrites shared memory
    // [/docs:staged-rows]
  }
}

// As many blocks as fit at once, never more than there are tiles: the blocks stride over them.
template <typename T>
void launch(const T* in, size_t rows, size_t cols, T* out, const harness::Launch& ctx) {
  if (rows == 0) return;
  const size_t rows_per_tile = kTile / cols;
  const unsigned resident = harness::resident_blocks(rows_staged<T>, kThreads);
  const unsigned blocks = harness::grid_for(rows, rows_per_tile, resident);
  rows_staged<T><<<blocks, kThreads, 0, ctx.stream>>>(in, rows, cols, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace staged_rows

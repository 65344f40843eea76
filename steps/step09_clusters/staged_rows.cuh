// Short rows of ANY length up to 512 within 10% of the floor's time: the rows packed_rows
// cannot take (a length that is not a power of two, such as 33 or 300, or a matrix that is not
// 16-byte aligned). A block reads one tile of whole rows - about 4096 elements - with 16-byte loads,
// 4 in flight per thread, into shared memory, then sums the tile's rows from there with a
// group of G lanes per row (G a power of two; lanes_per_row picks 1 to 16 for rows up to 512,
// the kernel would take 32). The loads never see a row boundary,
// so the bytes in flight are those of a plain read whatever the length
// (docs/06_cooperative_groups.md, "Short rows at the floor").
#pragma once

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

#include "launch.cuh"
#include "vector_reads.cuh"

namespace staged_rows {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kLoads = 4;                                     // 16-byte loads in flight per thread
constexpr size_t kTile = size_t(kThreads) * kLoads * 4;       // elements a block reads per round: 4096
constexpr size_t kMaxCols = 512;

// The lanes per row, G: the fewest that leave a lane at most 32 of a row's elements, then
// doubled while the warp's reads would hit a shared-memory bank more than 4 times. Lane b of
// group g reads element g * cols + b + k * G: as k grows all the addresses shift together, so
// each bank is hit as often as in the first read, which decides. At rows of 31 that is a
// thread per row (an odd stride: 32 different banks); at rows of 16 a thread per row would
// put the warp on 2 banks (16-way conflicts), so G = 4. Few lanes mean long chains of adds,
// many mean shuffles on few adds; this rule came out of timing every G at 29 lengths on an
// H200 (float, an aligned matrix; docs/evidence/06_cooperative_groups.md, "staged_rows"),
// where it was about 5% slower than the best G at worst.
inline unsigned bank_hits(size_t cols, unsigned lanes_per_row) {
  unsigned hits[32] = {}, worst = 0;
  for (unsigned lane = 0; lane < 32; ++lane)
    worst = std::max(worst, ++hits[(lane / lanes_per_row * cols + lane % lanes_per_row) % 32]);
  return worst;
}
inline unsigned lanes_per_row(size_t cols) {
  unsigned g = 1;
  while (g < 32 && g * 32 < cols) g *= 2;
  while (g < 32 && bank_hits(cols, g) > 4) g *= 2;
  return g;
}

// The tile's elements are stored at their offset from the 16-byte boundary at or before the
// tile's start, so every body vector lands 16-byte aligned in shared memory as well.
template <typename T>
__global__ void __launch_bounds__(kThreads) rows_staged(const T* __restrict__ in, size_t rows, size_t cols,
                                                       T* __restrict__ out, unsigned lanes) {
  using V = typename vector_reads::Vec4<T>::type;
  __shared__ __align__(16) T tile[kTile + 4];
  const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  const size_t rows_per_tile = kTile / cols, first_row = blockIdx.x * rows_per_tile;
  const size_t tile_rows = min(rows_per_tile, rows - first_row);
  const T* src = in + first_row * cols;
  const size_t len = tile_rows * cols;
  // [docs:staged-rows]
  // Read: a scalar head up to the first 16-byte boundary, then up to kLoads vectors per thread
  // (a tile's body is at most kTile / 4 vectors: one round), then a scalar tail.
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
  // Sum: group g of G lanes sums row g; lane b adds elements b, b + G, ... (unrolled by 4: four
  // shared-memory reads in flight, the adds still in order), then the group's lanes exchange
  // sums by halves (shfl_xor: each gets the total, in the same order every run). The loop bound
  // is the same for the whole block: every lane reaches every shuffle.
  const unsigned groups = kThreads / lanes, lane_in_group = threadIdx.x % lanes, width = unsigned(cols);
  const T* rows_in_tile = tile + lead;
  for (unsigned first = 0; first < tile_rows; first += groups) {
    const unsigned r = first + threadIdx.x / lanes;
    T part = 0;
    if (r < tile_rows) {
#pragma unroll 4
      for (unsigned j = lane_in_group; j < width; j += lanes) part += rows_in_tile[r * width + j];
    }
    for (unsigned half = lanes / 2; half > 0; half /= 2) part += warp.shfl_xor(part, half);
    if (lane_in_group == 0 && r < tile_rows) out[first_row + r] = part;
  }
  // [/docs:staged-rows]
}

// One block per tile, not as many blocks as fit striding over the tiles: the block scheduler
// gives each freed slot the next tile, so blocks that happen to run slow leave no tail of
// idle SMs (ncu on the H200 at rows of 300: a higher achieved occupancy;
// docs/evidence/06_cooperative_groups.md, "staged_rows"). A tile holds at least 8 rows, so a
// grid's 2^31 - 1 blocks cover any matrix here.
template <typename T>
void launch(const T* in, size_t rows, size_t cols, T* out, const harness::Launch& ctx) {
  if (rows == 0) return;
  const size_t rows_per_tile = kTile / cols, tiles = (rows + rows_per_tile - 1) / rows_per_tile;
  rows_staged<T><<<unsigned(tiles), kThreads, 0, ctx.stream>>>(in, rows, cols, out, lanes_per_row(cols));
  CUDA_CHECK_LAUNCH();
}

}  // namespace staged_rows

// SOLUTION of workshop exercise 06 - a segmented sum, one tile per row (chapter 06, Cooperative Groups).
//
// The input is a rows x cols matrix, row-major and contiguous; the output is one sum per
// row. The harness (common/segmented.cuh) makes the matrix for every --n and --cols, checks
// every row against the host, and times CUB's DeviceSegmentedReduce::Sum beside you.
//
// The plan: a 32-thread tile per row. cg::tiled_partition<32>(block) cuts the 256-thread
// block into 8 tiles; tile t of the grid sums rows t, t + (tiles in the grid), ... Inside a
// row the tile's lanes take elements lane, lane + 32, lane + 64, ... (neighbouring lanes
// read neighbouring elements: coalesced), then the tile adds its 32 partial sums.
// As given, the row loop is there but nothing is summed: every row comes out 0.
//
// Your job: TODO 1 (each lane's share of the row) and TODO 2 (the tile's sum).
//
//   make ex06 && ./ex06 --check --n 2^20 --cols 1,31,32,33,4096 --dtype all
//   bash ../scripts/check_exercise.sh 06
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "segmented.cuh"

namespace cg = cooperative_groups;

constexpr int kThreads = 256;  // threads per block
constexpr unsigned kTile = 32;  // threads per row

template <typename T>
__global__ void __launch_bounds__(kThreads) rows_tile(const T* in, size_t rows, size_t cols, T* out) {
  const cg::thread_block_tile<kTile> tile = cg::tiled_partition<kTile>(cg::this_thread_block());
  const size_t tiles = size_t(gridDim.x) * (kThreads / kTile);              // tiles in the grid
  const size_t first = (blockIdx.x * size_t(blockDim.x) + threadIdx.x) / kTile;  // this tile's index
  for (size_t r = first; r < rows; r += tiles) {
    const T* row = in + r * cols;
    T sum = 0;
    // Solution: strided over the row by the tile's lanes, then summed over the tile.
    for (size_t j = tile.thread_rank(); j < cols; j += kTile) sum += row[j];
    sum = cg::reduce(tile, sum, cg::plus<T>());
    if (tile.thread_rank() == 0) out[r] = sum;  // one store per row, by lane 0
  }
}

// ---- Given: nothing to change below this line ----------------------------------------------

// Enough blocks to give every row a tile, no more than fit on the GPU at once (the row loop
// strides over the rest).
template <typename T>
void segmented_sum(const T* in, size_t rows, size_t cols, T* out, const harness::Launch& ctx) {
  static const unsigned resident = harness::resident_blocks(rows_tile<T>, kThreads);
  const size_t rows_per_block = kThreads / kTile;
  const unsigned blocks = unsigned(std::min<size_t>(resident, (rows + rows_per_block - 1) / rows_per_block));
  if (blocks == 0) return;
  rows_tile<<<blocks, kThreads, 0, ctx.stream>>>(in, rows, cols, out);
  CUDA_CHECK_LAUNCH();
}

int main(int argc, char** argv) {
  return harness::run_problems(argc, argv, "ex06_solution", {
      harness::segmented_problem({
          {"tile_per_row", "a 32-thread tile per row, cg::reduce on the tile (yours)",
           [](auto in, size_t rows, size_t cols, auto out, const harness::Launch& ctx) {
             segmented_sum(in, rows, cols, out, ctx);
           }},
      }),
  }, harness::kBatch | harness::kCols);
}

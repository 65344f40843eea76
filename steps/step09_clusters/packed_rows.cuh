// Short rows within 10% of the floor's time: the segmented sum's rows of 1, 2, 4, ... 512
// elements (powers of two) read as step 05 reads an array - 16-byte loads, 4 in flight per
// thread, a full SM of threads - and summed inside the warp. docs/06_cooperative_groups.md
// ("Short rows at the floor") measures it.
//
// Why a thread or a warp per row is slow here: a thread per row of 16 reads 64 bytes with
// 4-byte loads; a warp per row of 32 issues one 4-byte load per lane and then waits for it.
// Either way an SM has far fewer bytes in flight than the memory needs to stay busy (Little's
// law: bytes in flight = latency x bandwidth; read_probe measures how many that is). Here a
// warp reads 2 KiB per round whatever the row length, and the row boundaries only decide which
// lanes add which sums afterwards.
#pragma once

#include <cstdint>

#include "launch.cuh"
#include "vector_reads.cuh"

namespace packed_rows {

constexpr int kThreads = 256;
constexpr int kLoads = 4;                      // 16-byte loads in flight per thread
constexpr size_t kSpan = size_t(32) * kLoads * 4;  // elements a warp reads per round: 512
constexpr size_t kMaxCols = kSpan;

// The shapes this kernel takes: a power-of-two row length up to 512 (a row never straddles a
// span, and a row of up to 128 is a group of lanes within one load), a 16-byte aligned matrix
// and output (rows of 1 store 16 bytes at a time). Others (rows of 33, a matrix shifted by one
// element) go to staged_rows.cuh.
template <typename T>
bool fits(const T* in, const T* out, size_t cols) {
  const auto aligned = [](const T* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return cols >= 1 && cols <= kMaxCols && (cols & (cols - 1)) == 0 && aligned(in) && aligned(out);
}

// The sum over each aligned group of `lanes` lanes (a power of two up to 32), in every lane of
// the group: xor partners with an offset below `lanes` stay inside the group.
template <typename T>
__device__ T group_sum(T v, unsigned lanes) {
  for (unsigned offset = lanes / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// 6 blocks of 256 per SM (1536 threads): ptxas -v gives 36 registers and no spills (sm_90,
// CUDA 13.0); asking for 8 blocks forces 32 and spills. 64 bytes in flight per thread is then
// 96 KiB per SM, past the 32 KiB (H100) and 64 KiB (H200) from which read_probe's plain read
// gets within 2% of its best.
template <typename T>
__global__ void __launch_bounds__(kThreads, 6)
rows_packed(const T* __restrict__ in, size_t rows, size_t cols, T* __restrict__ out) {
  using V = typename vector_reads::Vec4<T>::type;
  const unsigned lane = threadIdx.x % 32;
  const size_t spans = rows * cols / kSpan;
  const size_t warps = size_t(gridDim.x) * (kThreads / 32);
  const int log2_cols = __ffsll(static_cast<long long>(cols)) - 1;  // cols is a power of two: shift, not divide
  // [docs:packed-rows]
  // A warp-uniform loop: every lane of a warp takes the same spans, so the full-mask shuffles
  // below are legal.
  for (size_t s = (blockIdx.x * size_t(kThreads) + threadIdx.x) / 32; s < spans; s += warps) {
    const V* span = reinterpret_cast<const V*>(in + s * kSpan);
    V v[kLoads];  // load b: elements [128 b, 128 b + 128) of the span, 4 per lane
#pragma unroll
    for (int b = 0; b < kLoads; ++b) v[b] = span[b * 32 + lane];
    const size_t first_row = (s * kSpan) >> log2_cols;
    if (cols == 1) {  // each element is a row: a copy
#pragma unroll
      for (int b = 0; b < kLoads; ++b) reinterpret_cast<V*>(out + first_row)[b * 32 + lane] = v[b];
    } else if (cols == 2) {  // two rows per vector
#pragma unroll
      for (int b = 0; b < kLoads; ++b) {
        T* pair = out + first_row + (b * 32 + lane) * 2;
        pair[0] = v[b].x + v[b].y;
        pair[1] = v[b].z + v[b].w;
      }
    } else if (cols <= 128) {  // a row is cols / 4 neighbouring lanes of one load
      const unsigned lanes = unsigned(cols / 4);
#pragma unroll
      for (int b = 0; b < kLoads; ++b) {
        const T sum = group_sum((v[b].x + v[b].y) + (v[b].z + v[b].w), lanes);
        if (lane % lanes == 0) out[first_row + ((b * 128 + lane * 4) >> log2_cols)] = sum;
      }
    } else {  // 256 or 512: a row is two or four whole loads of the warp
      T part[kLoads];
#pragma unroll
      for (int b = 0; b < kLoads; ++b) part[b] = (v[b].x + v[b].y) + (v[b].z + v[b].w);
      if (cols == 256) {
        const T first = group_sum(part[0] + part[1], 32), second = group_sum(part[2] + part[3], 32);
        if (lane == 0) out[first_row] = first, out[first_row + 1] = second;
      } else {
        const T sum = group_sum((part[0] + part[1]) + (part[2] + part[3]), 32);
        if (lane == 0) out[first_row] = sum;
      }
    }
  }
  // [/docs:packed-rows]
  // The rows after the last whole span (fewer than kSpan elements; no row straddles the
  // boundary, as cols divides kSpan): a thread per row.
  const size_t tail_row = (spans * kSpan) >> log2_cols, r = tail_row + blockIdx.x * size_t(kThreads) + threadIdx.x;
  if (r < rows) {
    T sum = 0;
    for (size_t j = 0; j < cols; ++j) sum += in[r * cols + j];
    out[r] = sum;
  }
}

// As many blocks as fit at once (the warps stride over the spans), and at least enough
// threads for the tail's rows (at most kSpan).
template <typename T>
void launch(const T* in, size_t rows, size_t cols, T* out, const harness::Launch& ctx) {
  if (rows == 0) return;
  const unsigned resident = harness::resident_blocks(rows_packed<T>, kThreads);
  const unsigned blocks = harness::grid_for(rows * cols, kThreads * 16, resident);
  rows_packed<T><<<std::max(blocks, unsigned(kSpan / kThreads)), kThreads, 0, ctx.stream>>>(in, rows, cols, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace packed_rows

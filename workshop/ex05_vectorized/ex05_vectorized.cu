// Workshop exercise 05 - 16-byte loads with a correct head and tail (chapter docs/05_vectorized.md).
//
// The kernel reads the input as uint4 / float4: four elements per load instruction. A
// 16-byte load needs an address that is a multiple of 16, and neither the caller's pointer
// nor n has to cooperate, so the array is cut in three:
//   head  0..3 elements before the first 16-byte boundary  (scalar loads)
//   body  whole vectors                                     (vector loads, given)
//   tail  0..3 elements after the last whole vector        (scalar loads)
// As given, head_count() pretends the pointer is always aligned and the head and tail are
// never added: right only when the input starts on a 16-byte boundary AND n is a multiple
// of 4. Try ./ex05 --check --n 1000 --offset 1: a misaligned 16-byte load stops the kernel.
//
// Your job: head_count() and the two scalar additions (TODO 1, 2). The checker runs every
// offset 0..3 (--offset K starts the input K elements past a 256-byte boundary) with odd
// and tiny sizes, n = 1, 2, 3 included.
//
//   make ex05 && ./ex05 --check --n 1,2,3,5,1023,2^20+3 --offset 0,1,2,3 --dtype all
//   bash ../scripts/check_exercise.sh 05
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstdint>

#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

namespace cg = cooperative_groups;

constexpr int kThreads = 1024;  // step 05's block size
constexpr int kBatch = 4;       // vectors in flight per thread

template <typename T> struct Vec4;  // the 16-byte vector type of T
template <> struct Vec4<unsigned> { using type = uint4; };
template <> struct Vec4<float> { using type = float4; };

// Thread 0 gets the block's sum. (Given.)
template <typename T>
__device__ T block_sum(T value) {
  __shared__ T warp_sums[32];
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  const unsigned warp_id = threadIdx.x / 32, warps = blockDim.x / 32;
  value = cg::reduce(warp, value, cg::plus<T>());
  if (warp.thread_rank() == 0) warp_sums[warp_id] = value;
  __syncthreads();
  if (warp_id == 0)
    value = cg::reduce(warp, warp.thread_rank() < warps ? warp_sums[warp.thread_rank()] : T(0), cg::plus<T>());
  return value;
}

// The number of elements before the first 16-byte boundary at or after `in`: 0..3, and
// never more than n.
template <typename T>
__host__ __device__ size_t head_count(const T* in, size_t n) {
  // TODO 1: as given, every pointer is taken to be 16-byte aligned. Hints:
  //   - reinterpret_cast<uintptr_t>(in) % 16 is how many bytes `in` is past a boundary;
  //     divide by sizeof(T) for elements (0..3).
  //   - 0 elements past a boundary needs a head of 0; 1 past needs 3; 2 needs 2; 3 needs 1.
  //   - n = 2 at offset 1 has a head of 2, not 3: cap it at n.
  (void)in;
  (void)n;
  return 0;
}

template <int Batch, typename T>
__global__ void reduce_vectorized(const T* __restrict__ in, size_t n, T* out) {
  using V = typename Vec4<T>::type;
  const size_t head = head_count(in, n);
  const size_t vectors = (n - head) / 4;                  // whole vectors after the head
  const V* body = reinterpret_cast<const V*>(in + head);  // 16-byte aligned once head is right
  const size_t tail_begin = head + vectors * 4;           // first element after the last vector

  const size_t thread = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  T sum = 0;
  size_t i = thread;
  for (; i + (Batch - 1) * stride < vectors; i += Batch * stride) {  // the body (given)
    V v[Batch];
#pragma unroll
    for (int b = 0; b < Batch; ++b) v[b] = body[i + b * stride];  // Batch x 16 bytes in flight
#pragma unroll
    for (int b = 0; b < Batch; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);
  }
  for (; i < vectors; i += stride) {
    V v = body[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  // TODO 2: add the scalar head, in[0 .. head), and the scalar tail, in[tail_begin .. n).
  // Each is at most 3 elements: let the first few threads of the grid take one each
  // (`thread` is this thread's index in the whole grid). Each element exactly once; and
  // mind that n - tail_begin is unsigned.
  (void)tail_begin;
  sum = block_sum(sum);
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

// ---- Given: nothing to change below this line ----------------------------------------------

template <int Batch, typename T>
void reduce_vec(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  static const unsigned resident = harness::resident_blocks(reduce_vectorized<Batch, T>, kThreads);
  const size_t per_block = size_t(kThreads) * Batch * 4;  // elements one block takes per iteration
  const unsigned blocks = unsigned(std::min<size_t>(resident, (n + per_block - 1) / per_block));
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), ctx.stream));
  reduce_vectorized<Batch><<<blocks, kThreads, 0, ctx.stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

int main(int argc, char** argv) {
  return harness::run_step(argc, argv, "ex05_vectorized", {
      {"v4_batch4", "16-byte loads, four vectors in flight, scalar head and tail (yours)",
       [](auto in, size_t n, auto out, const harness::Launch& ctx) { reduce_vec<kBatch>(in, n, out, ctx); }},
  });
}

// SOLUTION of workshop exercise 01 - fix the racy last-warp stage (chapter docs/01_warp_unroll.md).
//
// This program sums an array with step 01's kernel: a __syncthreads() tree down to 64
// values, then the first warp finishes the last six levels on its own. The warp stage
// below is the classic pre-Volta idiom through a volatile pointer. It gives the right sum
// on today's GPUs, and it is still a data race: nothing orders one lane's write before
// another lane's read. `compute-sanitizer --tool racecheck` reports hazards in it.
//
// Your job: rewrite warp_sum_last() so that racecheck reports zero hazards and the sum
// stays right. Touch only the function marked TODO.
//
//   make ex01 && ./ex01 --check --n 2^16           the sum (right already: that is the trap)
//   compute-sanitizer --tool racecheck ./ex01 --check --n 2^16    the hazards
//   bash ../scripts/check_exercise.sh 01           the checker: sizes, offsets, racecheck
#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

constexpr int kThreads = 256;  // threads per block; a power of two, at least 64

// Called by the 32 threads of the first warp (tid 0..31) once smem[0..63] hold the 64
// values left by the tree. Must leave the sum of smem[0..63] in smem[0].
template <typename T>
__device__ void warp_sum_last(T* smem, unsigned tid) {
  // Solution: every read of a level happens before the warp barrier, every write after it.
  T sum = smem[tid];
  for (unsigned offset = 32; offset > 0; offset /= 2) {
    sum += smem[tid + offset];
    __syncwarp();  // all lanes have read this level...
    smem[tid] = sum;
    __syncwarp();  // ...and all writes are visible before the next level reads
  }
}

// ---- Given: nothing to change below this line ----------------------------------------------

template <typename T>
__device__ T block_tree_sum(T* smem, T value) {
  const unsigned tid = threadIdx.x;
  smem[tid] = value;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 32; stride /= 2) {  // stop at 64 values
    if (tid < stride) smem[tid] += smem[tid + stride];
    __syncthreads();
  }
  if (tid < 32) warp_sum_last(smem, tid);  // the first warp finishes alone
  return tid == 0 ? smem[0] : T(0);        // thread 0 wrote smem[0] last itself
}

template <typename T>
__global__ void reduce_slices(const T* in, size_t n, T* partials) {
  __shared__ T smem[kThreads];
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  T sum = block_tree_sum(smem, i < n ? in[i] : T(0));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// One launch per level of partial sums, as in steps 00-02.
template <typename T>
void reduce_multi_pass(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const size_t first_blocks = (n + kThreads - 1) / kThreads;
  T* scratch = ctx.scratch_as<T>(2 * first_blocks);
  T* partials[2] = {scratch, scratch + first_blocks};
  const T* src = in;
  for (size_t count = n, pass = 0;; ++pass) {
    const size_t blocks = (count + kThreads - 1) / kThreads;
    T* dst = blocks == 1 ? out : partials[pass % 2];
    reduce_slices<<<blocks, kThreads, 0, ctx.stream>>>(src, count, dst);
    CUDA_CHECK_LAUNCH();
    if (blocks == 1) return;
    src = dst;
    count = blocks;
  }
}

int main(int argc, char** argv) {
  return harness::run_step(argc, argv, "ex01_solution", {
      {"last_warp", "shared-memory tree, the last warp unrolled (your warp_sum_last)",
       [](auto in, size_t n, auto out, const harness::Launch& ctx) { reduce_multi_pass(in, n, out, ctx); }},
  });
}

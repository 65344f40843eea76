// Step 01 - unroll the last warp: stop the __syncthreads() tree at 64 values and let the
// first warp finish the last six levels on its own. Three ways to write that warp stage:
//   plain     no volatile, no sync: the compiler keeps the values in registers. WRONG.
//   volatile  the pre-Volta idiom: right answers today, but a data race (racecheck sees it).
//   syncwarp  __syncwarp() between every read and write: correct and race-free.
// docs/01_warp_unroll.md and docs/racecheck.md tell the story; scripts/sanitize.sh shows it.
#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

constexpr int kThreads = 256;  // threads per block; a power of two, at least 64

// [docs:warp-plain]
// Assumes the 32 threads of the warp run each line in lock-step and see each other's
// shared-memory writes at once. Neither is promised, and the compiler may keep smem[tid]
// in a register and read the neighbours' slots before they were written.
template <typename T>
__device__ void warp_sum_plain(T* smem, unsigned tid) {
  smem[tid] += smem[tid + 32];
  smem[tid] += smem[tid + 16];
  smem[tid] += smem[tid + 8];
  smem[tid] += smem[tid + 4];
  smem[tid] += smem[tid + 2];
  smem[tid] += smem[tid + 1];
}
// [/docs:warp-plain]

// [docs:warp-volatile]
// volatile forces every access to go to shared memory, in program order, so the classic
// code works on today's hardware, yet nothing orders one thread's write before another
// thread's read: since Volta the threads of a warp may be scheduled independently.
template <typename T>
__device__ void warp_sum_volatile(T* smem, unsigned tid) {
  volatile T* v = smem;
  v[tid] += v[tid + 32];
  v[tid] += v[tid + 16];
  v[tid] += v[tid + 8];
  v[tid] += v[tid + 4];
  v[tid] += v[tid + 2];
  v[tid] += v[tid + 1];
}
// [/docs:warp-volatile]

// [docs:warp-syncwarp]
// Explicit: every read of a neighbour's slot happens before the warp barrier, every write
// after it, so no thread overwrites a value another thread has yet to read.
template <typename T>
__device__ void warp_sum_syncwarp(T* smem, unsigned tid) {
  T sum = smem[tid];
  for (unsigned offset = 32; offset > 0; offset /= 2) {
    sum += smem[tid + offset];
    __syncwarp();  // all reads of this level are done...
    smem[tid] = sum;
    __syncwarp();  // ...and all writes are visible before the next level reads
  }
}
// [/docs:warp-syncwarp]

enum class WarpStage { Plain, Volatile, Syncwarp };

// [docs:block-tree]
template <WarpStage Stage, typename T>
__device__ T block_tree_sum(T* smem, T value) {
  const unsigned tid = threadIdx.x;
  smem[tid] = value;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 32; stride /= 2) {  // stop at 64 values
    if (tid < stride) smem[tid] += smem[tid + stride];
    __syncthreads();
  }
  if (tid < 32) {  // the first warp finishes alone, without __syncthreads()
    if constexpr (Stage == WarpStage::Plain) warp_sum_plain(smem, tid);
    if constexpr (Stage == WarpStage::Volatile) warp_sum_volatile(smem, tid);
    if constexpr (Stage == WarpStage::Syncwarp) warp_sum_syncwarp(smem, tid);
  }
  // Only thread 0 reads the result: it wrote smem[0] last itself, so no other thread's write
  // can race with this read (warp 0 may still be writing while other warps get here).
  return tid == 0 ? smem[0] : T(0);
}
// [/docs:block-tree]

template <WarpStage Stage, typename T>
__global__ void reduce_slices(const T* in, size_t n, T* partials) {
  __shared__ T smem[kThreads];
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  T sum = block_tree_sum<Stage>(smem, i < n ? in[i] : T(0));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}


template <WarpStage Stage, typename T>
void reduce_multi_pass(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const size_t first_blocks = (n + kThreads - 1) / kThreads;
  T* scratch = ctx.scratch_as<T>(2 * first_blocks);
  T* partials[2] = {scratch, scratch + first_blocks};  // ping-pong between two halves
  const T* src = in;
  for (size_t count = n, pass = 0;; ++pass) {
    const size_t blocks = (count + kThreads - 1) / kThreads;
    T* dst = blocks == 1 ? out : partials[pass % 2];
    reduce_slices<Stage><<<blocks, kThreads, 0, ctx.stream>>>(src, count, dst);
    CUDA_CHECK_LAUNCH();
    if (blocks == 1) return;
    src = dst;
    count = blocks;
  }
}

int main(int argc, char** argv) {
  using harness::Launch;
  return harness::run_step(argc, argv, "step01_warp_unroll", {
      harness::Variant("plain", "unrolled last warp, no volatile, no sync (wrong on purpose)",
                       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_multi_pass<WarpStage::Plain>(in, n, out, ctx); })
          .wrong_by_design(),
      {"volatile", "unrolled last warp through a volatile pointer (racy, right by luck)",
       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_multi_pass<WarpStage::Volatile>(in, n, out, ctx); }},
      {"syncwarp", "unrolled last warp with __syncwarp() between reads and writes",
       [](auto in, size_t n, auto out, const Launch& ctx) { reduce_multi_pass<WarpStage::Syncwarp>(in, n, out, ctx); }},
  });
}

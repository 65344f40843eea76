// Step 00 - the baseline: a shared-memory tree per block, then a second launch for the partials.
//
// Launch 1: block b loads elements [b*256, b*256 + 256), one per thread, into shared memory
// and halves the active threads at every level, with __syncthreads() between levels, until
// thread 0 holds the block's sum. Launch 2 runs the same kernel over those block sums; the
// end of a launch is the only barrier between all blocks. Above 256 x 256 elements the block
// sums are still too many for one block, so the launcher repeats until one value is left:
// one launch up to 256 elements, 2 up to 2^16, 3 up to 2^24, 4 up to 2^32.
#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)

constexpr int kThreads = 256;  // threads per block; a power of two for the halving tree

// [docs:block-tree]
// Every thread of the block calls this with its value; thread 0 gets the block's sum.
template <typename T>
__device__ T block_tree_sum(T* smem, T value) {
  const unsigned tid = threadIdx.x;
  smem[tid] = value;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) smem[tid] += smem[tid + stride];
    __syncthreads();  // the next level reads what this level wrote
  }
  return smem[0];
}
// [/docs:block-tree]

// [docs:kernels]
template <typename T>
__global__ void reduce_slices(const T* in, size_t n, T* partials) {
  __shared__ T smem[kThreads];
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // size_t: n may exceed 2^31
  T sum = block_tree_sum(smem, i < n ? in[i] : T(0));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// Launch after launch, each turns `count` values into ceil(count / 256) block sums.
template <typename T>
void reduce_multi_pass(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const size_t first_blocks = (n + kThreads - 1) / kThreads;
  T* scratch = ctx.scratch_as<T>(2 * first_blocks);
  T* partials[2] = {scratch, scratch + first_blocks};  // ping-pong between two halves
  const T* src = in;
  for (size_t count = n, pass = 0;; ++pass) {
    const size_t blocks = (count + kThreads - 1) / kThreads;
    T* dst = blocks == 1 ? out : partials[pass % 2];  // never the buffer being read
    reduce_slices<<<blocks, kThreads, 0, ctx.stream>>>(src, count, dst);
    CUDA_CHECK_LAUNCH();
    if (blocks == 1) return;
    src = dst;
    count = blocks;
  }
}
// [/docs:kernels]

int main(int argc, char** argv) {
  return harness::run_step(argc, argv, "step00_baseline", {
      {"tree", "shared-memory halving tree, __syncthreads() per level; a launch per level of partials",
       [](auto in, size_t n, auto out, const harness::Launch& ctx) { reduce_multi_pass(in, n, out, ctx); }},
  });
}

// Step 00 - the baseline: a shared-memory tree per block, then a second launch for the partials.
//
// Launch 1: block b loads elements [b*256, b*256 + 256), one per thread, into shared memory
// and halves the active threads at every level, with __syncthreads() between levels, until
// thread 0 holds the block's sum. Launch 2: one block sums the per-block partials the same way.
#include "harness.cuh"

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

// One block walks the partials with a block-sized stride, then reduces its own values.
template <typename T>
__global__ void reduce_partials(const T* partials, size_t count, T* out) {
  __shared__ T smem[kThreads];
  T sum = 0;
  for (size_t i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  sum = block_tree_sum(smem, sum);
  if (threadIdx.x == 0) *out = sum;
}
// [/docs:kernels]

template <typename T>
void reduce_two_pass(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const size_t blocks = (n + kThreads - 1) / kThreads;
  T* partials = ctx.scratch_as<T>(blocks);
  reduce_slices<<<blocks, kThreads, 0, ctx.stream>>>(in, n, partials);
  CUDA_CHECK_LAUNCH();
  reduce_partials<<<1, kThreads, 0, ctx.stream>>>(partials, blocks, out);
  CUDA_CHECK_LAUNCH();
}

int main(int argc, char** argv) {
  return harness::run_step(argc, argv, "step00_baseline", {
      {"tree", "shared-memory halving tree, __syncthreads() per level, two launches",
       [](auto in, size_t n, auto out, const harness::Launch& ctx) { reduce_two_pass(in, n, out, ctx); }},
  });
}

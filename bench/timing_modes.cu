// Experiment behind the harness timing loop (not built by CMake; output: bench/timing_modes_h100.txt).
// Modes: 0 flush before each rep, 1 no flush, 2 flush + 100 us spin, 3 flush + wait after each rep (adopted).
#include "harness.cuh"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void spin(long long ns) { long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)); long long t; do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns); }
template <typename T> __device__ T block_sum(T value) {
  __shared__ T warp_sums[32];
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  const unsigned warp_id = threadIdx.x / 32, warps = blockDim.x / 32;
  value = cg::reduce(warp, value, cg::plus<T>());
  if (warp.thread_rank() == 0) warp_sums[warp_id] = value;
  __syncthreads();
  if (warp_id == 0) value = cg::reduce(warp, warp.thread_rank() < warps ? warp_sums[warp.thread_rank()] : T(0), cg::plus<T>());
  return value;
}
__global__ void k(const int* in, size_t n, int* out) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; int s = 0;
  for (; i < n; i += size_t(gridDim.x) * blockDim.x) s += in[i];
  s = block_sum(s); if (threadIdx.x == 0) atomicAdd(out, s);
}
int main() {
  auto dev = harness::device_info(0);
  int *in, *out; cudaMalloc(&in, 1 << 26); cudaMalloc(&out, 64); cudaMemset(in, 1, 1 << 26);
  cudaStream_t s; cudaStreamCreate(&s);
  size_t fc = size_t(dev.l2_bytes) * 2 / 16; int4* fb; cudaMalloc(&fb, fc * 16 + 64); cudaMemset(fb, 0, fc * 16 + 64);
  const int reps = 50;
  for (int mode = 0; mode < 4; ++mode) for (size_t n : {size_t(1) << 15, size_t(1) << 20}) for (int trial = 0; trial < 3; ++trial) {
    auto launch = [&] { cudaMemsetAsync(out, 0, 4, s); k<<<(n + 255) / 256 < 1056 ? (n + 255) / 256 : 1056, 256, 0, s>>>(in, n, out); };
    for (int w = 0; w < 200; ++w) launch();
    cudaStreamSynchronize(s);
    std::vector<cudaEvent_t> a(reps), b(reps);
    for (int r = 0; r < reps; ++r) { cudaEventCreate(&a[r]); cudaEventCreate(&b[r]); }
    for (int r = 0; r < reps; ++r) {
      if (mode != 1) harness::flush_l2_kernel<<<dev.sms * 4, 512, 0, s>>>(fb, fc, (int*)(fb + fc));
      if (mode == 2) spin<<<1, 1, 0, s>>>(100000);
      cudaEventRecord(a[r], s);
      launch();
      cudaEventRecord(b[r], s);
      if (mode == 3) cudaStreamSynchronize(s);
    }
    cudaStreamSynchronize(s);
    std::vector<float> ms(reps);
    for (int r = 0; r < reps; ++r) cudaEventElapsedTime(&ms[r], a[r], b[r]);
    auto sorted = ms; std::sort(sorted.begin(), sorted.end());
    printf("mode %d (%s) n=%zu trial %d: median %.4f min %.4f max %.4f | first 12:", mode,
           mode == 0 ? "flush" : mode == 1 ? "noflush" : mode == 2 ? "flush+spin" : "flush+sync", n, trial, sorted[reps / 2], sorted[0], sorted.back());
    for (int r = 0; r < 12; ++r) printf(" %.4f", ms[r]);
    printf("\n");
  }
}

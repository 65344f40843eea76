// Tuning sweep behind step05's block size (not built by CMake; output: bench/step05_tuning.txt).
// Build: nvcc -std=c++17 -arch=sm_90 -Icommon -o tune bench/step05_tuning.cu
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include "harness.cuh"
namespace cg = cooperative_groups;

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
template <int Kind> __device__ int4 load(const int4* p) {
  if constexpr (Kind == 0) return *p;
  if constexpr (Kind == 1) return __ldcs(p);
  if constexpr (Kind == 2) { int4 v; asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p)); return v; }
  if constexpr (Kind == 3) { int4 v; asm volatile("ld.global.nc.L2::128B.v4.s32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p)); return v; }
}
template <int Batch, int Kind, bool Blocked>
__global__ void kern(const int* __restrict__ in, size_t n, int* out) {
  const int4* body = reinterpret_cast<const int4*>(in);
  size_t vectors = n / 4;
  int sum = 0;
  size_t begin, end, stride, i;
  if (Blocked) {  // contiguous chunk per block, threads stride by blockDim inside it
    size_t per = (vectors + gridDim.x - 1) / gridDim.x;
    begin = blockIdx.x * per; end = min(vectors, begin + per); stride = blockDim.x; i = begin + threadIdx.x;
  } else { end = vectors; stride = size_t(gridDim.x) * blockDim.x; i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; }
  for (; i + (Batch - 1) * stride < end; i += Batch * stride) {
    int4 v[Batch];
#pragma unroll
    for (int b = 0; b < Batch; ++b) v[b] = load<Kind>(body + i + b * stride);
#pragma unroll
    for (int b = 0; b < Batch; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);
  }
  for (; i < end; i += stride) { int4 v = load<Kind>(body + i); sum += (v.x + v.y) + (v.z + v.w); }
  sum = block_sum(sum);
  if (threadIdx.x == 0) atomicAdd(out, sum);
}
template <int Threads, int Unroll>
__global__ void partials_kernel(const int* partials, size_t count, int* out) {
  __shared__ int smem[Threads];
  int sum = 0;
#pragma unroll Unroll
  for (size_t i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  smem[threadIdx.x] = sum; __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) { if (threadIdx.x < s) smem[threadIdx.x] += smem[threadIdx.x + s]; __syncthreads(); }
  if (threadIdx.x == 0) *out = smem[0];
}
struct Cfg { const char* name; void (*k)(const int*, size_t, int*); int batch; };
int main() {
  harness::Options opt; opt.reps = 30; opt.warmup = 5;
  auto dev = harness::device_info(0);
  harness::Bench bench(opt, dev, "tune");
  size_t nmax = size_t(1) << 30;
  int *in, *out; void* temp = nullptr; size_t tb = 0;
  cudaMalloc(&in, nmax * 4); cudaMalloc(&out, 64);
  harness::fill_input_kernel<int><<<1024, 256>>>(in, 0, nmax, nmax, 1);
  cub::DeviceReduce::Sum(temp, tb, in, out, int(nmax)); cudaMalloc(&temp, tb);
  Cfg cfgs[] = {{"b1", kern<1,0,false>,1}, {"b2", kern<2,0,false>,2}, {"b4", kern<4,0,false>,4}, {"b8", kern<8,0,false>,8},
                {"b4_ldcs", kern<4,1,false>,4}, {"b4_nc256", kern<4,2,false>,4}, {"b4_nc128", kern<4,3,false>,4},
                {"b1_blk", kern<1,0,true>,1}, {"b4_blk", kern<4,0,true>,4}, {"b2_nc256", kern<2,2,false>,2}, {"b1_nc256", kern<1,2,false>,1}};
  {
    size_t count = size_t(1) << 22;
    auto t1 = bench.time([&] { partials_kernel<256, 1><<<1, 256, 0, bench.stream()>>>(in, count, out); });
    auto t2 = bench.time([&] { partials_kernel<1024, 1><<<1, 1024, 0, bench.stream()>>>(in, count, out); });
    auto t3 = bench.time([&] { partials_kernel<1024, 8><<<1, 1024, 0, bench.stream()>>>(in, count, out); });
    auto t4 = bench.time([&] { partials_kernel<256, 8><<<1, 256, 0, bench.stream()>>>(in, count, out); });
    printf("partials 2^22: 256/u1 %.4f ms, 1024/u1 %.4f ms, 1024/u8 %.4f ms, 256/u8 %.4f ms\n", t1.median_ms, t2.median_ms, t3.median_ms, t4.median_ms);
  }
  for (size_t n : {size_t(1) << 24, size_t(1) << 28, size_t(1) << 30}) {
    auto cub = [&] { cub::DeviceReduce::Sum(temp, tb, in, out, int(n), bench.stream()); };
    double c = bench.time(cub).median_ms;
    printf("n=2^%d cub %.4f ms %.1f GB/s\n", 63 - __builtin_clzll(n), c, n * 4 / c / 1e6);
    for (int threads : {256, 512, 1024}) for (auto& cfg : cfgs) for (int bps : {1, 2, 4, 8}) {
      int occ; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, cfg.k, threads, 0);
      if (bps > occ) continue;
      unsigned blocks = dev.sms * bps;
      auto run = [&] { cudaMemsetAsync(out, 0, 4, bench.stream()); cfg.k<<<blocks, threads, 0, bench.stream()>>>(in, n, out); };
      auto t = bench.time(run);
      printf("n=2^%d %-9s t%-4d bps%d %.4f ms %.1f GB/s x%.3f\n", 63 - __builtin_clzll(n), cfg.name, threads, bps, t.median_ms, n * 4 / t.median_ms / 1e6, c / t.median_ms);
    }
  }
}

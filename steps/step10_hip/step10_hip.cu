// Step 10 - one source for NVIDIA and AMD: the ladder's ideas with no 32 written into them.
//
// An NVIDIA warp is 32 threads; an AMD wavefront is 64 on GCN and CDNA (gfx8, gfx9; MI200:
// gfx90a) and 32 on RDNA (gfx1030). Steps 00-09 assume 32 (`threadIdx.x / 32`, `warp_sums[32]`, 0xffffffff masks,
// shuffle trees from `offset = 16`, tiled_partition<32>; chapter 10 lists where). Here the
// width is port::kWaveSize, set by each compiler for each GPU; other differences: portable.hpp.
//
//   block_atomic  step 05's design: 16-byte loads, a block sum of wavefront shuffles, one
//                 atomicAdd per block (the output zeroed first)
//   grid_sync     step 07's design: one cooperative launch, block partials, grid.sync(),
//                 block 0 adds them (deterministic: the same additions every run)
//   tile_rows     the HIP Cooperative Groups tutorial's tiles: a tiled_partition<16> per row
//                 of a matrix, its sum by tile.shfl_down; every row (partition) is checked
//                 against the host's sum of that row
//
// NVIDIA (nvcc): a normal step (the harness: flags, --check, CUB and the floor, CSV).
//   make step10 && ./step10 --check --dtype all --n 1,1000,2^24+5 --offset 0,1,2,3
// AMD (hipcc, scripts/maintainer/hip_check.sh): compiled for every target Debian's HIP 5.2
// builds, warnings as errors; its main checks every variant and rocPRIM's reduce against the
// host reference. No AMD GPU was available to this project: that side has never run on one.
// The kernels (everything before `#if !PORT_HIP`) run on a CPU model of 32- and 64-wide
// wavefronts instead: tests/wave_model/.
#include "portable.hpp"

#include <algorithm>
#include <cstdint>

namespace cg = cooperative_groups;

constexpr int kThreads = 1024;       // step 05's and step 07's block
constexpr int kVectorsInFlight = 4;  // 16-byte loads in flight per thread
constexpr size_t kPerBlock = size_t(kThreads) * kVectorsInFlight * 4;
constexpr int kTile = 16;            // the tutorial's partition: fits a wavefront of 32 or 64
// HIP 5.2's own check (tile <= CG's WAVEFRONT_SIZE) says 64 on gfx1013 and gfx1032-1036, which
// run wave32: there a tiled_partition<64> compiles and is wrong. This check uses the real width.
static_assert(kTile <= port::kWaveSize, "kTile: a tile must fit in one wavefront (32 lanes on RDNA)");

template <typename T> struct Vec4;
template <> struct Vec4<unsigned> { using type = uint4; };
template <> struct Vec4<float> { using type = float4; };

// ---- one wavefront, one block: no literal 32 ----------------------------------------------
// [docs:wave-sum]
// Lane 0 gets the sum of the wavefront's kWaveSize lanes: log2(kWaveSize) rounds, 5 on a
// 32-wide warp, 6 on a 64-wide wavefront. Written as `offset = 16` it would leave half of a
// 64-wide wavefront out; written with 64 on NVIDIA, lanes would add their own value again.
template <typename T>
__device__ T wave_sum(T value) {
  for (int offset = port::kWaveSize / 2; offset > 0; offset /= 2) value += port::shfl_down(value, offset);
  return value;
}

// Thread 0 gets the block's sum: each wavefront's sum into shared memory (one slot per
// wavefront: kThreads / kWaveSize of them), then wavefront 0 adds the slots. A block of 1024
// has 32 warps on NVIDIA, 16 wavefronts on CDNA, 32 on RDNA; wavefront 0 has a lane for each.
// Two calls in one kernel must be separated by a barrier (__syncthreads or grid.sync).
template <typename T>
__device__ T block_sum(T value) {
  __shared__ T wave_sums[kThreads / port::kWaveSize];
  const unsigned lane = threadIdx.x % port::kWaveSize, wave = threadIdx.x / port::kWaveSize;
  const unsigned waves = (blockDim.x + port::kWaveSize - 1) / port::kWaveSize;
  value = wave_sum(value);
  if (lane == 0) wave_sums[wave] = value;
  __syncthreads();
  if (wave == 0) value = wave_sum(lane < waves ? wave_sums[lane] : T(0));
  return value;
}
// [/docs:wave-sum]

// This thread's share of in[0..n) for `stride` threads: a scalar head up to the first 16-byte
// boundary, 16-byte loads (kVectorsInFlight in flight), a scalar tail. Step 05's loop, copied
// from common/vector_reads.cuh, which hipcc cannot include (it needs cg::reduce).
template <typename T>
__device__ T thread_sum(const T* __restrict__ in, size_t n, size_t thread, size_t stride) {
  using V = typename Vec4<T>::type;
  const size_t misaligned = (reinterpret_cast<uintptr_t>(in) % 16) / sizeof(T);
  size_t head = misaligned ? 4 - misaligned : 0;
  if (head > n) head = n;
  const size_t vectors = (n - head) / 4, tail_begin = head + vectors * 4;
  const V* body = reinterpret_cast<const V*>(in + head);
  T sum = 0;
  size_t i = thread;
  for (; i + (kVectorsInFlight - 1) * stride < vectors; i += kVectorsInFlight * stride) {
    V v[kVectorsInFlight];
#pragma unroll
    for (int b = 0; b < kVectorsInFlight; ++b) v[b] = body[i + b * stride];
#pragma unroll
    for (int b = 0; b < kVectorsInFlight; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);
  }
  for (; i < vectors; i += stride) sum += (body[i].x + body[i].y) + (body[i].z + body[i].w);
  if (thread < head) sum += in[thread];
  if (thread < n - tail_begin) sum += in[tail_begin + thread];
  return sum;
}

// ---- block_atomic ---------------------------------------------------------------------------
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_block_atomic(const T* __restrict__ in, size_t n, T* out) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const T sum = block_sum(thread_sum(in, n, blockIdx.x * size_t(blockDim.x) + threadIdx.x, stride));
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

template <typename T>
void block_atomic(const T* in, size_t n, T* out, gpuStream_t stream) {
  const unsigned blocks = port::grid_for(n, kPerBlock, port::resident_blocks(reduce_block_atomic<T>, kThreads));
  GPU_CHECK(gpuMemsetAsync(out, 0, sizeof(T), stream));
  reduce_block_atomic<T><<<blocks, kThreads, 0, stream>>>(in, n, out);
  GPU_CHECK(gpuGetLastError());
}

// ---- grid_sync ------------------------------------------------------------------------------
// [docs:grid-sync]
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_grid_sync(const T* __restrict__ in, size_t n, T* partials, T* out) {
  cg::grid_group grid = cg::this_grid();
  const T sum = block_sum(thread_sum(in, n, size_t(blockIdx.x) * blockDim.x + threadIdx.x, size_t(gridDim.x) * blockDim.x));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
  grid.sync();  // every partial is written and visible; also the barrier between the two block_sums
  if (blockIdx.x != 0) return;
  T total = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) total += partials[b];
  total = block_sum(total);
  if (threadIdx.x == 0) *out = total;
}

// The void** form of the cooperative launch on both platforms: HIP 5.2 has no typed
// (cudaLaunchKernelEx-like) one. The array holds the ADDRESSES of the arguments, which must
// match the kernel's parameters exactly: nothing checks them (chapter 07).
template <typename T>
void grid_sync(const T* in, size_t n, T* out, T* partials, gpuStream_t stream) {
  const unsigned blocks = port::grid_for(n, kPerBlock, port::resident_blocks(reduce_grid_sync<T>, kThreads));
  void* args[] = {&in, &n, &partials, &out};
  GPU_CHECK(gpuLaunchCooperativeKernel(reduce_grid_sync<T>, dim3(blocks), dim3(kThreads), args, 0, stream));
}
// [/docs:grid-sync]

// ---- tile_rows: the tutorial's tiled partitions ---------------------------------------------
// [docs:tile-rows]
// Each tile of kTile threads sums rows (grid-stride over the rows); lane 0 of the tile writes
// the row's sum. Every lane of a tile has the same row, so the loop is uniform in the tile.
template <typename T>
__global__ void __launch_bounds__(kThreads) rows_tile(const T* __restrict__ in, size_t rows, size_t cols, T* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<kTile> tile = cg::tiled_partition<kTile>(block);
  const size_t tiles_per_block = kThreads / kTile, tiles = size_t(gridDim.x) * tiles_per_block;
  for (size_t row = blockIdx.x * tiles_per_block + block.thread_rank() / kTile; row < rows; row += tiles) {
    T sum = 0;
    for (size_t c = tile.thread_rank(); c < cols; c += kTile) sum += in[row * cols + c];
    for (int offset = kTile / 2; offset > 0; offset /= 2) sum += tile.shfl_down(sum, offset);
    if (tile.thread_rank() == 0) out[row] = sum;
  }
}
// [/docs:tile-rows]

template <typename T>
void tile_rows(const T* in, size_t rows, size_t cols, T* out, gpuStream_t stream) {
  const unsigned blocks = port::grid_for(rows, kThreads / kTile, port::resident_blocks(rows_tile<T>, kThreads));
  rows_tile<T><<<blocks, kThreads, 0, stream>>>(in, rows, cols, out);
  GPU_CHECK(gpuGetLastError());
}

#if !PORT_HIP
// ---- NVIDIA: the harness's main ---------------------------------------------------------------
#include "run_step.cuh"
#include "segmented.cuh"

int main(int argc, char** argv) {
  using harness::Launch;
  return harness::run_problems(argc, argv, "step10_hip", {
      std::make_shared<harness::ArraySum>(std::vector<harness::Variant>{
          {"block_atomic", "16-byte loads, wavefront-width shuffles, one atomicAdd per block",
           [](auto in, size_t n, auto out, const Launch& ctx) { block_atomic(in, n, out, ctx.stream); }},
          {"grid_sync", "one cooperative launch: block partials, grid.sync(), block 0 adds them",
           [](auto in, size_t n, auto out, const Launch& ctx) {
             using T = harness::elem_t<decltype(in)>;
             const unsigned resident = port::resident_blocks(reduce_grid_sync<T>, kThreads);
             grid_sync(in, n, out, ctx.scratch_as<T>(resident), ctx.stream);  // a partial per block
           }},
      }),
      harness::segmented_problem({
          {"tile_rows", "a tiled_partition<16> per row, tile.shfl_down (the HIP tutorial's tiles)",
           [](auto in, size_t rows, size_t cols, auto out, const Launch& ctx) { tile_rows(in, rows, cols, out, ctx.stream); }},
      }),
  }, harness::kBatch | harness::kCols, harness::cooperative_unsupported,
     "one source for nvcc and hipcc: the ladder's reductions with the wavefront's width, verified and timed against CUB.");
}
#else
// ---- AMD: every variant and rocPRIM's reduce checked against the host reference --------------
// Compiled by scripts/maintainer/hip_check.sh; never run here (no AMD GPU). The input is made on the host
// from the harness's generator (reference.hpp) and copied over; no timing: numbers this
// project cannot measure are not printed. STEP10_NO_ROCPRIM leaves rocPRIM out (targets that
// rocPRIM 5.3 does not build for); STEP10_TARGETS lists the targets compiled in.
#ifndef STEP10_NO_ROCPRIM
#include <iostream>  // rocPRIM 5.3's device_reduce.hpp uses std::cout without including it
#include <rocprim/device/device_reduce.hpp>
#endif
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include "reference.hpp"

__global__ void wave_size_of_image(int* out) { *out = port::kWaveSize; }

bool g_cooperative = true;  // false: the GPU cannot launch cooperative kernels; grid_sync is skipped

template <typename T>
harness::Verdict verdict(T got, const harness::Reference& ref, size_t n) {
  if constexpr (std::is_same_v<T, unsigned>) return harness::verify(got, ref);
  else return harness::verify(got, ref, n);
}

template <typename T>
bool check_line(const char* dtype, size_t n, size_t offset, const char* name, const harness::Verdict& v) {
  std::printf("%-5s %11zu %3zu  %-16s %s %s\n", dtype, n, offset, name, v.ok ? "ok" : "FAILED", v.detail.c_str());
  return v.ok;
}

// Every array variant and rocPRIM at n elements, `offset` elements past a 256-byte boundary.
template <typename T>
bool check_array(const char* dtype, size_t n, size_t offset, uint64_t seed) {
  std::vector<T> host(n + offset);
  for (size_t i = 0; i < n; ++i) host[offset + i] = harness::input_value<T>(seed, i);
  const harness::Reference ref = harness::reference_sum<T>(seed, n);
  T *buf = nullptr, *out = nullptr, *partials = nullptr;
  GPU_CHECK(hipMalloc(&buf, host.size() * sizeof(T)));
  GPU_CHECK(hipMalloc(&out, sizeof(T)));
  GPU_CHECK(hipMalloc(&partials, port::resident_blocks(reduce_grid_sync<T>, kThreads) * sizeof(T)));
  GPU_CHECK(hipMemcpy(buf, host.data(), host.size() * sizeof(T), hipMemcpyHostToDevice));
  const T* in = buf + offset;
  void* temp = nullptr;
#ifndef STEP10_NO_ROCPRIM
  size_t temp_bytes = 0;
  GPU_CHECK(rocprim::reduce(nullptr, temp_bytes, in, out, n, rocprim::plus<T>()));
  GPU_CHECK(hipMalloc(&temp, temp_bytes));
#endif
  auto result = [&] {
    GPU_CHECK(hipDeviceSynchronize());
    T got{};
    GPU_CHECK(hipMemcpy(&got, out, sizeof(T), hipMemcpyDeviceToHost));
    return verdict(got, ref, n);
  };
  // Each run on a poisoned output (all bits set), so none can pass on an earlier one's sum.
  auto poison = [&] { GPU_CHECK(hipMemset(out, 0xFF, sizeof(T))); };
  bool ok = true;
  poison(), block_atomic(in, n, out, nullptr);
  ok &= check_line<T>(dtype, n, offset, "block_atomic", result());
  if (g_cooperative) {
    poison(), grid_sync(in, n, out, partials, nullptr);
    ok &= check_line<T>(dtype, n, offset, "grid_sync", result());
  }
#ifndef STEP10_NO_ROCPRIM
  poison();
  GPU_CHECK(rocprim::reduce(temp, temp_bytes, in, out, n, rocprim::plus<T>()));
  ok &= check_line<T>(dtype, n, offset, "rocprim_reduce", result());
#endif
  for (void* p : {static_cast<void*>(buf), static_cast<void*>(out), static_cast<void*>(partials), temp}) GPU_CHECK(hipFree(p));
  return ok;
}

// tile_rows on a rows x cols matrix: every row (one partition's sum) against the host's.
template <typename T>
bool check_rows(const char* dtype, size_t rows, size_t cols, uint64_t seed) {
  std::vector<T> host(rows * cols), got(rows);
  for (size_t i = 0; i < host.size(); ++i) host[i] = harness::input_value<T>(seed, i);
  T *in = nullptr, *out = nullptr;
  GPU_CHECK(hipMalloc(&in, host.size() * sizeof(T)));
  GPU_CHECK(hipMalloc(&out, rows * sizeof(T)));
  GPU_CHECK(hipMemcpy(in, host.data(), host.size() * sizeof(T), hipMemcpyHostToDevice));
  GPU_CHECK(hipMemset(out, 0xFF, rows * sizeof(T)));  // poisoned: a row never written fails
  tile_rows(in, rows, cols, out, nullptr);
  GPU_CHECK(hipMemcpy(got.data(), out, rows * sizeof(T), hipMemcpyDeviceToHost));
  size_t wrong = 0;
  for (size_t r = 0; r < rows; ++r)
    wrong += !verdict(got[r], harness::finished<T>(harness::partial_reference<T>(seed, r * cols, (r + 1) * cols)), cols).ok;
  GPU_CHECK(hipFree(in));
  GPU_CHECK(hipFree(out));
  const std::string detail = std::to_string(wrong) + " of " + std::to_string(rows) + " rows wrong (cols=" + std::to_string(cols) + ")";
  return check_line<T>(dtype, rows * cols, 0, "tile_rows", {wrong == 0, detail, ""});
}

// The first GPU whose target this binary holds no code object for ("" if none), read from the
// kernel driver before any HIP call: HIP 5.2 aborts at its first call when a GPU has no code
// object (hipErrorNoBinaryForGpu). gfx_target_version 90010 is 9.0.10: gfx90a (minor and
// stepping in hex); HSA_OVERRIDE_GFX_VERSION ("10.3.0") replaces what the driver says.
std::string gpu_without_code_object(const std::string& targets) {
  std::vector<unsigned long long> versions;
  unsigned major = 0, minor = 0, step = 0;
  const char* override_version = std::getenv("HSA_OVERRIDE_GFX_VERSION");
  if (override_version && std::sscanf(override_version, "%u.%u.%u", &major, &minor, &step) == 3) {
    versions.push_back(major * 10000ull + minor * 100ull + step);
  } else {
    for (int node = 0;; ++node) {
      std::ifstream props("/sys/class/kfd/kfd/topology/nodes/" + std::to_string(node) + "/properties");
      if (!props) break;
      std::string key;
      unsigned long long value = 0;
      while (props >> key >> value)
        if (key == "gfx_target_version" && value) versions.push_back(value);
    }
  }
  for (unsigned long long v : versions) {
    char gpu[32];
    std::snprintf(gpu, sizeof gpu, "gfx%llu%llx%llx", v / 10000 % 100, v / 100 % 100, v % 100);
    if ((" " + targets + " ").find(std::string(" ") + gpu + " ") == std::string::npos) return gpu;
  }
  return "";
}

int main() {
#ifdef STEP10_TARGETS
  const std::string missing = gpu_without_code_object(STEP10_TARGETS);
  if (!missing.empty())
    return std::printf("step10_hip: no code object for this GPU (%s; compiled for %s); skipping.\n", missing.c_str(), STEP10_TARGETS), 77;
#endif
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess || count == 0) {
    std::printf("step10_hip: no usable AMD GPU; skipping.\n");
    return 77;
  }
  hipDeviceProp_t prop{};
  GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  int coop = 0, compiled_wave = 0, *d_wave = nullptr;
  GPU_CHECK(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, 0));
  g_cooperative = coop != 0;
  if (!g_cooperative) std::printf("step10_hip: GPU 0 cannot launch cooperative kernels; grid_sync skipped.\n");
  GPU_CHECK(hipMalloc(&d_wave, sizeof(int)));  // which width the device image that runs was built for
  wave_size_of_image<<<1, 1>>>(d_wave);
  GPU_CHECK(hipMemcpy(&compiled_wave, d_wave, sizeof(int), hipMemcpyDeviceToHost));
  GPU_CHECK(hipFree(d_wave));
  std::printf("step10_hip on %s (%s, wavefront %d; this image's kWaveSize %d), check only\n", prop.name,
              prop.gcnArchName, prop.warpSize, compiled_wave);
  if (compiled_wave != prop.warpSize) return std::printf("step10_hip: FAILED: width mismatch\n"), 1;
  const uint64_t seed = 12345;
  bool ok = true;
  for (size_t n : {size_t(1), size_t(3), size_t(1000), size_t(65537), (size_t(1) << 20) + 3, (size_t(1) << 24) + 5})
    for (size_t offset = 0; offset < 4; ++offset) {
      ok &= check_array<unsigned>("int", n, offset, seed);
      ok &= check_array<float>("float", n, offset, seed);
    }
  for (size_t cols : {size_t(1), size_t(15), size_t(16), size_t(17), size_t(1000)}) {
    ok &= check_rows<unsigned>("int", (size_t(1) << 16) / cols + 1, cols, seed);
    ok &= check_rows<float>("float", (size_t(1) << 16) / cols + 1, cols, seed);
  }
  if (!ok) std::printf("step10_hip: FAILED: a result was wrong (see above)\n");
  return ok ? 0 : 1;
}
#endif

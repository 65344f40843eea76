// The launch side of the harness, the one common/ file a reader of a kernel or launcher needs
// (steps 06-10 also use vector_reads.cuh): error checks, `Launch` (all a launcher gets besides
// its input and output), grid sizes from the occupancy API, the cooperative launch. The rest of
// common/ sits behind run_step() in a step's main and is not required reading.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cli.hpp"  // UsageError: a bad flag or value, exit 2; OwnFlags: a program's own flags

namespace harness {

// A failed CUDA call: the call and CUDA's error (the harness adds program, variant and size).
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw CudaError(std::string(call) + ": " + cudaGetErrorString(err));
}
#define CUDA_CHECK(call) ::harness::check_cuda((call), #call)
// After every <<<>>> launch: a bad launch configuration is reported here.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// What a launcher gets besides its input and output, filled by the harness field by field (the
// explicit constructor refuses a positional {...}): the stream, the problem's scratch, and the
// program's own flags (a struct in its folder, e.g. step 07's --blocks; cli.hpp's OwnFlags).
struct Launch {
  cudaStream_t stream = nullptr;
  void* scratch = nullptr;  // device memory for per-block partials: n/32 x 8 bytes + 1 MiB
  size_t scratch_bytes = 0;
  const OwnFlags* own = nullptr;  // the program's own flags; nullptr: it has none

  explicit Launch() = default;

  template <typename T>
  T* scratch_as(size_t count) const {
    if (count * sizeof(T) > scratch_bytes) throw std::runtime_error("harness scratch buffer too small");
    return static_cast<T*>(scratch);
  }
  // The program's own flags of type F, or F's defaults where it has none of that type (a cost
  // probe, or another program calling the same launcher).
  template <class F>
  const F& own_as() const {
    static const F defaults{};
    const F* f = dynamic_cast<const F*>(own);
    return f ? *f : defaults;
  }
};

// compute() once per kernel, `extra` (the rest of the question: block size, cluster size, ...)
// and device; later calls return its first answer (one that threw is asked again). The one
// cache of the harness: occupancy and cluster questions are asked here (04-05 add statics).
template <typename Value, typename Kernel, typename Extra, class Compute>
Value once_per_kernel(Kernel kernel, const Extra& extra, Compute&& compute) {
  static std::map<std::tuple<const void*, Extra, int>, Value> asked;
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), extra, device);
  if (auto it = asked.find(key); it != asked.end()) return it->second;
  return asked.emplace(key, compute()).first->second;
}

// Blocks of `kernel` that fit on the GPU at once (SMs x per SM); once per kernel, size, smem, device.
template <typename Kernel>
unsigned resident_blocks(Kernel kernel, int threads_per_block, size_t dynamic_smem = 0) {
  return once_per_kernel<unsigned>(kernel, std::make_pair(threads_per_block, dynamic_smem), [&] {
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads_per_block, dynamic_smem));
    return unsigned(sms) * unsigned(per_sm);
  });
}

// Enough blocks to cover n once (`per_block` elements each), at most `resident`, at least one.
inline unsigned grid_for(size_t n, size_t per_block, unsigned resident) {
  return unsigned(std::max<size_t>(1, std::min<size_t>(resident, (n + per_block - 1) / per_block)));
}

// A cudaLaunchKernelEx configuration with one launch attribute, which the caller fills in
// (cooperative below; a cluster's dimension in step 09's clusters.cuh).
struct LaunchConfig {
  cudaLaunchAttribute attr[1]{};
  cudaLaunchConfig_t config{};
  LaunchConfig(const LaunchConfig&) = delete;  // config.attrs points into this object
  LaunchConfig& operator=(const LaunchConfig&) = delete;
  LaunchConfig(dim3 grid, dim3 block, size_t dynamic_smem, cudaStream_t stream) {
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = dynamic_smem;
    config.stream = stream;
    config.attrs = attr;
    config.numAttrs = 1;
  }
};

// A cooperative launch (all blocks resident at once, or no launch), typed: cudaLaunchKernelEx
// checks the arguments against the kernel's parameters at compile time. Returns the error:
// cudaErrorCooperativeLaunchTooLarge when the grid cannot be co-resident (the caller decides).
template <typename... Params, typename... Args>
cudaError_t launch_cooperative(void (*kernel)(Params...), dim3 grid, dim3 block, size_t dynamic_smem,
                               cudaStream_t stream, Args&&... args) {
  LaunchConfig c(grid, block, dynamic_smem, stream);
  c.attr[0].id = cudaLaunchAttributeCooperative;
  c.attr[0].val.cooperative = 1;
  return cudaLaunchKernelEx(&c.config, kernel, std::forward<Args>(args)...);
}

// The device address of a __device__ variable (an array's: of its first element).
template <typename Symbol>
auto symbol_address(const Symbol& symbol) {
  void* p = nullptr;
  CUDA_CHECK(cudaGetSymbolAddress(&p, symbol));
  return static_cast<std::remove_all_extents_t<Symbol>*>(p);
}

}  // namespace harness

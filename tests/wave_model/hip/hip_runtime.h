// The wavefront model's <hip/hip_runtime.h>: the HIP 5.2 names step 10 uses, on the CPU model
// (wave_model.hpp). Written for this project from HIP 5.2's documented behaviour (the
// formulas of amd_warp_functions.h's shuffles, the ballot's 64-bit result), not copied.
// Compile with __HIPCC__ and __AMDGCN_WAVEFRONT_SIZE (32 or 64) defined, as hipcc's device pass
// defines them for each --offload-arch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "wave_model.hpp"

#if !defined(__AMDGCN_WAVEFRONT_SIZE) || (__AMDGCN_WAVEFRONT_SIZE != 32 && __AMDGCN_WAVEFRONT_SIZE != 64)
#error "the wavefront model needs __AMDGCN_WAVEFRONT_SIZE = 32 or 64"
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// One copy per block: each block of the model runs on a host thread of its own.
#define __shared__ static thread_local

static constexpr int warpSize = __AMDGCN_WAVEFRONT_SIZE;  // HIP 5.2: a constant per target

#define threadIdx (::wave_model::lane().thread_idx)
#define blockIdx (::wave_model::lane().block_idx)
#define blockDim (::wave_model::lane().block_dim)
#define gridDim (::wave_model::lane().grid_dim)

struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(16) float4 { float x, y, z, w; };

// ---- wavefront operations ---------------------------------------------------------------

inline unsigned __lane_id() { return ::wave_model::lane_id(); }

namespace wave_model_detail {
template <typename T>
T bpermute(T var, int src) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "a shuffle moves up to 64 bits");
  uint64_t bits = 0;
  std::memcpy(&bits, &var, sizeof(T));
  bits = ::wave_model::bpermute(bits, src);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}
}  // namespace wave_model_detail

// HIP 5.2: a lane reads within its own segment of `width` lanes; a source past the segment's
// end (down) or before its start (up) leaves the lane its own value.
template <typename T>
T __shfl(T var, int src_lane, int width = warpSize) {
  const int self = int(__lane_id());
  return wave_model_detail::bpermute(var, src_lane + (self & ~(width - 1)));
}
template <typename T>
T __shfl_up(T var, unsigned int lane_delta, int width = warpSize) {
  const int self = int(__lane_id());
  int index = self - int(lane_delta);
  index = (index < (self & ~(width - 1))) ? self : index;
  return wave_model_detail::bpermute(var, index);
}
template <typename T>
T __shfl_down(T var, unsigned int lane_delta, int width = warpSize) {
  const int self = int(__lane_id());
  int index = self + int(lane_delta);
  index = int((self & (width - 1)) + lane_delta) >= width ? self : index;
  return wave_model_detail::bpermute(var, index);
}
template <typename T>
T __shfl_xor(T var, int lane_mask, int width = warpSize) {
  const int self = int(__lane_id());
  int index = self ^ lane_mask;
  index = index >= ((self + width) & ~(width - 1)) ? self : index;
  return wave_model_detail::bpermute(var, index);
}

// 64 bits on every target, wave32 too (the upper 32 are 0 there).
inline unsigned long long __ballot(int predicate) {
  return ::wave_model::ballot(predicate != 0);
}
inline unsigned long long __ballot64(int predicate) {
  return ::wave_model::ballot(predicate != 0);
}
inline int __any(int predicate) { return ::wave_model::ballot(predicate != 0) != 0; }
inline int __all(int predicate) {
  // every active lane: the active lanes are those that vote at all
  const unsigned long long active = ::wave_model::ballot(true);
  return ::wave_model::ballot(predicate != 0) == active;
}
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(unsigned int x) { return __builtin_ffs(int(x)); }
inline int __ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }

inline void __syncthreads() { ::wave_model::syncthreads(); }

// ---- atomics (host atomics: blocks run on host threads) ----------------------------------
template <typename T>
T wave_model_atomic_add(T* address, T value) {
  if constexpr (std::is_integral<T>::value) {
    return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
  } else {
    T old, next;
    __atomic_load(address, &old, __ATOMIC_RELAXED);
    do next = old + value;
    while (!__atomic_compare_exchange(address, &old, &next, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
  }
}
inline unsigned atomicAdd(unsigned* address, unsigned value) { return wave_model_atomic_add(address, value); }
inline int atomicAdd(int* address, int value) { return wave_model_atomic_add(address, value); }
inline unsigned long long atomicAdd(unsigned long long* address, unsigned long long value) { return wave_model_atomic_add(address, value); }
inline float atomicAdd(float* address, float value) { return wave_model_atomic_add(address, value); }
inline double atomicAdd(double* address, double value) { return wave_model_atomic_add(address, value); }

// ---- the runtime: launches run on the model at once (streams are ignored) ----------------
enum hipError_t {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorInvalidConfiguration = 9,
  hipErrorLaunchFailure = 719,
  hipErrorCooperativeLaunchTooLarge = 720,
};
using hipStream_t = struct ihipStream_t*;
enum hipDeviceAttribute_t { hipDeviceAttributeMultiprocessorCount = 63, hipDeviceAttributeCooperativeLaunch = 42 };

namespace wave_model_detail {
inline hipError_t& last_error() {
  static thread_local hipError_t e = hipSuccess;
  return e;
}
template <typename... A, typename... Args>
hipError_t launch(void (*kernel)(A...), dim3 grid, dim3 block, bool cooperative, Args&&... args) {
  const bool ok = ::wave_model::run_grid(grid, block, unsigned(warpSize), cooperative, [&] { kernel(args...); });
  if (ok) return hipSuccess;
  return cooperative && ::wave_model::resident_blocks(int(block.x * block.y * block.z)) > 0 ? hipErrorCooperativeLaunchTooLarge
                                                                                              : hipErrorInvalidConfiguration;
}
template <typename... A, size_t... I>
hipError_t launch_void_args(void (*kernel)(A...), dim3 grid, dim3 block, void** args, std::index_sequence<I...>) {
  return launch(kernel, grid, block, true, *static_cast<std::remove_reference_t<A>*>(args[I])...);
}
}  // namespace wave_model_detail

namespace wave_model {
// What `kernel<<<grid, block, shared, stream>>>(args...)` becomes in the model's copy of the
// source (prepare_source.py rewrites the chevrons and nothing else).
template <typename... A>
struct Launch {
  void (*kernel)(A...);
  dim3 grid, block;
  template <typename... Args>
  void operator()(Args&&... args) const {
    wave_model_detail::last_error() = wave_model_detail::launch(kernel, grid, block, false, static_cast<A>(args)...);
  }
};
template <typename... A>
Launch<A...> launch(void (*kernel)(A...), dim3 grid, dim3 block, size_t = 0, hipStream_t = nullptr) {
  return {kernel, grid, block};
}
}  // namespace wave_model

inline hipError_t hipGetLastError() {
  const hipError_t e = wave_model_detail::last_error();
  wave_model_detail::last_error() = hipSuccess;
  return e;
}
inline const char* hipGetErrorString(hipError_t e) {
  switch (e) {
    case hipSuccess: return "hipSuccess";
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorInvalidConfiguration: return "hipErrorInvalidConfiguration";
    case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
    case hipErrorCooperativeLaunchTooLarge: return "hipErrorCooperativeLaunchTooLarge";
  }
  return "unknown hipError_t";
}
inline hipError_t hipMemsetAsync(void* dst, int value, size_t bytes, hipStream_t = nullptr) {
  std::memset(dst, value, bytes);
  return hipSuccess;
}
inline hipError_t hipGetDevice(int* device) {
  *device = 0;
  return hipSuccess;
}
inline hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attribute, int device) {
  if (device != 0) return hipErrorInvalidValue;
  *value = attribute == hipDeviceAttributeMultiprocessorCount ? ::wave_model::device().compute_units : 1;
  return hipSuccess;
}
template <typename F>
hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, F, int threads, size_t shared = 0) {
  if (shared != 0 || threads <= 0) return hipErrorInvalidValue;
  *blocks = ::wave_model::resident_blocks(threads) / ::wave_model::device().compute_units;
  return hipSuccess;
}
// HIP 5.2's void** form: args holds the addresses of the kernel's arguments, in order.
template <typename... A>
hipError_t hipLaunchCooperativeKernel(void (*kernel)(A...), dim3 grid, dim3 block, void** args, unsigned shared = 0,
                                      hipStream_t = nullptr) {
  if (shared != 0) return hipErrorInvalidValue;
  return wave_model_detail::launch_void_args(kernel, grid, block, args, std::index_sequence_for<A...>{});
}

// The filter's predicate, Keep, and CUB's two calls on it (compiled in filter_cub.cu). No
// kernels: any file may include it.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "reference.hpp"  // HARNESS_HD

namespace harness {

// The predicate, the same object on host, in the variants and in CUB.
template <typename T> struct Keep;
template <> struct Keep<unsigned> {
  uint64_t limit;  // 64-bit: 100% is 2^32, which passes every 32-bit value
  HARNESS_HD bool operator()(unsigned x) const { return uint64_t(x) < limit; }
  static Keep for_rate(double percent) { return {uint64_t(std::ldexp(percent / 100.0, 32))}; }
};
template <> struct Keep<float> {
  float limit;
  HARNESS_HD bool operator()(float x) const { return x < limit; }
  static Keep for_rate(double percent) { return {float(-1.0 + 2.0 * percent / 100.0)}; }
};

// CUB's two calls, compiled in their own file (filter_cub.cu), in parallel with the program's
// code. Both follow CUB's two-phase protocol (temp == nullptr: set `bytes` and return); 64-bit
// sizes.
cudaError_t cub_sort_keys(void* temp, size_t& bytes, const uint32_t* keys, uint32_t* out, size_t count, cudaStream_t s);
template <typename T>
cudaError_t cub_select_if(void* temp, size_t& bytes, const T* in, T* out, unsigned long long* count, size_t n,
                          Keep<T> keep, cudaStream_t s);

}  // namespace harness

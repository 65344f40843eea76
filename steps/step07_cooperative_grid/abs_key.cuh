// The normalization's key: max|x| is found as the max of 32-bit keys ordered like |x|, and
// CUB's baseline for it (compiled in normalize_cub.cu). No kernels: any file may include it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "reference.hpp"  // HARNESS_HD

namespace harness {

// max|x| is taken over 32-bit unsigned keys that are ordered like |x|:
//  - int: the harness's full-range unsigned data read as int32; the key is |x| computed in
//    unsigned (0u - x), so |INT_MIN| = 2^31 fits and nothing overflows;
//  - float: the bit pattern with the sign bit cleared. Non-negative IEEE floats read as
//    unsigned are ordered like their values (+inf above every finite value; NaN above +inf,
//    but the input has none), so integer max (atomicMax, redux.sync.max.u32) does the job.
HARNESS_HD inline uint32_t float_bits(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
#endif
}
HARNESS_HD inline unsigned abs_key(unsigned x) { return int32_t(x) < 0 ? 0u - x : x; }
HARNESS_HD inline unsigned abs_key(float x) { return float_bits(x) & 0x7FFFFFFFu; }

template <typename T>
struct AbsKey {  // the functor form, for CUB's transform iterator
  HARNESS_HD unsigned operator()(T x) const { return abs_key(x); }
};

// CUB's DeviceReduce::Max of abs_key over in[0, n) into *key (64-bit size above INT32_MAX),
// CUB's two-phase protocol (temp == nullptr: set `bytes` and return). Compiled in its own file
// (normalize_cub.cu), in parallel with the program's code.
template <typename T>
cudaError_t cub_max_abs_key(void* temp, size_t& bytes, const T* in, size_t n, unsigned* key, cudaStream_t s);

}  // namespace harness

// CUB's baselines, compiled once for every program (see cub_baselines.hpp). Two files, so that
// the two compile in parallel: this one DeviceReduce::Sum, cub_segmented_sum.cu the other.
#include "cub_baselines.hpp"

#include <cub/device/device_reduce.cuh>

namespace harness::cub_baseline {

template <typename T>
cudaError_t sum(void* temp, size_t& bytes, const T* in, T* out, size_t n, cudaStream_t stream) {
  if (n <= size_t(INT32_MAX)) return cub::DeviceReduce::Sum(temp, bytes, in, out, int(n), stream);
  return cub::DeviceReduce::Sum(temp, bytes, in, out, int64_t(n), stream);
}

// The ladder's element types: "int" (summed modulo 2^32 as unsigned) and float.
template cudaError_t sum<unsigned>(void*, size_t&, const unsigned*, unsigned*, size_t, cudaStream_t);
template cudaError_t sum<float>(void*, size_t&, const float*, float*, size_t, cudaStream_t);

}  // namespace harness::cub_baseline

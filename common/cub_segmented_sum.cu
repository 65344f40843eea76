// CUB's segmented baseline, compiled once for every program (see cub_baselines.hpp).
#include "cub_baselines.hpp"

#include <cub/device/device_segmented_reduce.cuh>

namespace harness::cub_baseline {

template <typename T>
cudaError_t segmented_sum(void* temp, size_t& bytes, const T* in, T* out, size_t rows, const void* offsets,
                          bool wide, cudaStream_t stream) {
  if (wide) {
    const int64_t* o = static_cast<const int64_t*>(offsets);
    return cub::DeviceSegmentedReduce::Sum(temp, bytes, in, out, int64_t(rows), o, o + 1, stream);
  }
  const int* o = static_cast<const int*>(offsets);
  return cub::DeviceSegmentedReduce::Sum(temp, bytes, in, out, int64_t(rows), o, o + 1, stream);
}

// The ladder's element types: "int" (summed modulo 2^32 as unsigned) and float.
template cudaError_t segmented_sum<unsigned>(void*, size_t&, const unsigned*, unsigned*, size_t, const void*, bool,
                                             cudaStream_t);
template cudaError_t segmented_sum<float>(void*, size_t&, const float*, float*, size_t, const void*, bool,
                                          cudaStream_t);

}  // namespace harness::cub_baseline

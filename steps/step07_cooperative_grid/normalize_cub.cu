// CUB's baseline for the normalization (declared in abs_key.cuh): compiled here, in a file
// of its own, so that it compiles while the program's own code does. Not required reading.
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_reduce.cuh>

#include "abs_key.cuh"

namespace harness {

// A thrust::transform_iterator applies abs_key as CUB loads each element.
template <typename T>
cudaError_t cub_max_abs_key(void* temp, size_t& bytes, const T* in, size_t n, unsigned* key, cudaStream_t s) {
  auto keys = thrust::make_transform_iterator(in, AbsKey<T>{});
  if (n <= size_t(INT32_MAX)) return cub::DeviceReduce::Max(temp, bytes, keys, key, int(n), s);
  return cub::DeviceReduce::Max(temp, bytes, keys, key, int64_t(n), s);
}
template cudaError_t cub_max_abs_key<unsigned>(void*, size_t&, const unsigned*, size_t, unsigned*, cudaStream_t);
template cudaError_t cub_max_abs_key<float>(void*, size_t&, const float*, size_t, unsigned*, cudaStream_t);

}  // namespace harness

// The filter's two CUB calls (declared in keep.cuh): compiled here, in a file of their own,
// so that they compile while the program's own code does. Not required reading.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include "keep.cuh"

namespace harness {

// Sorts `count` 32-bit keys (all 32 bits): the filter's check compares sorted outputs.
cudaError_t cub_sort_keys(void* temp, size_t& bytes, const uint32_t* keys, uint32_t* out, size_t count, cudaStream_t s) {
  return cub::DeviceRadixSort::SortKeys(temp, bytes, keys, out, int64_t(count), 0, 32, s);
}

// CUB's baseline filter: the elements of in[0, n) that pass `keep`, to out; their number to *count.
template <typename T>
cudaError_t cub_select_if(void* temp, size_t& bytes, const T* in, T* out, unsigned long long* count, size_t n,
                          Keep<T> keep, cudaStream_t s) {
  return cub::DeviceSelect::If(temp, bytes, in, out, count, int64_t(n), keep, s);
}
template cudaError_t cub_select_if<unsigned>(void*, size_t&, const unsigned*, unsigned*, unsigned long long*, size_t,
                                             Keep<unsigned>, cudaStream_t);
template cudaError_t cub_select_if<float>(void*, size_t&, const float*, float*, unsigned long long*, size_t, Keep<float>,
                                          cudaStream_t);

}  // namespace harness

#pragma once
// CUB's answers to the ladder's two problems, the baselines every program times itself against:
// cub::DeviceReduce::Sum (an array) and cub::DeviceSegmentedReduce::Sum (a sum per row). They
// are compiled once (cub_baselines.cu, cub_segmented_sum.cu) and linked into every program:
// CUB's templates are the slowest part of compiling a step, and no step needs to see them.
// Not required reading.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace harness::cub_baseline {

// cub::DeviceReduce::Sum of in[0, n) into *out. Called first with temp == nullptr, it sets
// `bytes` to the scratch it needs (CUB's two-phase protocol); 32-bit offsets up to INT32_MAX.
template <typename T>
cudaError_t sum(void* temp, size_t& bytes, const T* in, T* out, size_t n, cudaStream_t stream);

// cub::DeviceSegmentedReduce::Sum of `rows` rows whose bounds are offsets[r], offsets[r + 1]:
// int offsets, or int64_t ones when `wide` (a matrix past 2^31 elements).
template <typename T>
cudaError_t segmented_sum(void* temp, size_t& bytes, const T* in, T* out, size_t rows, const void* offsets,
                          bool wide, cudaStream_t stream);

}  // namespace harness::cub_baseline

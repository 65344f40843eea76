// The segmented (batched) sum: a rows x cols matrix, row-major and contiguous, one sum per
// row. Element i of the matrix is input_value(seed, i), so row r holds elements
// r*cols .. r*cols + cols-1. For each --n and --cols: rows = max(1, n / cols) and the matrix
// has rows x cols elements (that is the n printed; it equals --n when cols divides it).
// Every row is verified: exact for ints; for floats within float_tolerance(cols, that row's
// sum of squares). CUB's DeviceSegmentedReduce::Sum is the baseline, its offsets array and
// temporary storage made outside timing. GB/s counts rows x cols x 4 bytes read and rows x 4
// written; the floor moves exactly that (reads the matrix, writes `rows` elements: variant
// "read_write").
#pragma once

#include <cub/device/device_segmented_reduce.cuh>
#include <cstring>

#include "problem.cuh"

namespace harness {

// in: rows x cols elements; out: rows sums.
template <typename T>
using SegmentedLauncher = std::function<void(const T* in, size_t rows, size_t cols, T* out, const Launch& ctx)>;

struct SegmentedVariant : TypedLauncher<SegmentedLauncher> {
  std::string name, about;
  size_t max_cols;  // run only on rows up to this long (0: any), e.g. one thread per row
  size_t min_cols;  // run only on rows at least this long (0: any), e.g. a cluster per row
  template <class F>
  SegmentedVariant(std::string name_, std::string about_, F f, size_t max_cols_ = 0, size_t min_cols_ = 0)
      : TypedLauncher(f), name(std::move(name_)), about(std::move(about_)), max_cols(max_cols_), min_cols(min_cols_) {}
};

template <typename O>
__global__ void row_offsets_kernel(O* offsets, size_t rows, size_t cols) {
  for (size_t r = blockIdx.x * size_t(blockDim.x) + threadIdx.x; r <= rows; r += size_t(gridDim.x) * blockDim.x)
    offsets[r] = O(r * cols);
}

// CUB's segmented sum; offsets[r] = r * cols (rows + 1 of them: begin = offsets, end = offsets + 1),
// 32-bit while the matrix has fewer than 2^31 elements.
template <typename T>
class CubSegmentedSum {
 public:
  ~CubSegmentedSum() {
    cudaFree(temp_);
    cudaFree(offsets_);
  }
  std::function<void()> prepare(const T* in, size_t rows, size_t cols, T* out, cudaStream_t s) {
    const bool wide = rows * cols > size_t(INT32_MAX);
    grow_buffer(offsets_, offsets_bytes_, (rows + 1) * (wide ? 8 : 4));
    const unsigned blocks = unsigned(std::min<size_t>(4096, rows / 256 + 1));
    if (wide) row_offsets_kernel<<<blocks, 256, 0, s>>>(static_cast<int64_t*>(offsets_), rows, cols);
    else row_offsets_kernel<<<blocks, 256, 0, s>>>(static_cast<int*>(offsets_), rows, cols);
    CUDA_CHECK_LAUNCH();
    size_t need = 0;
    call(nullptr, need, offsets_, in, rows, out, wide, s);
    grow_buffer(temp_, temp_bytes_, need);
    return [=, temp = temp_, offsets = offsets_] { size_t b = need; call(temp, b, offsets, in, rows, out, wide, s); };
  }

 private:
  static void call(void* temp, size_t& bytes, const void* offsets, const T* in, size_t rows, T* out, bool wide,
                   cudaStream_t s) {
    if (wide) {
      const int64_t* o = static_cast<const int64_t*>(offsets);
      CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(temp, bytes, in, out, int64_t(rows), o, o + 1, s));
    } else {
      const int* o = static_cast<const int*>(offsets);
      CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(temp, bytes, in, out, int64_t(rows), o, o + 1, s));
    }
  }
  void* temp_ = nullptr;
  void* offsets_ = nullptr;
  size_t temp_bytes_ = 0, offsets_bytes_ = 0;
};

// Checks all rows of `got` (rows + 1 values: the one past the last row must still be the
// poison, all bits set) against sums the host recomputes from the generator, spread over
// its cores: a row each when there are many rows, pieces of each row when there are few.
// No reference is stored. The detail names the first wrong row.
template <typename T>
Verdict verify_rows(const std::vector<T>& got, uint64_t seed, size_t rows, size_t cols) {
  struct Tally {
    size_t wrong = 0, first = 0;
    Verdict first_verdict;
    double worst = 0;  // float: the largest err / tol of a right row
  };
  // One row against its exact sum: the harness's rule, with the row's length as n.
  auto check = [&](size_t r, const Reference& partial, Tally& t) {
    const Reference ref = finished<T>(partial);
    const Verdict v = verify_result(got[r], ref, cols);
    if constexpr (!std::is_integral_v<T>) {
      const double tol = float_tolerance(cols, ref.sum_squares);  // 0 for a row of zeros: exact then
      if (v.ok && tol > 0) t.worst = std::max(t.worst, std::fabs(double(got[r]) - ref.sum) / tol);
    }
    if (!v.ok && t.wrong++ == 0) {
      t.first = r;
      t.first_verdict = v;
    }
  };
  std::vector<Tally> tally(kHostWorkers);
  if (rows >= kHostWorkers) {
    on_host_cores(rows, [&](size_t begin, size_t end, unsigned w) {
      for (size_t r = begin; r < end; ++r) check(r, partial_reference<T>(seed, r * cols, (r + 1) * cols), tally[w]);
    }, cols);
  } else {
    for (size_t r = 0; r < rows; ++r) {
      std::vector<Reference> parts(kHostWorkers);
      on_host_cores(cols, [&](size_t begin, size_t end, unsigned w) {
        parts[w] = partial_reference<T>(seed, r * cols + begin, r * cols + end);
      });
      Reference row;
      for (const auto& p : parts) add_partial(row, p);
      check(r, row, tally[0]);
    }
  }
  size_t wrong = 0;
  const Tally* first = nullptr;
  double worst = 0;
  for (const auto& t : tally) {
    wrong += t.wrong;
    worst = std::max(worst, t.worst);
    if (t.wrong && !first) first = &t;
  }
  T poison;
  std::memset(&poison, 0xFF, sizeof poison);
  Verdict v;
  char buf[120];
  if (first) {
    std::snprintf(buf, sizeof buf, "%zu of %zu rows wrong; row %zu: ", wrong, rows, first->first);
    v.detail = buf + first->first_verdict.detail;
  } else if (std::memcmp(&got[rows], &poison, sizeof(T)) != 0) {
    v.detail = "every row right, but the slot past the last row was written";
  } else {
    v.ok = true;
    if constexpr (std::is_integral_v<T>) std::snprintf(buf, sizeof buf, "exact, %zu rows", rows);
    else std::snprintf(buf, sizeof buf, "%zu rows, largest err/tol %.2f", rows, worst);
    v.detail = buf;
  }
  return v;
}

template <typename T>
bool run_segmented_dtype(const char* dtype, const Options& opt, const DeviceInfo& dev, Bench& bench, const char* step,
                         const std::vector<const SegmentedVariant*>& variants, void* d_in_raw, T* d_out) {
  bool all_ok = true;
  CubSegmentedSum<T> cub;
  const cudaStream_t s = bench.stream();
  const Launch ctx{s, nullptr, 0};
  for (size_t n : opt.sizes) {
    for (size_t cols : opt.cols) {
      const size_t rows = std::max<size_t>(1, n / cols), total = rows * cols;
      const std::string shape = "cols=" + std::to_string(cols);
      for (size_t offset : opt.offsets) {
        const T* in = place_input<T>(d_in_raw, total, offset, opt.seed, s);
        // One verified run on a poisoned output (rows + 1 slots: the extra one catches a write past the end).
        auto verified = [&](const std::function<void()>& launch) {
          CUDA_CHECK(cudaMemsetAsync(d_out, 0xFF, (rows + 1) * sizeof(T), s));
          launch();
          std::vector<T> got(rows + 1);
          CUDA_CHECK(cudaMemcpyAsync(got.data(), d_out, (rows + 1) * sizeof(T), cudaMemcpyDeviceToHost, s));
          CUDA_CHECK(cudaStreamSynchronize(s));
          return verify_rows(got, opt.seed, rows, cols);
        };
        std::vector<Contender> contenders;
        auto cub_sum = cub.prepare(in, rows, cols, d_out, s);
        const Verdict cv = verified(cub_sum);
        all_ok &= cv.ok;
        contenders.push_back({"cub", "cub", cub_sum, check_text(cv), cv.ok});
        if (!opt.check_only) contenders.push_back(floor_contender("read_write", in, total, d_out, rows, s));
        for (const SegmentedVariant* var : variants) {
          if (var->max_cols && cols > var->max_cols) continue;  // not meant for rows this long (see --help)
          if (cols < var->min_cols) continue;                    // nor for rows this short
          auto launch = [var, in, rows, cols, d_out, ctx] { var->launcher<T>()(in, rows, cols, d_out, ctx); };
          const Verdict v = verified(launch);
          all_ok &= v.ok;
          contenders.push_back({step, var->name, launch, check_text(v), v.ok});
        }
        finish(opt, bench, contenders, dtype, total, offset, total * sizeof(T) + rows * sizeof(T), shape);
      }
    }
  }
  return all_ok;
}

// --problem segmented: the variants, and the runner that allocates for the largest matrix.
inline Problem segmented_problem(const char* step, std::vector<SegmentedVariant> variants) {
  Problem p;
  p.name = "segmented";
  p.about = "a rows x cols matrix, one sum per row; --n elements, --cols per row";
  for (const auto& v : variants)
    p.variants.push_back({v.name, v.about + (v.max_cols ? " (rows up to " + std::to_string(v.max_cols) + ")" : "") +
                                      (v.min_cols ? " (rows from " + std::to_string(v.min_cols) + ")" : "")});
  p.run = [step, variants](const Options& opt, const DeviceInfo& dev, Bench& bench, const std::vector<std::string>& chosen) {
    const std::vector<const SegmentedVariant*> run = variants_named(variants, chosen);
    size_t max_total = 0, max_rows = 0;
    for (size_t n : opt.sizes)
      for (size_t cols : opt.cols) {
        const size_t rows = std::max<size_t>(1, n / cols);
        max_total = std::max(max_total, rows * cols);
        max_rows = std::max(max_rows, rows);
      }
    const size_t in_bytes = input_buffer_bytes(max_total), out_bytes = (max_rows + 64) * 4;
    // CUB's offsets (rows + 1, up to 8 bytes each) and temporary storage (small) come on top.
    require_memory(in_bytes + out_bytes + (max_rows + 1) * 8 + (size_t(64) << 20), "a matrix of " + std::to_string(max_total) + " elements");
    void* d_in = nullptr;
    void* d_out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, in_bytes));
    CUDA_CHECK(cudaMalloc(&d_out, out_bytes));
    const bool ok = for_each_dtype(opt, [&](auto zero, const char* dtype) {
      using T = decltype(zero);
      return run_segmented_dtype<T>(dtype, opt, dev, bench, step, run, d_in, static_cast<T*>(d_out));
    });
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return ok;
  };
  return p;
}

}  // namespace harness

// The segmented (batched) sum: a rows x cols matrix, row-major and contiguous, one sum per
// row; element i is input_value(seed, i). For each --n and --cols: rows = max(1, n / cols),
// and the matrix has rows x cols elements (the n printed; --n when cols divides it).
// Every row is verified: exact for ints; for floats within float_tolerance(cols, that row's
// sum of squares). CUB's DeviceSegmentedReduce::Sum is the baseline, its offsets array and
// temporary storage made outside timing. GB/s counts rows x cols x 4 bytes read and rows x 4
// written; the floor moves exactly that (reads the matrix, writes `rows` elements: variant
// "read_write").
#pragma once

#include <cstring>

#include "run_step.cuh"

namespace harness {

// in: rows x cols elements; out: rows sums.
template <typename T>
using SegmentedLauncher = std::function<void(const T* in, size_t rows, size_t cols, T* out, const Launch& ctx)>;

// The row lengths a variant runs on, filled by field name (0: no bound): rows_up_to(64) for a
// thread per row; a program may set min_cols too (step 09: a cluster per row from 256 on).
struct RowLengths {
  size_t min_cols = 0, max_cols = 0;
};
inline RowLengths rows_up_to(size_t cols) {
  RowLengths r;
  r.max_cols = cols;
  return r;
}

struct SegmentedVariant : TypedLauncher<SegmentedLauncher> {
  std::string name, about;
  RowLengths runs_on;
  template <class F>
  SegmentedVariant(std::string name_, std::string about_, F f, RowLengths runs_on_ = {})
      : TypedLauncher(f), name(std::move(name_)), about(std::move(about_)), runs_on(runs_on_) {}
};

template <typename O>
__global__ void row_offsets_kernel(O* offsets, size_t rows, size_t cols) {
  for (size_t r = blockIdx.x * size_t(blockDim.x) + threadIdx.x; r <= rows; r += size_t(gridDim.x) * blockDim.x)
    offsets[r] = O(r * cols);
}

// CUB's segmented sum; offsets[r] = r * cols (rows + 1: begin = offsets, end = offsets + 1), 32-bit below 2^31.
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
    CUDA_CHECK(cub_baseline::segmented_sum(temp, bytes, in, out, rows, offsets, wide, s));  // DeviceSegmentedReduce
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

// The segmented problem: the rows x cols matrix of every --n and --cols, its variants bound to it.
class Segmented : public Problem {
 public:
  explicit Segmented(std::vector<SegmentedVariant> variants) : variants_(std::move(variants)) {
    names.problem = "segmented";
    names.about = "a rows x cols matrix, one sum per row; --n elements, --cols per row";
    for (const auto& v : variants_) {
      const auto [lo, hi] = v.runs_on;
      names.variants.push_back({v.name, v.about + (hi ? " (rows up to " + std::to_string(hi) + ")" : "") +
                                            (lo ? " (rows from " + std::to_string(lo) + ")" : "")});
    }
  }
  ~Segmented() override {
    cudaFree(in_);
    cudaFree(out_);
  }
  size_t shape_count(const Options& opt) const override { return opt.cols.size(); }
  size_t bytes_needed(const Options& opt, std::string& what) const override {
    const auto [total, rows] = largest(opt);
    what = "a matrix of " + std::to_string(total) + " elements";
    // CUB's offsets (rows + 1, up to 8 bytes each) and temporary storage (small) come on top.
    return input_buffer_bytes(total) + (rows + 64) * 4 + (rows + 1) * 8 + (size_t(64) << 20);
  }
  void allocate(const Options& opt) override {
    opt_ = opt;
    const auto [total, rows] = largest(opt);
    CUDA_CHECK(cudaMalloc(&in_, input_buffer_bytes(total)));
    CUDA_CHECK(cudaMalloc(&out_, (rows + 64) * 4));
  }
  Case make_case(const std::string& dtype, size_t n, size_t shape, size_t offset, const Launch& ctx) override {
    return dtype == "int" ? make<unsigned>(n, opt_.cols[shape], offset, ctx) : make<float>(n, opt_.cols[shape], offset, ctx);
  }

 private:
  // The largest matrix (elements) and the most rows of any --n and --cols.
  static std::pair<size_t, size_t> largest(const Options& opt) {
    size_t total = 0, most_rows = 0;
    for (size_t n : opt.sizes)
      for (size_t cols : opt.cols) {
        const size_t rows = std::max<size_t>(1, n / cols);
        total = std::max(total, rows * cols);
        most_rows = std::max(most_rows, rows);
      }
    return {total, most_rows};
  }
  template <typename T>
  Case make(size_t n, size_t cols, size_t offset, const Launch& ctx) {
    const size_t rows = std::max<size_t>(1, n / cols), total = rows * cols;
    const cudaStream_t s = ctx.stream;
    const T* in = place_input<T>(in_, total, offset, opt_.seed, s);
    T* out = static_cast<T*>(out_);
    Case c;
    c.n = total;
    c.shape = "cols=" + std::to_string(cols);
    c.bytes = total * sizeof(T) + rows * sizeof(T);
    // One run on a poisoned output (rows + 1 slots: the extra one catches a write past the end).
    c.poison = [=] { CUDA_CHECK(cudaMemsetAsync(out, 0xFF, (rows + 1) * sizeof(T), s)); };
    c.verify = [=, seed = opt_.seed] {
      std::vector<T> got(rows + 1);
      CUDA_CHECK(cudaMemcpyAsync(got.data(), out, (rows + 1) * sizeof(T), cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      return verify_rows(got, seed, rows, cols);
    };
    if constexpr (std::is_same_v<T, unsigned>) c.cub = cub_int_.prepare(in, rows, cols, out, s);
    else c.cub = cub_float_.prepare(in, rows, cols, out, s);
    c.floor = floor_contender("read_write", in, total, out, rows, s);
    for (const SegmentedVariant& v : variants_) {
      const VariantName* name = chosen_name(v.name);
      const auto [lo, hi] = v.runs_on;
      if (!name || (hi && cols > hi) || cols < lo) continue;  // see --help
      c.variants.push_back({name, [&v, in, rows, cols, out, ctx] { v.launcher<T>()(in, rows, cols, out, ctx); }});
    }
    return c;
  }
  std::vector<SegmentedVariant> variants_;
  Options opt_;
  void *in_ = nullptr, *out_ = nullptr;
  CubSegmentedSum<unsigned> cub_int_;
  CubSegmentedSum<float> cub_float_;
};

inline std::shared_ptr<Problem> segmented_problem(std::vector<SegmentedVariant> variants) {
  return std::make_shared<Segmented>(std::move(variants));
}

}  // namespace harness

// The filter (stream compaction): keep the elements x of the input that pass a threshold
// chosen so that --pass-rate P percent of them pass: x < P% of 2^32 for ints (full-range
// data), x < -1 + 2 P% for floats (uniform in [-1, 1)). The kept elements go to out[0..count)
// in any order. Verified: count exact, the slot after the last kept element untouched, and
// out[0..count) exactly the multiset of passing elements: the GPU output is sorted on the
// GPU (outside timing) and compared bit for bit with the host's own sorted list, because the
// order of an atomic compaction changes from run to run. CUB's DeviceSelect::If is the
// baseline. GB/s counts n x 4 bytes read and count x 4 written; the floor moves exactly that
// (reads the n elements, writes `count` of them: variant "read_write", a copy at 100%).
#pragma once

#include <cstring>

#include "keep.cuh"
#include "run_step.cuh"

namespace harness {

// The predicate (Keep) and CUB's two calls on it: keep.cuh.

// in: n elements; out: room for n; count: where the number kept goes (the launcher zeroes it
// if it needs to, inside the timed launch, as steps 03-05 zero their output).
template <typename T>
using FilterLauncher =
    std::function<void(const T* in, size_t n, Keep<T> keep, T* out, unsigned long long* count, const Launch& ctx)>;

struct FilterVariant : TypedLauncher<FilterLauncher> {
  std::string name, about;
  template <class F>
  FilterVariant(std::string name_, std::string about_, F f) : TypedLauncher(f), name(std::move(name_)), about(std::move(about_)) {}
};

// The bit patterns of the elements that pass, sorted: made in pieces on the host's cores,
// each sorted, then merged pairwise.
template <typename T>
std::vector<uint32_t> expected_kept(uint64_t seed, size_t n, Keep<T> keep) {
  std::vector<std::vector<uint32_t>> part(kHostWorkers);
  on_host_cores(n, [&](size_t begin, size_t end, unsigned w) {
    for (size_t i = begin; i < end; ++i) {
      const T x = input_value<T>(seed, i);
      if (keep(x)) {
        uint32_t bits;
        std::memcpy(&bits, &x, 4);
        part[w].push_back(bits);
      }
    }
    std::sort(part[w].begin(), part[w].end());
  });
  std::vector<std::thread> pool;
  while (part.size() > 1) {
    std::vector<std::vector<uint32_t>> merged((part.size() + 1) / 2);
    pool.clear();
    for (size_t k = 0; k < merged.size(); ++k) {
      pool.emplace_back([&, k] {
        if (2 * k + 1 == part.size()) {
          merged[k] = std::move(part[2 * k]);
          return;
        }
        const auto &a = part[2 * k], &b = part[2 * k + 1];
        merged[k].resize(a.size() + b.size());
        std::merge(a.begin(), a.end(), b.begin(), b.end(), merged[k].begin());
      });
    }
    for (auto& t : pool) t.join();
    part = std::move(merged);
  }
  return std::move(part[0]);
}

// The filter's rule: the count exact, the slot after the last kept element untouched (still
// all bits set: `after`), and the output, sorted (order may differ: sorted_output() gives
// it, asked for only when the count is right), equal to the host's sorted list bit for bit.
inline Verdict check_kept(const std::vector<uint32_t>& expected, unsigned long long count, uint32_t after,
                          const std::function<std::vector<uint32_t>()>& sorted_output) {
  Verdict v;
  if (count != expected.size())
    v.detail = "count: expected " + std::to_string(expected.size()) + " got " + std::to_string(count);
  else if (after != 0xFFFFFFFFu)
    v.detail = "the slot after the last kept element was written";
  else if (sorted_output() != expected)
    v.detail = "count right (" + std::to_string(count) + ") but not the passing elements";
  else {
    v.ok = true;
    v.detail = std::to_string(count) + " kept, the passing elements exactly";
  }
  return v;
}

// Sorts out[0..count) as 32-bit keys into `sorted` (GPU, outside timing), temp storage kept.
class GpuSort {
 public:
  ~GpuSort() {
    cudaFree(temp_);
    cudaFree(sorted_);
  }
  std::vector<uint32_t> sorted_copy(const void* d_vals, size_t count, cudaStream_t s) {
    std::vector<uint32_t> host(count);
    if (count == 0) return host;
    grow_buffer(sorted_, sorted_bytes_, count * 4);
    size_t need = 0;
    const uint32_t* keys = static_cast<const uint32_t*>(d_vals);
    uint32_t* out = static_cast<uint32_t*>(sorted_);
    CUDA_CHECK(cub_sort_keys(nullptr, need, keys, out, count, s));
    grow_buffer(temp_, temp_bytes_, need);
    CUDA_CHECK(cub_sort_keys(temp_, need, keys, out, count, s));
    CUDA_CHECK(cudaMemcpyAsync(host.data(), out, count * 4, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return host;
  }

 private:
  void *temp_ = nullptr, *sorted_ = nullptr;
  size_t temp_bytes_ = 0, sorted_bytes_ = 0;
};

// CUB's DeviceSelect::If with the same predicate; temporary storage allocated here, outside timing.
// CCCL 3.0 (CUDA 13.0) hits an illegal address when one call selects close to INT_MAX items or
// more (seen here at n = 2^31+5, 100% kept; NVIDIA/cccl issue 6584, fixed by pull request 6641
// after this release). So above 2^30 elements the baseline calls it once per 2^30-element slice,
// each slice's output after the previous one's, reading each count back: one host round trip
// per 4 GiB read, inside the timed call.
template <typename T>
class CubSelect {
 public:
  static constexpr size_t kSlice = size_t(1) << 30;
  ~CubSelect() { cudaFree(temp_); }
  std::function<void()> prepare(const T* in, size_t n, Keep<T> keep, T* out, unsigned long long* count, cudaStream_t s) {
    size_t need = 0;  // the largest call's; a shorter slice needs no more
    CUDA_CHECK(cub_select_if(nullptr, need, in, out, count, std::min(n, kSlice), keep, s));
    grow_buffer(temp_, bytes_, need);
    return [=, temp = temp_] {
      unsigned long long kept = 0;
      for (size_t begin = 0; begin < n || begin == 0; begin += kSlice) {
        size_t b = need;
        const size_t len = std::min(kSlice, n - begin);
        CUDA_CHECK(cub_select_if(temp, b, in + begin, out + kept, count, len, keep, s));
        if (n <= kSlice) return;  // one call: its count is the answer
        unsigned long long slice_kept = 0;
        CUDA_CHECK(cudaMemcpyAsync(&slice_kept, count, sizeof slice_kept, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        kept += slice_kept;
      }
      CUDA_CHECK(cudaMemcpyAsync(count, &kept, sizeof kept, cudaMemcpyHostToDevice, s));
      CUDA_CHECK(cudaStreamSynchronize(s));  // `kept` lives on this stack frame
    };
  }

 private:
  void* temp_ = nullptr;
  size_t bytes_ = 0;
};

// A percentage from 0 to 100, decimals allowed: "50", "0.5".
inline double parse_percent(const std::string& text, const std::string& flag) {
  size_t used = 0;
  double v = -1;
  try {
    if (!text.empty() && text[0] >= '0' && text[0] <= '9') v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(v >= 0 && v <= 100))
    throw UsageError(flag + ": expected a percentage from 0 to 100 (got '" + text + "')");
  return v;
}

// The filter problem: every --n at every --pass-rate, the variants bound to it. The host's
// expected list is made once per size and rate (the same for every offset).
class Filter : public Problem {
 public:
  explicit Filter(std::vector<FilterVariant> variants)
      : Problem("filter", "keep the elements below a threshold (stream compaction); --pass-rate percent of them", variants),
        variants_(std::move(variants)) {}
  ~Filter() override {
    cudaFree(in_);
    cudaFree(out_);
    cudaFree(count_);
  }
  size_t shape_count(const Options&) const override { return pass_rates_.size(); }
  // --pass-rate P[,P...]: this problem's own flag.
  std::vector<FlagGroup> own_flags() override {
    FlagGroup g;
    g.flags = {"--pass-rate"};
    g.help = "  --pass-rate P[,P...]  percent of the elements kept (default 0,1,50,100)\n";
    g.parse = [this](const std::string&, const TakeValue& take, Options&) {
      pass_rates_.clear();
      for (const auto& s : split_commas(take())) pass_rates_.push_back(parse_percent(s, "--pass-rate"));
    };
    return {g};
  }
  size_t bytes_needed(const Options& opt, std::string& what) const override {
    what = std::to_string(max_n(opt)) + " elements to filter";
    // The sort of the output needs a copy and CUB's temporary storage (about one more copy).
    return input_buffer_bytes(max_n(opt)) + 3 * (max_n(opt) + 64) * 4 + (size_t(64) << 20);
  }
  void allocate(const Options& opt) override {
    opt_ = opt;
    CUDA_CHECK(cudaMalloc(&in_, input_buffer_bytes(max_n(opt))));
    CUDA_CHECK(cudaMalloc(&out_, (max_n(opt) + 64) * 4));
    CUDA_CHECK(cudaMalloc(&count_, sizeof *count_));
  }
  Case make_case(const std::string& dtype, size_t n, size_t shape, size_t offset, const Launch& ctx) override {
    const double rate = pass_rates_[shape];
    return dtype == "int" ? make<unsigned>(n, rate, offset, ctx) : make<float>(n, rate, offset, ctx);
  }

 private:
  template <typename T>
  Case make(size_t n, double rate, size_t offset, const Launch& ctx) {
    const Keep<T> keep = Keep<T>::for_rate(rate);
    const std::tuple<bool, size_t, double> key{std::is_integral_v<T>, n, rate};
    if (key != expected_for_) expected_ = expected_kept<T>(opt_.seed, n, keep), expected_for_ = key;
    const cudaStream_t s = ctx.stream;
    const T* in = place_input<T>(in_, n, offset, opt_.seed, s);
    T* out = static_cast<T*>(out_);
    unsigned long long* count = count_;
    char shape[32];
    std::snprintf(shape, sizeof shape, "pass=%g%%", rate);
    Case c;
    c.n = n;
    c.shape = shape;
    c.bytes = (n + expected_.size()) * sizeof(T);
    // One run on a poisoned output and count (all bits set), then the three checks.
    c.poison = [=] {
      CUDA_CHECK(cudaMemsetAsync(out, 0xFF, (n + 1) * sizeof(T), s));
      CUDA_CHECK(cudaMemsetAsync(count, 0xFF, sizeof *count, s));
    };
    c.verify = [=, expected = &expected_, sorter = &sorter_] {
      unsigned long long kept = 0;
      CUDA_CHECK(cudaMemcpyAsync(&kept, count, sizeof kept, cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      uint32_t after = 0;
      if (kept == expected->size()) CUDA_CHECK(cudaMemcpy(&after, out + kept, 4, cudaMemcpyDeviceToHost));
      return check_kept(*expected, kept, after, [&] { return sorter->sorted_copy(out, kept, s); });
    };
    if constexpr (std::is_same_v<T, unsigned>) c.cub = cub_int_.prepare(in, n, keep, out, count, s);
    else c.cub = cub_float_.prepare(in, n, keep, out, count, s);
    c.floor = floor_contender("read_write", in, n, out, expected_.size(), s);
    for (const FilterVariant& v : variants_)
      if (const VariantName* name = chosen_name(v.name))
        c.variants.push_back({name, [&v, in, n, keep, out, count, ctx] { v.launcher<T>()(in, n, keep, out, count, ctx); }});
    return c;
  }
  std::vector<FilterVariant> variants_;
  std::vector<double> pass_rates_{0, 1, 50, 100};  // percent of the elements kept
  Options opt_;
  void *in_ = nullptr, *out_ = nullptr;
  unsigned long long* count_ = nullptr;
  std::vector<uint32_t> expected_;
  std::tuple<bool, size_t, double> expected_for_{false, 0, 0};  // the dtype, n and rate of expected_ (n = 0: none yet)
  GpuSort sorter_;
  CubSelect<unsigned> cub_int_;
  CubSelect<float> cub_float_;
};

inline std::shared_ptr<Problem> filter_problem(std::vector<FilterVariant> variants) {
  return std::make_shared<Filter>(std::move(variants));
}

}  // namespace harness

// Input data, exact host references, the verification rule, the timing summary and the CSV row.
// Host-only C++ (the generator is also compiled for the device) so host tests can include it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#ifdef __CUDACC__
#define HARNESS_HD __host__ __device__
#else
#define HARNESS_HD
#endif

namespace harness {

// Element i of the input is a pure function of (seed, i): the GPU fills the buffer and the
// host recomputes the same values for the reference, so nothing large crosses PCIe.
HARNESS_HD inline uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Integers ("int" in the CLI and CSV; the kernels use unsigned): full-range 32-bit values,
// summed modulo 2^32 (unsigned wrap-around is defined; signed overflow is not). A lost,
// duplicated or out-of-range element changes the sum unless it is 0 (probability 2^-32).
template <typename T>
HARNESS_HD inline T input_value(uint64_t seed, size_t i);

template <>
HARNESS_HD inline unsigned input_value<unsigned>(uint64_t seed, size_t i) {
  return unsigned(mix64(seed * 0x100000001B3ull + i));
}

// Floats: zero-mean, uniform in [-1, 1) as k * 2^-23 with k in [-2^23, 2^23): exact in float.
// Zero mean keeps correct partial sums small (a random walk), so rounding errors stay far
// below the size of a lost element (see float_tolerance).
HARNESS_HD inline int64_t float_input_steps(uint64_t seed, size_t i) {  // k of k * 2^-23
  return int64_t(mix64(seed * 0x100000001B3ull + i) >> 40) - (int64_t(1) << 23);
}
template <>
HARNESS_HD inline float input_value<float>(uint64_t seed, size_t i) {
  return float(float_input_steps(seed, i)) * (1.0f / 8388608.0f);
}

// Guards just before and after the input: a kernel that reads outside [0, n) adds one and fails.
template <typename T> HARNESS_HD constexpr T guard_value();
template <> HARNESS_HD constexpr unsigned guard_value<unsigned>() { return 0x12345679u; }  // odd: k reads never cancel mod 2^32
template <> HARNESS_HD constexpr float guard_value<float>() { return 1e30f; }

struct Reference {
  uint32_t int_sum = 0;   // int: the exact sum modulo 2^32
  int64_t float_steps = 0;  // float: the exact sum in units of 2^-23
  double sum = 0;         // the exact sum as a double (rounded once, at the end)
  double sum_squares = 0; // float: sum of x^2, gives the spread of the data for the tolerance
};

// Runs work(begin, end, w) over [0, count) cut into pieces w = 0.. (fewer than kHostWorkers),
// one per host core; one piece under 2^16 elements (each item stands for `elements_each`).
constexpr unsigned kHostWorkers = 64;
template <class Work>
void on_host_cores(size_t count, Work&& work, size_t elements_each = 1) {
  unsigned workers = std::max(1u, std::min(kHostWorkers, std::thread::hardware_concurrency()));
  if (count < 2 || count * elements_each < (size_t(1) << 16)) workers = 1;
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&, w] { work(count / workers * w, (w + 1 == workers) ? count : count / workers * (w + 1), w); });
  for (auto& t : pool) t.join();
}

// The exact sums of input_value<T>(seed, begin..end-1) in integer units (int: modulo 2^32;
// float: steps of 2^-23, squares in units of 2^-46), so that pieces add up exactly.
template <typename T>
Reference partial_reference(uint64_t seed, size_t begin, size_t end) {
  Reference r;
  for (size_t i = begin; i < end; ++i) {
    if constexpr (std::is_integral_v<T>) {
      r.int_sum += input_value<T>(seed, i);
    } else {
      const int64_t k = float_input_steps(seed, i);
      r.float_steps += k;
      r.sum_squares += double(k) * double(k);
    }
  }
  return r;
}

inline void add_partial(Reference& total, const Reference& part) {
  total.int_sum += part.int_sum;
  total.float_steps += part.float_steps;
  total.sum_squares += part.sum_squares;
}

// A sum of partial references in real units: the exact sum as a double, sum x^2 for floats.
template <typename T>
Reference finished(Reference r) {
  if constexpr (std::is_integral_v<T>) {
    r.sum = double(r.int_sum);
  } else {
    r.sum = std::ldexp(double(r.float_steps), -23);
    r.sum_squares = std::ldexp(r.sum_squares, -46);
  }
  return r;
}

// Exact sum of input_value<T>(seed, first..first+n-1), spread over the host's cores.
template <typename T>
Reference reference_sum(uint64_t seed, size_t n, size_t first = 0) {
  std::vector<Reference> part(kHostWorkers);
  on_host_cores(n, [&](size_t begin, size_t end, unsigned w) {
    part[w] = partial_reference<T>(seed, first + begin, first + end);
  });
  Reference total;
  for (const auto& r : part) add_partial(total, r);
  return finished<T>(total);
}

// Float tolerance, from a stated error model (docs/README.md, "Verification"):
//  - every addition s = a + b is rounded with a relative error delta, |delta| <= u = 2^-24,
//    and the deltas behave like independent zero-mean random variables (the probabilistic
//    model of Higham & Mary, SIAM J. Sci. Comput. 41(5), 2019);
//  - the inputs are independent with mean 0 and variance sigma^2 = sum(x^2) / n.
// The error is then sum_k delta_k s_k over all additions k, and a partial sum s_k of m_k
// inputs has E[s_k^2] = m_k sigma^2, so the error's standard deviation is at most
// u sigma sqrt(sum_k m_k) <= u sigma sqrt(n * D), D being the longest chain of additions
// from one input to the result. No kernel here chains more than n/256 + 4096 additions (the
// worst, step03, adds n/256 block sums one after the other with atomics). We allow
// lambda = 6 standard deviations: a correct kernel fails with probability < 2 exp(-18).
constexpr double kFloatLambda = 6.0;
inline double longest_chain(size_t n) { return double(n) / 256.0 + 4096.0; }
inline double float_tolerance(size_t n, double sum_squares) {
  return kFloatLambda * std::ldexp(1.0, -24) * std::sqrt(sum_squares * longest_chain(n));
}

struct Verdict {
  bool ok = false;
  std::string detail;  // "exact", or "err 3.1e-05 <= tol 2.0e-03"; expected vs got on failure
  std::string got;     // the result as text where it is one value (--repeat-results prints it)
};

inline Verdict verify(unsigned got, const Reference& ref) {
  Verdict v;
  v.ok = got == ref.int_sum;
  v.detail = v.ok ? "exact" : "expected " + std::to_string(ref.int_sum) + " got " + std::to_string(got) + " (mod 2^32)";
  return v;
}

inline Verdict verify(float got, const Reference& ref, size_t n) {
  double tol = float_tolerance(n, ref.sum_squares);
  double err = std::fabs(double(got) - ref.sum);
  Verdict v;
  v.ok = std::isfinite(got) && err <= tol;  // NaN and inf never pass
  char buf[160];
  if (v.ok) std::snprintf(buf, sizeof buf, "err %.1e <= tol %.1e", err, tol);
  else std::snprintf(buf, sizeof buf, "expected %.9g got %.9g (err %.3g > tol %.3g)", ref.sum, double(got), err, tol);
  v.detail = buf;
  return v;
}

// One contender's time per launch over the reps: the median and the spread (min, max; both 0:
// not measured). batch: launches between one pair of events (a rep is the pair's time / batch).
// Filled by field name (the explicit constructor refuses a positional {...}).
struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int batch = 1;
  explicit Timing() = default;
};

// The median of some values (the mean of the middle two for an even count; 0 for none).
inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// The Timing of one contender's reps, each `batch_ms` the time of one event pair.
inline Timing summarize(std::vector<double> batch_ms, int batch) {
  Timing t;
  if (batch_ms.empty() || batch < 1) return t;
  for (double& ms : batch_ms) ms /= batch;
  const auto [lo, hi] = std::minmax_element(batch_ms.begin(), batch_ms.end());
  t.median_ms = median_of(batch_ms);
  t.min_ms = *lo;
  t.max_ms = *hi;
  t.batch = batch;
  return t;
}

// x_cub: CUB's median time / this row's; x_floor: this row's / the floor's; both same-run.
// shape: "array" (n elements to one sum) or another shape's parameter ("cols=16"). ms_min,
// ms_max: the spread (empty: not measured); batch: launches per event pair. Columns are only
// ever appended, so a reader of the first 13 still works. A CsvRow is filled by field name.
inline const char* csv_header() {
  return "device,cuda,step,variant,dtype,n,ms,gbps,pct_peak,verified,x_cub,x_floor,shape,ms_min,ms_max,batch";
}

struct CsvRow {
  std::string device, cuda, step, variant, dtype;
  size_t n = 0;
  double ms = 0, gbps = 0, pct_peak = 0;
  bool verified = false;
  double x_cub = 0, x_floor = 0;
  std::string shape = "array";
  double ms_min = 0, ms_max = 0;  // both 0: not measured, written as empty fields
  int batch = 1;
  explicit CsvRow() = default;
};

inline std::string csv_row(const CsvRow& r) {
  std::string dev = r.device;  // the schema has no quoting: keep the field free of commas
  std::replace(dev.begin(), dev.end(), ',', ' ');
  char buf[160];
  std::snprintf(buf, sizeof buf, ",%zu,%.6f,%.2f,%.2f,%s,%.4f,%.4f", r.n, r.ms, r.gbps, r.pct_peak,
                r.verified ? "true" : "false", r.x_cub, r.x_floor);
  char spread[80] = ",";
  if (r.ms_min > 0 || r.ms_max > 0) std::snprintf(spread, sizeof spread, "%.6f,%.6f", r.ms_min, r.ms_max);
  return dev + "," + r.cuda + "," + r.step + "," + r.variant + "," + r.dtype + buf + "," + r.shape + "," + spread + "," +
         std::to_string(r.batch);
}

}  // namespace harness

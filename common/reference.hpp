// Input data, exact host references, the verification rule and the CSV row.
// Host-only C++ (the generator is also compiled for the device) so host tests can include it.
#pragma once

#include <algorithm>
#include <climits>
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

// Integers: uniform in [0, R] with R = min(1000, INT32_MAX / n), so no partial sum of n of
// them can overflow int32 whatever the order. Above INT32_MAX elements: {-1, 0, 1}.
HARNESS_HD inline int int_range(size_t n) {
  size_t r = size_t(INT32_MAX) / (n ? n : 1);
  return int(r < 1000 ? r : 1000);
}

template <typename T>
HARNESS_HD inline T input_value(uint64_t seed, size_t i, size_t n);

template <>
HARNESS_HD inline int input_value<int>(uint64_t seed, size_t i, size_t n) {
  uint64_t bits = mix64(seed * 0x100000001B3ull + i);
  int r = int_range(n);
  return r > 0 ? int(bits % uint64_t(r + 1)) : int(bits % 3) - 1;
}

// Floats: uniform in [0, 1) with 24 significant bits, so every value is exact in float.
template <>
HARNESS_HD inline float input_value<float>(uint64_t seed, size_t i, size_t) {
  return float(mix64(seed * 0x100000001B3ull + i) >> 40) * (1.0f / 16777216.0f);
}

// Values placed just before and after the input: a kernel that reads outside [0, n) adds
// one of these and fails verification instead of passing by luck.
template <typename T> HARNESS_HD constexpr T guard_value();
template <> HARNESS_HD constexpr int guard_value<int>() { return 0x12345679; }  // odd: k reads never cancel mod 2^32
template <> HARNESS_HD constexpr float guard_value<float>() { return 1e30f; }

struct Reference {
  double sum = 0;      // exact for int (held as int64 below), double-precision for float
  int64_t int_sum = 0;
  double abs_sum = 0;  // sum of |x|, scales the float tolerance
};

// Sum of input_value<T>(seed, 0..n-1) in int64 / double, spread over the host's cores.
template <typename T>
Reference reference_sum(uint64_t seed, size_t n) {
  unsigned workers = std::max(1u, std::min(64u, std::thread::hardware_concurrency()));
  if (n < (size_t(1) << 16)) workers = 1;
  std::vector<Reference> part(workers);
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      size_t begin = n / workers * w, end = (w + 1 == workers) ? n : n / workers * (w + 1);
      Reference r;
      for (size_t i = begin; i < end; ++i) {
        T v = input_value<T>(seed, i, n);
        if constexpr (std::is_integral_v<T>) r.int_sum += v;
        else r.sum += double(v);
        r.abs_sum += std::fabs(double(v));
      }
      part[w] = r;
    });
  }
  for (auto& t : pool) t.join();
  Reference total;
  for (const auto& r : part) {
    total.int_sum += r.int_sum;
    total.sum += r.sum;
    total.abs_sum += r.abs_sum;
  }
  if constexpr (std::is_integral_v<T>) total.sum = double(total.int_sum);
  return total;
}

// Float tolerance. Any summation order of n terms is within (n-1)*u*sum|x| (u = 2^-24);
// for random rounding errors the error grows like sqrt(n) instead (Higham & Mary,
// SIAM J. Sci. Comput. 41(5), 2019). We allow min(n, 4*sqrt(n)) * u * sum|x|.
inline double float_tolerance(size_t n, double abs_sum) {
  double factor = std::min(double(n), 4.0 * std::sqrt(double(n)));
  return factor * std::ldexp(1.0, -24) * abs_sum;
}

struct Verdict {
  bool ok = false;
  std::string detail;  // "exact", or "err 3.1e-05 <= tol 2.0e-03"; expected vs got on failure
};

inline Verdict verify(int got, const Reference& ref) {
  Verdict v;
  v.ok = int64_t(got) == ref.int_sum;
  v.detail = v.ok ? "exact" : "expected " + std::to_string(ref.int_sum) + " got " + std::to_string(got);
  return v;
}

inline Verdict verify(float got, const Reference& ref, size_t n) {
  double tol = float_tolerance(n, ref.abs_sum);
  double err = std::fabs(double(got) - ref.sum);
  Verdict v;
  v.ok = std::isfinite(got) && err <= tol;  // NaN and inf never pass
  char buf[160];
  if (v.ok) std::snprintf(buf, sizeof buf, "err %.1e <= tol %.1e", err, tol);
  else std::snprintf(buf, sizeof buf, "expected %.9g got %.9g (err %.3g > tol %.3g)", ref.sum, double(got), err, tol);
  v.detail = buf;
  return v;
}

inline const char* csv_header() { return "device,cuda,step,variant,dtype,n,ms,gbps,pct_peak,verified"; }

inline std::string csv_row(const std::string& device, const std::string& cuda, const std::string& step,
                           const std::string& variant, const std::string& dtype, size_t n, double ms,
                           double gbps, double pct_peak, bool verified) {
  std::string dev = device;  // the schema has no quoting: keep the field free of commas
  std::replace(dev.begin(), dev.end(), ',', ' ');
  char buf[128];
  std::snprintf(buf, sizeof buf, ",%zu,%.6f,%.2f,%.2f,%s", n, ms, gbps, pct_peak, verified ? "true" : "false");
  return dev + "," + cuda + "," + step + "," + variant + "," + dtype + buf;
}

}  // namespace harness

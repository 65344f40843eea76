// Host tests of the harness pieces that need no GPU: size and flag parsing, the input
// generator, the references, the float tolerance, verification and the CSV row.
#include <cmath>
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "reference.hpp"

static int failures = 0;
#define EXPECT(cond)                                                     \
  do {                                                                   \
    if (!(cond)) {                                                       \
      std::printf("%s:%d: expected %s\n", __FILE__, __LINE__, #cond);   \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

using namespace harness;

static std::string usage_error(std::vector<const char*> args) {
  args.insert(args.begin(), "prog");
  try {
    parse_args(int(args.size()), args.data());
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

static bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

static void test_sizes() {
  EXPECT(parse_size("1048576", "--n") == 1048576);
  EXPECT(parse_size("2^20", "--n") == (size_t(1) << 20));
  EXPECT(parse_size("1<<20", "--n") == (size_t(1) << 20));
  EXPECT(parse_size("3<<4", "--n") == 48);
  EXPECT(parse_size("4M", "--n") == (size_t(4) << 20));
  EXPECT(parse_size("1G", "--n") == (size_t(1) << 30));
  EXPECT(parse_size("16K", "--n") == 16384);
  EXPECT(parse_size("2^20-1", "--n") == (size_t(1) << 20) - 1);
  EXPECT(parse_size("2^24+7", "--n") == (size_t(1) << 24) + 7);
  EXPECT(parse_size("2^31", "--n") == (size_t(1) << 31));  // 64-bit sizes
  EXPECT(parse_size("2^40", "--n") == (size_t(1) << 40));
  for (const char* bad : {"", "abc", "2^", "3^4", "2^41", "1<<", "4X", "1G+", "1-1", "2^20 ", "-5", "1e6", "99999999999999999999"}) {
    bool threw = false;
    try {
      parse_size(bad, "--n");
    } catch (const UsageError& e) {
      threw = starts_with(e.what(), "--n: ");
    }
    if (!threw) std::printf("parse_size accepted '%s'\n", bad);
    EXPECT(threw);
  }
}

static void test_args() {
  const char* argv[] = {"prog", "--n", "2^10,3", "--dtype", "all", "--variant=tree", "--reps", "7", "--warmup", "0",
                        "--check", "--csv", "out.csv", "--device", "1", "--seed", "9", "--offset", "0,1,3", "--repeat-results", "4"};
  Options o = parse_args(int(sizeof argv / sizeof *argv), argv);
  EXPECT(o.sizes.size() == 2 && o.sizes[0] == 1024 && o.sizes[1] == 3);
  EXPECT(o.dtypes.size() == 2 && o.dtypes[0] == "int" && o.dtypes[1] == "float");
  EXPECT(o.variant == "tree" && o.reps == 7 && o.warmup == 0 && o.check_only);
  EXPECT(o.csv == "out.csv" && o.device == 1 && o.seed == 9 && o.repeat_results == 4);
  EXPECT(o.offsets.size() == 3 && o.offsets[2] == 3);

  Options d = parse_args(1, argv);  // defaults
  EXPECT(d.sizes.size() == 1 && d.sizes[0] == (size_t(1) << 28) && d.dtypes[0] == "int" && d.reps == 20);

  // Every bad input names its flag first; main() turns this into exit code 2.
  EXPECT(starts_with(usage_error({"--bogus"}), "--bogus: unknown flag"));
  EXPECT(starts_with(usage_error({"--n"}), "--n: missing value"));
  EXPECT(starts_with(usage_error({"--n", "0"}), "--n: "));
  EXPECT(starts_with(usage_error({"--n", "1,,2"}), "--n: "));
  EXPECT(starts_with(usage_error({"--dtype", "double"}), "--dtype: "));
  EXPECT(starts_with(usage_error({"--reps", "0"}), "--reps: "));
  EXPECT(starts_with(usage_error({"--reps", "5x"}), "--reps: "));
  EXPECT(starts_with(usage_error({"--warmup", "-1"}), "--warmup: "));
  EXPECT(starts_with(usage_error({"--device", "x"}), "--device: "));
  EXPECT(starts_with(usage_error({"--offset", "16"}), "--offset: "));
  EXPECT(starts_with(usage_error({"--repeat-results", "1"}), "--repeat-results: "));
  EXPECT(starts_with(usage_error({"--csv"}), "--csv: missing value"));
  EXPECT(usage_error({"--n", "4M", "--dtype", "float"}).empty());
}

static void test_inputs_and_references() {
  // Integers stay in [0, R] with n * R <= INT32_MAX, and are not all equal.
  for (size_t n : {size_t(1), size_t(1000), size_t(1) << 20, size_t(1) << 30}) {
    int r = int_range(n);
    EXPECT(r >= 1 && double(r) * double(n) <= double(INT32_MAX));
    int lo = 1 << 30, hi = -1;
    for (size_t i = 0; i < 4096; ++i) {
      int v = input_value<int>(7, i, n);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    EXPECT(lo >= 0 && hi <= r && lo < hi);
  }
  EXPECT(int_range(size_t(1) << 32) == 0);  // beyond int32: signed {-1, 0, 1}
  for (size_t i = 0; i < 1000; ++i) {
    int v = input_value<int>(3, i, size_t(1) << 32);
    EXPECT(v >= -1 && v <= 1);
  }
  // Floats in [0, 1), deterministic, seed-dependent.
  double mean = 0;
  for (size_t i = 0; i < 10000; ++i) {
    float f = input_value<float>(1, i, 0);
    EXPECT(f >= 0.0f && f < 1.0f);
    mean += f / 10000.0;
  }
  EXPECT(std::fabs(mean - 0.5) < 0.02);
  EXPECT(input_value<float>(1, 5, 0) == input_value<float>(1, 5, 0));
  EXPECT(input_value<float>(1, 5, 0) != input_value<float>(2, 5, 0));

  // The threaded reference equals a plain serial loop (int exactly).
  for (size_t n : {size_t(1), size_t(257), size_t(1) << 17, (size_t(1) << 18) + 3}) {
    int64_t serial = 0;
    double fserial = 0;
    for (size_t i = 0; i < n; ++i) {
      serial += input_value<int>(11, i, n);
      fserial += input_value<float>(11, i, n);
    }
    Reference ri = reference_sum<int>(11, n), rf = reference_sum<float>(11, n);
    EXPECT(ri.int_sum == serial && ri.sum == double(serial) && ri.abs_sum == double(serial));
    EXPECT(std::fabs(rf.sum - fserial) <= 1e-9 * fserial && rf.abs_sum == rf.sum);
  }
}

static void test_verification() {
  Reference r;
  r.int_sum = 524288;
  r.sum = 524288;
  EXPECT(verify(524288, r).ok);
  Verdict wrong = verify(57344, r);
  EXPECT(!wrong.ok && wrong.detail.find("expected 524288 got 57344") != std::string::npos);

  // Float: within min(n, 4 sqrt(n)) * 2^-24 * sum|x|; NaN and inf never pass.
  const size_t n = size_t(1) << 20;
  Reference f;
  f.sum = f.abs_sum = 524288.0;
  const double tol = float_tolerance(n, f.abs_sum);
  EXPECT(std::fabs(tol - 4096.0 * std::ldexp(1.0, -24) * 524288.0) < 1e-9);
  EXPECT(float_tolerance(4, 10.0) == 4 * std::ldexp(1.0, -24) * 10.0);  // small n: the worst-case bound
  EXPECT(verify(float(f.sum), f, n).ok);
  EXPECT(verify(float(f.sum + 0.9 * tol), f, n).ok);
  EXPECT(!verify(float(f.sum + 2 * tol), f, n).ok);
  EXPECT(!verify(float(f.sum - 1.0), Reference{524288.0, 0, 524288.0}, 4).ok);
  EXPECT(!verify(std::nanf(""), f, n).ok);
  EXPECT(!verify(INFINITY, f, n).ok);
}

static void test_csv() {
  EXPECT(std::string(csv_header()) == "device,cuda,step,variant,dtype,n,ms,gbps,pct_peak,verified");
  std::string row = csv_row("NVIDIA H100 80GB HBM3", "13.0", "step05_vectorized", "v4_batch4", "int", 1073741824,
                            1.25, 3435.97, 91.5, true);
  EXPECT(row == "NVIDIA H100 80GB HBM3,13.0,step05_vectorized,v4_batch4,int,1073741824,1.250000,3435.97,91.50,true");
  EXPECT(csv_row("A, B", "13.0", "cub", "cub", "float", 1, 0.001, 0.0, 0.0, false) ==
         "A  B,13.0,cub,cub,float,1,0.001000,0.00,0.00,false");
}

int main() {
  test_sizes();
  test_args();
  test_inputs_and_references();
  test_verification();
  test_csv();
  if (failures) std::printf("%d check(s) failed\n", failures);
  else std::printf("all harness host tests passed\n");
  return failures ? 1 : 0;
}

// Host tests of the harness pieces that need no GPU: size and flag parsing (the shared flags,
// a program's own flags: OwnFlags, and step 08's), the input generator, the references, the
// float tolerance, verification, the timing summary and the CSV row. (Step 07's and 09's own
// flags, whose headers are CUDA: test_problem_checks.cu.)
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>

#include "cli.hpp"
#include "multi_gpu_flags.hpp"
#include "reference.hpp"
#include "expect.hpp"

using namespace harness;

// Every shared extra flag: the parsing of each is tested as if one program read them all.
static const unsigned kAll = kBatch | kCols;

static std::string usage_error(std::vector<const char*> args, unsigned reads = kAll,
                               const std::vector<FlagGroup>& own = {}) {
  args.insert(args.begin(), "prog");
  try {
    parse_args(int(args.size()), args.data(), reads, own);
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
  Options o = parse_args(int(sizeof argv / sizeof *argv), argv, kAll);
  EXPECT(o.sizes.size() == 2 && o.sizes[0] == 1024 && o.sizes[1] == 3);
  EXPECT(o.dtypes.size() == 2 && o.dtypes[0] == "int" && o.dtypes[1] == "float");
  EXPECT(o.variants == std::vector<std::string>{"tree"} && o.reps == 7 && o.warmup == 0 && o.check_only);
  EXPECT(o.csv == "out.csv" && o.device == 1 && o.seed == 9 && o.repeat_results == 4);
  EXPECT(o.offsets.size() == 3 && o.offsets[2] == 3);

  const char* list[] = {"prog", "--variant", "tree,warp"};  // a comma list, as --n takes
  EXPECT((parse_args(3, list, kAll).variants == std::vector<std::string>{"tree", "warp"}));
  EXPECT(usage_error({"--variant", "tree,"}) == "--variant: empty name");

  Options d = parse_args(1, argv, kAll);  // defaults
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
  // A flag of one program alone (step 07's --blocks, step 09's --cluster) is no shared flag:
  // elsewhere it is unknown (their parsing: test_problem_checks.cu).
  EXPECT(starts_with(usage_error({"--blocks", "4"}), "--blocks: unknown flag"));
  EXPECT(starts_with(usage_error({"--cluster", "8"}), "--cluster: unknown flag"));
  EXPECT(starts_with(usage_error({"--csv"}), "--csv: missing value"));
  EXPECT(usage_error({"--n", "4M", "--dtype", "float"}).empty());
  // --batch B: launches per pair of timing events; 1 (one pair per launch) unless given.
  EXPECT(parse_args(1, argv, kAll).batch == 1);
  {
    const char* b[] = {"prog", "--batch", "100"};
    EXPECT(parse_args(3, b, kAll).batch == 100);
    const char* eq[] = {"prog", "--batch=1000"};
    EXPECT(parse_args(2, eq, kAll).batch == 1000);
  }
  for (const char* bad : {"0", "-1", "1001", "x", "", "2.5", "10x"})
    EXPECT(starts_with(usage_error({"--batch", bad}), "--batch: expected a whole number from 1 to 1000"));
  EXPECT(starts_with(usage_error({"--batch"}), "--batch: missing value"));
}

static void test_inputs_and_references() {
  // Integers: full 32-bit range (both halves and both ends of it are reached).
  unsigned lo = ~0u, hi = 0;
  size_t top_half = 0;
  for (size_t i = 0; i < 100000; ++i) {
    unsigned v = input_value<unsigned>(7, i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    top_half += v >> 31;
  }
  EXPECT(lo < (1u << 20) && hi > ~0u - (1u << 20));
  EXPECT(top_half > 49000 && top_half < 51000);
  EXPECT(input_value<unsigned>(7, 5) != input_value<unsigned>(8, 5));
  // Floats: zero-mean, in [-1, 1), multiples of 2^-23 (exact in float), seed-dependent.
  double mean = 0, mean_sq = 0;
  for (size_t i = 0; i < 100000; ++i) {
    float f = input_value<float>(1, i);
    EXPECT(f >= -1.0f && f < 1.0f);
    EXPECT(std::ldexp(double(f), 23) == std::floor(std::ldexp(double(f), 23)));
    EXPECT(double(f) == std::ldexp(double(float_input_steps(1, i)), -23));
    mean += f / 100000.0;
    mean_sq += double(f) * f / 100000.0;
  }
  EXPECT(std::fabs(mean) < 0.01 && std::fabs(mean_sq - 1.0 / 3.0) < 0.01);
  EXPECT(input_value<float>(1, 5) != input_value<float>(2, 5));

  // The threaded reference equals a plain serial loop, exactly, for both types.
  for (size_t n : {size_t(1), size_t(257), size_t(1) << 17, (size_t(1) << 18) + 3}) {
    uint32_t serial = 0;
    int64_t steps = 0;
    double squares = 0;
    for (size_t i = 0; i < n; ++i) {
      serial += input_value<unsigned>(11, i);  // wraps modulo 2^32, as the GPU's sum does
      steps += float_input_steps(11, i);
      squares += double(input_value<float>(11, i)) * input_value<float>(11, i);
    }
    Reference ri = reference_sum<unsigned>(11, n), rf = reference_sum<float>(11, n);
    EXPECT(ri.int_sum == serial && ri.sum == double(serial));
    EXPECT(rf.float_steps == steps && rf.sum == std::ldexp(double(steps), -23));
    EXPECT(std::fabs(rf.sum_squares - squares) <= 1e-9 * squares);
  }
  // Wide data: dropping or duplicating any one element changes the integer sum.
  const size_t n = 4099;
  Reference r = reference_sum<unsigned>(3, n);
  for (size_t i = 0; i < n; ++i) {
    unsigned v = input_value<unsigned>(3, i);
    EXPECT(v == 0 || (r.int_sum - v != r.int_sum && r.int_sum + v != r.int_sum));
  }
}

static void test_verification() {
  Reference r;
  r.int_sum = 4000000000u;
  r.sum = 4000000000.0;
  EXPECT(verify(4000000000u, r).ok);
  Verdict wrong = verify(57344u, r);
  EXPECT(!wrong.ok && wrong.detail.find("expected 4000000000 got 57344") != std::string::npos);

  // Float: lambda * u * sqrt(sum x^2 * (n/256 + 4096)); NaN and inf never pass.
  const size_t n = size_t(1) << 30;
  Reference f;
  f.sum = 12.5;
  f.sum_squares = double(n) / 3.0;  // uniform in [-1, 1): variance 1/3
  const double tol = float_tolerance(n, f.sum_squares);
  EXPECT(std::fabs(tol - 6.0 * std::ldexp(1.0, -24) * std::sqrt(double(n) / 3.0 * (double(n) / 256 + 4096))) < 1e-9);
  EXPECT(tol > 13.0 && tol < 14.5);  // at 2^30: the worst correct kernel's error is ~1-3, a lost vector in 65,536 ~74
  EXPECT(float_tolerance(1 << 20, (1 << 20) / 3.0) < 0.05);  // at 2^20: 16 lost elements (sum ~2.3) are seen
  EXPECT(verify(float(f.sum), f, n).ok);
  EXPECT(verify(float(f.sum + 0.9 * tol), f, n).ok);
  EXPECT(!verify(float(f.sum + 1.1 * tol), f, n).ok);
  EXPECT(!verify(float(f.sum - 2 * tol), f, n).ok);
  EXPECT(!verify(std::nanf(""), f, n).ok);
  EXPECT(!verify(INFINITY, f, n).ok);
}

static void test_csv() {
  // The 13 columns of the previous schema come first, unchanged; the spread and the batch are appended.
  const std::string header = csv_header();
  EXPECT(header.rfind("device,cuda,step,variant,dtype,n,ms,gbps,pct_peak,verified,x_cub,x_floor,shape,", 0) == 0);
  EXPECT(header == "device,cuda,step,variant,dtype,n,ms,gbps,pct_peak,verified,x_cub,x_floor,shape,ms_min,ms_max,batch");
  // No spread given (a derived or per-rank row): empty fields, batch 1. Rows filled by field name.
  CsvRow r;
  r.device = "NVIDIA H100 80GB HBM3";
  r.cuda = "13.0";
  r.step = "step05_vectorized";
  r.variant = "v4_batch4";
  r.dtype = "int";
  r.n = 1073741824;
  r.ms = 1.25;
  r.gbps = 3435.97;
  r.pct_peak = 91.5;
  r.verified = true;
  r.x_cub = 1.0123;
  r.x_floor = 1.00456;
  EXPECT(csv_row(r) ==
         "NVIDIA H100 80GB HBM3,13.0,step05_vectorized,v4_batch4,int,1073741824,1.250000,3435.97,91.50,true,1.0123,1.0046,array,,,1");
  CsvRow comma;  // a comma in the device name; another shape
  comma.device = "A, B";
  comma.cuda = "13.0";
  comma.step = comma.variant = "cub";
  comma.dtype = "float";
  comma.n = 1;
  comma.ms = 0.001;
  comma.x_cub = 1.0;
  comma.x_floor = 2.5;
  comma.shape = "cols=16";
  EXPECT(csv_row(comma) == "A  B,13.0,cub,cub,float,1,0.001000,0.00,0.00,false,1.0000,2.5000,cols=16,,,1");
  CsvRow spread = r;  // with the spread and the batch
  spread.device = "GPU";
  spread.step = "step07_cooperative_grid";
  spread.variant = "one_block";
  spread.n = 16384;
  spread.ms = 0.0043126;
  spread.gbps = 15.2;
  spread.pct_peak = 0.3;
  spread.x_cub = 1.1;
  spread.x_floor = 1.0;
  spread.ms_min = 0.0042512;
  spread.ms_max = 0.0044;
  spread.batch = 100;
  EXPECT(csv_row(spread) ==
         "GPU,13.0,step07_cooperative_grid,one_block,int,16384,0.004313,15.20,0.30,true,1.1000,1.0000,array,0.004251,0.004400,100");
}

// A rep's time is its event pair's time / batch; the median, min and max are over those.
static void test_timing_summary() {
  Timing one = summarize({0.0050, 0.0045, 0.0061}, 1);
  EXPECT(one.median_ms == 0.0050 && one.min_ms == 0.0045 && one.max_ms == 0.0061 && one.batch == 1);
  Timing even = summarize({4.0, 1.0, 3.0, 2.0}, 1);  // even count: the mean of the middle two
  EXPECT(even.median_ms == 2.5 && even.min_ms == 1.0 && even.max_ms == 4.0);
  Timing batch = summarize({0.52, 0.50, 0.55}, 100);  // 100 launches per pair: per launch / 100
  EXPECT(std::fabs(batch.median_ms - 0.0052) < 1e-15 && std::fabs(batch.min_ms - 0.0050) < 1e-15 &&
         std::fabs(batch.max_ms - 0.0055) < 1e-15 && batch.batch == 100);
  Timing none = summarize({}, 1);
  EXPECT(none.median_ms == 0 && none.min_ms == 0 && none.max_ms == 0);
}

// --cols (steps 06 and 09): parsed like --n. (Step 06's own --pass-rate: test_problem_checks.)
static void test_cols_flag() {
  const char* none[] = {"prog"};
  Options d = parse_args(1, none, kAll);
  EXPECT(d.cols.size() == 7 && d.cols[0] == 1 && d.cols[6] == 65536);
  const char* argv[] = {"prog", "--cols", "1,2^16+1,4K"};
  Options o = parse_args(3, argv, kAll);
  EXPECT(o.cols.size() == 3 && o.cols[0] == 1 && o.cols[1] == 65537 && o.cols[2] == 4096);
  EXPECT(starts_with(usage_error({"--cols", "0"}), "--cols: must be at least 1"));
  EXPECT(starts_with(usage_error({"--cols", "1,,2"}), "--cols: "));
  EXPECT(starts_with(usage_error({"--cols", "2^41"}), "--cols: too large"));
  EXPECT(starts_with(usage_error({"--cols"}), "--cols: missing value"));
}

// Step 08's own flags (its folder's multi_gpu_flags.hpp): --gpus K or a list and
// --barrier-reps (step08_multi_grid), the one-process-per-GPU trio (step08_nccl_ranks).
static void test_step08_flags() {
  auto parsed = [](std::vector<const char*> args, bool ranks) {
    args.insert(args.begin(), "prog");
    MultiGpuOptions m;
    static_cast<Options&>(m) = parse_args(int(args.size()), args.data(), 0, ranks ? rank_flags(m) : gpus_flags(m));
    return m;
  };
  auto gpus_error = [](std::vector<const char*> args) {
    MultiGpuOptions m;
    return usage_error(args, 0, gpus_flags(m));
  };
  auto rank_error = [](std::vector<const char*> args) {
    MultiGpuOptions m;
    return usage_error(args, 0, rank_flags(m));
  };
  const MultiGpuOptions d = parsed({}, false);
  EXPECT(d.gpus == 0 && d.gpu_list.empty() && d.rank == -1 && d.nranks == 0 && d.id_file.empty());
  EXPECT(d.barrier_reps == 1000);
  const MultiGpuOptions c = parsed({"--gpus", "3", "--barrier-reps=17", "--n", "4M"}, false);
  EXPECT(c.gpus == 3 && c.gpu_list.empty() && c.barrier_reps == 17 && c.sizes[0] == (size_t(4) << 20));
  const MultiGpuOptions l = parsed({"--gpus=2,0,5"}, false);
  EXPECT(l.gpus == 3 && l.gpu_list.size() == 3 && l.gpu_list[0] == 2 && l.gpu_list[1] == 0 && l.gpu_list[2] == 5);
  const MultiGpuOptions r = parsed({"--rank", "1", "--nranks", "2", "--id-file", "/tmp/id"}, true);
  EXPECT(r.rank == 1 && r.nranks == 2 && r.id_file == "/tmp/id");
  EXPECT(starts_with(gpus_error({"--gpus", "0"}), "--gpus: expected a whole number"));
  EXPECT(starts_with(gpus_error({"--gpus", "two"}), "--gpus: "));
  EXPECT(starts_with(gpus_error({"--gpus", "0,0"}), "--gpus: GPU 0 is named twice"));
  EXPECT(starts_with(gpus_error({"--gpus", "0,,1"}), "--gpus: "));
  EXPECT(starts_with(gpus_error({"--gpus"}), "--gpus: missing value"));
  EXPECT(starts_with(gpus_error({"--barrier-reps", "0"}), "--barrier-reps: "));
  EXPECT(starts_with(gpus_error({"--rank", "0"}), "--rank: unknown flag"));
  EXPECT(starts_with(gpus_error({"--batch", "10"}), "--batch: not a flag of this program"));
  EXPECT(starts_with(rank_error({"--rank", "0"}), "--nranks: missing"));
  EXPECT(starts_with(rank_error({"--rank", "0", "--nranks", "2"}), "--id-file: missing"));
  EXPECT(starts_with(rank_error({"--nranks", "2", "--id-file", "x"}), "--rank: missing"));
  EXPECT(starts_with(rank_error({"--rank", "2", "--nranks", "2", "--id-file", "x"}), "--rank: 2 is not below --nranks 2"));
  EXPECT(starts_with(rank_error({"--rank", "0", "--nranks", "2", "--id-file", ""}), "--id-file: empty"));
  EXPECT(starts_with(rank_error({"--rank", "0", "--nranks", "2", "--id-file", "x", "--gpus", "2"}), "--gpus: unknown flag"));
  EXPECT(starts_with(usage_error({"--gpus", "2"}, kAll), "--gpus: unknown flag"));  // no other program knows it
  // Their --help lines come after the core ones, each flag named.
  MultiGpuOptions m;
  const std::string help = usage_text(0, gpus_flags(m)), rank_help = usage_text(0, rank_flags(m));
  EXPECT(help.find("  --n SIZES") < help.find("  --gpus K") && help.find("  --gpus K") < help.find("  --barrier-reps B"));
  EXPECT(help.find("--batch") == std::string::npos && help.find("--rank") == std::string::npos);
  EXPECT(rank_help.find("  --rank R --nranks K --id-file PATH") != std::string::npos);
}

// Each program reads the core flags and its own extras; any other flag is exit 2, and its
// --help lists exactly its own (steps 00-05: --batch; step 07: --batch, --blocks; step 08:
// --gpus, the rank trio, --barrier-reps).
static void test_program_flags() {
  EXPECT(starts_with(usage_error({"--cols", "4"}, kBatch), "--cols: not a flag of this program"));
  EXPECT(starts_with(usage_error({"--batch", "10"}, kCols), "--batch: not a flag of this program"));
  EXPECT(starts_with(usage_error({"--problem", "filter"}), "--problem: unknown flag"));  // gone: one problem per program
  EXPECT(usage_error({"--cols", "4", "--batch", "2"}, kBatch | kCols).empty());
  EXPECT(usage_error({"--n", "4M", "--check", "--offset", "1"}, 0).empty());  // the core needs no bits
  EXPECT(starts_with(usage_error({"--bogus"}, kAll), "--bogus: unknown flag"));
  const struct { unsigned bit; const char* flag; } extras[] = {{kBatch, "--batch"}, {kCols, "--cols"}};
  // Each group's help names each of its flags, and no flag belongs to two groups.
  for (const auto& g : flag_groups())
    for (const auto& f : g.flags) {
      if (f != "--help" && f != "-h") EXPECT(std::string(g.help).find(f) != std::string::npos);
      EXPECT(group_of(f) == &g);
    }
  for (unsigned reads : {0u, unsigned(kBatch), unsigned(kCols), kAll}) {
    const std::string help = usage_text(reads);
    EXPECT(help.find("  --n SIZES") != std::string::npos && help.find("  --check") != std::string::npos);
    for (const auto& e : extras) {
      const bool listed = help.find(std::string("  ") + e.flag + " ") != std::string::npos;
      if (listed != bool(reads & e.bit)) std::printf("usage_text(%#x): %s listed=%d\n", reads, e.flag, listed);
      EXPECT(listed == bool(reads & e.bit));
      EXPECT(group_of(e.flag) && group_of(e.flag)->bit == e.bit);
    }
  }
}

// A program's own flags (cli.hpp's OwnFlags): declared beside the program, parsed into its
// struct with the core and shared flags, listed last in --help; no edit of common/ needed.
struct Made : OwnFlags {  // a made-up program's flag, as a new step would add one
  int widgets = 3;        // --widgets W
  std::vector<FlagGroup> groups() override {
    FlagGroup g;
    g.flags = {"--widgets"};
    g.help = "  --widgets W           widgets per block (default 3)\n";
    g.parse = [this](const std::string&, const TakeValue& take, Options&) { widgets = parse_int(take(), "--widgets", 1, 8); };
    return {g};
  }
};

static void test_own_flags() {
  Made m;
  {
    const char* argv[] = {"prog", "--widgets", "5", "--batch=7", "--n", "2^10"};
    const Options o = parse_args(6, argv, kBatch, m.groups());
    EXPECT(m.widgets == 5 && o.batch == 7 && o.sizes[0] == 1024);
  }
  EXPECT(starts_with(usage_error({"--widgets", "9"}, kBatch, m.groups()), "--widgets: expected a whole number from 1 to 8"));
  EXPECT(starts_with(usage_error({"--widgets"}, kBatch, m.groups()), "--widgets: missing value"));
  EXPECT(starts_with(usage_error({"--widgets", "2"}, kBatch), "--widgets: unknown flag"));  // another program
  const std::string help = usage_text(kBatch, m.groups());
  EXPECT(help.find("  --batch B") < help.find("  --widgets W") && help.find("  --widgets W") < help.find("  --help"));
  EXPECT(usage_text(kBatch).find("--widgets") == std::string::npos);
}

// The structs that a field added in the middle would silently shift are filled by field name:
// a positional {...} does not compile.
static void test_filled_by_name() {
  static_assert(!std::is_aggregate_v<Timing> && !std::is_aggregate_v<CsvRow>, "fill Timing and CsvRow by field name");
  static_assert(!std::is_aggregate_v<FlagGroup>, "fill FlagGroup by field name");
  CsvRow r;
  EXPECT(r.shape == "array" && r.batch == 1 && r.n == 0 && !r.verified);
  Timing t;
  EXPECT(t.median_ms == 0 && t.min_ms == 0 && t.max_ms == 0 && t.batch == 1);
}

int main() {
  test_sizes();
  test_args();
  test_program_flags();
  test_own_flags();
  test_filled_by_name();
  test_cols_flag();
  test_step08_flags();
  test_inputs_and_references();
  test_verification();
  test_csv();
  test_timing_summary();
  if (failures) std::printf("%d check(s) failed\n", failures);
  else std::printf("all harness host tests passed\n");
  return failures ? 1 : 0;
}

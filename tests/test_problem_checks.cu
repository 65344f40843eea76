// Host test (no GPU needed): the checks of the problem shapes of steps 06-07 accept a right
// result and reject wrong ones; the flags of one program alone are parsed in their own folders
// (step 06's --pass-rate into the filter, step 07's --blocks, step 09's --cluster) and reach the
// launchers through Launch, which is filled by field name. The outputs are made on the host from the same generator,
// then broken the way a faulty kernel would break them. Compiled by nvcc because the
// headers hold the GPU pieces too; nothing here launches a kernel.
#include <cstdio>
#include <cstring>

#include <type_traits>

#include "filter.cuh"
#include "forced_grid.cuh"
#include "normalize.cuh"
#include "segmented.cuh"
#include "clusters.cuh"
#include "expect.hpp"

using namespace harness;


constexpr uint64_t kSeed = 12345;

// The row sums a right kernel would return (float: the exact sum, rounded once), then the
// poison slot past the last row.
template <typename T>
std::vector<T> right_rows(size_t rows, size_t cols) {
  std::vector<T> got(rows + 1);
  for (size_t r = 0; r < rows; ++r) {
    const Reference ref = finished<T>(partial_reference<T>(kSeed, r * cols, (r + 1) * cols));
    if constexpr (std::is_integral_v<T>) got[r] = ref.int_sum;
    else got[r] = float(ref.sum);
  }
  std::memset(&got[rows], 0xFF, sizeof(T));
  return got;
}

template <typename T>
void test_segmented(size_t rows, size_t cols) {
  const std::vector<T> right = right_rows<T>(rows, cols);
  EXPECT(verify_rows(right, kSeed, rows, cols).ok);
  auto broken = right;  // the last element of the last row lost
  broken[rows - 1] -= input_value<T>(kSeed, rows * cols - 1);
  EXPECT(!verify_rows(broken, kSeed, rows, cols).ok);
  broken = right;  // the last row lost (still poison)
  std::memset(&broken[rows - 1], 0xFF, sizeof(T));
  EXPECT(!verify_rows(broken, kSeed, rows, cols).ok);
  broken = right;  // a write past the last row
  broken[rows] = T(0);
  EXPECT(!verify_rows(broken, kSeed, rows, cols).ok);
}

template <typename T>
void test_normalize(size_t n) {
  const unsigned key = reference_max_key<T>(kSeed, n);
  std::vector<uint32_t> right(n + 2, 0xFFFFFFFFu);  // out[-1] .. out[n]: poison around the output
  for (size_t i = 0; i < n; ++i) right[i + 1] = float_bits(normalized(input_value<T>(kSeed, i), key));
  EXPECT(verify_normalized<T>(right, kSeed, n, key).ok);
  auto broken = right;  // one element one ulp off
  broken[n / 2 + 1] ^= 1u;
  EXPECT(!verify_normalized<T>(broken, kSeed, n, key).ok);
  broken = right;  // a write before the output
  broken[0] = 0;
  EXPECT(!verify_normalized<T>(broken, kSeed, n, key).ok);
  broken = right;  // a write after it
  broken[n + 1] = 0;
  EXPECT(!verify_normalized<T>(broken, kSeed, n, key).ok);
}

template <typename T>
void test_filter(size_t n, double rate) {
  const std::vector<uint32_t> expected = expected_kept<T>(kSeed, n, Keep<T>::for_rate(rate));
  EXPECT(!expected.empty());
  auto sorted = [&](std::vector<uint32_t> v) { return [v] { return v; }; };
  EXPECT(check_kept(expected, expected.size(), 0xFFFFFFFFu, sorted(expected)).ok);
  EXPECT(!check_kept(expected, expected.size() - 1, 0xFFFFFFFFu, sorted(expected)).ok);  // one lost
  EXPECT(!check_kept(expected, expected.size(), 0u, sorted(expected)).ok);               // wrote past the end
  auto duplicated = expected;  // the right count, one element twice and one missing
  duplicated.back() = duplicated.front();
  std::sort(duplicated.begin(), duplicated.end());
  EXPECT(!check_kept(expected, expected.size(), 0xFFFFFFFFu, sorted(duplicated)).ok);
}

// Step 06's own flag, --pass-rate (a percent list), read by the filter problem itself.
static void test_pass_rate_flag() {
  auto parsed = [](std::vector<const char*> args, Filter& f) {
    args.insert(args.begin(), "prog");
    parse_args(int(args.size()), args.data(), kBatch, f.own_flags());
    return f.shape_count(Options{});
  };
  Filter defaults({}), three({});
  EXPECT(parsed({}, defaults) == 4);  // 0, 1, 50 and 100 percent
  EXPECT(parsed({"--pass-rate=0,0.5,100"}, three) == 3);
  for (const char* bad : {"101", "-1", "", "abc", "5%", " 5", "nan", "1,,2"}) {
    Filter f({});
    std::string error;
    try {
      parsed({"--pass-rate", bad}, f);
    } catch (const UsageError& e) {
      error = e.what();
    }
    EXPECT(error.rfind("--pass-rate: ", 0) == 0);
  }
}

// The usage error of parsing `args` with the program's own flags `own` (and --batch), or "".
static std::string own_error(std::vector<const char*> args, OwnFlags& own) {
  args.insert(args.begin(), "prog");
  try {
    parse_args(int(args.size()), args.data(), kBatch, own.groups());
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// Step 07's own flag, --blocks N: a grid size (0: automatic); a grid too large to be co-resident
// is judged at launch, not here. It reaches the launchers in their Launch.
static void test_blocks_flag() {
  ForcedGrid none, forced;
  EXPECT(own_error({}, none).empty() && none.blocks == 0);
  EXPECT(own_error({"--blocks", "529"}, forced).empty() && forced.blocks == 529);
  ForcedGrid eq;
  EXPECT(own_error({"--blocks=1"}, eq).empty() && eq.blocks == 1);
  for (const char* bad : {"0", "-3", "12x", "65537"}) {
    ForcedGrid g;
    EXPECT(own_error({"--blocks", bad}, g).rfind("--blocks: expected a whole number from 1 to 65536", 0) == 0);
  }
  EXPECT(own_error({"--blocks"}, none).rfind("--blocks: missing value", 0) == 0);
  const std::string help = usage_text(kBatch, forced.groups());
  EXPECT(help.find("  --batch B") < help.find("  --blocks N") && help.find("  --blocks N") < help.find("  --help"));
  Launch ctx;  // no own flags (a probe, another program): --blocks' default
  EXPECT(cooperative_blocks(ctx, size_t(1) << 20, 1024, 100) == 100 && cooperative_blocks(ctx, 3000, 1024, 100) == 3);
  ctx.own = &forced;
  EXPECT(ctx.own_as<ForcedGrid>().blocks == 529 && cooperative_blocks(ctx, 3000, 1024, 100) == 529);
  ForcedCluster other;
  ctx.own = &other;  // another program's own flags: --blocks' default again
  EXPECT(cooperative_blocks(ctx, 3000, 1024, 100) == 3);
}

// Step 09's own flag, --cluster C: up to 64, past what any GPU launches, so that the launch (not
// the parser) says which sizes this GPU refuses; 0: each variant's own. A variant whose size is
// compiled in (dims_2) is left out of --variant all under another --cluster, with a note.
static void test_cluster_flag() {
  ForcedCluster none, forced;
  EXPECT(own_error({}, none).empty() && none.size == 0);
  EXPECT(own_error({"--cluster", "32"}, forced).empty() && forced.size == 32);
  for (const char* bad : {"0", "65", "x"}) {
    ForcedCluster c;
    EXPECT(own_error({"--cluster", bad}, c).rfind("--cluster: expected a whole number from 1 to 64", 0) == 0);
  }
  EXPECT(usage_text(kBatch, forced.groups()).find("  --cluster C ") != std::string::npos);
  Launch ctx;
  EXPECT(forced_cluster(ctx) == 0 && cluster_size_or(ctx, 8) == 8);
  ctx.own = &forced;
  EXPECT(forced_cluster(ctx) == 32 && cluster_size_or(ctx, 8) == 32);

  ForcedCluster four;
  const Variant dims_2 = with_fixed_cluster(Variant("dims_2", "fixed at 2", [](auto, size_t, auto, const Launch&) {}), 2, four);
  Options all, named;
  named.variants = {"dims_2"};
  EXPECT(chosen(all, dims_2));  // no --cluster: it runs
  four.size = 2;
  EXPECT(chosen(all, dims_2));  // --cluster 2: its own size
  four.size = 4;
  EXPECT(dims_2.skip_in_all_why() == "its cluster size is fixed at 2 (--cluster 4)");
  EXPECT(!chosen(all, dims_2));  // left out of all (a note says why) ...
  EXPECT(chosen(named, dims_2));  // ... but run when named (its launcher refuses --cluster 4)
}

// Launch and the harness's other structs whose fields could shift are filled by field name: a
// positional {...} does not compile.
static_assert(!std::is_aggregate_v<Launch> && !std::is_aggregate_v<Contender>, "fill Launch and Contender by name");

int main() {
  test_pass_rate_flag();
  test_blocks_flag();
  test_cluster_flag();
  for (auto [rows, cols] : {std::pair<size_t, size_t>{1000, 7}, {3, size_t(1) << 17}, {size_t(1) << 16, 3}, {5, 1}}) {
    test_segmented<unsigned>(rows, cols);
    test_segmented<float>(rows, cols);
  }
  for (size_t n : {size_t(1), size_t(1023), (size_t(1) << 17) + 3}) {
    test_normalize<unsigned>(n);
    test_normalize<float>(n);
  }
  test_filter<unsigned>((size_t(1) << 17) + 5, 50);
  test_filter<float>(4099, 1);
  if (failures) std::printf("%d check(s) failed\n", failures);
  else std::printf("the checks of the segmented sum, the normalization and the filter accept right and reject wrong results;\n"
                   "steps 06, 07 and 09 parse their own flags\n");
  return failures ? 1 : 0;
}

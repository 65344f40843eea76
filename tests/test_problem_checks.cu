// Host test (no GPU needed): the checks of the problem shapes of steps 06-07 accept a right
// result and reject wrong ones; step 06's --pass-rate is parsed into the filter. The outputs are made on the host from the same generator,
// then broken the way a faulty kernel would break them. Compiled by nvcc because the
// headers hold the GPU pieces too; nothing here launches a kernel.
#include <cstdio>
#include <cstring>

#include "filter.cuh"
#include "normalize.cuh"
#include "segmented.cuh"
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

int main() {
  test_pass_rate_flag();
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
  else std::printf("the checks of the segmented sum, the normalization and the filter accept right and reject wrong results\n");
  return failures ? 1 : 0;
}

// Host test: step 10's kernels on the CPU wavefront model (wave_model.hpp) at the width this
// binary was built for, checked against the harness's exact host reference (reference.hpp).
//   wave_model_w64 [--verbose] [--quick]
// block_atomic and grid_sync: odd sizes, offsets 0-3 from a 256-byte boundary, int and float,
// a guard element on each side of the input and a poisoned output; tile_rows: several row
// lengths, every row checked. --quick: fewer cases (sizes 1, 1000, 2^20+3; offsets 0 and 3; four
// row lengths), stopping at the first failure (the mutation test's mode).
// Exit 0: every case passed; 1: a case failed.
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "entry.hpp"
#include "reference.hpp"
#include "wave_model.hpp"

namespace {

bool verbose = false, quick = false;
int failed = 0;
constexpr uint64_t kSeed = 12345;

struct Tally {
  const char* name;
  int passed = 0, total = 0;
};

// The first case's model problems and wrong results are printed whatever --verbose says.
bool report(Tally& t, const char* dtype, size_t n, size_t offset, const std::string& detail, bool ok) {
  const std::vector<std::string> errors = wave_model::take_errors();
  ok = ok && errors.empty();
  ++t.total;
  t.passed += ok;
  if (verbose || !ok)
    std::printf("W=%d %-5s %9zu %zu  %-13s %s %s\n", step10_entry.width, dtype, n, offset, t.name, ok ? "ok" : "FAILED",
                detail.c_str());
  for (const std::string& e : errors) std::printf("    model: %s\n", e.c_str());
  if (!ok) ++failed;
  return ok;
}

template <typename T>
harness::Verdict verdict(T got, const harness::Reference& ref, size_t n) {
  if constexpr (std::is_same_v<T, unsigned>) return harness::verify(got, ref);
  else return harness::verify(got, ref, n);
}

// n elements `offset` past a 256-byte boundary, the guards just outside.
template <typename T>
struct Input {
  std::vector<unsigned char> storage;
  T* in;
  Input(size_t n, size_t offset, size_t count_of_values) : storage(512 + (n + offset + 1) * sizeof(T)) {
    const uintptr_t base = (reinterpret_cast<uintptr_t>(storage.data()) + 255 + 256) / 256 * 256;
    in = reinterpret_cast<T*>(base) + offset;
    in[-1] = harness::guard_value<T>();
    for (size_t i = 0; i < count_of_values; ++i) in[i] = harness::input_value<T>(kSeed, i);
    in[n] = harness::guard_value<T>();
  }
};

template <typename T>
bool array_case(Tally& atomic, Tally& sync, const char* dtype, size_t n, size_t offset,
                void (*block_atomic)(const T*, size_t, T*), void (*grid_sync)(const T*, size_t, T*, T*)) {
  Input<T> input(n, offset, n);
  const harness::Reference ref = harness::reference_sum<T>(kSeed, n);
  std::vector<T> partials(step10_entry.grid_sync_blocks());
  T out;
  std::memset(&out, 0xFF, sizeof out);  // poisoned: a run that writes nothing fails
  block_atomic(input.in, n, &out);
  harness::Verdict v = verdict(out, ref, n);
  bool ok = report(atomic, dtype, n, offset, v.detail, v.ok);
  std::memset(&out, 0xFF, sizeof out);
  grid_sync(input.in, n, &out, partials.data());
  v = verdict(out, ref, n);
  return report(sync, dtype, n, offset, v.detail, v.ok) && ok;
}

template <typename T>
bool rows_case(Tally& t, const char* dtype, size_t rows, size_t cols, void (*tile_rows)(const T*, size_t, size_t, T*)) {
  Input<T> input(rows * cols, 0, rows * cols);
  std::vector<T> out(rows);
  std::memset(out.data(), 0xFF, rows * sizeof(T));
  tile_rows(input.in, rows, cols, out.data());
  size_t wrong = 0;
  for (size_t r = 0; r < rows; ++r)
    wrong += !verdict(out[r], harness::finished<T>(harness::partial_reference<T>(kSeed, r * cols, (r + 1) * cols)), cols).ok;
  const std::string detail = std::to_string(wrong) + " of " + std::to_string(rows) + " rows wrong (cols=" + std::to_string(cols) + ")";
  return report(t, dtype, rows * cols, 0, detail, wrong == 0);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--verbose")) verbose = true;
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else return std::fprintf(stderr, "usage: %s [--verbose] [--quick]\n", argv[0]), 2;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  const wave_model::Device& d = wave_model::device();
  std::printf("wave model: W=%d (the kernels' kWaveSize %d), %d CUs x %d threads, grid_sync's %u blocks resident at once\n",
              step10_entry.width, step10_entry.kernel_wave, d.compute_units, d.threads_per_cu, step10_entry.grid_sync_blocks());
  Tally atomic{"block_atomic"}, sync{"grid_sync"}, rows{"tile_rows"};
  const std::vector<size_t> sizes = quick ? std::vector<size_t>{1, 1000, (size_t(1) << 20) + 3}
                                           : std::vector<size_t>{1, 3, 1000, 65537, (size_t(1) << 20) + 3};
  // Row lengths around the tile (16) and the wavefront (32, 64), rows odd in number.
  std::vector<std::pair<size_t, size_t>> shapes = {{1, 4099}, {15, 1001}, {16, 777}, {17, 333}, {33, 257}, {65, 129}, {1000, 65}};
  if (quick) shapes = {{1, 4099}, {16, 777}, {17, 333}, {1000, 65}};
  bool ok = true;
  for (size_t n : sizes) {
    for (size_t offset = 0; offset < 4 && (ok || !quick); offset += quick ? 3 : 1) {
      ok &= array_case<unsigned>(atomic, sync, "int", n, offset, step10_entry.block_atomic_int, step10_entry.grid_sync_int);
      if (!ok && quick) break;
      ok &= array_case<float>(atomic, sync, "float", n, offset, step10_entry.block_atomic_float, step10_entry.grid_sync_float);
    }
  }
  for (const auto& [cols, count] : shapes) {
    if (!ok && quick) break;
    ok &= rows_case<unsigned>(rows, "int", count, cols, step10_entry.tile_rows_int);
    if (!ok && quick) break;
    ok &= rows_case<float>(rows, "float", count, cols, step10_entry.tile_rows_float);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = double(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  std::printf("W=%d: block_atomic %d/%d, grid_sync %d/%d, tile_rows %d/%d cases passed (%.1f s, %.1f s of CPU)\n",
              step10_entry.width, atomic.passed, atomic.total, sync.passed, sync.total, rows.passed, rows.total, seconds, cpu);
  return failed ? 1 : 0;
}

// One sum over K GPUs, from the variants' launchers to the rows (step 08): per dtype, size
// and offset the shards are filled, CUB on one GPU and on every shard, the read floor on all
// K GPUs and each variant are verified, then timed in turns on the fork/join clock and
// reported (multi_report: one line and a CSV row each).
#pragma once

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "multi_gpu.cuh"

namespace harness {

// One (n, offset) spread over the K GPUs: what a variant's launcher reads and writes.
template <typename T>
struct Shards {
  MultiGpu* mg;
  std::vector<const T*> in;   // shard k's input, on GPU k
  std::vector<size_t> count;  // its elements
  T* partials(int k) const { return static_cast<T*>((*mg)[k].scratch); }  // GPU k's block partials
  T* out(int k) const { return static_cast<T*>((*mg)[k].out); }           // GPU k's result (out(k)[0])
};

// A way to reduce over K GPUs. The launcher queues the work on every GPU's stream (the caller
// forks before and joins after); `f` is a generic lambda, instantiated for unsigned and float.
// everywhere: the total lands on every GPU (each verified, and all bitwise equal), else on
// GPU 0 only. timeouts: if set, read after each checked run; nonzero fails the program (a
// cross-GPU barrier gave up). A variant without a launcher is skipped, `skipped` saying why.
template <typename T>
using MultiLauncher = std::function<void(const Shards<T>&)>;

struct MultiVariant : TypedLauncher<MultiLauncher> {
  std::string name;
  bool everywhere = false;
  std::function<unsigned()> timeouts;
  std::string skipped;

  template <class F>
  MultiVariant(std::string name_, F f, bool everywhere_, std::function<unsigned()> timeouts_ = {})
      : TypedLauncher(f), name(std::move(name_)), everywhere(everywhere_), timeouts(std::move(timeouts_)) {}
  static MultiVariant skip(std::string what, std::string why) {
    MultiVariant v(std::move(what), nullptr, false);
    v.skipped = std::move(why);
    return v;
  }
};

// One contender of a comparison across GPUs (bench.cuh's Contender), filled by field name.
// row = false: timed for a derived figure only (a shard's CUB alone, for cub_sum_of_shards),
// no row of its own.
struct MultiContender : Contender {
  bool row = true;
  explicit MultiContender() = default;
};

// The largest shard (elements) any GPU holds over --n, for the buffers.
inline size_t largest_shard(const Options& opt, int K) {
  size_t max_shard = 0;
  for (size_t n : opt.sizes) max_shard = std::max(max_shard, shard_size(n, K, 0));
  return max_shard;
}

// Exit code when the GPUs cannot run the step (see open_device, cooperative_unsupported), or -1.
inline int open_gpus(const std::vector<int>& devices, const char* step) {
  if (int code = open_device(devices[0], step); code >= 0) return code;  // built for this GPU?
  for (int d : devices)
    if (cooperative_unsupported(d, step)) return 77;
  return -1;
}

inline void print_gpus(MultiGpu& mg, const char* step) {
  const int K = mg.size();
  std::printf("%s on %d GPUs:", step, K);
  for (int k = 0; k < K; ++k) std::printf(" %d=%s", mg[k].device, mg[k].info.name.c_str());
  std::printf("; CUDA %s, peak %.0f GB/s each (x%d = %.0f GB/s)\n", mg[0].info.cuda.c_str(), mg[0].info.peak_gbps, K,
              K * mg[0].info.peak_gbps);
  for (int k = 1; k < K; ++k)
    if (mg[k].info.name != mg[0].info.name)
      std::printf("note: the GPUs differ; %% of peak and the CSV's device column use GPU %d's\n", mg[0].device);
}

inline void print_multi_header(const Options& opt) {
  if (opt.check_only)
    std::printf("check only: each contender once on poisoned outputs, against the host reference of all n\n"
                "%-5s %11s %3s  %-16s %s  [shape]\n", "dtype", "n", "off", "variant", "check");
  else
    std::printf("median of %d timed runs after %d warm-up; L2 flushed on every GPU before each; time = GPU 0's events "
                "around fork/join of all streams;\nGB/s = n*4/median; %%peak of K x one GPU's peak; xCUB = cub_1gpu time / "
                "this time; xfloor = this time / the read on all K GPUs\n"
                "%-5s %11s %3s  %-18s %9s %9s %8s %6s %6s %7s  %-7s %s\n",
                opt.reps, opt.warmup, "dtype", "n", "off", "variant", "median ms", "min ms", "GB/s", "%peak", "xCUB",
                "xfloor", "shape", "check");
}

// CUB over the whole array on GPU 0, where it fits beside GPU 0's shard: the cub_1gpu
// contender, its input in `whole` (the caller frees it; nullptr: it did not fit, no contender).
template <typename T>
bool whole_array_cub(const Options& opt, MultiGpu& mg, CubSum<T>& cub, size_t n, size_t offset, const Reference& ref,
                     void*& whole, std::vector<MultiContender>& cs) {
  mg.use(0);
  const size_t bytes = input_buffer_bytes(n);
  whole = nullptr;
  if (bytes + (size_t(512) << 20) >= free_gpu_bytes()) return true;
  CUDA_CHECK(cudaMalloc(&whole, bytes));
  const T* whole_in = place_input<T>(whole, n, offset, opt.seed, mg[0].stream);
  auto sum = cub.prepare(whole_in, n, static_cast<T*>(mg[0].out), mg[0].stream);
  auto launch = [&mg, sum] { mg.use(0); sum(); };
  const Verdict v = verify_result(mg.template run_once<T>(launch)[0], ref, n);
  MultiContender c;
  c.step = "cub";
  c.name = "cub_1gpu";
  c.launch = launch;
  c.check = check_text(v);
  c.ok = v.ok;
  cs.push_back(c);
  return v.ok;
}

// CUB on every shard at once, the shard sums added on the host (checks the shards; no combine
// timed): cub_each_gpu; unless --check also the read on all K GPUs and each shard's CUB alone
// (for the sum of single-GPU CUB times, no row of their own).
template <typename T>
bool cub_on_shards(const Options& opt, MultiGpu& mg, std::vector<CubSum<T>>& cub, const Shards<T>& s, size_t n,
                   const Reference& ref, std::vector<MultiContender>& cs) {
  const int K = mg.size();
  std::vector<std::function<void()>> each;
  for (int k = 0; k < K; ++k) {
    mg.use(k);
    auto sum = cub[size_t(k)].prepare(s.in[size_t(k)], s.count[size_t(k)], s.out(k), mg[k].stream);
    each.push_back([&mg, k, sum] { mg.use(k); sum(); });
  }
  auto all = [each] { for (const auto& f : each) f(); };
  T host = 0;
  for (T g : mg.template run_once<T>(all)) host += g;
  const Verdict v = verify_result(host, ref, n);
  MultiContender each_gpu;
  each_gpu.step = "cub";
  each_gpu.name = "cub_each_gpu";
  each_gpu.launch = all;
  each_gpu.check = check_text(v) + " (shard sums added on the host, untimed)";
  each_gpu.ok = v.ok;
  cs.push_back(each_gpu);
  if (!opt.check_only) {
    MultiContender floor;
    floor.step = "floor";
    floor.name = "read";
    floor.launch = [&mg, s, K] {
      for (int k = 0; k < K; ++k) {
        mg.use(k);
        launch_floor(s.in[size_t(k)], s.count[size_t(k)], s.out(k) + 1, 0, mg[k].stream);
      }
    };
    floor.check = "(reads only, all GPUs at once)";
    floor.ok = true;
    cs.push_back(floor);
    for (int k = 0; k < K; ++k) {
      MultiContender shard;
      shard.step = "cub";
      shard.name = "cub_shard" + std::to_string(k);
      shard.launch = each[size_t(k)];
      shard.ok = true;
      shard.row = false;
      cs.push_back(shard);
    }
  }
  return v.ok;
}

// Verifies one variant on poisoned outputs (--repeat-results: R times, each verified); its
// contender goes into `cs` with the check text.
template <typename T>
bool check_multi_variant(const Options& opt, MultiGpu& mg, const MultiVariant& var, const std::function<void()>& launch,
                         const char* dtype, size_t n, size_t offset, const Reference& ref, const char* step,
                         std::vector<MultiContender>& cs) {
  const int K = mg.size();
  const int runs = std::max(1, opt.repeat_results);
  std::vector<T> firsts;
  std::string text;
  bool ok = true;
  for (int r = 0; r < runs && ok; ++r) {
    const std::vector<T> got = mg.template run_once<T>(launch);
    firsts.push_back(got[0]);
    Verdict verdict = verify_result(got[0], ref, n);
    bool same = true;
    if (var.everywhere)
      for (int k = 1; k < K; ++k) {
        same &= std::memcmp(&got[size_t(k)], &got[0], sizeof(T)) == 0;
        verdict.ok &= verify_result(got[size_t(k)], ref, n).ok;
      }
    const unsigned timeouts = var.timeouts ? var.timeouts() : 0;
    ok = verdict.ok && same && timeouts == 0;
    text = check_text(verdict);
    if (var.everywhere) text += same ? ", bitwise equal on " + std::to_string(K) + " GPUs" : ", NOT bitwise equal across GPUs";
    if (timeouts) text += ", the cross-GPU barrier TIMED OUT (a GPU never arrived)";
    if (!ok && runs > 1) text = "FAILED on repeat " + std::to_string(r + 1) + ": " + text;
    if (timeouts) throw std::runtime_error("cross-GPU barrier timed out: " + text);
  }
  if (opt.repeat_results > 0) print_results(dtype, n, offset, var.name, firsts);
  MultiContender c;
  c.step = step;
  c.name = var.name;
  c.launch = launch;
  c.check = text;
  c.ok = ok;
  cs.push_back(c);
  return ok;
}

// --check: one line per contender; else all timed in turns and one row each, plus the sum of
// the shards' single-GPU CUB times (cub_sum_of_shards).
inline void report_multi(const Options& opt, MultiGpu& mg, const std::vector<MultiContender>& cs, const char* dtype,
                         size_t n, size_t offset, bool have_cub) {
  const int K = mg.size();
  const std::string shape = "gpus=" + std::to_string(K);
  if (opt.check_only) {
    for (const auto& c : cs) print_check_line(dtype, n, offset, c.name, c.check, c.name == "cub_1gpu" ? "gpus=1" : shape);
    return;
  }
  std::vector<std::function<void()>> launches;
  for (const auto& c : cs) launches.push_back(c.launch);
  const std::vector<Timing> t = mg.time(opt, launches);
  double cub_ms = 0, floor_ms = 0, shard_sum_ms = 0;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].name == "cub_1gpu") cub_ms = t[i].median_ms;
    if (cs[i].step == "floor") floor_ms = t[i].median_ms;
    if (!cs[i].row) shard_sum_ms += t[i].median_ms;
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    if (!cs[i].row) continue;
    const int gpus = cs[i].name == "cub_1gpu" ? 1 : K;
    // The one-GPU CUB row: % of ONE GPU's peak (multi_report divides by K x peak).
    multi_report(opt, mg[0].info, gpus, cs[i].step, cs[i].name, dtype, n, offset, t[i], cub_ms, floor_ms, cs[i].check,
                 cs[i].ok);
  }
  Timing sum_of_shards;  // no spread: min and max not kept
  sum_of_shards.median_ms = shard_sum_ms;
  multi_report(opt, mg[0].info, K, "cub", "cub_sum_of_shards", dtype, n, offset, sum_of_shards, cub_ms,
               floor_ms, "(sum of the K shards' single-GPU CUB medians; min not kept)", true);
  if (!have_cub)
    std::printf("%-5s %11zu %3zu  (no cub_1gpu: the whole array does not fit on GPU %d; x_cub = 0)\n", dtype, n, offset,
                mg[0].device);
}

// One dtype over every size and offset. Returns false when a result that should be right was wrong.
template <typename T>
bool run_multi_dtype(const char* dtype, const Options& opt, MultiGpu& mg, const char* step,
                     const std::vector<MultiVariant>& variants) {
  const int K = mg.size();
  bool all_ok = true;
  std::vector<CubSum<T>> cub_shard(static_cast<size_t>(K));
  CubSum<T> cub_whole;
  for (size_t n : opt.sizes) {
    for (size_t offset : opt.offsets) {
      Shards<T> s{&mg, mg.template fill<T>(n, offset, opt.seed), {}};
      for (int k = 0; k < K; ++k) s.count.push_back(shard_size(n, K, k));
      const Reference ref = reference_sum<T>(opt.seed, n);
      std::vector<MultiContender> cs;
      void* whole = nullptr;
      all_ok &= whole_array_cub<T>(opt, mg, cub_whole, n, offset, ref, whole, cs);
      all_ok &= cub_on_shards<T>(opt, mg, cub_shard, s, n, ref, cs);
      for (const MultiVariant& var : variants) {
        if (!var.skipped.empty()) {
          std::printf("%-5s %11zu %3zu  %s skipped: %s\n", dtype, n, offset, var.name.c_str(), var.skipped.c_str());
          continue;
        }
        auto launch = [&s, f = var.launcher<T>()] { f(s); };
        all_ok &= check_multi_variant<T>(opt, mg, var, launch, dtype, n, offset, ref, step, cs);
      }
      report_multi(opt, mg, cs, dtype, n, offset, whole != nullptr);
      if (whole) {
        mg.use(0);
        CUDA_CHECK(cudaFree(whole));
      }
    }
  }
  return all_ok;
}

}  // namespace harness

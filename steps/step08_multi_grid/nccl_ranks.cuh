// One process per GPU with NCCL (step08_nccl_ranks): the file that hands the unique id from
// rank 0 to the others, this rank's GPU buffers, its timing on its own clock, the check and
// row of one case, and run_nccl_rank, the program around the step's two pieces (its
// communicator set-up and its launcher). Every rank runs the same calls in the same order.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "multi_gpu.cuh"
#include "nccl_check.cuh"
#include "run_step.cuh"

namespace harness {
#if HAVE_NCCL

// The id file (--id-file) that carries ncclGetUniqueId's bytes from rank 0 to the others
// (step08_nccl_ranks.cu's init_communicator makes the NCCL calls). Rank 0 checks that the
// path is fresh, then writes PATH.tmp and renames it: the others never read half a file.
inline void require_fresh_id_file(const std::string& path) {
  struct stat sb;
  if (stat(path.c_str(), &sb) == 0)
    throw UsageError("--id-file: " + path + " already exists (an old run's?); give a fresh path");
}
inline void write_id_file(const std::string& path, const ncclUniqueId& id) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f || std::fwrite(&id, sizeof id, 1, f) != 1 || std::fclose(f) != 0)
    throw UsageError("--id-file: cannot write " + tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw UsageError("--id-file: cannot rename " + tmp + " to " + path);
}
// The other ranks wait for the file (120 s at most).
inline ncclUniqueId wait_for_id_file(const std::string& path) {
  ncclUniqueId id{};
  const auto t0 = std::chrono::steady_clock::now();
  while (true) {
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      const size_t got = std::fread(&id, sizeof id, 1, f);
      std::fclose(f);
      if (got == 1) return id;
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(120))
      throw std::runtime_error("--id-file: " + path + " did not appear within 120 s (is rank 0 running?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// This rank: its GPU (--device, device 0 under nccl_launch.sh), communicator (the step's,
// destroyed by finish), stream and buffers. small: 512 bytes of device memory for results and
// the all-reduces of timing and checking (the byte ranges each user takes are named where it
// is used).
class Rank {
 public:
  Rank(const MultiGpuOptions& opt, ncclComm_t comm_, size_t max_shard) : opt_(opt), dev(device_info(opt.device)), comm(comm_) {
    std::printf("rank %d of %d on %s (device %d), NCCL %d\n", opt.rank, opt.nranks, dev.name.c_str(), opt.device,
                NCCL_VERSION_CODE);
    CUDA_CHECK(cudaMalloc(&in, input_buffer_bytes(max_shard)));
    CUDA_CHECK(cudaMalloc(&scratch, size_t(1) << 20));
    CUDA_CHECK(cudaMalloc(&small, 512));
    CUDA_CHECK(cudaMemset(small, 0, 512));
    flush.allocate(dev);
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  // The orderly end (not a destructor: it must not run while an error unwinds, where the
  // other ranks may not get here).
  void finish() {
    CUDA_CHECK(cudaStreamSynchronize(stream));
    NCCL_CHECK(ncclCommDestroy(comm));
    cudaStreamDestroy(stream);
    cudaFree(in);
    cudaFree(scratch);
    cudaFree(small);
    flush.free();
    if (opt_.rank == 0) std::remove(opt_.id_file.c_str());
  }

  // How each rank times its own stream with events: per rep the L2 flush, an all-reduce of
  // one value that lines the ranks up, the host lead, then start, `launch`, stop. Every rank
  // gets its own Timing and the largest median over the ranks (an all-reduce with ncclMax):
  // the row's. Uses small's bytes 160..163 and 192..199.
  struct Times {
    Timing mine;
    double slowest_median_ms = 0;
  };
  // Not time_in_turns: its warm-up runs for at least 20 ms, so ranks could make different
  // numbers of NCCL calls and hang; every rank must make the same calls, hence a fixed count.
  Times time(const std::function<void()>& launch) {
    for (int w = 0; w < std::max(opt_.warmup, 1); ++w) launch();
    float* align = static_cast<float*>(small) + 40;
    const std::vector<double> ms = event_pair_times(opt_.reps, stream, launch, [&] {
      flush.run(stream);
      NCCL_CHECK(ncclAllReduce(align, align, 1, ncclFloat32, ncclSum, comm, stream));
      wait_ns_kernel<<<1, 1, 0, stream>>>(kHostLeadNs);
      CUDA_CHECK_LAUNCH();
    });
    Times rt;
    rt.mine = summarize(ms, 1);
    double* worst = static_cast<double*>(small) + 24;
    CUDA_CHECK(cudaMemcpyAsync(worst, &rt.mine.median_ms, sizeof(double), cudaMemcpyHostToDevice, stream));
    NCCL_CHECK(ncclAllReduce(worst, worst, 1, ncclFloat64, ncclMax, comm, stream));
    CUDA_CHECK(cudaMemcpyAsync(&rt.slowest_median_ms, worst, sizeof(double), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return rt;
  }

  // The cost of one ncclAllReduce of one float in this mode, timed as the rows are: to set
  // against the one-process figures (step08_multi_grid's cost lines). Uses small's bytes 224..231.
  void allreduce_cost() {
    float* one = static_cast<float*>(small) + 56;
    std::vector<double> call_us;
    const Times rt = time([&] {
      const auto t0 = std::chrono::steady_clock::now();
      NCCL_CHECK(ncclAllReduce(one, one + 1, 1, ncclFloat32, ncclSum, comm, stream));
      call_us.push_back(host_us_since(t0));
    });
    std::printf("rank %d: ncclAllReduce of 1 float on this rank's clock: median %.2f us (spread %.2f-%.2f); host: %.1f us "
                "per call (median)\n", opt_.rank, rt.mine.median_ms * 1e3, rt.mine.min_ms * 1e3, rt.mine.max_ms * 1e3,
                median_of(call_us));
    if (opt_.rank == 0)
      std::printf("costs on %d ranks (one process per GPU): ncclAllReduce of 1 float, each rank's own clock (lined up by "
                  "an all-reduce, median of %d), the slowest rank's: %.2f us\n", opt_.nranks, opt_.reps,
                  rt.slowest_median_ms * 1e3);
  }

  // One case: `launch` leaves the total in out[0] (small's first bytes) on every rank. Checks
  // this rank's total and that all ranks hold the same bits ((min, max) over the ranks, in
  // small's bytes 128..135); then, unless --check, times it; rank 0 writes the row (under
  // `step`, time = the slowest rank's median). Returns whether the check passed.
  template <typename T>
  bool check_and_time(const char* step, const char* variant, const char* dtype, size_t n, size_t offset,
                      const std::function<void()>& launch) {
    T* out = static_cast<T*>(small);
    const Reference ref = reference_sum<T>(opt_.seed, n);
    CUDA_CHECK(cudaMemsetAsync(out, 0xFF, sizeof(T), stream));
    launch();
    unsigned* bits = reinterpret_cast<unsigned*>(out) + 32;
    CUDA_CHECK(cudaMemcpyAsync(bits, out, 4, cudaMemcpyDeviceToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(bits + 1, out, 4, cudaMemcpyDeviceToDevice, stream));
    NCCL_CHECK(ncclAllReduce(bits, bits, 1, ncclUint32, ncclMin, comm, stream));
    NCCL_CHECK(ncclAllReduce(bits + 1, bits + 1, 1, ncclUint32, ncclMax, comm, stream));
    T got{};
    unsigned minmax[2] = {0, 0};
    CUDA_CHECK(cudaMemcpyAsync(&got, out, sizeof(T), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(minmax, bits, 8, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const Verdict v = verify_result(got, ref, n);
    const bool same = minmax[0] == minmax[1];
    const bool ok = v.ok && same;
    const std::string check = check_text(v) + (same ? ", bitwise equal on all ranks" : ", NOT bitwise equal across ranks");
    const int R = opt_.rank, K = opt_.nranks;
    if (opt_.check_only) {
      print_check_line(dtype, n, offset, variant, check, "gpus=" + std::to_string(K) + " rank=" + std::to_string(R));
      return ok;
    }
    const Times rt = time(launch);
    std::printf("rank %d: %-5s %11zu %3zu  %s  this rank's median %.4f ms (min %.4f)\n", R, dtype, n, offset, variant,
                rt.mine.median_ms, rt.mine.min_ms);
    Timing slowest;  // the slowest rank's median; no spread
    slowest.median_ms = rt.slowest_median_ms;
    if (R == 0)
      multi_report(opt_, dev, K, step, variant, dtype, n, offset, slowest, 0, 0,
                   check + " (ms: slowest rank's median; no CUB or floor in this mode)", ok);
    return ok;
  }

 private:
  const MultiGpuOptions& opt_;

 public:
  DeviceInfo dev;
  ncclComm_t comm{};
  cudaStream_t stream{};
  void* in = nullptr;       // this rank's shard, with guards
  void* scratch = nullptr;  // block partials (1 MiB)
  void* small = nullptr;    // 512 bytes: out[0] the total, out[16] this rank's sum, the rest as named above
  L2Flush flush;
};

// One dtype: this rank's shard of every n and offset, `launch(in, count, total, rank)` (the total
// of all ranks into `total` on every rank), checked and timed.
template <typename T, class Launch>
bool rank_dtype(const char* csv_step, const std::string& variant, const char* dtype, const MultiGpuOptions& opt, Rank& rank,
                Launch& launch) {
  const int R = opt.rank, K = opt.nranks;
  bool all_ok = true;
  for (size_t n : opt.sizes)
    for (size_t offset : opt.offsets) {
      const size_t count = shard_size(n, K, R);
      const T* in = place_input<T>(rank.in, count, offset, opt.seed, rank.stream, shard_begin(n, K, R));
      all_ok &= rank.check_and_time<T>(csv_step, variant.c_str(), dtype, n, offset,
                                       [&] { launch(in, count, static_cast<T*>(rank.small), rank); });
    }
  return all_ok;
}
#endif

// The whole program behind step08_nccl_ranks's main: one rank of K processes. Its rows go
// under `csv_step` (the one-process program's step, beside whose variants they are set).
// init(opt) -> ncclComm_t makes this rank's communicator; launch: a generic lambda
// (const T* in, size_t count, T* total, Rank&) for T = unsigned and float.
template <class Init, class Launch>
int run_nccl_rank(int argc, char** argv, const char* step, const char* csv_step, const std::string& intro,
                  const VariantName& variant, [[maybe_unused]] Init&& init, [[maybe_unused]] Launch&& launch) {
  turn_off_nvls(step);
  MultiGpuOptions opt;
  const std::string about = intro + "\nNCCL: " + (HAVE_NCCL ? "built in" : "not found at configure time");
  VariantGroup names;  // the program's only list: no problem heading
  names.variants = {variant};
  const int usage = parse_program(argc, argv, step, 0, about, {names}, opt, [&](const Options& o) {
    if (!o.help && opt.rank < 0)
      throw UsageError("--rank: missing (one rank of K processes: scripts/nccl_launch.sh K ./" + std::string(step) +
                       " [flags] starts them)");
  }, rank_flags(opt));
  if (usage >= 0) return usage;
  const std::string who = std::string(step) + ": rank " + std::to_string(opt.rank);
  return exit_code_of(who.c_str(), [&] {
    if (int code = open_device(opt.device, step); code >= 0) return code;
#if !HAVE_NCCL
    std::printf("%s: needs NCCL, and this build has none; skipping.\n", step);
    return 77;
#else
    size_t max_shard = 0;
    for (size_t n : opt.sizes) max_shard = std::max(max_shard, shard_size(n, opt.nranks, opt.rank));
    Rank rank(opt, init(opt), max_shard);
    if (!opt.check_only) rank.allreduce_cost();
    const bool ok = for_each_dtype(opt, [&](auto zero, const char* dtype) {
      return rank_dtype<decltype(zero)>(csv_step, variant.name, dtype, opt, rank, launch);
    });
    rank.finish();
    return verdict_code(who.c_str(), ok);
#endif
  });
}

}  // namespace harness

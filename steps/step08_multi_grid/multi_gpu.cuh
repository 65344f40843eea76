// One problem split over K GPUs: which GPUs, the shards, the input fill, fork/join of one
// stream per GPU, the timing loop and the result row. It reuses the single-GPU harness
// pieces (flags, input generator, references, verification, L2 flush, floor kernel, CSV
// row); what differs is that every measurement spans K devices.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "multi_gpu_flags.hpp"
#include "run_step.cuh"

namespace harness {

// Runs launch once on a poisoned output (all bits set: 2^32-1 for int, NaN for float), returns the result.
template <typename T, class F>
T run_once(F&& launch, T* d_out, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(d_out, 0xFF, sizeof(T), stream));
  launch();
  T got{};
  CUDA_CHECK(cudaMemcpyAsync(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return got;
}

template <typename T>
void print_results(const char* dtype, size_t n, size_t offset, const std::string& name, const std::vector<T>& got) {
  std::set<T> distinct(got.begin(), got.end());
  std::printf("%-5s %11zu %3zu  %-16s results of %zu runs:", dtype, n, offset, name.c_str(), got.size());
  for (T g : got) {
    if constexpr (std::is_same_v<T, unsigned>) std::printf(" %u", g);
    else std::printf(" %.9g", double(g));
  }
  std::printf("  -> %zu distinct\n", distinct.size());
}

// Calls f(T{}, name) once per --dtype, with T = unsigned for "int" and float for "float". Every
// dtype runs, even after one fails; returns true when every call returned true.
template <typename F>
bool for_each_dtype(const Options& opt, F&& f) {
  bool ok = true;
  for (const auto& dtype : opt.dtypes) ok &= dtype == "int" ? f(unsigned{}, "int") : f(float{}, "float");
  return ok;
}

// ---- shards --------------------------------------------------------------------------------
// Shard k of n elements over K GPUs is [begin(k), begin(k+1)): the first n % K shards get one
// element more. 64-bit throughout (n up to 2^40, K up to 1024: n * k never overflows).
inline size_t shard_begin(size_t n, int K, int k) {
  return n / size_t(K) * size_t(k) + std::min(size_t(k), n % size_t(K));
}
inline size_t shard_size(size_t n, int K, int k) { return shard_begin(n, K, k + 1) - shard_begin(n, K, k); }


// Before each timed run GPU 0 spins this long after the flushes (harness::wait_ns_kernel),
// so that the host has queued all K GPUs' work (launches into K streams, NCCL's group call)
// before the clock starts: the host's enqueue time never falls inside the time.
constexpr uint64_t kHostLeadNs = 200000;  // 200 us

// Microseconds of host time since t0 (how long the host took to queue something).
inline double host_us_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

// ---- which GPUs ------------------------------------------------------------------------------
// --gpus K (the first K visible), --gpus 2,0 (these), or every visible GPU. Returns the exit
// code when the program cannot go on (77: fewer than two GPUs visible, one line on stdout;
// 2: --gpus asks for more than exist, one line on stderr), or -1 with `out` filled.
inline int select_gpus(const MultiGpuOptions& opt, const char* step, std::vector<int>& out) {
  int count = 0;
  if (int code = count_gpus(step, count); code >= 0) return code;
  if (count < 2) {
    std::printf("%s: needs at least 2 GPUs, 1 visible; skipping.\n", step);
    return 77;
  }
  out.clear();
  if (!opt.gpu_list.empty()) {
    for (int d : opt.gpu_list) {
      if (d >= count) {
        std::fprintf(stderr, "%s: error: --gpus: GPU %d is out of range (this machine has %d GPUs)\n", step, d, count);
        return 2;
      }
      out.push_back(d);
    }
  } else {
    const int K = opt.gpus > 0 ? opt.gpus : count;
    if (K > count) {
      std::fprintf(stderr, "%s: error: --gpus: %d GPUs asked for, this machine has %d\n", step, K, count);
      return 2;
    }
    for (int d = 0; d < K; ++d) out.push_back(d);
  }
  return -1;
}

// ---- peers -----------------------------------------------------------------------------------
struct PeerLink {
  bool access = false, native_atomics = false;
  int perf_rank = -1;  // cudaDevP2PAttrPerformanceRank: lower is a better link
};
inline PeerLink peer_link(int from, int to) {
  PeerLink l;
  int v = 0;
  CUDA_CHECK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, from, to));
  l.access = v != 0;
  CUDA_CHECK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported, from, to));
  l.native_atomics = v != 0;
  CUDA_CHECK(cudaDeviceGetP2PAttribute(&l.perf_rank, cudaDevP2PAttrPerformanceRank, from, to));
  return l;
}

// ---- K GPUs, one stream each -----------------------------------------------------------------
// Per GPU: the shard's input (with guards), scratch for block partials, a small result area,
// an L2 flush buffer, and events for fork/join. GPU 0 (the first listed) owns the clock.
struct Gpu {
  int device = 0;
  DeviceInfo info;
  cudaStream_t stream{};
  void* in = nullptr;  // guards + shard + guards
  size_t in_bytes = 0;
  void* scratch = nullptr;  // block partials etc.
  size_t scratch_bytes = 0;
  void* out = nullptr;  // 256 bytes: [0] the result, [1] the floor's sink
  L2Flush flush;
  cudaEvent_t ready{}, done{};  // no timing: cross-device waits only
  cudaEvent_t t0{}, t1{};       // timing, on this GPU's own clock (time_each_gpu)
};

class MultiGpu {
 public:
  // max_shard: the largest shard (elements) any GPU will hold, for the buffer sizes.
  MultiGpu(const std::vector<int>& devices, size_t max_shard) {
    for (int d : devices) {
      Gpu g;
      g.device = d;
      CUDA_CHECK(cudaSetDevice(d));
      g.info = device_info(d);
      g.in_bytes = input_buffer_bytes(max_shard);
      g.scratch_bytes = size_t(1) << 20;             // partials of at most 65536 blocks x 8 bytes x 2
      try {
        require_memory(g.in_bytes + g.scratch_bytes, "a shard of " + std::to_string(max_shard) + " elements on GPU " +
                                                         std::to_string(d));
      } catch (const UsageError&) {
        release();
        throw;
      }
      CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
      CUDA_CHECK(cudaMalloc(&g.in, g.in_bytes));
      CUDA_CHECK(cudaMalloc(&g.scratch, g.scratch_bytes));
      CUDA_CHECK(cudaMalloc(&g.out, 256));
      g.flush.allocate(g.info);
      CUDA_CHECK(cudaEventCreateWithFlags(&g.ready, cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&g.done, cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreate(&g.t0));
      CUDA_CHECK(cudaEventCreate(&g.t1));
      gpus_.push_back(g);
    }
    CUDA_CHECK(cudaSetDevice(gpus_[0].device));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~MultiGpu() { release(); }
  MultiGpu(const MultiGpu&) = delete;
  MultiGpu& operator=(const MultiGpu&) = delete;

  int size() const { return int(gpus_.size()); }
  Gpu& operator[](int k) { return gpus_[size_t(k)]; }
  void use(int k) const { CUDA_CHECK(cudaSetDevice(gpus_[size_t(k)].device)); }

  // GPU k's streams may start only after what GPU 0's stream has queued so far.
  void fork() {
    use(0);
    CUDA_CHECK(cudaEventRecord(gpus_[0].ready, gpus_[0].stream));
    for (int k = 1; k < size(); ++k) CUDA_CHECK(cudaStreamWaitEvent(gpus_[size_t(k)].stream, gpus_[0].ready, 0));
  }
  // GPU 0's stream goes on only after every GPU's stream has done what it has queued.
  void join() {
    for (int k = 1; k < size(); ++k) {
      use(k);
      CUDA_CHECK(cudaEventRecord(gpus_[size_t(k)].done, gpus_[size_t(k)].stream));
      use(0);
      CUDA_CHECK(cudaStreamWaitEvent(gpus_[0].stream, gpus_[size_t(k)].done, 0));
    }
    use(0);
  }
  void sync_all() {
    for (int k = 0; k < size(); ++k) {
      use(k);
      CUDA_CHECK(cudaStreamSynchronize(gpus_[size_t(k)].stream));
    }
    use(0);
  }

  // Fills GPU k's buffer with shard k of n elements (global indices), `offset` elements past
  // the 256-byte boundary. Returns the shards' input pointers.
  template <typename T>
  std::vector<const T*> fill(size_t n, size_t offset, uint64_t seed) {
    std::vector<const T*> in;
    for (int k = 0; k < size(); ++k) {
      Gpu& g = gpus_[size_t(k)];
      use(k);
      // Global indices: every GPU fills its own slice of the one array the host sums.
      in.push_back(place_input<T>(g.in, shard_size(n, size(), k), offset, seed, g.stream, shard_begin(n, size(), k)));
    }
    sync_all();
    return in;
  }

  // Poisons every GPU's result (all bits set), runs `launch` between fork and join, waits,
  // and returns the K results (GPU k's out[0]).
  template <typename T>
  std::vector<T> run_once(const std::function<void()>& launch) {
    for (int k = 0; k < size(); ++k) {
      use(k);
      CUDA_CHECK(cudaMemsetAsync(gpus_[size_t(k)].out, 0xFF, sizeof(T), gpus_[size_t(k)].stream));
    }
    fork();
    launch();
    join();
    sync_all();
    std::vector<T> got(static_cast<size_t>(size()));
    for (int k = 0; k < size(); ++k) {
      use(k);
      CUDA_CHECK(cudaMemcpy(&got[size_t(k)], gpus_[size_t(k)].out, sizeof(T), cudaMemcpyDeviceToHost));
    }
    use(0);
    return got;
  }

  // Timing across GPUs: CUDA events on GPU 0's stream around a fork/join. Each rep and each
  // contender: every GPU flushes its L2; GPU 0's stream waits for all flushes and records
  // `start`; every other stream waits for `start` (fork); the contender queues its work on
  // the streams it uses; GPU 0's stream waits for every stream (join) and records `stop`.
  // So the time runs from "all GPUs ready" to "the last GPU done", as a caller that forks
  // and joins would see it; the join's cross-device event wait (a few microseconds, printed
  // by the program as the empty fork/join) is inside it. Warm-up, turns and Timing as in
  // Bench::time (time_in_turns).
  // host_us: if given, per contender the longest host time (us) to queue one timed run, from
  // the lead spin to `stop`; above kHostLeadNs the GPU may have waited for the host inside
  // the time, and a note says so.
  std::vector<Timing> time(const Options& opt, const std::vector<std::function<void()>>& launches,
                           std::vector<double>* host_us = nullptr) {
    std::vector<double> queue_us(launches.size(), 0.0);
    std::vector<int> late(launches.size(), 0);
    auto warm = [&](size_t i) {
      fork();
      launches[i]();
      join();
    };
    auto timed = [&](size_t i) {
      flush_all_l2();
      join();  // GPU 0 waits for every flush
      const auto queued_from = std::chrono::steady_clock::now();
      wait_ns_kernel<<<1, 1, 0, gpus_[0].stream>>>(kHostLeadNs);
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaEventRecord(start_, gpus_[0].stream));
      for (int k = 1; k < size(); ++k) CUDA_CHECK(cudaStreamWaitEvent(gpus_[size_t(k)].stream, start_, 0));
      launches[i]();
      join();
      CUDA_CHECK(cudaEventRecord(stop_, gpus_[0].stream));
      const double us = host_us_since(queued_from);
      queue_us[i] = std::max(queue_us[i], us);
      late[i] += us > kHostLeadNs / 1e3;
      CUDA_CHECK(cudaEventSynchronize(stop_));
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, start_, stop_));
      return double(t);
    };
    const std::vector<Timing> result = time_in_turns(opt, launches.size(), 1, warm, [&] { sync_all(); }, timed);
    for (size_t i = 0; i < launches.size(); ++i)
      note_host_late("fork/join clock, contender " + std::to_string(i), late[i], opt.reps, queue_us[i]);
    if (host_us) *host_us = queue_us;
    return result;
  }

  // Every GPU flushes its L2 on its own stream (queued, not waited for).
  void flush_all_l2() {
    for (int k = 0; k < size(); ++k) {
      Gpu& g = gpus_[size_t(k)];
      use(k);
      g.flush.run(g.stream);
    }
  }

  // Timing on each GPU's own clock, the way one process per GPU (nccl_mp) must time itself:
  // every GPU flushes its L2; `line_up` queues what brings the GPUs to one moment (an
  // all-reduce of one value, as nccl_mp does; or fork()); then every GPU spins kHostLeadNs,
  // records its own start, runs its part of `launch` and records its own stop. No
  // cross-device event wait falls between a GPU's two events, but a wait for another GPU
  // inside the work does (an all-reduce waits for the slowest member). Per GPU the median
  // over the reps; the result is the slowest GPU's, as nccl_mp's row takes the slowest
  // rank's. host_us_*: the host time to queue one timed run (lead spins, events, `launch`).
  struct EachGpuTiming {
    Timing slowest;  // the GPU with the largest median
    int gpu = 0;     // its index (0..K-1)
    double host_us_median = 0, host_us_max = 0;
  };
  EachGpuTiming time_each_gpu(const Options& opt, const std::function<void()>& launch,
                              const std::function<void()>& line_up) {
    sync_all();
    for (int w = 0; w < std::max(opt.warmup, 1); ++w) {
      line_up();
      launch();
      sync_all();
    }
    std::vector<std::vector<double>> ms(gpus_.size());
    std::vector<double> queue_us;
    for (int r = 0; r < opt.reps; ++r) {
      flush_all_l2();
      line_up();
      const auto queued_from = std::chrono::steady_clock::now();
      for (int k = 0; k < size(); ++k) {
        Gpu& g = gpus_[size_t(k)];
        use(k);
        wait_ns_kernel<<<1, 1, 0, g.stream>>>(kHostLeadNs);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(g.t0, g.stream));
      }
      launch();
      for (int k = 0; k < size(); ++k) {
        use(k);
        CUDA_CHECK(cudaEventRecord(gpus_[size_t(k)].t1, gpus_[size_t(k)].stream));
      }
      queue_us.push_back(host_us_since(queued_from));
      for (int k = 0; k < size(); ++k) {
        Gpu& g = gpus_[size_t(k)];
        use(k);
        CUDA_CHECK(cudaEventSynchronize(g.t1));
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, g.t0, g.t1));
        ms[size_t(k)].push_back(t);
      }
    }
    use(0);
    EachGpuTiming e;
    for (int k = 0; k < size(); ++k) {
      const Timing t = summarize(ms[size_t(k)], 1);
      if (k == 0 || t.median_ms > e.slowest.median_ms) e.slowest = t, e.gpu = k;
    }
    e.host_us_median = median_of(queue_us);
    if (!queue_us.empty()) e.host_us_max = *std::max_element(queue_us.begin(), queue_us.end());
    const int late = int(std::count_if(queue_us.begin(), queue_us.end(), [](double us) { return us > kHostLeadNs / 1e3; }));
    note_host_late("each GPU's own clock", late, opt.reps, e.host_us_max);
    return e;
  }

 private:
  void release() {
    for (auto& g : gpus_) {
      cudaSetDevice(g.device);
      cudaFree(g.in);
      cudaFree(g.scratch);
      cudaFree(g.out);
      g.flush.free();
      if (g.ready) cudaEventDestroy(g.ready);
      if (g.done) cudaEventDestroy(g.done);
      if (g.t0) cudaEventDestroy(g.t0);
      if (g.t1) cudaEventDestroy(g.t1);
      if (g.stream) cudaStreamDestroy(g.stream);
    }
    if (!gpus_.empty()) cudaSetDevice(gpus_[0].device);
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
    gpus_.clear();
    start_ = stop_ = nullptr;
  }
  // The lead spin hides the host's queueing only while the host is faster than the spin.
  static void note_host_late(const std::string& what, int late, int reps, double worst_us) {
    if (late > 0)
      std::printf("note (%s): in %d of %d timed runs the host needed more than the %.0f us lead to queue the run (up "
                  "to %.0f us): the GPU may have waited for the host inside those times\n",
                  what.c_str(), late, reps, kHostLeadNs / 1e3, worst_us);
  }
  std::vector<Gpu> gpus_;
  cudaEvent_t start_{}, stop_{};
};

// ---- the result row ----------------------------------------------------------------------------
// One CSV row appended to `path` (the file opened and closed per row: rank 0 of several
// processes, or one process's rows between their cost lines).
inline void append_csv(const std::string& path, const CsvRow& row) { open_csv(path, csv_header()) << csv_row(row) << "\n"; }

// One line, and a CSV row with --csv. n is the total over all GPUs; GB/s = n * 4 bytes / median;
// % of peak is of K times GPU 0's theoretical bandwidth; x_cub and x_floor are 0 where not
// measured; shape is "gpus=K".
inline void multi_report(const Options& opt, const DeviceInfo& dev, int K, const std::string& step,
                         const std::string& variant, const char* dtype, size_t n, size_t offset, const Timing& t,
                         double cub_ms, double floor_ms, const std::string& check, bool ok) {
  CsvRow row = timed_row(dev, step, variant, dtype, n, t);  // a median-only Timing: no spread
  row.gbps = double(n) * 4 / (t.median_ms * 1e6);
  row.pct_peak = 100.0 * row.gbps / (K * dev.peak_gbps);
  row.verified = ok;
  row.x_cub = cub_ms > 0 ? cub_ms / t.median_ms : 0;
  row.x_floor = floor_ms > 0 ? t.median_ms / floor_ms : 0;
  row.shape = "gpus=" + std::to_string(K);
  std::printf("%-5s %11zu %3zu  %-18s %9.4f %9.4f %8.1f %5.1f%% %5.2fx %6.2fx  %-7s %s\n", dtype, n, offset,
              variant.c_str(), row.ms, t.min_ms, row.gbps, row.pct_peak, row.x_cub, row.x_floor, row.shape.c_str(),
              check.c_str());
  if (!opt.csv.empty()) append_csv(opt.csv, row);
}

}  // namespace harness

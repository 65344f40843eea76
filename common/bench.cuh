// NOT REQUIRED READING. The measuring half of run_step (run_step.cuh): the GPU's peak, the
// guarded input, the L2 flush, the floor kernel, the timing protocol, CUB's sum, the result
// line and the CSV row. Steps never call these; the cost probes and step 08 do.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cub_baselines.hpp"
#include "launch.cuh"
#include "reference.hpp"

namespace harness {

struct DeviceInfo {
  std::string name, cuda;
  int sms = 0, l2_bytes = 0, cc_major = 0, cc_minor = 0;
  double peak_gbps = 0;  // theoretical: memory clock x 2 (double data rate) x bus width
};

inline DeviceInfo device_info(int device) {
  DeviceInfo d;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int clock_khz = 0, bus_bits = 0, runtime = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  d.name = prop.name;
  d.cuda = std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  d.sms = prop.multiProcessorCount;
  d.l2_bytes = prop.l2CacheSize;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.peak_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  return d;
}

// base[lead .. lead + n) = elements first .. first + n - 1 of the input (first: where a
// shard starts in the whole array, step 08), every other slot of base[0 .. total) a guard.
template <typename T>
__global__ void fill_input_kernel(T* base, size_t lead, size_t n, size_t total, uint64_t seed, size_t first) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x)
    base[i] = (i >= lead && i - lead < n) ? input_value<T>(seed, first + (i - lead)) : guard_value<T>();
}

// Every input buffer: 256 bytes of guard values, `offset` more elements, the n elements, and
// 256 bytes of guards after them (a buffer of n + kGuardElements + 16 + kGuardElements
// elements fits any offset up to 15). Returns where the input starts.
constexpr size_t kGuardElements = 64;
inline size_t input_buffer_bytes(size_t n) { return (n + 2 * kGuardElements + 16) * 4; }  // int and float: 4 bytes
template <typename T>
T* place_input(void* buf, size_t n, size_t offset, uint64_t seed, cudaStream_t s, size_t first = 0) {
  const size_t lead = kGuardElements + offset;
  T* base = static_cast<T*>(buf);
  fill_input_kernel<T><<<1024, 256, 0, s>>>(base, lead, n, lead + n + kGuardElements, seed, first);
  CUDA_CHECK_LAUNCH();
  return base + lead;
}

// Reads a buffer twice the L2's size so that the next timed run finds its input in DRAM,
// not in L2. It only reads, so no dirty lines are left to be written back during timing.
__global__ void flush_l2_kernel(const int4* buf, size_t count, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    int4 v = buf[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;  // never true (buffer is zero); keeps the loads alive
}

// One GPU's flush buffer and its launch. Not RAII: step 08 frees each with its GPU current.
struct L2Flush {
  int4* buf = nullptr;
  size_t count = 0;  // int4s: twice the L2
  int sms = 0;
  void allocate(const DeviceInfo& dev) {
    sms = dev.sms;
    count = size_t(std::max(dev.l2_bytes, 1 << 20)) * 2 / sizeof(int4);
    CUDA_CHECK(cudaMalloc(&buf, count * sizeof(int4) + sizeof(int)));
    CUDA_CHECK(cudaMemset(buf, 0, count * sizeof(int4) + sizeof(int)));
  }
  void run(cudaStream_t s) const {
    flush_l2_kernel<<<sms * 4, 512, 0, s>>>(buf, count, reinterpret_cast<int*>(buf + count));
    CUDA_CHECK_LAUNCH();
  }
  void free() {
    cudaFree(buf);
    buf = nullptr;
  }
};

// The floor: the least data movement a problem needs, and nothing else. It reads in[0..n)
// and writes out[0..m) (m <= n): m = 0 for a sum, the row sums of a segmented sum, the kept
// elements of a filter, m = n for a copy. 16-byte loads and stores, four loads in flight per
// thread, scalar ends; two blocks of 1024 per SM when it only reads, one when it writes (the
// faster at each: docs/README.md). The cost of touching the data, launch and DRAM latency
// included; a reference, not a bound. It writes elements it read, in order (shifted where in
// and out align differently); loads not stored fold into an XOR never stored. out: >= 1 slot.
constexpr int kFloorThreads = 1024;
__global__ void __launch_bounds__(kFloorThreads, 2) floor_kernel(const uint32_t* in, size_t n, uint32_t* out, size_t m) {
  // elements before the first 16-byte boundary of a pointer, at most `count`
  auto head_of = [](const void* p, size_t count) {
    const size_t misaligned = (16 - reinterpret_cast<uintptr_t>(p) % 16) % 16 / 4;
    return misaligned < count ? misaligned : count;
  };
  const size_t in_head = head_of(in, n), out_head = head_of(out, m);
  const size_t vectors = (n - in_head) / 4, in_tail = in_head + vectors * 4;
  const size_t stored = (m - out_head) / 4 < vectors ? (m - out_head) / 4 : vectors;  // vectors written
  const size_t out_tail = out_head + stored * 4;
  const uint4* in_body = reinterpret_cast<const uint4*>(in + in_head);
  uint4* out_body = reinterpret_cast<uint4*>(out + out_head);
  const size_t thread = blockIdx.x * size_t(blockDim.x) + threadIdx.x, stride = size_t(gridDim.x) * blockDim.x;
  uint32_t acc = 0;
  auto store_or_fold = [&](size_t i, uint4 v) {
    if (i < stored) out_body[i] = v;
    else acc ^= v.x ^ v.y ^ v.z ^ v.w;
  };
  size_t i = thread;
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int b = 0; b < 4; ++b) v[b] = in_body[i + b * stride];
#pragma unroll
    for (int b = 0; b < 4; ++b) store_or_fold(i + b * stride, v[b]);
  }
  for (; i < vectors; i += stride) store_or_fold(i, in_body[i]);
  // The scalar ends: the input's head and tail read, the output's head and tail (at most
  // 3 and 6 elements) written.
  if (thread < in_head) acc ^= in[thread];
  if (thread < n - in_tail) acc ^= in[in_tail + thread];
  if (thread < out_head) out[thread] = in[thread];
  if (thread < m - out_tail) out[out_tail + thread] = in[out_tail + thread];
  if (acc == 0x9E3779B9u && thread == 0x7fffffff) *out = acc;  // never true
}

inline void launch_floor(const void* in, size_t n, void* out, size_t m, cudaStream_t stream) {
  if (m > n) throw std::logic_error("launch_floor: writes more than it reads");
  const unsigned per_sm = once_per_kernel<unsigned>(floor_kernel, 0, [] {  // 2 on sm_90, 1 on sm_86
    int k = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k, floor_kernel, kFloorThreads, 0));
    return unsigned(k);
  });
  const unsigned resident = resident_blocks(floor_kernel, kFloorThreads);  // SMs x per_sm
  const size_t per_block = size_t(kFloorThreads) * 16;  // elements a block reads per iteration
  const unsigned blocks = grid_for(n, per_block, m > 0 ? resident / per_sm : resident);  // writing: 1/SM
  floor_kernel<<<blocks, kFloorThreads, 0, stream>>>(static_cast<const uint32_t*>(in), n, static_cast<uint32_t*>(out), m);
  CUDA_CHECK_LAUNCH();
}

// Spins `ns` nanoseconds on one thread (%globaltimer): holds a stream until the host has
// queued the work behind it, so the host's enqueue time never falls between timing events.
__device__ inline uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__global__ void wait_ns_kernel(uint64_t ns) {
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
}

// True when the GPU has already passed `e`; false while it has not.
inline bool event_done(cudaEvent_t e) {
  const cudaError_t q = cudaEventQuery(e);
  if (q == cudaErrorNotReady) {
    if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();  // not an error: never left behind
    return false;
  }
  CUDA_CHECK(q);
  return true;
}

// The time columns: the median (more digits with a batch) and "min-max" ("-": not measured).
inline int ms_decimals(int batch) { return batch > 1 ? 6 : 4; }
inline int spread_width(int batch) { return 2 * (ms_decimals(batch) + 2) + 1; }
inline std::string spread_text(const Timing& t) {
  if (t.min_ms <= 0 && t.max_ms <= 0) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f-%.*f", ms_decimals(t.batch), t.min_ms, ms_decimals(t.batch), t.max_ms);
  return buf;
}

// A result row's who and how long: the device, the program, the variant, the size and the
// timing (the median, its spread and batch; a Timing of a median only leaves the spread empty
// in the CSV). The caller adds what it derives: GB/s, the ratios, the shape.
inline CsvRow timed_row(const DeviceInfo& dev, const std::string& step, const std::string& variant,
                        const char* dtype, size_t n, const Timing& t) {
  CsvRow row;
  row.device = dev.name;
  row.cuda = dev.cuda;
  row.step = step;
  row.variant = variant;
  row.dtype = dtype;
  row.n = n;
  row.ms = t.median_ms;
  row.ms_min = t.min_ms;
  row.ms_max = t.max_ms;
  row.batch = t.batch;
  return row;
}

// --csv FILE, opened to append (none: not opened); a new or empty file gets `header`, one that
// starts with another is an error: two schemas in one file would not load (see migrate_csv.py).
inline std::ofstream open_csv(const std::string& path, const std::string& header) {
  std::ofstream out;
  if (path.empty()) return out;
  std::ifstream old(path);
  std::string first;
  const bool fresh = !(old.good() && std::getline(old, first) && !first.empty());
  if (!fresh && first != header)
    throw UsageError("--csv: " + path + " starts with another header (another schema); give a new file or convert "
                     "it with plots/migrate_csv.py");
  out.open(path, std::ios::app);
  if (!out) throw std::runtime_error("--csv: cannot open " + path + " for appending");
  if (fresh) out << header << "\n";
  return out;
}

// One --check line: what tests/mutation.py reads (dtype n off variant check), then [shape].
inline void print_check_line(const char* dtype, size_t n, size_t offset, const std::string& name,
                             const std::string& check, const std::string& shape) {
  std::printf("%-5s %11zu %3zu  %-16s %s%s\n", dtype, n, offset, name.c_str(), check.c_str(),
              shape.empty() ? "" : ("  [" + shape + "]").c_str());
}

// One timed batch of `batch` launches between the events `start` and `stop` on stream `s`,
// queued behind a spin kernel (wait_ns_kernel) that holds the stream for `hold_ns` while the
// host queues the batch (hold_ns = 0: no spin, for a single launch, which an event pair times
// as it is). Returns the milliseconds between the events, or -1 when the GPU reached `start`
// before the host had queued the whole batch (host time could be inside): the hold then
// doubles for the next try, and past 2 s the batch is a --batch error.
template <class F>
double timed_batch(cudaStream_t s, cudaEvent_t start, cudaEvent_t stop, int batch, uint64_t& hold_ns, F&& launch) {
  if (hold_ns) {
    wait_ns_kernel<<<1, 1, 0, s>>>(hold_ns);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaEventRecord(start, s));
  for (int b = 0; b < batch; ++b) launch();
  CUDA_CHECK(cudaEventRecord(stop, s));
  const bool started_early = hold_ns && event_done(start);
  // Wait for the batch: the next one is then queued while the GPU is busy before it.
  CUDA_CHECK(cudaEventSynchronize(stop));
  if (started_early) {
    if ((hold_ns *= 2) > uint64_t(2000000000))
      throw UsageError("--batch: " + std::to_string(batch) + " launches could not be queued before the GPU ran them "
                       "(a launch that waits for the GPU, or more than a stream holds); try a smaller --batch");
    return -1;
  }
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms;
}

// The times (ms) of `reps` runs of `launch`, each between its own pair of events on stream
// `s`; `before` (a flush, a line-up) is queued ahead of each and not timed. For the programs
// that time one thing their own way (the cost probes, one rank of step 08).
template <class Launch, class Before>
std::vector<double> event_pair_times(int reps, cudaStream_t s, Launch&& launch, Before&& before) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  uint64_t no_hold = 0;
  for (int r = 0; r < reps; ++r) {
    before();
    ms.push_back(timed_batch(s, start, stop, 1, no_hold, launch));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

// The timing protocol of every comparison (Bench::time; MultiGpu::time across GPUs): a
// warm-up of `warmup` rounds and, when warmup > 0, at least 20 ms, so that an idle GPU has
// raised its clocks before tiny kernels are timed; then `reps` rounds in which the contenders
// take turns, one timed run each, so that a slow moment of the GPU hits them all alike.
// warm(i) queues one untimed run of contender i, sync() waits for the GPU(s), timed(i) returns
// the milliseconds of one timed run. Per contender the Timing over the reps (/ batch).
template <class Warm, class Sync, class Timed>
std::vector<Timing> time_in_turns(const Options& opt, size_t contenders, int batch, Warm&& warm, Sync&& sync,
                                  Timed&& timed) {
  sync();
  const auto warm_start = std::chrono::steady_clock::now();
  for (int w = 0; w < opt.warmup || (opt.warmup > 0 && std::chrono::steady_clock::now() - warm_start <
                                                            std::chrono::milliseconds(20)); ++w) {
    for (size_t i = 0; i < contenders; ++i) warm(i);
    if (w % 8 == 7) sync();
  }
  sync();
  std::vector<std::vector<double>> ms(contenders);
  for (int r = 0; r < opt.reps; ++r)
    for (size_t i = 0; i < contenders; ++i) ms[i].push_back(timed(i));
  std::vector<Timing> result;
  for (const auto& m : ms) result.push_back(summarize(m, batch));
  return result;
}

class Bench {
 public:
  Bench(const Options& opt, const DeviceInfo& dev) : opt_(opt), dev_(dev), csv_(open_csv(opt.csv, csv_header())) {
    CUDA_CHECK(cudaStreamCreate(&stream_));
    flush_.allocate(dev);
  }
  ~Bench() {
    flush_.free();
    cudaStreamDestroy(stream_);
  }
  cudaStream_t stream() const { return stream_; }

  // Each launch function's Timing, the functions taking turns (time_in_turns). A timed run is
  // what lies between one pair of events, after a flush of L2. --batch 1 (default): one launch
  // (and a memset where the algorithm needs one); an event pair resolves about 0.5 us.
  // --batch B: B launches back to back, no flush between them, time / B: the launch-bound
  // small-n regime, where sub-microsecond differences decide.
  std::vector<Timing> time(const std::vector<std::function<void()>>& launches) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    const int batch = opt_.batch;
    // A batch waits behind a spin of 20 us per launch, doubled when too short (timed_batch).
    std::vector<uint64_t> hold_ns(launches.size(), batch > 1 ? uint64_t(20000) * uint64_t(batch) : 0);
    // One timed run of contender i after the flush: its time, or -1 (timed_batch). The next
    // run is queued while this one's flush runs, so host launch time never shows in it.
    auto timed_run = [&](size_t i) -> double {
      flush_.run(stream_);
      return timed_batch(stream_, start, stop, batch, hold_ns[i], launches[i]);
    };
    auto timed_until_sound = [&](size_t i) {
      double t = timed_run(i);
      while (t < 0) t = timed_run(i);  // again, with a longer hold
      return t;
    };
    const std::vector<Timing> result = time_in_turns(
        opt_, launches.size(), batch, [&](size_t i) { launches[i](); },
        [&] { CUDA_CHECK(cudaStreamSynchronize(stream_)); }, timed_until_sound);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return result;
  }

  // One result line, and one CSV row with --csv; cub_ms and floor_ms from the same run. `bytes`:
  // what this row must move; `shape`: a problem other than an array sum ("cols=16"), printed.
  void report(const std::string& step, const std::string& variant, const char* dtype, size_t n, size_t offset,
              size_t bytes, const Timing& t, double cub_ms, double floor_ms, const std::string& check, bool ok,
              const std::string& shape = "array") {
    CsvRow row = timed_row(dev_, step, variant, dtype, n, t);
    row.gbps = bytes / (t.median_ms * 1e6);
    row.pct_peak = 100.0 * row.gbps / dev_.peak_gbps;
    row.verified = ok;
    row.x_cub = cub_ms / t.median_ms;
    row.x_floor = t.median_ms / floor_ms;
    row.shape = shape;
    std::printf("%-5s %11zu %3zu  %-16s %9.*f %*s %8.1f %5.1f%% %5.2fx %6.2fx  %s%s\n", dtype, n, offset,
                variant.c_str(), ms_decimals(t.batch), row.ms, spread_width(t.batch), spread_text(t).c_str(), row.gbps,
                row.pct_peak, row.x_cub, row.x_floor, shape == "array" ? "" : ("[" + shape + "] ").c_str(),
                check.c_str());
    if (csv_.is_open()) csv_ << csv_row(row) << std::endl;
  }

 private:
  const Options& opt_;
  const DeviceInfo& dev_;
  std::ofstream csv_;
  cudaStream_t stream_{};
  L2Flush flush_;
};

template <typename T>
Verdict verify_result(T got, const Reference& ref, size_t n) {
  if constexpr (std::is_same_v<T, unsigned>) return verify(got, ref);
  else return verify(got, ref, n);
}

// One contender of a comparison: CUB, the floor or a variant, verified once before timing.
// Filled by field name (the explicit constructor refuses a positional {...}).
struct Contender {
  std::string step, name;  // the CSV's step column ("cub", "floor" or the program's) and variant
  std::function<void()> launch;
  std::string check;  // the check column: its verdict
  bool ok = false;    // its verdict: right
  size_t bytes = 0;   // what it moves, for its GB/s; 0: the problem's bytes (the floor sets its own)
  explicit Contender() = default;
};

// The floor as a contender: reads n elements, writes m (floor_kernel); `name`: "read",
// "read_write", "copy"; its GB/s counts the (n + m) x 4 bytes it moves.
inline Contender floor_contender(const std::string& name, const void* in, size_t n, void* out, size_t m,
                                 cudaStream_t s) {
  Contender floor;
  floor.step = "floor";
  floor.name = name;
  floor.launch = [=] { launch_floor(in, n, out, m, s); };
  floor.check = "(moves only: reads " + std::to_string(n) + ", writes " + std::to_string(m) + ")";
  floor.ok = true;
  floor.bytes = (n + m) * 4;
  return floor;
}

inline std::string check_text(const Verdict& v, bool expect_correct = true) {
  if (v.ok) return "ok " + v.detail;
  return expect_correct ? "FAILED " + v.detail : "WRONG, as this variant demonstrates: " + v.detail;
}

// --check: one line per contender, else all timed in turns and reported. `bytes`: what the
// problem moves; a contender that carries its own (the floor) is reported with those.
inline void finish(const Options& opt, Bench& bench, const std::vector<Contender>& contenders, const char* dtype,
                   size_t n, size_t offset, size_t bytes, const std::string& shape = "array") {
  if (opt.check_only) {
    for (const auto& c : contenders) print_check_line(dtype, n, offset, c.name, c.check, shape == "array" ? "" : shape);
    return;
  }
  std::vector<std::function<void()>> launches;
  for (const auto& c : contenders) launches.push_back(c.launch);
  const std::vector<Timing> t = bench.time(launches);  // contenders[0] is CUB, [1] the floor
  for (size_t i = 0; i < t.size(); ++i)
    bench.report(contenders[i].step, contenders[i].name, dtype, n, offset, contenders[i].bytes ? contenders[i].bytes : bytes,
                 t[i], t[0].median_ms, t[1].median_ms, contenders[i].check, contenders[i].ok, shape);
}

// Device scratch that only grows: reallocated (outside any timing) when `need` exceeds it.
inline void grow_buffer(void*& buf, size_t& have, size_t need) {
  if (need <= have) return;
  CUDA_CHECK(cudaFree(buf));
  CUDA_CHECK(cudaMalloc(&buf, need));
  have = need;
}

// CUB's DeviceReduce::Sum on the same data, its temporary storage sized and allocated here,
// outside any timing; the 64-bit size overload above INT32_MAX elements.
template <typename T>
class CubSum {
 public:
  ~CubSum() { cudaFree(temp_); }
  std::function<void()> prepare(const T* in, size_t n, T* out, cudaStream_t s) {
    size_t need = 0;
    call(nullptr, need, in, n, out, s);
    grow_buffer(temp_, bytes_, need);
    return [=, temp = temp_]() { size_t b = need; call(temp, b, in, n, out, s); };
  }

 private:
  static void call(void* temp, size_t& bytes, const T* in, size_t n, T* out, cudaStream_t s) {
    CUDA_CHECK(cub_baseline::sum(temp, bytes, in, out, n, s));  // cub::DeviceReduce::Sum
  }
  void* temp_ = nullptr;
  size_t bytes_ = 0;
};

// Prints `line` the first time only: a launcher's choice per shape that result rows cannot show.
inline void note_once(const std::string& line) {
  static std::set<std::string> seen;
  if (seen.insert(line).second) std::printf("%s\n", line.c_str());
}

}  // namespace harness

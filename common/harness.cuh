// The harness every step hands its launchers to: device set-up, input, verification,
// timing, the CUB baseline, the result table and CSV rows. A step never repeats any of it.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cub/device/device_reduce.cuh>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cli.hpp"
#include "program_front.hpp"
#include "reference.hpp"

namespace harness {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess)
    throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + cudaGetErrorString(err));
}
#define CUDA_CHECK(call) ::harness::check_cuda((call), #call, __FILE__, __LINE__)
// After every kernel launch: a bad launch configuration is reported here, at its line.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// What a launcher gets besides its input and output.
struct Launch {
  cudaStream_t stream;
  void* scratch;  // device memory for per-block partials, at least n/32 x 8 bytes + 1 MiB
  size_t scratch_bytes;
  template <typename T>
  T* scratch_as(size_t count) const {
    if (count * sizeof(T) > scratch_bytes) throw std::runtime_error("harness scratch buffer too small");
    return static_cast<T*>(scratch);
  }
};

// How many blocks of `kernel` fit on the whole GPU at once (SMs x blocks per SM).
template <typename Kernel>
unsigned resident_blocks(Kernel kernel, int threads_per_block, size_t dynamic_smem = 0) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads_per_block, dynamic_smem));
  return unsigned(sms) * unsigned(per_sm);
}

// Enough blocks to cover n once (each takes `per_block` elements per iteration), never more
// than fit on the GPU at once (`resident`), at least one.
inline unsigned grid_for(size_t n, size_t per_block, unsigned resident) {
  return unsigned(std::max<size_t>(1, std::min<size_t>(resident, (n + per_block - 1) / per_block)));
}

// --blocks N (step 07): the grid its cooperative variants must use; 0: automatic. run_step
// sets it from the flags, since launchers get no options (forced_grid.cuh reads it).
inline unsigned& forced_blocks() {
  static unsigned blocks = 0;
  return blocks;
}

// --cluster C (step 09): the cluster size its cluster variants must use; 0: each variant's own.
// Set by run_step and run_problems, like forced_blocks (clusters.cuh reads it).
inline int& forced_cluster() {
  static int size = 0;
  return size;
}

// compute() once per kernel, `extra` (the rest of the question: block size, cluster size, ...)
// and current device; later calls return its first answer (one that threw is asked again). For
// launchers that take the kernel as an argument: a function-local `static` there would be one per
// function TYPE, so every kernel of one signature would get the answer of the first one asked.
template <typename Value, typename Kernel, typename Extra, class Compute>
Value once_per_kernel(Kernel kernel, const Extra& extra, Compute&& compute) {
  static std::map<std::tuple<const void*, Extra, int>, Value> asked;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), extra, device);
  if (auto it = asked.find(key); it != asked.end()) return it->second;
  return asked.emplace(key, compute()).first->second;
}

// resident_blocks, asked once per kernel, block size and device.
template <typename Kernel>
unsigned resident_blocks_of(Kernel kernel, int threads_per_block) {
  return once_per_kernel<unsigned>(kernel, threads_per_block, [&] { return resident_blocks(kernel, threads_per_block); });
}

// A cudaLaunchKernelEx configuration with one launch attribute, which the caller fills in
// (cooperative here, a cluster's dimension in clusters.cuh).
struct LaunchConfig {
  cudaLaunchAttribute attr[1]{};
  cudaLaunchConfig_t config{};
  LaunchConfig(const LaunchConfig&) = delete;  // config.attrs points into this object
  LaunchConfig& operator=(const LaunchConfig&) = delete;
  LaunchConfig(dim3 grid, dim3 block, size_t dynamic_smem, cudaStream_t stream) {
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = dynamic_smem;
    config.stream = stream;
    config.attrs = attr;
    config.numAttrs = 1;
  }
};

// A cooperative launch (all blocks resident at once, or no launch) in the typed form:
// cudaLaunchKernelEx checks the arguments against the kernel's parameters at compile time.
// Returns the launch's error: cudaErrorCooperativeLaunchTooLarge when the grid cannot be
// co-resident (each caller decides whether that is the user's doing or a bug).
template <typename... Params, typename... Args>
cudaError_t launch_cooperative(void (*kernel)(Params...), dim3 grid, dim3 block, size_t dynamic_smem,
                               cudaStream_t stream, Args&&... args) {
  LaunchConfig c(grid, block, dynamic_smem, stream);
  c.attr[0].id = cudaLaunchAttributeCooperative;
  c.attr[0].val.cooperative = 1;
  return cudaLaunchKernelEx(&c.config, kernel, std::forward<Args>(args)...);
}

// The device address of a __device__ variable (an array's: of its first element). A launcher
// asks once and keeps it in a static.
template <typename Symbol>
auto symbol_address(const Symbol& symbol) {
  void* p = nullptr;
  CUDA_CHECK(cudaGetSymbolAddress(&p, symbol));
  return static_cast<std::remove_all_extents_t<Symbol>*>(p);
}

// Prints `line` the first time it comes, never again: a choice a launcher makes per shape
// (which path, which cluster size) that the result rows cannot show.
inline void note_once(const std::string& line) {
  static std::set<std::string> seen;
  if (seen.insert(line).second) std::printf("%s\n", line.c_str());
}

// The element type behind a launcher's `in` (const T*): for the generic lambdas in a step's
// main, which pass a kernel template its T.
template <typename Ptr>
using elem_t = std::remove_const_t<std::remove_pointer_t<Ptr>>;

template <typename T>
using Launcher = std::function<void(const T* in, size_t n, T* out, const Launch& ctx)>;

// A variant's launcher for both element types, made from one generic lambda: the harness
// instantiates it for unsigned (the "int" dtype: 32-bit integers summed modulo 2^32) and float.
// L<T> is the problem's launcher type (Launcher here; segmented, filter, normalize, K GPUs).
template <template <typename> class L>
struct TypedLauncher {
  L<unsigned> run_int;
  L<float> run_float;
  template <class F>
  explicit TypedLauncher(F f) : run_int(f), run_float(f) {}
  template <typename T>
  const L<T>& launcher() const {
    if constexpr (std::is_same_v<T, unsigned>) return run_int;
    else return run_float;
  }
};

// One way of reducing an array to one sum.
struct Variant : TypedLauncher<Launcher> {
  std::string name, about;
  bool expect_correct;
  bool in_all;  // false: runs only when named with --variant (a demonstration that breaks the context)
  template <class F>
  Variant(std::string name_, std::string about_, F f, bool expect_correct_ = true, bool in_all_ = true)
      : TypedLauncher(f), name(std::move(name_)), about(std::move(about_)), expect_correct(expect_correct_),
        in_all(in_all_) {}
};

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

// One GPU's flush buffer (allocated on the current GPU, zeroed) and its launch. Not RAII: the
// multi-GPU code frees each GPU's buffer with that GPU current.
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
// elements of a filter, m = n where the output is as large as the input (a copy). 16-byte
// loads and stores, four loads in flight per thread, scalar accesses for the unaligned ends;
// both sides coalesced. Its time is the cost of touching the data, launch and DRAM latency
// included: no solution of the problem can take less. What it writes are elements it read,
// in order (a copy of in[0..m) where in and out are 16-byte aligned alike; else shifted by up
// to three places, since only the bytes moved matter). The loads it does not store are folded
// into an XOR whose store is never taken (it would need the magic value and thread 2^31-1):
// that keeps them alive. out: room for m elements, at least one.
constexpr int kFloorThreads = 1024;
__global__ void __launch_bounds__(kFloorThreads) floor_kernel(const uint32_t* in, size_t n, uint32_t* out, size_t m) {
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
  static const unsigned resident = resident_blocks(floor_kernel, kFloorThreads);
  const size_t per_block = size_t(kFloorThreads) * 16;  // elements a block reads per iteration
  const unsigned blocks = grid_for(n, per_block, resident);
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

// The time columns of a result: the median (one more digit with a batch, which resolves far
// below 0.1 us) and the spread over the reps, "min-max" ("-": not measured).
inline int ms_decimals(int batch) { return batch > 1 ? 6 : 4; }
inline int spread_width(int batch) { return 2 * (ms_decimals(batch) + 2) + 1; }
inline std::string spread_text(const Timing& t) {
  if (t.min_ms <= 0 && t.max_ms <= 0) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f-%.*f", ms_decimals(t.batch), t.min_ms, ms_decimals(t.batch), t.max_ms);
  return buf;
}

inline void set_timing(CsvRow& row, const Timing& t) {
  row.ms = t.median_ms;
  row.ms_min = t.min_ms;
  row.ms_max = t.max_ms;
  row.batch = t.batch;
}

// --csv FILE must be new, empty, or start with this schema's header: rows of two schemas in
// one file would not load (plots/migrate_csv.py converts an old file).
inline void require_csv_schema(const std::string& path) {
  std::ifstream probe(path);
  std::string first;
  if (probe.good() && std::getline(probe, first) && !first.empty() && first != csv_header())
    throw UsageError("--csv: " + path + " starts with another header (an older schema?); convert it with "
                     "plots/migrate_csv.py or give a new file");
}

// Appends one row, and the header first to a new or empty file.
inline void append_csv(const std::string& path, const CsvRow& row) {
  require_csv_schema(path);
  std::ifstream probe(path);
  const bool fresh = !probe.good() || probe.peek() == std::ifstream::traits_type::eof();
  std::ofstream csv(path, std::ios::app);
  if (!csv) throw std::runtime_error("--csv: cannot open " + path + " for appending");
  if (fresh) csv << csv_header() << "\n";
  csv << csv_row(row) << "\n";
}


// Microseconds of host time since t0 (how long the host took to queue something).
inline double host_us_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

// One --check line: the format tests/mutation.py reads (dtype n off variant check), and the
// shape in brackets where there is one ("" for the plain array sum).
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
// `s` (timed_batch with one launch, no hold); `before` is queued ahead of each start event (a
// flush, a line-up) and not timed. For programs that time one thing their own way
// (grid_sync_cost, one rank of step 08).
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
  Bench(const Options& opt, const DeviceInfo& dev, const std::string& step) : opt_(opt), dev_(dev), step_(step) {
    if (!opt.csv.empty()) require_csv_schema(opt.csv);  // before anything is measured
    CUDA_CHECK(cudaStreamCreate(&stream_));
    flush_.allocate(dev);
  }
  ~Bench() {
    flush_.free();
    cudaStreamDestroy(stream_);
  }
  cudaStream_t stream() const { return stream_; }

  // Median, min and max per launch over reps of each launch function (see Timing). The
  // functions take turns within every rep (CUB, variant 1, variant 2, ...), so a slow moment of
  // the GPU hits them all alike. A timed run is what lies between one pair of events, and
  // before each a flush empties L2 of the input.
  // --batch 1 (default): a run is one launch (and a memset where the algorithm needs one).
  // An event pair resolves about 0.5 us, too coarse for smaller differences.
  // --batch B: a run is B such launches back to back, and the rep counts its time / B. Nothing
  // runs between them, no flush either, so only the first finds L2 flushed: this measures the
  // launch-bound small-n regime, where sub-microsecond differences decide, not DRAM reads.
  std::vector<Timing> time(const std::vector<std::function<void()>>& launches) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    const int batch = opt_.batch;
    // A batch is queued behind a spin kernel that holds the stream until the host is done: 20 us
    // per launch at first, twice that for this contender whenever its clock started too early
    // (timed_batch). A single launch needs no hold.
    std::vector<uint64_t> hold_ns(launches.size(), batch > 1 ? uint64_t(20000) * uint64_t(batch) : 0);
    // One timed run of contender i after the flush: its time, or -1 (timed_batch). Waiting for
    // each run means the next run's launches are queued while its flush runs, so the time the
    // host takes to launch never shows between the events.
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

  // One result line, and one CSV row with --csv. cub_ms and floor_ms come from the same run.
  // `bytes` is what this row must move (the problem's reads, and writes where it writes; the
  // floor's own, which are the same by design);
  // `shape` names a problem other than array -> one sum ("cols=16"), and is then printed too.
  void report(const std::string& step, const std::string& variant, const char* dtype, size_t n, size_t offset,
              size_t bytes, const Timing& t, double cub_ms, double floor_ms, const std::string& check, bool ok,
              const std::string& shape = "array") {
    CsvRow row{dev_.name, dev_.cuda, step, variant, dtype, n};
    set_timing(row, t);  // ms: the median; the spread and the batch beside it
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
    if (!opt_.csv.empty()) append_csv(opt_.csv, row);
  }

 private:
  const Options& opt_;
  const DeviceInfo& dev_;
  std::string step_;
  cudaStream_t stream_{};
  L2Flush flush_;
};

template <typename T>
Verdict verify_result(T got, const Reference& ref, size_t n) {
  if constexpr (std::is_same_v<T, unsigned>) return verify(got, ref);
  else return verify(got, ref, n);
}

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

// One contender of a comparison: CUB, the floor or a variant, verified once before timing.
struct Contender {
  std::string step, name;
  std::function<void()> launch;
  std::string check;
  bool ok;
  size_t bytes = 0;  // what it moves, for its GB/s; 0: the problem's bytes (the floor sets its own)
  bool row = true;   // false: timed for a derived figure only (step 08's CUB on each shard alone)
};

// The floor as a contender: reads the n input elements, writes m of the output (see
// floor_kernel). `name` says what that is ("read", "read_write", "copy"); its GB/s counts the
// (n + m) x 4 bytes it moves, its x floor is 1.
inline Contender floor_contender(const std::string& name, const void* in, size_t n, void* out, size_t m,
                                 cudaStream_t s) {
  return {"floor", name, [=] { launch_floor(in, n, out, m, s); },
          "(moves only: reads " + std::to_string(n) + ", writes " + std::to_string(m) + ")", true, (n + m) * 4};
}

inline std::string check_text(const Verdict& v, bool expect_correct = true) {
  if (v.ok) return "ok " + v.detail;
  return expect_correct ? "FAILED " + v.detail : "WRONG, as this variant demonstrates: " + v.detail;
}

// --check: one line per contender (the format tests/mutation.py reads: dtype n off variant check),
// else all contenders timed in turns and reported as run_dtype does, plus the shape. `bytes`:
// what the problem moves; a contender that carries its own (the floor) is reported with those.
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
    if (n <= size_t(INT32_MAX)) CUDA_CHECK(cub::DeviceReduce::Sum(temp, bytes, in, out, int(n), s));
    else CUDA_CHECK(cub::DeviceReduce::Sum(temp, bytes, in, out, int64_t(n), s));
  }
  void* temp_ = nullptr;
  size_t bytes_ = 0;
};

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

// Calls f(T{}, name) once per --dtype, with T = unsigned for "int" and float for "float": the
// one place where the dtype names meet the element types. Every dtype runs, even after one
// fails; returns true when every call returned true.
template <typename F>
bool for_each_dtype(const Options& opt, F&& f) {
  bool ok = true;
  for (const auto& dtype : opt.dtypes) ok &= dtype == "int" ? f(unsigned{}, "int") : f(float{}, "float");
  return ok;
}

// One dtype over every size and offset: reference, then CUB and each selected variant, each
// verified on a poisoned output; then (unless --check) CUB, the floor and the variants timed.
// Returns false when a variant that should be right (or CUB) was wrong.
template <typename T>
bool run_dtype(const char* dtype, const Options& opt, Bench& bench, const std::string& step,
               const std::vector<const Variant*>& variants, void* d_in_raw, T* d_out, const Launch& ctx) {
  bool all_ok = true;
  CubSum<T> cub;
  cudaStream_t s = ctx.stream;
  for (size_t n : opt.sizes) {
    for (size_t offset : opt.offsets) {
      const T* in = place_input<T>(d_in_raw, n, offset, opt.seed, s);
      const Reference ref = reference_sum<T>(opt.seed, n);
      const size_t bytes = n * sizeof(T);

      // CUB is verified like the variants (its 64-bit size path too), and timed first.
      std::vector<Contender> contenders;
      auto cub_sum = cub.prepare(in, n, d_out, s);
      const Verdict cv = verify_result(run_once(cub_sum, d_out, s), ref, n);
      all_ok &= cv.ok;
      contenders.push_back({"cub", "cub", cub_sum, check_text(cv), cv.ok});
      if (!opt.check_only)
        contenders.push_back(floor_contender("read", in, n, d_out + 1, 0, s));
      for (const Variant* var : variants) {
        auto launch = [var, in, n, d_out, &ctx] { var->launcher<T>()(in, n, d_out, ctx); };
        Verdict v = verify_result(run_once(launch, d_out, s), ref, n);
        std::string check = check_text(v, var->expect_correct);
        if (!v.ok && var->expect_correct) all_ok = false;
        if (v.ok && !var->expect_correct) check = "right this time, but unreliable (see the docs): " + v.detail;
        if (opt.repeat_results > 0) {  // each repeated result is verified too
          std::vector<T> got;
          for (int r = 0; r < opt.repeat_results; ++r) {
            got.push_back(run_once(launch, d_out, s));
            const Verdict rv = verify_result(got.back(), ref, n);
            if (!rv.ok && var->expect_correct) {
              all_ok = v.ok = false;
              check = "FAILED on repeat " + std::to_string(r + 1) + ": " + rv.detail;
            }
          }
          print_results(dtype, n, offset, var->name, got);
        }
        contenders.push_back({step, var->name, launch, check, v.ok});
      }
      finish(opt, bench, contenders, dtype, n, offset, bytes);
    }
  }
  return all_ok;
}

// How many GPUs are visible (into `count`): 77 after one line on stdout when none is usable, else -1.
inline int count_gpus(const char* step, int& count) {
  count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    std::printf("%s: no usable CUDA GPU (%s); skipping.\n", step,
                e != cudaSuccess ? cudaGetErrorString(e) : "no device found");
    return 77;
  }
  return -1;
}

// Exit code when the program cannot go on: 77 without a usable GPU (one line on stdout), 2 for
// a --device out of range, 1 for a binary not built for this GPU; -1 when all is well, with the
// device selected.
inline int open_device(int device, const char* step) {
  int count = 0;
  if (int code = count_gpus(step, count); code >= 0) return code;
  if (device >= count) {
    std::fprintf(stderr, "%s: error: --device: %d is out of range (this machine has %d GPU(s))\n", step, device, count);
    return 2;
  }
  CUDA_CHECK(cudaSetDevice(device));
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, fill_input_kernel<unsigned>) == cudaErrorNoKernelImageForDevice) {
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    std::fprintf(stderr, "%s: error: not built for this GPU (sm_%d%d); reconfigure with -DCMAKE_CUDA_ARCHITECTURES=native\n",
                 step, p.major, p.minor);
    return 1;
  }
  return -1;
}

// Cooperative launches (steps 07-08) need cudaDevAttrCooperativeLaunch: every GPU since
// Pascal has it, a virtualised or driver-limited one may not. Such a device gets one line
// and, from the caller, exit 77, like a machine without a GPU. A missing GPU or a bad
// --device is left to open_device, which reports it.
// True, after "STEP: GPU d cannot launch WHAT; skipping.", when GPU `device` exists and its
// attribute `attr` is 0.
inline bool lacks_feature(int device, const char* step, cudaDeviceAttr attr, const char* what) {
  int count = 0, has = 1;
  if (cudaGetDeviceCount(&count) != cudaSuccess || device >= count) return false;
  if (cudaDeviceGetAttribute(&has, attr, device) != cudaSuccess || has) return false;
  std::printf("%s: GPU %d cannot launch %s; skipping.\n", step, device, what);
  return true;
}
inline bool cooperative_unsupported(int device, const char* step) {
  return lacks_feature(device, step, cudaDevAttrCooperativeLaunch, "cooperative kernels (cudaDevAttrCooperativeLaunch = 0)");
}

// Thread block clusters (step 09) need sm_90 or later (cudaDevAttrClusterLaunch): an older GPU
// gets one line and, from the caller, exit 77.
inline bool clusters_unsupported(int device, const char* step) {
  return lacks_feature(device, step, cudaDevAttrClusterLaunch, "thread block clusters (sm_90 or later needed)");
}

// A GPU feature a program needs (cooperative_unsupported, clusters_unsupported): true, after one
// line, when GPU `device` lacks it; the program then exits 77.
using Requirement = bool (*)(int device, const char* step);

// The current GPU's free memory in bytes.
inline size_t free_gpu_bytes() {
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

// Throws a --n error (exit 2) when `bytes` of the current GPU's memory (plus 256 MiB of slack)
// are not free.
inline void require_memory(size_t bytes, const std::string& what) {
  const size_t free_b = free_gpu_bytes();
  if (bytes + (size_t(256) << 20) > free_b) {
    char buf[240];
    std::snprintf(buf, sizeof buf, "--n: %s would need %.2f GiB of GPU memory; %.2f GiB are free", what.c_str(),
                  bytes / 1073741824.0, free_b / 1073741824.0);
    throw UsageError(buf);
  }
}

// The lines above the results: device, method, column names.
inline void print_header(const Options& opt, const DeviceInfo& dev, const char* step) {
  std::printf("%s on %s (sm_%d%d, %d SMs), CUDA %s, theoretical peak %.0f GB/s\n", step, dev.name.c_str(),
              dev.cc_major, dev.cc_minor, dev.sms, dev.cuda.c_str(), dev.peak_gbps);
  if (opt.check_only)
    std::printf("check only: CUB and each variant once on a poisoned output, against the host reference\n"
                "%-5s %11s %3s  %-16s %s\n", "dtype", "n", "off", "variant", "check");
  else {
    if (opt.batch > 1)
      std::printf("per launch: median, min-max of %d timed batches of %d launches back to back (a batch's time / %d)\n"
                  "after %d warm-up; L2 flushed before each batch, not between its launches; GB/s = bytes to move / median;\n",
                  opt.reps, opt.batch, opt.batch, opt.warmup);
    else
      std::printf("median and min-max of %d timed runs after %d warm-up; L2 flushed before each; GB/s = bytes to move / median;\n",
                  opt.reps, opt.warmup);
    std::printf("xCUB = CUB time / this time (higher is faster); xfloor = this time / the floor's (floor = 1: it reads\n"
                "the input and writes the output, nothing else)\n"
                "%-5s %11s %3s  %-16s %9s %*s %8s %6s %6s %7s  %s\n",
                "dtype", "n", "off", "variant", "median ms", spread_width(opt.batch), "min-max ms", "GB/s", "%peak",
                "xCUB", "xfloor", "check");
  }
}

// How every program ends: body() returns the exit code; a UsageError thrown on the way (a
// flag only a launch can judge, e.g. step07's --blocks) becomes 2, any other error 1, each
// as one line on stderr.
template <class Body>
int exit_code_of(const char* step, Body&& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", step, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", step, e.what());
    return 1;
  }
}

// 0 when every result that should be right was right, else one line and 1.
inline int verdict_code(const char* step, bool ok) {
  if (!ok) std::printf("%s: FAILED: a result that should be right was wrong (see above)\n", step);
  return ok ? 0 : 1;
}

// The program behind run_step and run_problems (problem.cuh): the front (parse_program), the
// --blocks and --cluster the launchers ask for, the GPU, the header and the timer; then
// body(opt, dev, bench) runs the chosen variants and returns whether every result that should
// be right was. Exit codes: see usage_text(). `reads`: the program's flags beyond the core ones
// (cli.hpp's ExtraFlags). `needs`: a GPU feature the program cannot run without (e.g.
// cooperative_unsupported): one line and exit 77 without it, checked after the flags, so that a
// bad flag is still exit 2.
// `fits(opt)`, if given, runs before the header: a --n too large for the GPU's memory is then one
// line (require_memory's UsageError, exit 2) and nothing else.
template <class Body>
int run_program(int argc, char** argv, const char* step, const std::string& intro,
                const std::vector<VariantGroup>& groups, unsigned reads, Requirement needs, Body&& body,
                const std::function<void(const Options&)>& fits = {}) {
  Options opt;
  if (int code = parse_program(argc, argv, step, reads, intro, groups, opt); code >= 0) return code;
  forced_blocks() = unsigned(opt.blocks);
  forced_cluster() = opt.cluster;
  return exit_code_of(step, [&] {
    if (needs && needs(opt.device, step)) return 77;
    if (int code = open_device(opt.device, step); code >= 0) return code;
    const DeviceInfo dev = device_info(opt.device);
    if (fits) fits(opt);
    print_header(opt, dev, step);
    Bench bench(opt, dev, step);
    return verdict_code(step, body(opt, dev, bench));
  });
}

// The whole program behind every array-sum step's main(): its variants over every dtype, size
// and offset (run_dtype). `reads`, `needs`: as run_program's.
inline int run_step(int argc, char** argv, const char* step, const std::vector<Variant>& all_variants,
                    unsigned reads = kBatch, Requirement needs = nullptr) {
  VariantGroup names;
  for (const auto& v : all_variants) names.variants.push_back({v.name, v.about, v.in_all});
  const char* intro = "sum an array on the GPU, verify it, time it against CUB.";
  auto max_n = [](const Options& opt) { return *std::max_element(opt.sizes.begin(), opt.sizes.end()); };
  auto in_bytes = [&](const Options& opt) { return input_buffer_bytes(max_n(opt)); };
  auto scratch_bytes = [&](const Options& opt) { return max_n(opt) / 32 * 8 + (size_t(1) << 20); };
  auto fits = [&](const Options& opt) {
    require_memory(in_bytes(opt) + scratch_bytes(opt), std::to_string(max_n(opt)) + " elements");
  };
  auto body = [&](const Options& opt, const DeviceInfo&, Bench& bench) {
    std::vector<const Variant*> chosen;
    for (size_t i = 0; i < all_variants.size(); ++i)
      if (harness::chosen(opt, names.variants[i])) chosen.push_back(&all_variants[i]);
    void* d_in = nullptr;
    void* d_scratch = nullptr;
    void* d_out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, in_bytes(opt)));
    CUDA_CHECK(cudaMalloc(&d_scratch, scratch_bytes(opt)));
    CUDA_CHECK(cudaMalloc(&d_out, 256));
    const Launch ctx{bench.stream(), d_scratch, scratch_bytes(opt)};
    const bool ok = for_each_dtype(opt, [&](auto zero, const char* dtype) {
      using T = decltype(zero);
      return run_dtype<T>(dtype, opt, bench, step, chosen, d_in, static_cast<T*>(d_out), ctx);
    });
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_scratch));
    CUDA_CHECK(cudaFree(d_out));
    return ok;
  };
  return run_program(argc, argv, step, intro, {names}, reads, needs, body, fits);
}

}  // namespace harness

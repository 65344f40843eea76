// How fast can a plain read go, and what sets it? Little's law: the bandwidth a GPU sustains
// is the bytes it has in flight divided by the memory latency, so an SM that keeps too few
// bytes in flight leaves bandwidth unused, whatever the code around the loads does. This
// probe reads the same array with one kernel, changing only what decides the bytes in
// flight: threads per block, the width of each load (4 or 16 bytes) and how many loads each
// thread has in flight (1, 2, 4, 8). Two shapes:
//   grid  the whole array, grid-stride, as many blocks as fit at once (the floor's shape; the
//         harness's floor kernel is timed beside them: 1024 threads, 16-byte loads, 4 in flight)
//   rows  64 blocks, each reading its own contiguous 4 MiB (a block per row of 2^20 elements,
//         the shape of chapter 09's long rows): at most 64 SMs busy, one block each
// and the row `floor`: the harness's floor kernel (bench.cuh) on the grid shape.
// Each configuration's median over --reps runs, each between its own pair of events after an
// L2 flush, and with --csv one row per configuration.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "cost_probe.cuh"

struct Options : harness::ProbeOptions {};
const harness::Probe kProbe{"read_probe", 21, nullptr,
                            "device,cuda,shape,threads,load_bytes,in_flight,blocks,blocks_per_sm,"
                            "bytes_in_flight_per_sm,us,us_min,us_max,gbps"};

constexpr size_t kGridElements = size_t(1) << 28;  // 1 GiB of 32-bit elements
constexpr size_t kRowElements = size_t(1) << 20;   // 4 MiB per row
constexpr unsigned kRows = 64;

__device__ inline unsigned fold(unsigned v) { return v; }
__device__ inline unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

// Reads `count` loads of type L: the whole range grid-stride (chunk = 0), or block b the range
// [b * chunk, (b + 1) * chunk) with its own threads. InFlight loads are issued before any is used.
template <int Threads, typename L, int InFlight>
__global__ void __launch_bounds__(Threads) read_kernel(const L* __restrict__ in, size_t count, size_t chunk,
                                                       unsigned* sink) {
  size_t i = chunk ? blockIdx.x * chunk + threadIdx.x : blockIdx.x * size_t(Threads) + threadIdx.x;
  const size_t end = chunk ? (blockIdx.x + 1) * chunk : count;
  const size_t stride = chunk ? Threads : size_t(gridDim.x) * Threads;
  unsigned acc = 0;
  for (; i + (InFlight - 1) * stride < end; i += InFlight * stride) {
    L v[InFlight];
#pragma unroll
    for (int b = 0; b < InFlight; ++b) v[b] = in[i + b * stride];
#pragma unroll
    for (int b = 0; b < InFlight; ++b) acc ^= fold(v[b]);
  }
  for (; i < end; i += stride) acc ^= fold(in[i]);
  if (acc == 0x9E3779B9u && blockIdx.x == 0x7fffffffu) *sink = acc;  // never true: keeps the loads
}

struct Config {
  int threads, load_bytes, in_flight;
  void (*launch)(const void* in, size_t bytes, size_t chunk_bytes, unsigned blocks, unsigned* sink, cudaStream_t s);
  int (*per_sm)();  // blocks of this kernel that fit on one SM
};

template <int Threads, typename L, int InFlight>
Config config() {
  auto launch = [](const void* in, size_t bytes, size_t chunk_bytes, unsigned blocks, unsigned* sink, cudaStream_t s) {
    read_kernel<Threads, L, InFlight><<<blocks, Threads, 0, s>>>(static_cast<const L*>(in), bytes / sizeof(L),
                                                                  chunk_bytes / sizeof(L), sink);
    CUDA_CHECK_LAUNCH();
  };
  auto per_sm = [] {
    int n = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, read_kernel<Threads, L, InFlight>, Threads, 0));
    return n;
  };
  return {Threads, int(sizeof(L)), InFlight, launch, per_sm};
}

template <int Threads>
void add_configs(std::vector<Config>& all) {
  all.push_back(config<Threads, unsigned, 1>());
  all.push_back(config<Threads, unsigned, 2>());
  all.push_back(config<Threads, unsigned, 4>());
  all.push_back(config<Threads, unsigned, 8>());
  all.push_back(config<Threads, uint4, 1>());
  all.push_back(config<Threads, uint4, 2>());
  all.push_back(config<Threads, uint4, 4>());
  all.push_back(config<Threads, uint4, 8>());
}

static void run(const Options& opt, const harness::DeviceInfo& dev, harness::ProbeCsv& csv, cudaStream_t s) {
  std::vector<Config> configs;
  add_configs<128>(configs);
  add_configs<256>(configs);
  add_configs<512>(configs);
  add_configs<1024>(configs);
  void* in = nullptr;
  unsigned* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&in, kGridElements * 4));
  CUDA_CHECK(cudaMemset(in, 0, kGridElements * 4));
  CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  harness::L2Flush flush;
  flush.allocate(dev);
  std::printf("%s on %s (%d SMs), CUDA %s: median (min-max) of %d runs, each after an L2 flush\n"
              "%-5s %7s %5s %9s %7s %7s %14s %24s %8s\n",
              kProbe.name, dev.name.c_str(), dev.sms, dev.cuda.c_str(), opt.reps, "shape", "threads", "load",
              "in_flight", "blocks", "per_SM", "B_in_flight/SM", "us (min-max)", "GB/s");
  auto measure = [&](const char* shape, int threads, int load, int in_flight, unsigned blocks, int per_sm,
                     size_t bytes, const std::function<void()>& launch) {
    launch();  // warm-up
    const std::vector<double> ms = harness::event_pair_times(opt.reps, s, launch, [&] { flush.run(s); });
    const double us = harness::median_of(ms) * 1e3;
    const auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
    // Bytes in flight on an SM that is busy: the blocks it holds at once x threads x loads x width.
    const unsigned busy_per_sm = unsigned(std::min<size_t>(per_sm, (blocks + dev.sms - 1) / dev.sms));
    const size_t in_flight_bytes = size_t(busy_per_sm) * threads * in_flight * load;
    const double gbps = bytes / (us * 1e3);
    std::printf("%-5s %7d %5d %9d %7u %7u %14zu %9.2f (%6.2f-%6.2f) %8.0f\n", shape, threads, load, in_flight, blocks,
                busy_per_sm, in_flight_bytes, us, *lo * 1e3, *hi * 1e3, gbps);
    csv.row(shape, threads, load, in_flight, blocks, busy_per_sm, in_flight_bytes, us, *lo * 1e3, *hi * 1e3, gbps);
  };
  for (const Config& c : configs) {
    const unsigned resident = unsigned(c.per_sm() * dev.sms);
    measure("grid", c.threads, c.load_bytes, c.in_flight, resident, c.per_sm(), kGridElements * 4,
            [&] { c.launch(in, kGridElements * 4, 0, resident, sink, s); });
  }
  measure("floor", harness::kFloorThreads, 16, 4, harness::resident_blocks(harness::floor_kernel, harness::kFloorThreads),
          harness::resident_blocks(harness::floor_kernel, harness::kFloorThreads) / dev.sms, kGridElements * 4,
          [&] { harness::launch_floor(in, kGridElements, sink, 0, s); });
  for (const Config& c : configs)
    measure("rows", c.threads, c.load_bytes, c.in_flight, kRows, c.per_sm(), kRows * kRowElements * 4,
            [&] { c.launch(in, kRows * kRowElements * 4, kRowElements * 4, kRows, sink, s); });
  flush.free();
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(sink));
}

int main(int argc, char** argv) {
  return harness::probe_main<Options>(argc, argv, kProbe,
                                      "the bandwidth of a plain read against the bytes each SM keeps in flight.", {}, run);
}

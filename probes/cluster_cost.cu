// What a thread block cluster costs, and what distributed shared memory (DSMEM) gives, for
// clusters of C = 1, 2, 4, 8, 16 blocks (16 is non-portable; a size that cannot launch is skipped):
//   launch     an empty kernel on a full grid of clusters, launched as clusters and with <<<>>>
//   sync       (kernel with K barriers - the same with 0) / K: cluster.sync(), __syncthreads()
//   latency    one thread chasing a random cycle in its own shared memory, a peer's, and L2
//   bandwidth  every thread reading 32 KiB with 16-byte loads: a peer's shared memory, its own, L2
// The latency and bandwidth kernels take over half an SM's shared memory, so one block fits per SM:
// the peer block of a cluster is then on another SM, and a DSMEM load really leaves the SM.
// Prints tables; with --csv FILE one row per measurement (kProbe's header, the device in every row).
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "clusters.cuh"
#include "cost_probe.cuh"

namespace cg = cooperative_groups;

constexpr int kThreads = 1024;                // launch, sync and bandwidth blocks
constexpr int kSizes[] = {1, 2, 4, 8, 16};    // cluster sizes probed
constexpr int kSyncs = 1000;                  // barriers per sync kernel
constexpr int kChain = 1024;                  // pointer-chase entries: 4 KiB
constexpr int kHops = 1 << 14;                // timed dependent loads per chase
constexpr int kChaseThreads = 32;             // one thread chases; its warp fills the chain
constexpr int kReadVectors = 32 * 1024 / 16;  // 32 KiB of 16-byte vectors per block
constexpr int kPasses = 4096;                 // times each block reads them
const harness::Probe kProbe{"cluster_cost", 21, harness::clusters_unsupported,  // --reps 21 by default
                            "device,cuda,probe,cluster,metric,median,min,max,unit"};
enum Barrier { kClusterSync, kRelaxed, kSyncthreads };
enum Source { kPeer, kOwn, kL2 };

__global__ void empty_kernel() {}

// K barriers and nothing else; every thread of every block of the cluster passes all K. cg's split
// form, barrier_arrive() then barrier_wait(), is the very code of sync() (cooperative_groups/details/
// helpers.h), so it is not timed apart; the relaxed arrive (no release ordering) is what differs.
__global__ void __launch_bounds__(kThreads) barrier_loop(int barrier, int count) {
#if CLUSTERS_COMPILED
  if (barrier == kSyncthreads) {  // one loop per kind: no choice inside the timed loop
    for (int k = 0; k < count; ++k) __syncthreads();
  } else if (barrier == kRelaxed) {
    for (int k = 0; k < count; ++k) __cluster_barrier_arrive_relaxed(), __cluster_barrier_wait();
  } else {
    for (int k = 0; k < count; ++k) cg::this_cluster().sync();
  }
#endif
}

// SM cycles (clock64) and ns (%globaltimer) read together. The "memory" clobber keeps the compiler
// from moving loads across a stamp, and `after` (the chase's index) must be computed before it.
struct Stamp { long long cycles; unsigned long long ns; };
__device__ __forceinline__ Stamp stamp(unsigned after) {
  Stamp s;
  asm volatile("mov.u64 %0, %%clock64;\n\tmov.u64 %1, %%globaltimer;"
               : "=l"(s.cycles), "=l"(s.ns) : "r"(after) : "memory");
  return s;
}

// kHops dependent loads around the cycle at `chain`; out = {cycles, ns, where it ended} (stored, so
// the loads stay). Global: ld.global.cg, cached in L2 but not L1. One untimed lap first warms L2.
template <bool Global>
__device__ void chase(const unsigned* chain, unsigned long long* out) {
  unsigned i = 0;
  for (int h = 0; h < kChain; ++h) i = Global ? __ldcg(chain + i) : chain[i];
  const Stamp t0 = stamp(i);
  for (int h = 0; h < kHops; ++h) i = Global ? __ldcg(chain + i) : chain[i];
  const Stamp t1 = stamp(i);
  out[0] = t1.cycles - t0.cycles, out[1] = t1.ns - t0.ns, out[2] = i;
}

// One cluster. Thread 0 of rank 0 chases in 4 places, out[3 x place]: its own shared memory
// (ld.shared), the same through the cluster window (map_shared_rank to itself: what an address
// in the window costs by itself), rank (own+1) % C's (DSMEM; C = 1: itself again), and L2.
__global__ void __launch_bounds__(kChaseThreads) chase_kernel(const unsigned* __restrict__ chain,
                                                              unsigned long long* out) {
  extern __shared__ unsigned chain_smem[];  // kChain used; the rest keeps other blocks off this SM
#if CLUSTERS_COMPILED
  cg::cluster_group cluster = cg::this_cluster();
  for (int i = threadIdx.x; i < kChain; i += blockDim.x) chain_smem[i] = chain[i];
  cluster.sync();  // every block running and its chain in place before anyone reads it
  const unsigned rank = cluster.block_rank();
  if (rank == 0 && threadIdx.x == 0) {
    chase<false>(chain_smem, out);
    chase<false>(cluster.map_shared_rank(chain_smem, rank), out + 3);
    chase<false>(cluster.map_shared_rank(chain_smem, (rank + 1) % cluster.num_blocks()), out + 6);
    chase<true>(chain, out + 9);
  }
  cluster.sync();  // the peer's shared memory must outlive the chase: the peer waits here
#endif
}

// The block reads 32 KiB `passes` times, 16 bytes a load. Pass p starts 64 vectors further on, so
// the compiler cannot reuse one pass's loads for the next; each warp still reads 512 bytes in a row.
template <bool Global>
__device__ int read_passes(const int4* buf, int passes) {
  int acc = 0;
#pragma unroll 4
  for (int p = 0; p < passes; ++p) {
#pragma unroll
    for (int k = 0; k < kReadVectors / kThreads; ++k) {
      const int i = (threadIdx.x + k * kThreads + p * 64) & (kReadVectors - 1);
      const int4 v = Global ? __ldcg(buf + i) : buf[i];
      acc += v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  return acc;
}

__global__ void __launch_bounds__(kThreads) read_kernel(int source, int passes, const int4* __restrict__ l2,
                                                        int* sink) {
  extern __shared__ int4 read_smem[];  // kReadVectors used; the rest keeps other blocks off this SM
#if CLUSTERS_COMPILED
  cg::cluster_group cluster = cg::this_cluster();
  for (int i = threadIdx.x; i < kReadVectors; i += kThreads) read_smem[i] = make_int4(i, blockIdx.x, 0, 1);
  cluster.sync();  // the peer is running and its buffer filled before anyone reads it
  const unsigned peer = (cluster.block_rank() + 1) % cluster.num_blocks();
  const int acc = source == kPeer  ? read_passes<false>(cluster.map_shared_rank(read_smem, peer), passes)
                  : source == kOwn ? read_passes<false>(read_smem, passes)
                                   : read_passes<true>(l2 + size_t(blockIdx.x) * kReadVectors, passes);
  cluster.sync();  // ... and it stays alive until every reader is done
  if (acc == 0x5eed1e55) *sink = acc;  // seldom true, unknown to the compiler: the loads stay
#endif
}

struct Options : harness::ProbeOptions { int batch = 500; };

// The median and min-max of some reps, and their table cell "median (min-max)".
struct Stat { double median, min, max; };
static Stat stat_of(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {harness::median_of(v), *lo, *hi};
}
static std::string cell_of(const Stat& s, int digits) {
  char cell[80];
  std::snprintf(cell, sizeof cell, "%.*f (%.*f-%.*f)", digits, s.median, digits, s.min, digits, s.max);
  return cell;
}

// us per launch, of `reps` batches (after an untimed one) of `batch` launches between one pair of
// events: a launch takes about a microsecond, an event pair resolves about 0.5 us. The batch is
// held behind a spin kernel until the host has queued it (timed_batch: 10 us per launch at
// first, doubled whenever the GPU got there first, and the batch run again).
template <class F>
static std::vector<double> per_launch_us(int reps, int batch, cudaStream_t s, F&& launch) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  uint64_t hold_ns = uint64_t(10000) * uint64_t(batch);
  std::vector<double> us;
  for (int r = -1; r < reps;) {  // r = -1: a warm-up batch; r moves on only after a sound batch
    const double ms = harness::timed_batch(s, start, stop, batch, hold_ns, launch);
    if (ms >= 0 && r++ >= 0) us.push_back(ms * 1e3 / batch);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return us;
}

// Each measurement: a CSV row (with --csv) and a table cell, "median (min-max)".
static std::string put(harness::ProbeCsv& out, const char* probe, int c, const char* metric, const Stat& s,
                       const char* unit, int digits) {
  out.row(probe, c, metric, s.median, s.min, s.max, unit);
  return cell_of(s, digits);
}

// The clusters of C blocks of `kernel` that fit at once, or 0 after one line saying why none can.
template <typename Kernel>
static unsigned fit_or_skip(Kernel kernel, unsigned threads, int c, size_t smem, const char* probe) {
  try {
    return harness::clusters_that_fit(kernel, threads, c, smem, probe, harness::Launch{});
  } catch (const std::runtime_error& e) {  // none fits, or the GPU refuses the size
    (void)cudaGetLastError();              // not sticky: cleared for the next CUDA_CHECK_LAUNCH
    std::printf("%3d  skipped: %s\n", c, e.what());
    return 0;
  }
}

static void probe_launch(const Options& opt, harness::ProbeCsv& out, cudaStream_t s) {
  std::printf("\nlaunch: an empty kernel, grid = clusters that fit at once (cudaOccupancyMaxActiveClusters) x C\n"
              "blocks of %d threads; us per launch, %d launches back to back between one pair of events\n"
              "%3s %8s %6s  %-26s %s\n", kThreads, opt.batch, "C", "clusters", "blocks", "as clusters us",
              "plain <<<>>> us");
  for (int c : kSizes) {
    const unsigned clusters = fit_or_skip(empty_kernel, kThreads, c, 0, "launch"), blocks = clusters * unsigned(c);
    if (!clusters) continue;
    auto as_clusters = [&] { CUDA_CHECK(harness::launch_clusters(empty_kernel, blocks, kThreads, c, 0, s)); };
    auto plain = [&] { empty_kernel<<<blocks, kThreads, 0, s>>>(); CUDA_CHECK_LAUNCH(); };
    const Stat cl = stat_of(per_launch_us(opt.reps, opt.batch, s, as_clusters));
    const Stat pl = stat_of(per_launch_us(opt.reps, opt.batch, s, plain));
    std::printf("%3d %8u %6u  %-26s %s\n", c, clusters, blocks,
                put(out, "launch", c, "cluster_launch", cl, "us", 3).c_str(),
                put(out, "launch", c, "plain_launch", pl, "us", 3).c_str());
  }
}

static void probe_sync(const Options& opt, harness::ProbeCsv& out, cudaStream_t s) {
  std::printf("\nsync: ns per barrier = (kernel with %d barriers - the same with 0) / %d, the two timed in turn each\n"
              "rep; grid = clusters that fit x C blocks of %d threads\n%3s %6s  %-26s %-26s %s\n", kSyncs, kSyncs,
              kThreads, "C", "blocks", "cluster.sync() ns", "arrive.relaxed+wait ns", "__syncthreads() ns");
  const char* metrics[] = {"cluster_sync", "cluster_sync_relaxed", "syncthreads"};
  for (int c : kSizes) {
    const unsigned blocks = fit_or_skip(barrier_loop, kThreads, c, 0, "sync") * unsigned(c);
    if (!blocks) continue;
    std::printf("%3d %6u ", c, blocks);
    for (int barrier : {kClusterSync, kRelaxed, kSyncthreads}) {
      auto launch = [&](int count) {
        CUDA_CHECK(harness::launch_clusters(barrier_loop, blocks, kThreads, c, 0, s, barrier, count));
      };
      launch(kSyncs);  // warm-up
      std::vector<double> ns;
      for (int r = 0; r < opt.reps; ++r) {
        const double with_k = harness::event_pair_times(1, s, [&] { launch(kSyncs); }, [] {})[0];
        const double with_0 = harness::event_pair_times(1, s, [&] { launch(0); }, [] {})[0];
        ns.push_back((with_k - with_0) * 1e6 / kSyncs);
      }
      std::printf(" %-26s", put(out, "sync", c, metrics[barrier], stat_of(ns), "ns", 1).c_str());
    }
    std::printf("\n");
  }
}

static void probe_latency(const Options& opt, harness::ProbeCsv& out, cudaStream_t s, size_t smem, double rated_ghz) {
  std::vector<unsigned> next(kChain);  // a random cycle through all entries (Sattolo's shuffle)
  std::iota(next.begin(), next.end(), 0u);
  std::mt19937 rng(2024);
  for (unsigned i = kChain - 1; i > 0; --i)
    std::swap(next[i], next[std::uniform_int_distribution<unsigned>(0, i - 1)(rng)]);
  unsigned* d_chain = nullptr;
  unsigned long long* d_out = nullptr;
  CUDA_CHECK(cudaMalloc(&d_chain, kChain * sizeof(unsigned)));
  CUDA_CHECK(cudaMalloc(&d_out, 12 * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemcpy(d_chain, next.data(), kChain * sizeof(unsigned), cudaMemcpyHostToDevice));
  // ns come from %globaltimer over the same loads, not from cycles / clock rate: cudaDevAttrClockRate
  // is the rated (peak) clock, not necessarily the one the SM ran at; GHz = cycles / ns shows that one.
  std::printf("\nlatency: one thread, %d dependent loads around a random 4 KiB cycle; cycles (clock64) and ns\n"
              "(%%globaltimer) per hop, medians (the CSV has min and max); peer = rank (own+1) %% C, on another SM;\n"
              "GHz = cycles / ns (rated: %.2f GHz)\n%3s  %-22s %-22s %-22s %-22s %s\n", kHops, rated_ghz, "C",
              "own smem", "own via cluster window", "peer smem (DSMEM)", "L2 (ld.global.cg)", "GHz");
  const char* metrics[] = {"smem", "smem_window", "dsmem", "l2"};
  for (int c : kSizes) {
    if (!fit_or_skip(chase_kernel, kChaseThreads, c, smem, "latency")) continue;
    std::vector<double> cycles[4], ns[4], ghz;
    for (int r = -1; r < opt.reps; ++r) {  // r = -1: warm-up
      CUDA_CHECK(harness::launch_clusters(chase_kernel, unsigned(c), kChaseThreads, c, smem, s, d_chain, d_out));
      unsigned long long h[12];
      CUDA_CHECK(cudaMemcpyAsync(h, d_out, sizeof h, cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      if (r < 0) continue;
      for (int w = 0; w < 4; ++w) {
        cycles[w].push_back(double(h[3 * w]) / kHops);
        ns[w].push_back(double(h[3 * w + 1]) / kHops);
      }
      ghz.push_back(double(h[0] + h[3] + h[6] + h[9]) / double(h[1] + h[4] + h[7] + h[10]));
    }
    std::printf("%3d ", c);
    for (int w = 0; w < 4; ++w) {
      const Stat sc = stat_of(cycles[w]), sn = stat_of(ns[w]);
      put(out, "latency", c, metrics[w], sc, "cycles/hop", 1);
      put(out, "latency", c, metrics[w], sn, "ns/hop", 1);
      std::printf("  %6.1f cyc %6.1f ns     ", sc.median, sn.median);
    }
    std::printf(" %.2f\n", stat_of(ghz).median);
    put(out, "latency", c, "sm_clock", stat_of(ghz), "GHz", 2);
  }
  CUDA_CHECK(cudaFree(d_chain));
  CUDA_CHECK(cudaFree(d_out));
}

static void probe_bandwidth(const Options& opt, harness::ProbeCsv& out, cudaStream_t s, size_t smem, int sms) {
  int per_sm = 0;  // 1 by design; the L2 buffer has a 32 KiB slice for each block that fits
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_kernel, kThreads, smem));
  const size_t slice = kReadVectors * sizeof(int4), l2_bytes = size_t(sms) * size_t(std::max(per_sm, 1)) * slice;
  int4* d_l2 = nullptr;
  int* d_sink = nullptr;
  CUDA_CHECK(cudaMalloc(&d_l2, l2_bytes));
  CUDA_CHECK(cudaMalloc(&d_sink, sizeof(int)));
  CUDA_CHECK(cudaMemset(d_l2, 0, l2_bytes));
  std::printf("\nbandwidth: all %d threads of every block (%d block(s) per SM) read 32 KiB %d times, 16 bytes a load:\n"
              "the next block's shared memory (DSMEM), their own, or their slice of a %zu KiB buffer in L2;\n"
              "GB/s = bytes read / kernel time (events)\n%3s %8s %6s  %-24s %-24s %s\n", kThreads, per_sm, kPasses,
              l2_bytes >> 10, "C", "clusters", "blocks", "DSMEM GB/s", "own smem GB/s", "L2 GB/s");
  const char* metrics[] = {"dsmem", "smem", "l2"};
  for (int c : kSizes) {
    const unsigned clusters = fit_or_skip(read_kernel, kThreads, c, smem, "bandwidth"), blocks = clusters * unsigned(c);
    if (!clusters) continue;
    std::printf("%3d %8u %6u ", c, clusters, blocks);
    for (int source : {kPeer, kOwn, kL2}) {
      auto launch = [&] {
        CUDA_CHECK(harness::launch_clusters(read_kernel, blocks, kThreads, c, smem, s, source, kPasses, d_l2, d_sink));
      };
      launch();  // warm-up (and the L2 slices read into L2)
      std::vector<double> gbps;
      for (double ms : harness::event_pair_times(opt.reps, s, launch, [] {}))
        gbps.push_back(double(blocks) * kPasses * double(slice) / (ms * 1e6));
      std::printf(" %-24s", put(out, "bandwidth", c, metrics[source], stat_of(gbps), "GB/s", 0).c_str());
    }
    std::printf("\n");
  }
  CUDA_CHECK(cudaFree(d_l2));
  CUDA_CHECK(cudaFree(d_sink));
}

static void run(const Options& opt, const harness::DeviceInfo& dev, harness::ProbeCsv& out, cudaStream_t s) {
  int rated_khz = 0, smem_sm = 0, smem_block = 0;  // cudaDeviceProp::clockRate is gone in CUDA 13
  CUDA_CHECK(cudaDeviceGetAttribute(&rated_khz, cudaDevAttrClockRate, opt.device));
  CUDA_CHECK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, opt.device));
  CUDA_CHECK(cudaDeviceGetAttribute(&smem_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, opt.device));
  // Over half an SM's shared memory: no second block fits beside one (both probes' buffers fit in it).
  const size_t smem = size_t(std::min(smem_sm / 2 + 1024, smem_block));
  CUDA_CHECK(cudaFuncSetAttribute(chase_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  CUDA_CHECK(cudaFuncSetAttribute(read_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  std::printf("%s on %s (sm_%d%d, %d SMs), CUDA %s: thread block clusters of C blocks (16: non-portable);\n"
              "each figure: median (min-max) of %d reps\n", kProbe.name, dev.name.c_str(), dev.cc_major,
              dev.cc_minor, dev.sms, dev.cuda.c_str(), opt.reps);
  probe_launch(opt, out, s);
  probe_sync(opt, out, s);
  probe_latency(opt, out, s, smem, rated_khz / 1e6);
  probe_bandwidth(opt, out, s, smem, dev.sms);
}

int main(int argc, char** argv) {
  const std::vector<harness::ProbeFlag<Options>> own = {
      {"--batch", "B", "launches back to back per timed batch, launch probe (default 500)",
       [](Options& o, const std::string& v) { o.batch = harness::parse_int(v, "--batch", 1, 1000); }},
  };
  return harness::probe_main<Options>(
      argc, argv, kProbe,
      "what thread block clusters cost (launch, cluster.sync()) and DSMEM latency and bandwidth\n"
      "against shared memory and L2, for clusters of 1, 2, 4, 8 and 16 blocks (sm_90 or later).",
      own, run);
}

// What does one cg::this_grid().sync() cost, and how does that grow with the grid?
// A cooperative kernel runs K grid syncs in a loop and nothing else; the same kernel with 0
// syncs is timed too, and (K-sync time - 0-sync time) / K is the cost of one sync. Grids of
// SMs x 1, 2, ... up to the co-resident maximum, for 1024- and 256-thread blocks. For
// comparison, the cost of a kernel boundary: a CUDA graph of K empty kernels of the same
// grid, divided by K (what splitting the reduction into two launches would pay instead).
// And what the cooperative attribute itself costs: the 0-sync kernel launched once as a
// cooperative kernel and once with <<<>>> (legal: without a sync nothing needs the grid
// barrier), each between its own pair of events.
// Prints a table, and with --csv FILE one row per grid (device name in every row).
#include <cooperative_groups.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cost_probe.cuh"

namespace cg = cooperative_groups;

__global__ void sync_loop(int syncs) {
  cg::grid_group grid = cg::this_grid();
  for (int k = 0; k < syncs; ++k) grid.sync();
}

__global__ void empty_kernel() {}

struct Options : harness::ProbeOptions {
  int syncs = 1000;
  std::vector<int> threads{1024, 256};
};
const harness::Probe kProbe{"grid_sync_cost", 101, harness::cooperative_unsupported,  // --reps 101 by default
                            "device,cuda,threads,blocks_per_sm,blocks,syncs,us_per_sync,us_coop_launch,"
                            "us_plain_launch,us_per_kernel"};

// Median time in ms of `launch`, each run between its own pair of events.
template <class F>
static double median_ms(F&& launch, int reps, cudaStream_t s) {
  launch();  // warm-up
  launch();
  return harness::median_of(harness::event_pair_times(reps, s, launch, [] {}));
}

static void launch_sync_loop(unsigned blocks, int threads, int syncs, cudaStream_t s) {
  CUDA_CHECK(harness::launch_cooperative(sync_loop, blocks, threads, 0, s, syncs));
}

static void run(const Options& opt, const harness::DeviceInfo& dev, harness::ProbeCsv& csv, cudaStream_t s) {
  std::printf("%s on %s (sm_%d%d, %d SMs), CUDA %s: %d grid.sync() per launch, median of %d launches\n"
              "us/sync = (time with %d syncs - time with 0) / %d; coop launch = one cooperative launch with 0 syncs;\n"
              "plain launch = the same kernel with <<<>>>; us/kernel = a CUDA graph of %d empty kernels of the same\n"
              "grid / %d (the cost of a kernel boundary)\n"
              "%7s %9s %7s %9s %16s %17s %10s\n",
              kProbe.name, dev.name.c_str(), dev.cc_major, dev.cc_minor, dev.sms, dev.cuda.c_str(), opt.syncs,
              opt.reps, opt.syncs, opt.syncs, opt.syncs, opt.syncs, "threads", "blocks/SM", "blocks", "us/sync",
              "coop launch us", "plain launch us", "us/kernel");
  for (int threads : opt.threads) {
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sync_loop, threads, 0));
    for (int b = 1; b <= per_sm; ++b) {
      const unsigned blocks = unsigned(dev.sms) * unsigned(b);
      const double ms_k = median_ms([&] { launch_sync_loop(blocks, threads, opt.syncs, s); }, opt.reps, s);
      const double ms_0 = median_ms([&] { launch_sync_loop(blocks, threads, 0, s); }, opt.reps, s);
      const double ms_plain = median_ms([&] {
        sync_loop<<<blocks, threads, 0, s>>>(0);
        CUDA_CHECK_LAUNCH();
      }, opt.reps, s);
      // K empty kernels in one graph: launched back to back by the GPU, no host in between.
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int k = 0; k < opt.syncs; ++k) empty_kernel<<<blocks, threads, 0, s>>>();
      CUDA_CHECK(cudaStreamEndCapture(s, &graph));
      CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      const double ms_graph = median_ms([&] { CUDA_CHECK(cudaGraphLaunch(exec, s)); }, opt.reps, s);
      CUDA_CHECK(cudaGraphExecDestroy(exec));
      CUDA_CHECK(cudaGraphDestroy(graph));
      const double us_sync = (ms_k - ms_0) * 1e3 / opt.syncs, us_kernel = ms_graph * 1e3 / opt.syncs;
      std::printf("%7d %9d %7u %9.3f %16.2f %17.2f %10.3f\n", threads, b, blocks, us_sync, ms_0 * 1e3, ms_plain * 1e3,
                  us_kernel);
      csv.row(threads, b, blocks, opt.syncs, us_sync, ms_0 * 1e3, ms_plain * 1e3, us_kernel);
    }
  }
}

int main(int argc, char** argv) {
  const std::vector<harness::ProbeFlag<Options>> own = {
      {"--syncs", "K", "grid syncs per launch (default 1000)",
       [](Options& o, const std::string& v) { o.syncs = harness::parse_int(v, "--syncs", 1, 1000000); }},
      {"--threads", "T[,T...]", "threads per block, multiples of 32 (default 1024,256)",
       [](Options& o, const std::string& v) {
         o.threads.clear();
         for (const auto& s : harness::split_commas(v)) {
           const int t = harness::parse_int(s, "--threads", 32, 1024);
           if (t % 32) throw harness::UsageError("--threads: must be a multiple of 32 (got '" + s + "')");
           o.threads.push_back(t);
         }
       }},
  };
  return harness::probe_main<Options>(argc, argv, kProbe, "microseconds per cg::this_grid().sync() against the number of blocks.",
                                      own, run);
}

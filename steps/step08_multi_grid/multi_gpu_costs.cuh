// The fixed costs that decide below which n one GPU beats K (step 08): the empty fork/join,
// the cross-GPU barrier's latency, NCCL's all-reduce of one value (on the fork/join clock and
// on each GPU's own), the peer copy bandwidth; and the barrier's reuse test.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "multi_gpu.cuh"
#include "nccl_comms.cuh"

namespace harness {

// What the cost lines and the reuse test need of a cross-GPU barrier: a launch on every GPU
// of a kernel that crosses it `reps` times (blocks: that many per GPU, 0 for full grids; no
// fork/join: the caller does it), and its counters in GPU 0's memory.
struct BarrierUnderTest {
  std::function<void(unsigned blocks, int reps)> launch;
  unsigned* gen = nullptr;       // barriers completed
  unsigned* count = nullptr;     // arrivals at the current one (0 between barriers)
  unsigned* timeouts = nullptr;  // waits that gave up
};

// One counter from GPU 0's memory (a barrier's gen, count or timeouts).
inline unsigned read_on_gpu0(MultiGpu& mg, const unsigned* p) {
  unsigned v = 0;
  mg.use(0);
  CUDA_CHECK(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}

// The reuse test: B launches of one barrier each, queued back to back with no host wait and
// no reset in between, then one launch of B barriers (full grids). The generation must have
// moved by exactly 2B, the arrival count be back at 0, and no wait have timed out.
inline bool barrier_reuse_test(MultiGpu& mg, const BarrierUnderTest& b, int B) {
  auto read = [&](const unsigned* p) { return read_on_gpu0(mg, p); };
  mg.sync_all();
  const unsigned gen0 = read(b.gen);
  mg.fork();
  for (int i = 0; i < B; ++i) b.launch(1, 1);
  b.launch(0, B);
  mg.join();
  mg.sync_all();
  const unsigned gen1 = read(b.gen), cnt = read(b.count), timeouts = read(b.timeouts);
  const bool ok = gen1 - gen0 == 2u * unsigned(B) && cnt == 0 && timeouts == 0;
  std::printf("barrier reuse: %d launches x 1 barrier + 1 launch x %d barriers on %d GPUs, no reset: generation +%u "
              "(want %u), count %u (want 0), timeouts %u -> %s\n",
              B, B, mg.size(), gen1 - gen0, 2u * unsigned(B), cnt, timeouts, ok ? "ok" : "FAILED");
  return ok;
}

// On GPU 0's fork/join clock: the empty fork/join; the barrier (B against 0 barriers, 1 block
// per GPU and full grids) unless `barrier` is null (`no_barrier_why` says why); and the
// grouped all-reduce of one float where `allreduce` is set (a build with NCCL).
inline void measure_fork_join_costs(const MultiGpuOptions& opt, MultiGpu& mg, const BarrierUnderTest* barrier,
                                    const std::string& no_barrier_why, const std::function<void()>& allreduce) {
  const int B = opt.barrier_reps;
  std::vector<std::string> names{"empty fork/join"};
  std::vector<std::function<void()>> launches{[] {}};
  if (barrier) {
    for (unsigned blocks : {1u, 0u}) {
      launches.push_back([barrier, blocks, B] { barrier->launch(blocks, B); });
      launches.push_back([barrier, blocks] { barrier->launch(blocks, 0); });
      names.push_back(blocks ? "barriers, 1 block per GPU" : "barriers, full grids");
      names.push_back("");
    }
  }
  if (allreduce) {
    launches.push_back(allreduce);
    names.push_back("ncclAllReduce of 1 float");
  }
  std::vector<double> queue_us;
  const std::vector<Timing> t = mg.time(opt, launches, &queue_us);
  std::printf("costs on %d GPUs (median of %d, GPU 0's events around fork/join):\n", mg.size(), opt.reps);
  std::printf("  empty fork/join (no work): %.2f us\n", t[0].median_ms * 1e3);
  size_t i = 1;
  if (barrier) {
    for (int j = 0; j < 2; ++j, i += 2)
      std::printf("  cross-GPU barrier (%s): %.3f us per barrier (launch with %d barriers minus launch with 0, / %d; "
                  "the launch with 0: %.2f us)\n",
                  names[i].c_str(), (t[i].median_ms - t[i + 1].median_ms) * 1e3 / B, B, B, t[i + 1].median_ms * 1e3);
  } else {
    std::printf("  cross-GPU barrier: not measured (%s)\n", no_barrier_why.c_str());
  }
  if (allreduce) {
    std::printf("  ncclAllReduce of 1 float, one call: %.2f us (empty fork/join included)\n", t[i].median_ms * 1e3);
    std::printf("    (host: up to %.1f us to queue one timed run of it, lead spin and fork/join included)\n", queue_us[i]);
  }
}

#if HAVE_NCCL
// The all-reduce of one float again, on each GPU's own clock, which is how nccl_mp (one
// process per GPU) times itself: lined up by an all-reduce, then each GPU's own events around
// one call. Once grouped from this thread (as the nccl variant calls it), once from one
// thread per GPU (each with its communicator, no group: NCCL's docs allow either for
// communicators made by ncclCommInitAll). With nccl_mp's own line (step08_nccl_ranks) and the
// fork/join figure above, this separates the places a call's time can go: the fork/join, the
// host (queueing longer than the lead), one thread driving K communicators, or NCCL itself.
inline void measure_allreduce_clocks(const Options& opt, MultiGpu& mg, const std::vector<ncclComm_t>& comms) {
  const int K = mg.size();
  std::vector<double> group_us;  // host time of ncclGroupStart .. ncclGroupEnd
  auto grouped = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    allreduce_one_float(mg, comms);
    group_us.push_back(host_us_since(t0));
  };
  std::vector<double> call_us;  // host time of one ncclAllReduce in its own thread
  auto per_thread = [&] {
    std::vector<double> us(static_cast<size_t>(K), 0.0);
    on_every_gpu_thread(mg, [&](int k) {
      const auto t0 = std::chrono::steady_clock::now();
      NCCL_CHECK(ncclAllReduce(one_float_send(mg, k), one_float_recv(mg, k), 1, ncclFloat32, ncclSum, comms[size_t(k)],
                               mg[k].stream));
      us[size_t(k)] = host_us_since(t0);
    });
    call_us.insert(call_us.end(), us.begin(), us.end());
  };
  std::printf("  ncclAllReduce of 1 float on each GPU's own clock (as nccl_mp times itself; lined up by an "
              "all-reduce, median of %d per GPU, the slowest GPU's):\n", opt.reps);
  const auto g = mg.time_each_gpu(opt, grouped, grouped);
  std::printf("    one thread, grouped calls:   %.2f us (GPU %d, spread %.2f-%.2f); host: %.1f us per "
              "ncclGroupStart..ncclGroupEnd (median), %.1f us to queue a timed run (max)\n",
              g.slowest.median_ms * 1e3, mg[g.gpu].device, g.slowest.min_ms * 1e3, g.slowest.max_ms * 1e3,
              median_of(group_us), g.host_us_max);
  const auto p = mg.time_each_gpu(opt, per_thread, grouped);
  std::printf("    one thread per GPU, no group: %.2f us (GPU %d, spread %.2f-%.2f); host: %.1f us per "
              "ncclAllReduce call (median over threads and runs), %.1f us to queue a timed run (max)\n",
              p.slowest.median_ms * 1e3, mg[p.gpu].device, p.slowest.min_ms * 1e3, p.slowest.max_ms * 1e3,
              median_of(call_us), p.host_us_max);
}
#endif

// Peer bandwidth: cudaMemcpyPeerAsync between GPU 0 and each other GPU, both ways, up to
// 1 GiB (a quarter of the free memory at most), median of 5 after one warm-up.
inline void measure_peer_copies(MultiGpu& mg) {
  for (int k = 1; k < mg.size(); ++k) {
    size_t bytes = size_t(1) << 30;
    for (int g : {0, k}) {
      mg.use(g);
      bytes = std::min(bytes, free_gpu_bytes() / 4);
    }
    void *a = nullptr, *b = nullptr;
    mg.use(0);
    CUDA_CHECK(cudaMalloc(&a, bytes));
    mg.use(k);
    CUDA_CHECK(cudaMalloc(&b, bytes));
    mg.use(0);
    for (int dir = 0; dir < 2; ++dir) {
      std::vector<double> ms = event_pair_times(6, mg[0].stream, [&] {
        if (dir == 0) CUDA_CHECK(cudaMemcpyPeerAsync(b, mg[k].device, a, mg[0].device, bytes, mg[0].stream));
        else CUDA_CHECK(cudaMemcpyPeerAsync(a, mg[0].device, b, mg[k].device, bytes, mg[0].stream));
      }, [] {});
      ms.erase(ms.begin());  // the warm-up
      std::printf("  cudaMemcpyPeer GPU %d -> GPU %d, %.2f GiB: %.1f GB/s (median of 5)\n", dir ? mg[k].device : mg[0].device,
                  dir ? mg[0].device : mg[k].device, bytes / 1073741824.0, bytes / (median_of(ms) * 1e6));
    }
    CUDA_CHECK(cudaFree(a));
    mg.use(k);
    CUDA_CHECK(cudaFree(b));
  }
  mg.use(0);
}

// All of the above but the reuse test, in the order printed: the fork/join clock's costs, the
// all-reduce on each GPU's own clock (where `nccl` has communicators), the peer copies.
inline void measure_costs(const MultiGpuOptions& opt, MultiGpu& mg, const BarrierUnderTest* barrier,
                          const std::string& no_barrier_why, NcclComms& nccl) {
  std::function<void()> allreduce;
#if HAVE_NCCL
  if (!nccl.list.empty()) allreduce = [&] { allreduce_one_float(mg, nccl.list); };
#endif
  measure_fork_join_costs(opt, mg, barrier, no_barrier_why, allreduce);
#if HAVE_NCCL
  if (!nccl.list.empty()) measure_allreduce_clocks(opt, mg, nccl.list);
#endif
  measure_peer_copies(mg);
}

}  // namespace harness

// The program around step 08's variants, after the flags: open the K GPUs, enable peer
// access, let the step make its variants (and its barrier, NCCL communicators, windows),
// run the barrier's reuse test and the cost lines, every dtype, size and offset
// (multi_gpu_runner.cuh), then free what was made and give the exit code.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "multi_gpu_costs.cuh"
#include "multi_gpu_runner.cuh"
#include "nccl_comms.cuh"
#include "peer_setup.cuh"

namespace harness {

// What the step's variants can be made of once the GPUs are open. Nothing NCCL until the step
// asks: nccl.init(devices), lsa.setup(mg, nccl.list). Freed by release() after the last row.
struct MultiGpuSetup {
  const std::vector<int>& devices;
  MultiGpu& mg;
  PeerAccess peers;  // peers.ok: every GPU reaches GPU 0's memory with native atomics
  NcclComms nccl;
#if HAVE_NCCL_DEVICE_API
  LsaWindows lsa;
#endif
  std::vector<void*> gpu0_memory;

  MultiGpuSetup(const std::vector<int>& devices_, MultiGpu& mg_, PeerAccess peers_)
      : devices(devices_), mg(mg_), peers(std::move(peers_)) {}
  // `bytes` of GPU 0's memory, zeroed here, once, and kept until release().
  void* zeroed_on_gpu0(size_t bytes) {
    void* p = nullptr;
    mg.use(0);
    CUDA_CHECK(cudaMalloc(&p, bytes));
    CUDA_CHECK(cudaMemset(p, 0, bytes));
    gpu0_memory.push_back(p);
    return p;
  }
  // Not a destructor: NCCL's teardown is collective and must not run while an error unwinds.
  void release() {
#if HAVE_NCCL_DEVICE_API
    if (lsa.ok) lsa.teardown(mg, nccl.list);
#endif
    nccl.destroy();
    for (void* p : gpu0_memory) {
      mg.use(0);
      CUDA_CHECK(cudaFree(p));
    }
    gpu0_memory.clear();
  }
};

// What the step hands back: its variants (rows in this order) and, where it has one, its
// cross-GPU barrier for the cost lines and (where test_barrier_reuse) the reuse test.
struct MultiGpuPlan {
  std::vector<MultiVariant> variants;
  std::optional<BarrierUnderTest> barrier;
  bool test_barrier_reuse = false;

  template <class... Args>
  void add(Args&&... args) { variants.emplace_back(std::forward<Args>(args)...); }  // MultiVariant's arguments
  void skip(std::string what, std::string why) {
    variants.push_back(MultiVariant::skip(std::move(what), std::move(why)));
  }
};

// make_plan(MultiGpuSetup&) -> MultiGpuPlan. The plan's launchers may keep references into
// the setup (mg, nccl, lsa): it lives until the last row. Exit codes: see usage_text().
template <class MakePlan>
int run_multi_gpu_step(const Options& opt, const char* step, MakePlan&& make_plan) {
  std::vector<int> devices;
  if (int code = select_gpus(opt, step, devices); code >= 0) return code;
  return exit_code_of(step, [&] {
    if (int code = open_gpus(devices, step); code >= 0) return code;
    MultiGpu mg(devices, largest_shard(opt, int(devices.size())));
    print_gpus(mg, step);
    if (!HAVE_NCCL) std::printf("NCCL: not found at configure time; the nccl variants are left out\n");
    MultiGpuSetup setup(devices, mg, setup_peers(mg));
    const MultiGpuPlan plan = make_plan(setup);
    const BarrierUnderTest* barrier = plan.barrier ? &*plan.barrier : nullptr;
    bool ok = true;
    if (barrier && plan.test_barrier_reuse) ok &= barrier_reuse_test(mg, *barrier, opt.barrier_reps);
    // No barrier: peer access is what it lacks (the step makes one wherever peers.ok).
    if (!opt.check_only) measure_costs(opt, mg, barrier, setup.peers.why_not, setup.nccl);
    print_multi_header(opt);
    ok &= for_each_dtype(opt, [&](auto zero, const char* dtype) {
      return run_multi_dtype<decltype(zero)>(dtype, opt, mg, step, plan.variants);
    });
    setup.release();
    return verdict_code(step, ok);
  });
}

}  // namespace harness

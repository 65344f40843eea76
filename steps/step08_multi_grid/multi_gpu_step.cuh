// The program around step 08's variants: the flags and --help (parse_program, common/run_step.cuh), the K
// GPUs, peer access, NCCL where a variant uses it; then the step makes its launchers (and its
// cross-GPU barrier), and the harness runs the barrier's reuse test, the cost lines, and every
// dtype, size and offset (multi_gpu_runner.cuh), frees what was made and gives the exit code.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "multi_gpu_costs.cuh"
#include "multi_gpu_runner.cuh"
#include "nccl_comms.cuh"
#include "peer_setup.cuh"
#include "run_step.cuh"

namespace harness {

// What a variant uses besides its shards, one bit each: the harness sets it up (or says why it
// cannot) before the step makes its launchers.
enum MultiGpuUses : unsigned {
  kUsesPeers = 1u << 0,    // its kernels reach GPU 0's memory (peer access with native atomics)
  kUsesBarrier = 1u << 1,  // the step's cross-GPU barrier: the reuse test runs before the rows
  kUsesNccl = 1u << 2,     // NCCL communicators (ncclCommInitAll)
  kUsesNcclLsa = 1u << 3,  // NCCL 2.28's symmetric windows and device communicators
};

// A variant as --help lists it and --variant picks it, the rest filled by name:
//   MultiGpuVariantName("nccl", "...").needs(kUsesNccl).total_everywhere().by_name_only()
struct MultiGpuVariantName {
  std::string name, about;
  unsigned uses = 0;        // MultiGpuUses bits
  bool everywhere = false;  // its total lands on every GPU (each verified, all bitwise equal), else on GPU 0 only
  bool in_all = true;       // false: runs only when named with --variant
  MultiGpuVariantName(std::string name_, std::string about_) : name(std::move(name_)), about(std::move(about_)) {}
  MultiGpuVariantName& needs(unsigned what) { return uses = what, *this; }
  MultiGpuVariantName& total_everywhere() { return everywhere = true, *this; }
  MultiGpuVariantName& by_name_only() { return in_all = false, *this; }
};

// Why this build cannot run a variant that uses `uses` ("": it can).
inline std::string not_built_why(unsigned uses) {
  if ((uses & kUsesNccl) && !HAVE_NCCL) return "NCCL was not found at configure time";
  if ((uses & kUsesNcclLsa) && !HAVE_NCCL_DEVICE_API) return "it needs NCCL 2.28 or later (nccl_device.h)";
  return "";
}

// What the step's launchers can be made of once the GPUs are open: communicators and windows
// exist where a chosen variant uses them (communicators also for the cost lines). Freed by
// release() after the last row.
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
  // Why a variant that uses `uses` cannot run on these GPUs ("": it can).
  std::string cannot_run_why(unsigned uses) const {
    if ((uses & (kUsesPeers | kUsesBarrier)) && !peers.ok) return peers.why_not;
#if HAVE_NCCL_DEVICE_API
    if ((uses & kUsesNcclLsa) && !lsa.ok) return lsa.why_not;
#endif
    return "";
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

// What the step hands back: a launcher per variant name (MultiVariant's `f` and `timeouts`)
// and, where it has one, its cross-GPU barrier for the cost lines and the reuse test.
struct MultiGpuPlan {
  std::vector<MultiVariant> launchers;
  std::optional<BarrierUnderTest> barrier;

  template <class F>
  void add(std::string name, F f, std::function<unsigned()> timeouts = {}) {
    launchers.emplace_back(std::move(name), f, false, std::move(timeouts));
  }
};

// The chosen variants in the order of `names`, each with its launcher from the plan, or a
// skip line where these GPUs cannot run it.
inline std::vector<MultiVariant> chosen_variants(const std::vector<const MultiGpuVariantName*>& chosen,
                                                 const MultiGpuSetup& setup, const MultiGpuPlan& plan) {
  std::vector<MultiVariant> run;
  for (const MultiGpuVariantName* v : chosen) {
    if (const std::string why = setup.cannot_run_why(v->uses); !why.empty()) {
      run.push_back(MultiVariant::skip(v->name, why));
      continue;
    }
    auto it = std::find_if(plan.launchers.begin(), plan.launchers.end(), [&](const auto& l) { return l.name == v->name; });
    if (it == plan.launchers.end()) throw std::logic_error("variant " + v->name + " has no launcher in the plan");
    run.push_back(*it);
    run.back().everywhere = v->everywhere;
  }
  return run;
}

// The whole program behind step 08's main: `make_plan(MultiGpuSetup&, MultiGpuPlan&)` adds the
// launchers; they may keep references into the setup (mg, nccl, lsa), which lives until the
// last row. `intro`: the first line of --help. Exit codes: see usage_text().
template <class MakePlan>
int run_multi_gpu_step(int argc, char** argv, const char* step, const std::string& intro,
                       const std::vector<MultiGpuVariantName>& variants, MakePlan&& make_plan) {
  turn_off_nvls(step);
  VariantGroup names;
  for (const auto& v : variants) {
    VariantName name(v.name, v.about);
    name.in_all = v.in_all;
    names.variants.push_back(name);
  }
  const std::string about = intro + "\nNCCL: " + (HAVE_NCCL ? "built in" : "not found at configure time (its variants are left out)");
  MultiGpuOptions opt;
  const int usage = parse_program(argc, argv, step, 0, about, {names}, opt, [&](const Options& o) {
    for (const auto& v : variants)
      if (std::count(o.variants.begin(), o.variants.end(), v.name) && !not_built_why(v.uses).empty())
        throw UsageError("--variant: " + v.name + " is not in this build (" + not_built_why(v.uses) + ")");
  }, gpus_flags(opt));
  if (usage >= 0) return usage;
  std::vector<const MultiGpuVariantName*> chosen;  // with `all`: those this build has
  unsigned uses = 0;
  for (size_t i = 0; i < variants.size(); ++i)
    if (harness::chosen(opt, names.variants[i]) && not_built_why(variants[i].uses).empty()) {
      chosen.push_back(&variants[i]);
      uses |= variants[i].uses;
    }
  std::vector<int> devices;
  if (int code = select_gpus(opt, step, devices); code >= 0) return code;
  return exit_code_of(step, [&] {
    if (int code = open_gpus(devices, step); code >= 0) return code;
    MultiGpu mg(devices, largest_shard(opt, int(devices.size())));
    print_gpus(mg, step);
    if (!HAVE_NCCL) std::printf("NCCL: not found at configure time; the nccl variants are left out\n");
    MultiGpuSetup setup(devices, mg, setup_peers(mg));
#if HAVE_NCCL
    if ((uses & (kUsesNccl | kUsesNcclLsa)) || !opt.check_only) setup.nccl.init(devices);  // the cost lines use it too
#endif
#if HAVE_NCCL_DEVICE_API
    if (uses & kUsesNcclLsa) setup.lsa.setup(mg, setup.nccl.list);
#endif
    MultiGpuPlan plan;
    make_plan(setup, plan);
    const std::vector<MultiVariant> run = chosen_variants(chosen, setup, plan);
    // No barrier without peer access: the other GPUs could not reach its counters.
    const BarrierUnderTest* barrier = plan.barrier && setup.peers.ok ? &*plan.barrier : nullptr;
    bool ok = true;
    if (barrier && (uses & kUsesBarrier)) ok &= barrier_reuse_test(mg, *barrier, opt.barrier_reps);
    if (!opt.check_only) measure_costs(opt, mg, barrier, setup.peers.why_not, setup.nccl);
    print_multi_header(opt);
    ok &= for_each_dtype(opt, [&](auto zero, const char* dtype) {
      return run_multi_dtype<decltype(zero)>(dtype, opt, mg, step, run);
    });
    setup.release();
    return verdict_code(step, ok);
  });
}

}  // namespace harness

// NCCL in one process that drives K GPUs (step 08): one communicator per GPU, the grouped
// all-reduce of one float that the cost lines time, and NCCL 2.28's symmetric windows and
// device communicators (the nccl_lsa variant).
#pragma once

#include <string>
#include <thread>
#include <vector>

#include "multi_gpu.cuh"
#include "nccl_check.cuh"

namespace harness {

// This process's communicators, one per GPU, made by this thread (ncclCommInitAll) once,
// outside timing; none until init, and none ever in a build without NCCL.
struct NcclComms {
#if HAVE_NCCL
  std::vector<ncclComm_t> list;
  void init(const std::vector<int>& devices) {
    list.resize(devices.size());
    NCCL_CHECK(ncclCommInitAll(list.data(), int(devices.size()), devices.data()));
    int version = 0;
    NCCL_CHECK(ncclGetVersion(&version));
    std::printf("NCCL %d, %d communicators (ncclCommInitAll), NCCL_NVLS_ENABLE=0\n", version, int(devices.size()));
  }
  void destroy() {
    for (auto c : list) ncclCommDestroy(c);
    list.clear();
  }
#else
  void destroy() {}
#endif
};

#if HAVE_NCCL
// One thread drives K communicators: the calls are grouped. Sends GPU k's out[32], receives
// in out[33] (floats): clear of the results and of the floor's sink.
inline float* one_float_send(MultiGpu& mg, int k) { return static_cast<float*>(mg[k].out) + 32; }
inline float* one_float_recv(MultiGpu& mg, int k) { return static_cast<float*>(mg[k].out) + 33; }
inline void allreduce_one_float(MultiGpu& mg, const std::vector<ncclComm_t>& comms) {
  NCCL_CHECK(ncclGroupStart());
  for (int k = 0; k < mg.size(); ++k)
    NCCL_CHECK(ncclAllReduce(one_float_send(mg, k), one_float_recv(mg, k), 1, ncclFloat32, ncclSum, comms[size_t(k)],
                             mg[k].stream));
  NCCL_CHECK(ncclGroupEnd());
}

// Calls f(k) for every GPU at once, one host thread each (GPU k current in its thread), for
// NCCL's collective calls that one thread may not make one after the other. Throws the first
// GPU's error; with `errors`, each GPU's error text (empty: none) goes there instead.
template <class F>
void on_every_gpu_thread(MultiGpu& mg, F&& f, std::vector<std::string>* errors = nullptr) {
  std::vector<std::string> why(static_cast<size_t>(mg.size()));
  std::vector<std::thread> pool;
  for (int k = 0; k < mg.size(); ++k)
    pool.emplace_back([&, k] {
      try {
        CUDA_CHECK(cudaSetDevice(mg[k].device));
        f(k);
      } catch (const std::exception& e) {
        why[size_t(k)] = e.what();
      }
    });
  for (auto& t : pool) t.join();
  if (errors) {
    *errors = why;
    return;
  }
  for (const auto& w : why)
    if (!w.empty()) throw std::runtime_error("one thread per GPU: " + w);
}
#endif

#if HAVE_NCCL_DEVICE_API
// Per GPU a symmetric window of 4096 bytes (>= 2 x K x 8 for K <= 256, NCCL_WIN_REQUIRED_ALIGNMENT)
// and a device communicator with one LSA barrier (block 0 only).
struct LsaWindows {
  bool ok = false;
  std::string why_not;
  std::vector<ncclDevComm> dev_comms;
  std::vector<ncclWindow_t> windows;
  std::vector<void*> memory;
  unsigned launches = 0;  // picks the half of the window a launch writes (as peer_barrier's gen & 1)

  // Collective calls: one host thread per GPU makes them at once (grouping them from one
  // thread is not documented for these calls).
  void setup(MultiGpu& mg, const std::vector<ncclComm_t>& comms) {
    const int K = mg.size();
    dev_comms.resize(size_t(K));
    windows.resize(size_t(K));
    memory.resize(size_t(K));
    std::vector<std::string> errors;
    on_every_gpu_thread(mg, [&](int k) {
      const size_t bytes = 4096;
      NCCL_CHECK(ncclMemAlloc(&memory[size_t(k)], bytes));
      CUDA_CHECK(cudaMemset(memory[size_t(k)], 0, bytes));
      NCCL_CHECK(ncclCommWindowRegister(comms[size_t(k)], memory[size_t(k)], bytes, &windows[size_t(k)],
                                        NCCL_WIN_COLL_SYMMETRIC));
      ncclDevCommRequirements reqs{};
      reqs.lsaBarrierCount = 1;
      NCCL_CHECK(ncclDevCommCreate(comms[size_t(k)], &reqs, &dev_comms[size_t(k)]));
    }, &errors);
    ok = K <= 256;
    why_not = K > 256 ? "more than 256 GPUs" : "";
    for (const auto& e : errors)
      if (!e.empty()) {
        ok = false;
        why_not = e;
      }
    mg.use(0);
  }
  // Collective too: one thread per GPU again (one after the other from one thread could wait
  // forever for the other ranks).
  void teardown(MultiGpu& mg, const std::vector<ncclComm_t>& comms) {
    mg.sync_all();
    std::vector<std::string> ignored;
    on_every_gpu_thread(mg, [&](int k) {
      ncclDevCommDestroy(comms[size_t(k)], &dev_comms[size_t(k)]);
      ncclCommWindowDeregister(comms[size_t(k)], windows[size_t(k)]);
      ncclMemFree(memory[size_t(k)]);
    }, &ignored);
    mg.use(0);
  }
};
#endif

}  // namespace harness

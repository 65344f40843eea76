// Step 08 - one sum over K GPUs, after this_multi_grid().
// CUDA 11.3 deprecated, and CUDA 13.0 removed, cg::this_multi_grid() and
// cudaLaunchCooperativeKernelMultiDevice: one launch over several GPUs with a barrier across
// all of them. What replaces them (as in NVIDIA's sample conjugateGradientMultiDeviceCG): one
// cooperative launch per GPU, and a barrier made by hand from system-scope release/acquire
// operations in memory that every GPU can reach (here a counter in GPU 0's memory, over
// NVLink; in the sample, a flag per GPU but GPU 0 in pinned host memory, GPU 0 the leader).
//
// Every GPU holds one shard of the array (element i is input_value(seed, i) for the global
// i, so each GPU fills its own slice and nothing crosses PCIe) and reduces it with step 07's
// grid_sync kernel. The variants differ in how the K partial sums become one:
//   peer_atomic   each GPU adds its partial into GPU 0's result with a system-scope atomic;
//                 the result is zeroed first (a memset, inside the timed region); the result
//                 lives on GPU 0 only, and a float total depends on the order of arrival.
//   peer_barrier  the multi_grid.sync() replacement inside the kernel: each GPU writes its
//                 partial to a slot in GPU 0's memory, all GPUs meet at a reusable cross-GPU
//                 barrier, then every GPU adds the K slots in the order 0..K-1: every GPU
//                 ends with the same total, bitwise, launch after launch.
//   nccl          each GPU reduces its shard into a device scalar, then ncclAllReduce of the
//                 K scalars: every GPU gets the total.
//   nccl_lsa      (by name only) NCCL 2.28's device API: the partials are stored
//                 into every peer's symmetric window, then ncclLsaBarrierSession::sync in the
//                 kernel - NCCL's own in-kernel cross-GPU barrier, without NVLink multicast.
// Baselines: CUB on one GPU over the whole array (x_cub), CUB on each shard alone (the sum
// of those times), CUB on every shard at once (no combine) and the plain read on all K GPUs
// at once (x_floor). Also measured: the empty fork/join, the cross-GPU barrier's latency,
// NCCL's all-reduce of one value, and the peer bandwidth.
//
// One process per GPU (NCCL only): --rank R --nranks K --id-file PATH, started by
// scripts/nccl_launch.sh.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/atomic>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "multi_gpu.cuh"

#ifndef HAVE_NCCL
#define HAVE_NCCL 0
#endif
#if HAVE_NCCL
#include <nccl.h>
#include <sys/stat.h>
#include <unistd.h>
#if NCCL_VERSION_CODE >= 22800
// nccl_device.h 2.28.9 has unused parameters (gin__funcs.h): not ours to warn about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <nccl_device.h>
#pragma GCC diagnostic pop
#define HAVE_NCCL_DEVICE_API 1
#endif
#endif
#ifndef HAVE_NCCL_DEVICE_API
#define HAVE_NCCL_DEVICE_API 0
#endif

namespace cg = cooperative_groups;
using harness::MultiGpu;

static const char* kStep = "step08_multi_grid";
// Its flags beyond the core ones: no --batch (it times one fork/join, or one rank's run, per
// pair of events).
static constexpr unsigned kFlags = harness::kGpus | harness::kRanks | harness::kBarrierReps;

// ---- step 07's kernel pieces (one .cu per step: copied, not shared) ----------------------------
constexpr int kThreads = 1024;
constexpr int kBatch = 4;
constexpr size_t kPerBlock = size_t(kThreads) * kBatch * 4;

template <typename T> struct Vec4;
template <> struct Vec4<unsigned> { using type = uint4; };
template <> struct Vec4<float> { using type = float4; };

template <typename T>
__device__ T block_sum(T value) {  // thread 0 gets the block's sum
  __shared__ T warp_sums[32];
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  const unsigned warp_id = threadIdx.x / 32, warps = blockDim.x / 32;
  value = cg::reduce(warp, value, cg::plus<T>());
  if (warp.thread_rank() == 0) warp_sums[warp_id] = value;
  __syncthreads();
  if (warp_id == 0)
    value = cg::reduce(warp, warp.thread_rank() < warps ? warp_sums[warp.thread_rank()] : T(0), cg::plus<T>());
  return value;
}

template <typename T>
__device__ size_t head_count(const T* in, size_t n) {
  const size_t misaligned = (reinterpret_cast<uintptr_t>(in) % 16) / sizeof(T);
  const size_t head = misaligned ? 4 - misaligned : 0;
  return head < n ? head : n;
}

template <typename T>
__device__ T thread_sum(const T* __restrict__ in, size_t n, size_t thread, size_t stride) {
  using V = typename Vec4<T>::type;
  const size_t head = head_count(in, n);
  const size_t vectors = (n - head) / 4;
  const V* body = reinterpret_cast<const V*>(in + head);
  const size_t tail_begin = head + vectors * 4;
  T sum = 0;
  size_t i = thread;
  for (; i + (kBatch - 1) * stride < vectors; i += kBatch * stride) {
    V v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) v[b] = body[i + b * stride];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);
  }
  for (; i < vectors; i += stride) {
    V v = body[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  if (thread < head) sum += in[thread];
  if (thread < n - tail_begin) sum += in[tail_begin + thread];
  return sum;
}

// Step 07's grid_sync reduction of this GPU's shard, up to the combine: every block writes
// its partial, grid.sync(), block 0 adds them in a fixed order. The sum is valid in block 0's
// thread 0 only (0 elsewhere). Ends with no grid-wide barrier pending.
template <typename T>
__device__ T shard_sum(const T* __restrict__ in, size_t n, T* partials) {
  cg::grid_group grid = cg::this_grid();
  const T sum = block_sum(thread_sum(in, n, grid.thread_rank(), grid.size()));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
  grid.sync();
  if (blockIdx.x != 0) return T(0);
  T s = 0;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) s += partials[i];
  return block_sum(s);
}

// The shard's sum into *out (this GPU's memory): step 07's grid_sync kernel.
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_shard(const T* __restrict__ in, size_t n, T* partials, T* out) {
  const T s = shard_sum(in, n, partials);
  if (blockIdx.x == 0 && threadIdx.x == 0) *out = s;
}

// [docs:peer-atomic]
// ---- peer_atomic ---------------------------------------------------------------------------------
// `total` is in GPU 0's memory (a peer pointer for the others). System scope: the GPUs are
// different agents, and device scope would only order this GPU's own threads. Relaxed is
// enough: nobody reads the total inside the kernels; the host reads it after every GPU's
// stream is done.
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_peer_atomic(const T* __restrict__ in, size_t n, T* partials,
                                                               T* total) {
  const T s = shard_sum(in, n, partials);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    cuda::atomic_ref<T, cuda::thread_scope_system>(*total).fetch_add(s, cuda::memory_order_relaxed);
}
// [/docs:peer-atomic]

// [docs:cross-gpu-barrier]
// ---- the cross-GPU barrier -----------------------------------------------------------------------
// State in GPU 0's memory, zeroed once when the program starts and never reset again:
//   count  arrivals at the current barrier (0..K-1; the last arriver puts it back to 0)
//   gen    barriers completed so far (the generation)
// Arrive: read gen, then fetch_add(count). The last arriver (old count == K-1) stores
// count = 0 and then gen + 1 with release; the others spin until gen changes (acquire).
// Why no ABA and no reset: gen can only move once all K have arrived, so a waiter's gen
// cannot move past its value twice while it waits; and a GPU that races into the next
// barrier (next launch) finds count already 0, because the last arriver stored the 0 before
// the release that let anybody out. The fetch_add (acq_rel) makes the arrivals a chain of
// release/acquire, so the last arriver sees every GPU's writes before the barrier, and its
// release of gen passes them all on to the waiters.
struct PeerBarrier {
  unsigned* count;     // GPU 0's memory
  unsigned* gen;       // GPU 0's memory, its own 128-byte line (the waiters poll it)
  unsigned* timeouts;  // how many waits gave up (never, unless a GPU did not arrive)
  unsigned K;
};

// A waiter that waits this long gives up, counts a timeout and goes on, so that a lost GPU
// makes the program fail, not hang. Its result is then wrong, and so is every later barrier
// of the sequence: its arrival stays in count. The host sees `timeouts` only where it reads
// it (after a checked peer_barrier run and after the reuse test; chapter 08 lists the gaps).
constexpr uint64_t kBarrierTimeoutNs = 10ull * 1000 * 1000 * 1000;

__device__ unsigned barrier_generation(const PeerBarrier& b) {
  return cuda::atomic_ref<unsigned, cuda::thread_scope_system>(*b.gen).load(cuda::memory_order_relaxed);
}

// One thread per GPU calls this.
__device__ void cross_gpu_arrive_and_wait(const PeerBarrier& b) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_system> count(*b.count), gen(*b.gen);
  const unsigned my_gen = gen.load(cuda::memory_order_relaxed);  // cannot move before we arrive
  if (count.fetch_add(1, cuda::memory_order_acq_rel) == b.K - 1) {
    count.store(0, cuda::memory_order_relaxed);  // ordered before the release below
    gen.store(my_gen + 1, cuda::memory_order_release);
    return;
  }
  uint64_t t0 = 0;
  for (unsigned spins = 1; gen.load(cuda::memory_order_acquire) == my_gen; ++spins) {
    if (spins % 1024 == 0) {
      const uint64_t now = harness::global_ns();
      if (t0 == 0) {
        t0 = now;
      } else if (now - t0 > kBarrierTimeoutNs) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_system>(*b.timeouts).fetch_add(1, cuda::memory_order_relaxed);
        return;
      }
    }
  }
}

// The multi_grid.sync() replacement: every block of every GPU waits for all. The first
// grid.sync gathers this GPU's blocks (and orders their writes before thread 0's release),
// one thread crosses GPUs, the second grid.sync lets this GPU's blocks go (and passes thread
// 0's acquire on to them). Every block of every GPU must call it the same number of times.
__device__ void multi_grid_sync(cg::grid_group& grid, const PeerBarrier& b) {
  grid.sync();
  if (grid.thread_rank() == 0) cross_gpu_arrive_and_wait(b);
  grid.sync();
}
// [/docs:cross-gpu-barrier]

// [docs:peer-barrier]
// ---- peer_barrier -----------------------------------------------------------------------------
// slots: 2 x K values in GPU 0's memory. A launch writes into half (gen & 1): a GPU that
// leaves the barrier and starts its next launch writes into the other half, while a slower
// GPU may still be reading this one; it cannot come back to this half before that slower
// GPU has arrived at the next barrier, i.e. finished reading.
// __launch_bounds__(kThreads, 2): two 1024-thread blocks per SM, as in step 07. Without the 2
// ptxas gave this kernel 44 registers, one block per SM fit, half the loads were in flight,
// and the read ran slower than peer_atomic's at every large n (two H200s, 2^26..2^32; see
// docs/logs/step08_peer_barrier_registers.txt for the register counts).
template <typename T>
__global__ void __launch_bounds__(kThreads, 2) reduce_peer_barrier(const T* __restrict__ in, size_t n, T* partials,
                                                                PeerBarrier bar, T* slots, unsigned rank, T* out) {
  cg::grid_group grid = cg::this_grid();
  const T s = shard_sum(in, n, partials);
  unsigned half = 0;
  if (grid.thread_rank() == 0) {  // block 0, thread 0: the shard's sum is here
    half = barrier_generation(bar) & 1;
    slots[half * bar.K + rank] = s;  // released by this same thread's arrival
  }
  multi_grid_sync(grid, bar);
  if (grid.thread_rank() == 0) {
    // The same K values in the same order on every GPU: the same bits everywhere.
    T total = 0;
    for (unsigned r = 0; r < bar.K; ++r) total += slots[half * bar.K + r];
    *out = total;
  }
}
// [/docs:peer-barrier]

// B barriers in a row: the latency (B against 0) and the reuse test.
__global__ void __launch_bounds__(kThreads) barrier_loop(PeerBarrier bar, int reps) {
  cg::grid_group grid = cg::this_grid();
  for (int r = 0; r < reps; ++r) multi_grid_sync(grid, bar);
}

// ---- nccl_lsa: NCCL's device-side barrier --------------------------------------------------------
// NCCL 2.28's device API (nccl_device.h) gives a kernel load/store access to the peers'
// symmetric windows (LSA: load/store accessible, i.e. CUDA P2P) and a barrier across them,
// ncclLsaBarrierSession, the closest thing to multi_grid.sync() that a library offers now.
// Its multimem form would use NVLink SHARP multicast (NVLS); here multimem = false: each GPU
// stores (release) a flag into every peer's memory and polls (acquire) the flags in its own.
// window: 2 x K values per GPU. Block 0 stores its partial into slot [half][rank] of every
// GPU's window, syncs, and adds its own window's K slots in order (same bits everywhere).
// `half` comes from the host's launch counter, for the reason given at peer_barrier.
#if HAVE_NCCL_DEVICE_API
template <typename T>
// [docs:nccl-lsa]
__global__ void __launch_bounds__(kThreads, 2) reduce_nccl_lsa(const T* __restrict__ in, size_t n, T* partials,
                                                            ncclDevComm comm, ncclWindow_t window, unsigned half,
                                                            T* out) {
  const T s = shard_sum(in, n, partials);  // ends with grid.sync: the other blocks may leave
  if (blockIdx.x != 0) return;
  const size_t slot = (size_t(half) * comm.lsaSize + comm.lsaRank) * sizeof(T);
  if (threadIdx.x == 0)
    for (int peer = 0; peer < comm.lsaSize; ++peer) *static_cast<T*>(ncclGetLsaPointer(window, slot, peer)) = s;
  ncclLsaBarrierSession<ncclCoopCta> barrier(ncclCoopCta(), comm, ncclTeamTagLsa(), /*index=*/0);
  barrier.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
  if (threadIdx.x == 0) {
    const T* mine = static_cast<const T*>(ncclGetLocalPointer(window, size_t(half) * comm.lsaSize * sizeof(T)));
    T total = 0;
    for (int r = 0; r < comm.lsaSize; ++r) total += mine[r];
    *out = total;
  }
}
// [/docs:nccl-lsa]
#endif

// ---- launching -------------------------------------------------------------------------------------
// Blocks of `kernel` resident at once on `device`, cached: it is asked on every launch.
template <typename Kernel>
unsigned resident_on(Kernel kernel, int device) {
  static std::map<std::pair<const void*, int>, unsigned> cache;
  const auto key = std::make_pair(reinterpret_cast<const void*>(kernel), device);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  int sms = 0, per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  return cache[key] = unsigned(sms) * unsigned(per_sm);
}

inline unsigned grid_for(size_t n, unsigned resident) {
  return unsigned(std::max<size_t>(1, std::min<size_t>(resident, (n + kPerBlock - 1) / kPerBlock)));
}

// A cooperative launch (all blocks resident, or no launch) on GPU k's stream; the caller
// has made GPU k current.
template <typename... Params, typename... Args>
void launch_cooperative(void (*kernel)(Params...), unsigned blocks, cudaStream_t stream, Args&&... args) {
  CUDA_CHECK(harness::launch_cooperative(kernel, blocks, kThreads, 0, stream, std::forward<Args>(args)...));
}

#if HAVE_NCCL
inline void check_nccl(ncclResult_t r, const char* call, const char* file, int line) {
  if (r != ncclSuccess && r != ncclInProgress)
    throw harness::CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + ncclGetErrorString(r));
}
#define NCCL_CHECK(call) check_nccl((call), #call, __FILE__, __LINE__)
template <typename T> ncclDataType_t nccl_type();
template <> ncclDataType_t nccl_type<unsigned>() { return ncclUint32; }
template <> ncclDataType_t nccl_type<float>() { return ncclFloat32; }
#endif

// ---- the state of one run ------------------------------------------------------------------------
struct Setup {
  std::vector<int> devices;
  bool peers_ok = false;
  std::string no_peers_why;  // why the peer variants are skipped
  PeerBarrier bar{};         // on GPU 0
  void* slots = nullptr;     // on GPU 0: 2 x K values
  void* barrier_mem = nullptr;
#if HAVE_NCCL
  std::vector<ncclComm_t> comms;
#endif
#if HAVE_NCCL_DEVICE_API
  bool lsa_ok = false;
  std::string no_lsa_why;
  std::vector<ncclDevComm> dev_comms;
  std::vector<ncclWindow_t> windows;
  std::vector<void*> window_mem;
  unsigned lsa_launches = 0;
#endif
};

struct VariantInfo {
  const char* name;
  const char* about;
  bool in_all;
};
static const VariantInfo kVariants[] = {
    {"peer_atomic", "per GPU: cooperative grid_sync on its shard, then a system-scope atomic add into GPU 0 "
                    "(result zeroed first, timed); total on GPU 0", true},
    {"peer_barrier", "per GPU: partial into a slot on GPU 0, cross-GPU barrier (multi_grid.sync replacement), "
                     "every GPU adds the K slots in order: bitwise equal totals", true},
    {"nccl", "per GPU: grid_sync into a device scalar, then ncclAllReduce of the K scalars (ncclCommInitAll)", true},
    {"nccl_lsa", "BY NAME ONLY: NCCL 2.28 device API, stores into peers' windows + "
                 "ncclLsaBarrierSession (no multicast)", false},
};

static bool chosen(const harness::Options& opt, const VariantInfo& v) {
  return opt.variant == v.name || (opt.variant == "all" && v.in_all);
}

// ---- one dtype over all sizes and offsets ----------------------------------------------------------
template <typename T>
bool run_dtype(const char* dtype, const harness::Options& opt, MultiGpu& mg, Setup& st) {
  using harness::Timing;
  const int K = mg.size();
  bool all_ok = true;
  std::vector<harness::CubSum<T>> cub_shard(static_cast<size_t>(K));
  harness::CubSum<T> cub_whole;
  const harness::DeviceInfo& dev0 = mg[0].info;

  for (size_t n : opt.sizes) {
    for (size_t offset : opt.offsets) {
      const std::vector<const T*> in = mg.template fill<T>(n, offset, opt.seed);
      std::vector<size_t> count(static_cast<size_t>(K));
      for (int k = 0; k < K; ++k) count[size_t(k)] = harness::shard_size(n, K, k);
      const harness::Reference ref = harness::reference_sum<T>(opt.seed, n);
      auto out = [&](int k) { return static_cast<T*>(mg[k].out); };
      auto partials = [&](int k) { return static_cast<T*>(mg[k].scratch); };

      struct Contender {
        std::string step, name;
        std::function<void()> launch;
        std::string check;
        bool ok;
        bool row;  // false: timed for a derived number only (no row of its own)
      };
      std::vector<Contender> cs;

      // CUB over the whole array on GPU 0, where it fits beside GPU 0's shard.
      void* whole = nullptr;
      {
        mg.use(0);
        size_t free_b = 0, total_b = 0;
        CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        const size_t bytes = harness::input_buffer_bytes(n);
        if (bytes + (size_t(512) << 20) < free_b) {
          CUDA_CHECK(cudaMalloc(&whole, bytes));
          const T* whole_in = harness::place_input<T>(whole, n, offset, opt.seed, mg[0].stream);
          auto sum = cub_whole.prepare(whole_in, n, out(0), mg[0].stream);
          auto launch = [&mg, sum] { mg.use(0); sum(); };
          const harness::Verdict v = harness::verify_result(mg.template run_once<T>(launch)[0], ref, n);
          all_ok &= v.ok;
          cs.push_back({"cub", "cub_1gpu", launch, harness::check_text(v), v.ok, true});
        }
      }
      const bool have_cub = whole != nullptr;

      // CUB on every shard at once, combined on the host (checks the shards; no combine timed).
      std::vector<std::function<void()>> shard_sum_launch;
      for (int k = 0; k < K; ++k) {
        mg.use(k);
        auto sum = cub_shard[size_t(k)].prepare(in[size_t(k)], count[size_t(k)], out(k), mg[k].stream);
        shard_sum_launch.push_back([&mg, k, sum] { mg.use(k); sum(); });
      }
      {
        auto all = [shard_sum_launch] { for (const auto& f : shard_sum_launch) f(); };
        const std::vector<T> got = mg.template run_once<T>(all);
        T host = 0;
        for (T g : got) host += g;
        const harness::Verdict v = harness::verify_result(host, ref, n);
        all_ok &= v.ok;
        cs.push_back({"cub", "cub_each_gpu", all, harness::check_text(v) + " (shard sums added on the host, untimed)",
                      v.ok, true});
      }
      if (!opt.check_only) {
        cs.push_back({"floor", "read", [&mg, &in, &count, K] {
                        for (int k = 0; k < K; ++k) {
                          mg.use(k);
                          harness::launch_floor(in[size_t(k)], count[size_t(k)], static_cast<T*>(mg[k].out) + 1, 0,
                                                mg[k].stream);
                        }
                      }, "(reads only, all GPUs at once)", true, true});
        for (int k = 0; k < K; ++k)  // each shard alone, for the sum of single-GPU CUB times
          cs.push_back({"cub", "cub_shard" + std::to_string(k), shard_sum_launch[size_t(k)], "", true, false});
      }

      // The variants. `everywhere`: the total is on every GPU (checked bitwise equal).
      struct V {
        std::string name;
        std::function<void()> launch;
        bool everywhere;
      };
      std::vector<V> vs;
      if (chosen(opt, kVariants[0]) || chosen(opt, kVariants[1])) {
        if (!st.peers_ok) {
          std::printf("%-5s %11zu %3zu  peer variants skipped: %s\n", dtype, n, offset, st.no_peers_why.c_str());
        }
      }
      if (st.peers_ok && chosen(opt, kVariants[0])) {
        vs.push_back({"peer_atomic", [&mg, &in, &count, &partials, &out, K] {
                        mg.use(0);
                        CUDA_CHECK(cudaMemsetAsync(out(0), 0, sizeof(T), mg[0].stream));  // part of the cost
                        mg.fork();  // every GPU adds only after the zero
                        for (int k = 0; k < K; ++k) {
                          mg.use(k);
                          const unsigned blocks = grid_for(count[size_t(k)], resident_on(reduce_peer_atomic<T>, mg[k].device));
                          launch_cooperative(reduce_peer_atomic<T>, blocks, mg[k].stream, in[size_t(k)], count[size_t(k)],
                                             partials(k), out(0));
                        }
                      }, false});
      }
      // [docs:launch-peer-barrier]
      if (st.peers_ok && chosen(opt, kVariants[1])) {
        vs.push_back({"peer_barrier", [&mg, &in, &count, &partials, &out, &st, K] {
                        for (int k = 0; k < K; ++k) {
                          mg.use(k);
                          const unsigned blocks = grid_for(count[size_t(k)], resident_on(reduce_peer_barrier<T>, mg[k].device));
                          launch_cooperative(reduce_peer_barrier<T>, blocks, mg[k].stream, in[size_t(k)], count[size_t(k)],
                                             partials(k), st.bar, static_cast<T*>(st.slots), unsigned(k), out(k));
                        }
                      }, true});
      }
      // [/docs:launch-peer-barrier]
#if HAVE_NCCL
      if (chosen(opt, kVariants[2])) {
        vs.push_back({"nccl", [&mg, &in, &count, &partials, &out, &st, K] {
                        for (int k = 0; k < K; ++k) {
                          mg.use(k);
                          const unsigned blocks = grid_for(count[size_t(k)], resident_on(reduce_shard<T>, mg[k].device));
                          launch_cooperative(reduce_shard<T>, blocks, mg[k].stream, in[size_t(k)], count[size_t(k)],
                                             partials(k), out(k) + 16);
                        }
                        // [docs:nccl-allreduce]
                        // One thread drives K communicators: the calls must be grouped.
                        // Floats: NCCL does not document the order in which it adds the K
                        // values (it depends on the algorithm it picks: ring, tree; NVLS is
                        // off). Every rank receives the same reduced bits (checked below),
                        // but that order may change with K, topology or NCCL version.
                        NCCL_CHECK(ncclGroupStart());
                        for (int k = 0; k < K; ++k)
                          NCCL_CHECK(ncclAllReduce(out(k) + 16, out(k), 1, nccl_type<T>(), ncclSum, st.comms[size_t(k)],
                                                   mg[k].stream));
                        NCCL_CHECK(ncclGroupEnd());
                        // [/docs:nccl-allreduce]
                      }, true});
      }
#endif
#if HAVE_NCCL_DEVICE_API
      if (chosen(opt, kVariants[3])) {
        if (!st.lsa_ok) {
          std::printf("%-5s %11zu %3zu  nccl_lsa skipped: %s\n", dtype, n, offset, st.no_lsa_why.c_str());
        } else {
          vs.push_back({"nccl_lsa", [&mg, &in, &count, &partials, &out, &st, K] {
                          const unsigned half = st.lsa_launches++ & 1;
                          for (int k = 0; k < K; ++k) {
                            mg.use(k);
                            const unsigned blocks = grid_for(count[size_t(k)], resident_on(reduce_nccl_lsa<T>, mg[k].device));
                            launch_cooperative(reduce_nccl_lsa<T>, blocks, mg[k].stream, in[size_t(k)], count[size_t(k)],
                                               partials(k), st.dev_comms[size_t(k)], st.windows[size_t(k)], half, out(k));
                          }
                        }, true});
        }
      }
#endif

      // Verify each variant on poisoned outputs (--repeat-results: R times, each verified).
      auto check_variant = [&](const V& v, std::string& text) -> bool {
        const int runs = std::max(1, opt.repeat_results);
        std::vector<T> firsts;
        bool ok = true;
        for (int r = 0; r < runs && ok; ++r) {
          const std::vector<T> got = mg.template run_once<T>(v.launch);
          firsts.push_back(got[0]);
          harness::Verdict verdict = harness::verify_result(got[0], ref, n);
          bool same = true;
          if (v.everywhere)
            for (int k = 1; k < K; ++k) same &= std::memcmp(&got[size_t(k)], &got[0], sizeof(T)) == 0;
          if (v.everywhere)
            for (int k = 1; k < K; ++k) verdict.ok &= harness::verify_result(got[size_t(k)], ref, n).ok;
          unsigned timeouts = 0;
          if (v.name == "peer_barrier") {
            mg.use(0);
            CUDA_CHECK(cudaMemcpy(&timeouts, st.bar.timeouts, sizeof timeouts, cudaMemcpyDeviceToHost));
          }
          ok = verdict.ok && same && timeouts == 0;
          text = harness::check_text(verdict);
          if (v.everywhere) text += same ? ", bitwise equal on " + std::to_string(K) + " GPUs" : ", NOT bitwise equal across GPUs";
          if (timeouts) text += ", the cross-GPU barrier TIMED OUT (a GPU never arrived)";
          if (!ok && runs > 1) text = "FAILED on repeat " + std::to_string(r + 1) + ": " + text;
          if (timeouts) throw std::runtime_error("cross-GPU barrier timed out: " + text);
        }
        if (opt.repeat_results > 0) harness::print_results(dtype, n, offset, v.name, firsts);
        return ok;
      };
      for (const V& v : vs) {
        std::string text;
        const bool ok = check_variant(v, text);
        all_ok &= ok;
        cs.push_back({kStep, v.name, v.launch, text, ok, true});
      }

      const std::string shape = "gpus=" + std::to_string(K);
      if (opt.check_only) {
        for (const auto& c : cs)
          std::printf("%-5s %11zu %3zu  %-16s %s  [%s]\n", dtype, n, offset, c.name.c_str(), c.check.c_str(),
                      c.name == "cub_1gpu" ? "gpus=1" : shape.c_str());
      } else {
        std::vector<std::function<void()>> launches;
        for (const auto& c : cs) launches.push_back(c.launch);
        const std::vector<Timing> t = mg.time(opt, launches);
        double cub_ms = 0, floor_ms = 0, shard_sum_ms = 0;
        for (size_t i = 0; i < cs.size(); ++i) {
          if (cs[i].name == "cub_1gpu") cub_ms = t[i].median_ms;
          if (cs[i].step == "floor") floor_ms = t[i].median_ms;
          if (!cs[i].row) shard_sum_ms += t[i].median_ms;
        }
        for (size_t i = 0; i < cs.size(); ++i) {
          if (!cs[i].row) continue;
          const int gpus = cs[i].name == "cub_1gpu" ? 1 : K;
          // The one-GPU CUB row: % of ONE GPU's peak (multi_report divides by K x peak).
          harness::multi_report(opt, dev0, gpus, cs[i].step, cs[i].name, dtype, n, offset, t[i], cub_ms, floor_ms,
                                cs[i].check, cs[i].ok);
        }
        harness::multi_report(opt, dev0, K, "cub", "cub_sum_of_shards", dtype, n, offset, Timing{shard_sum_ms, 0},
                              cub_ms, floor_ms, "(sum of the K shards' single-GPU CUB medians; min not kept)", true);
        if (!have_cub)
          std::printf("%-5s %11zu %3zu  (no cub_1gpu: the whole array does not fit on GPU %d; x_cub = 0)\n", dtype, n,
                      offset, mg[0].device);
      }
      if (whole) {
        mg.use(0);
        CUDA_CHECK(cudaFree(whole));
      }
    }
  }
  return all_ok;
}

// ---- once per program ------------------------------------------------------------------------------
// Peer access for the peer variants: every GPU must reach GPU 0's memory with native atomics.
static void setup_peers(MultiGpu& mg, Setup& st) {
  const int K = mg.size();
  std::printf("peer links (cudaDeviceGetP2PAttribute; run nvidia-smi topo -m for the link type):\n");
  st.peers_ok = true;
  for (int a = 0; a < K; ++a)
    for (int b = 0; b < K; ++b) {
      if (a == b) continue;
      const harness::PeerLink l = harness::peer_link(mg[a].device, mg[b].device);
      std::printf("  GPU %d -> GPU %d: access %s, native atomics %s, performance rank %d\n", mg[a].device,
                  mg[b].device, l.access ? "yes" : "no", l.native_atomics ? "yes" : "no", l.perf_rank);
      if (b == 0 && (!l.access || !l.native_atomics) && st.peers_ok) {
        st.peers_ok = false;
        st.no_peers_why = "GPU " + std::to_string(mg[a].device) + " cannot " +
                          (l.access ? "do native atomics on" : "access") + " GPU " + std::to_string(mg[0].device) +
                          "'s memory (peer access)";
      }
    }
  if (!st.peers_ok) return;
  for (int a = 0; a < K; ++a)
    for (int b = 0; b < K; ++b) {
      if (a == b) continue;
      int can = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, mg[a].device, mg[b].device));
      if (!can) continue;  // only a -> 0 is needed, checked above
      mg.use(a);
      const cudaError_t e = cudaDeviceEnablePeerAccess(mg[b].device, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
      else CUDA_CHECK(e);
    }
  // Barrier state and slots on GPU 0, zeroed once, here, and never again.
  mg.use(0);
  const size_t bytes = 512 + size_t(2) * K * 8;
  CUDA_CHECK(cudaMalloc(&st.barrier_mem, bytes));
  CUDA_CHECK(cudaMemset(st.barrier_mem, 0, bytes));
  char* base = static_cast<char*>(st.barrier_mem);
  st.bar = PeerBarrier{reinterpret_cast<unsigned*>(base), reinterpret_cast<unsigned*>(base + 128),
                       reinterpret_cast<unsigned*>(base + 256), unsigned(K)};
  st.slots = base + 512;
}

// Launches barrier_loop(reps) on every GPU (no fork/join: the caller does it).
static void launch_barriers(MultiGpu& mg, const Setup& st, unsigned blocks_or_0_for_full, int reps) {
  for (int k = 0; k < mg.size(); ++k) {
    mg.use(k);
    const unsigned blocks = blocks_or_0_for_full ? blocks_or_0_for_full : resident_on(barrier_loop, mg[k].device);
    launch_cooperative(barrier_loop, blocks, mg[k].stream, st.bar, reps);
  }
}

// The reuse test: B launches of one barrier each, queued back to back with no host wait and
// no reset in between, then one launch of B barriers (full grids). The generation must have
// moved by exactly 2B, the arrival count be back at 0, and no wait have timed out.
static bool barrier_reuse_test(MultiGpu& mg, const Setup& st, int B) {
  auto read = [&](unsigned* p) {
    unsigned v = 0;
    mg.use(0);
    CUDA_CHECK(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost));
    return v;
  };
  mg.sync_all();
  const unsigned gen0 = read(st.bar.gen);
  mg.fork();
  for (int i = 0; i < B; ++i) launch_barriers(mg, st, 1, 1);
  launch_barriers(mg, st, 0, B);
  mg.join();
  mg.sync_all();
  const unsigned gen1 = read(st.bar.gen), cnt = read(st.bar.count), timeouts = read(st.bar.timeouts);
  const bool ok = gen1 - gen0 == 2u * unsigned(B) && cnt == 0 && timeouts == 0;
  std::printf("barrier reuse: %d launches x 1 barrier + 1 launch x %d barriers on %d GPUs, no reset: generation +%u "
              "(want %u), count %u (want 0), timeouts %u -> %s\n",
              B, B, mg.size(), gen1 - gen0, 2u * unsigned(B), cnt, timeouts, ok ? "ok" : "FAILED");
  return ok;
}

#if HAVE_NCCL
// The all-reduce of one float again, on each GPU's own clock, which is how nccl_mp (one
// process per GPU) times itself: lined up by an all-reduce, then each GPU's own events around
// one call. Once grouped from this thread (as the nccl variant calls it), once from one
// thread per GPU (each with its communicator, no group: NCCL's docs allow either for
// communicators made by ncclCommInitAll). With nccl_mp's own line (run_rank) and the fork/join
// figure above, this separates the places a call's time can go: the fork/join, the host
// (queueing longer than the lead), one thread driving K communicators, or NCCL itself.
static void measure_allreduce_clocks(const harness::Options& opt, MultiGpu& mg, Setup& st) {
  const int K = mg.size();
  auto send = [&mg](int k) { return static_cast<float*>(mg[k].out) + 32; };
  auto recv = [&mg](int k) { return static_cast<float*>(mg[k].out) + 33; };
  std::vector<double> group_us;  // host time of ncclGroupStart .. ncclGroupEnd
  auto grouped = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    NCCL_CHECK(ncclGroupStart());
    for (int k = 0; k < K; ++k)
      NCCL_CHECK(ncclAllReduce(send(k), recv(k), 1, ncclFloat32, ncclSum, st.comms[size_t(k)], mg[k].stream));
    NCCL_CHECK(ncclGroupEnd());
    group_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  };
  std::vector<double> call_us;  // host time of one ncclAllReduce in its own thread
  auto per_thread = [&] {
    std::vector<std::thread> pool;
    std::vector<double> us(static_cast<size_t>(K), 0.0);
    std::vector<std::string> why(static_cast<size_t>(K));
    for (int k = 0; k < K; ++k)
      pool.emplace_back([&, k] {
        try {
          CUDA_CHECK(cudaSetDevice(mg[k].device));
          const auto t0 = std::chrono::steady_clock::now();
          NCCL_CHECK(ncclAllReduce(send(k), recv(k), 1, ncclFloat32, ncclSum, st.comms[size_t(k)], mg[k].stream));
          us[size_t(k)] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        } catch (const std::exception& e) {
          why[size_t(k)] = e.what();
        }
      });
    for (auto& th : pool) th.join();
    for (const auto& w : why)
      if (!w.empty()) throw std::runtime_error("one thread per GPU: " + w);
    call_us.insert(call_us.end(), us.begin(), us.end());
  };
  std::printf("  ncclAllReduce of 1 float on each GPU's own clock (as nccl_mp times itself; lined up by an "
              "all-reduce, median of %d per GPU, the slowest GPU's):\n", opt.reps);
  const auto g = mg.time_each_gpu(opt, grouped, grouped);
  std::printf("    one thread, grouped calls:   %.2f us (GPU %d, spread %.2f-%.2f); host: %.1f us per "
              "ncclGroupStart..ncclGroupEnd (median), %.1f us to queue a timed run (max)\n",
              g.slowest.median_ms * 1e3, mg[g.gpu].device, g.slowest.min_ms * 1e3, g.slowest.max_ms * 1e3,
              harness::median_of(group_us), g.host_us_max);
  const auto p = mg.time_each_gpu(opt, per_thread, grouped);
  std::printf("    one thread per GPU, no group: %.2f us (GPU %d, spread %.2f-%.2f); host: %.1f us per "
              "ncclAllReduce call (median over threads and runs), %.1f us to queue a timed run (max)\n",
              p.slowest.median_ms * 1e3, mg[p.gpu].device, p.slowest.min_ms * 1e3, p.slowest.max_ms * 1e3,
              harness::median_of(call_us), p.host_us_max);
}
#endif

// Latencies that decide below which n one GPU beats K: the fork/join itself, the cross-GPU
// barrier, NCCL's all-reduce of one value; and the peer copy bandwidth.
static void measure_costs(const harness::Options& opt, MultiGpu& mg, Setup& st) {
  const int K = mg.size();
  const int B = opt.barrier_reps;
  std::vector<std::string> names;
  std::vector<std::function<void()>> launches;
  names.push_back("empty fork/join");
  launches.push_back([] {});
  if (st.peers_ok) {
    for (unsigned full : {0u, 1u}) {
      const unsigned blocks = full ? 0u : 1u;
      launches.push_back([&mg, &st, blocks, B] { launch_barriers(mg, st, blocks, B); });
      launches.push_back([&mg, &st, blocks] { launch_barriers(mg, st, blocks, 0); });
      names.push_back(full ? "barriers, full grids" : "barriers, 1 block per GPU");
      names.push_back("");
    }
  }
#if HAVE_NCCL
  launches.push_back([&mg, &st, K] {
    NCCL_CHECK(ncclGroupStart());
    for (int k = 0; k < K; ++k)
      NCCL_CHECK(ncclAllReduce(static_cast<float*>(mg[k].out) + 32, static_cast<float*>(mg[k].out) + 33, 1, ncclFloat32,
                               ncclSum, st.comms[size_t(k)], mg[k].stream));
    NCCL_CHECK(ncclGroupEnd());
  });
  names.push_back("ncclAllReduce of 1 float");
#endif
  std::vector<double> queue_us;
  const std::vector<harness::Timing> t = mg.time(opt, launches, &queue_us);
  std::printf("costs on %d GPUs (median of %d, GPU 0's events around fork/join):\n", K, opt.reps);
  std::printf("  empty fork/join (no work): %.2f us\n", t[0].median_ms * 1e3);
  size_t i = 1;
  if (st.peers_ok) {
    for (int j = 0; j < 2; ++j, i += 2)
      std::printf("  cross-GPU barrier (%s): %.3f us per barrier (launch with %d barriers minus launch with 0, / %d; "
                  "the launch with 0: %.2f us)\n",
                  names[i].c_str(), (t[i].median_ms - t[i + 1].median_ms) * 1e3 / B, B, B, t[i + 1].median_ms * 1e3);
  } else {
    std::printf("  cross-GPU barrier: not measured (%s)\n", st.no_peers_why.c_str());
  }
#if HAVE_NCCL
  std::printf("  ncclAllReduce of 1 float, one call: %.2f us (empty fork/join included)\n", t[i].median_ms * 1e3);
  std::printf("    (host: up to %.1f us to queue one timed run of it, lead spin and fork/join included)\n", queue_us[i]);
  measure_allreduce_clocks(opt, mg, st);
#endif
  // Peer bandwidth: cudaMemcpyPeerAsync between GPU 0 and each other GPU, both ways.
  for (int k = 1; k < K; ++k) {
    size_t bytes = size_t(1) << 30;
    for (int g : {0, k}) {
      mg.use(g);
      size_t free_b = 0, total_b = 0;
      CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      bytes = std::min(bytes, free_b / 4);
    }
    void *a = nullptr, *b = nullptr;
    mg.use(0);
    CUDA_CHECK(cudaMalloc(&a, bytes));
    mg.use(k);
    CUDA_CHECK(cudaMalloc(&b, bytes));
    mg.use(0);
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int dir = 0; dir < 2; ++dir) {
      std::vector<double> ms;
      for (int r = 0; r < 6; ++r) {  // the first is a warm-up
        CUDA_CHECK(cudaEventRecord(e0, mg[0].stream));
        if (dir == 0) CUDA_CHECK(cudaMemcpyPeerAsync(b, mg[k].device, a, mg[0].device, bytes, mg[0].stream));
        else CUDA_CHECK(cudaMemcpyPeerAsync(a, mg[0].device, b, mg[k].device, bytes, mg[0].stream));
        CUDA_CHECK(cudaEventRecord(e1, mg[0].stream));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float t_ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t_ms, e0, e1));
        if (r) ms.push_back(t_ms);
      }
      std::sort(ms.begin(), ms.end());
      std::printf("  cudaMemcpyPeer GPU %d -> GPU %d, %.2f GiB: %.1f GB/s (median of 5)\n", dir ? mg[k].device : mg[0].device,
                  dir ? mg[0].device : mg[k].device, bytes / 1073741824.0, bytes / (ms[2] * 1e6));
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    CUDA_CHECK(cudaFree(a));
    mg.use(k);
    CUDA_CHECK(cudaFree(b));
  }
  mg.use(0);
}

#if HAVE_NCCL_DEVICE_API
// Windows and device communicators are collective calls: one host thread per GPU makes
// them at once (grouping them from one thread is not documented for these calls).
static void setup_lsa(MultiGpu& mg, Setup& st) {
  const int K = mg.size();
  st.dev_comms.resize(size_t(K));
  st.windows.resize(size_t(K));
  st.window_mem.resize(size_t(K));
  std::vector<std::string> why(static_cast<size_t>(K));
  std::vector<std::thread> pool;
  for (int k = 0; k < K; ++k)
    pool.emplace_back([&, k] {
      try {
        CUDA_CHECK(cudaSetDevice(mg[k].device));
        const size_t bytes = 4096;  // >= 2 x K x 8 for K <= 256, NCCL_WIN_REQUIRED_ALIGNMENT
        NCCL_CHECK(ncclMemAlloc(&st.window_mem[size_t(k)], bytes));
        CUDA_CHECK(cudaMemset(st.window_mem[size_t(k)], 0, bytes));
        NCCL_CHECK(ncclCommWindowRegister(st.comms[size_t(k)], st.window_mem[size_t(k)], bytes, &st.windows[size_t(k)],
                                          NCCL_WIN_COLL_SYMMETRIC));
        ncclDevCommRequirements reqs{};
        reqs.lsaBarrierCount = 1;  // block 0 only
        NCCL_CHECK(ncclDevCommCreate(st.comms[size_t(k)], &reqs, &st.dev_comms[size_t(k)]));
      } catch (const std::exception& e) {
        why[size_t(k)] = e.what();
      }
    });
  for (auto& t : pool) t.join();
  st.lsa_ok = K <= 256;
  st.no_lsa_why = K > 256 ? "more than 256 GPUs" : "";
  for (const auto& e : why)
    if (!e.empty()) {
      st.lsa_ok = false;
      st.no_lsa_why = e;
    }
  mg.use(0);
}

// Collective too: one thread per GPU again (one after the other from one thread could wait
// forever for the other ranks).
static void teardown_lsa(MultiGpu& mg, Setup& st) {
  mg.sync_all();
  std::vector<std::thread> pool;
  for (int k = 0; k < mg.size(); ++k)
    pool.emplace_back([&, k] {
      cudaSetDevice(mg[k].device);
      ncclDevCommDestroy(st.comms[size_t(k)], &st.dev_comms[size_t(k)]);
      ncclCommWindowDeregister(st.comms[size_t(k)], st.windows[size_t(k)]);
      ncclMemFree(st.window_mem[size_t(k)]);
    });
  for (auto& t : pool) t.join();
  mg.use(0);
}
#endif

// [docs:one-process-per-gpu]
// ---- one process per GPU (NCCL) ----------------------------------------------------------------------
// scripts/nccl_launch.sh K ./step08_multi_grid [flags] starts K of these, one per GPU
// (CUDA_VISIBLE_DEVICES=r, so each sees its GPU as device 0). Rank 0 writes ncclGetUniqueId's
// bytes to --id-file (to PATH.tmp, then rename: the others never read half a file); the
// others wait for the file, then all call ncclCommInitRank. Across nodes the same code works
// once every process gets its rank and the id: the file on a shared file system, or, as
// mpirun/torchrun do, rank 0's id broadcast (MPI_Bcast, a TCP store) with rank and size
// from the launcher's environment (OMPI_COMM_WORLD_RANK, SLURM_PROCID, RANK/WORLD_SIZE).
// NCCL then goes over the network between nodes; nothing here is measured across nodes.
// [/docs:one-process-per-gpu]
#if HAVE_NCCL
static ncclUniqueId exchange_id(const harness::Options& opt) {
  ncclUniqueId id{};
  if (opt.rank == 0) {
    struct stat sb;
    if (stat(opt.id_file.c_str(), &sb) == 0)
      throw harness::UsageError("--id-file: " + opt.id_file + " already exists (an old run's?); give a fresh path");
    NCCL_CHECK(ncclGetUniqueId(&id));
    const std::string tmp = opt.id_file + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f || std::fwrite(&id, sizeof id, 1, f) != 1 || std::fclose(f) != 0)
      throw harness::UsageError("--id-file: cannot write " + tmp);
    if (std::rename(tmp.c_str(), opt.id_file.c_str()) != 0)
      throw harness::UsageError("--id-file: cannot rename " + tmp + " to " + opt.id_file);
    return id;
  }
  const auto t0 = std::chrono::steady_clock::now();
  while (true) {
    if (FILE* f = std::fopen(opt.id_file.c_str(), "rb")) {
      const size_t got = std::fread(&id, sizeof id, 1, f);
      std::fclose(f);
      if (got == 1) return id;
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(120))
      throw std::runtime_error("--id-file: " + opt.id_file + " did not appear within 120 s (is rank 0 running?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// How each rank times its own stream with events: per rep the L2 flush, an all-reduce of one
// value that lines the ranks up, the host lead, then start, `launch`, stop. Every rank gets
// its own Timing and the largest median over the ranks (an all-reduce with ncclMax): the row's.
// small: 512 bytes of device memory (rank_dtype's d_out); bytes 160..163 and 192..199 are used here.
struct RankTiming {
  harness::Timing mine;
  double slowest_median_ms = 0;
};
static RankTiming time_rank(const harness::Options& opt, ncclComm_t comm, const harness::DeviceInfo& dev,
                            cudaStream_t s, void* small, int4* flush, size_t flush_count,
                            const std::function<void()>& launch) {
  for (int w = 0; w < opt.warmup; ++w) launch();
  float* align = static_cast<float*>(small) + 40;
  const std::vector<double> ms = harness::event_pair_times(opt.reps, s, launch, [&] {
    harness::flush_l2_kernel<<<dev.sms * 4, 512, 0, s>>>(flush, flush_count, reinterpret_cast<int*>(flush + flush_count));
    CUDA_CHECK_LAUNCH();
    NCCL_CHECK(ncclAllReduce(align, align, 1, ncclFloat32, ncclSum, comm, s));
    harness::wait_ns_kernel<<<1, 1, 0, s>>>(harness::kHostLeadNs);
    CUDA_CHECK_LAUNCH();
  });
  RankTiming rt;
  rt.mine = harness::summarize(ms, 1);
  double* worst = static_cast<double*>(small) + 24;
  CUDA_CHECK(cudaMemcpyAsync(worst, &rt.mine.median_ms, sizeof(double), cudaMemcpyHostToDevice, s));
  NCCL_CHECK(ncclAllReduce(worst, worst, 1, ncclFloat64, ncclMax, comm, s));
  CUDA_CHECK(cudaMemcpyAsync(&rt.slowest_median_ms, worst, sizeof(double), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return rt;
}

// The cost of one ncclAllReduce of one float in this mode, timed as the rows are: to set
// against the one-process figures (measure_costs, measure_allreduce_clocks).
static void rank_allreduce_cost(const harness::Options& opt, ncclComm_t comm, const harness::DeviceInfo& dev,
                                cudaStream_t s, void* small, int4* flush, size_t flush_count) {
  float* one = static_cast<float*>(small) + 56;  // bytes 224..231: clear of time_rank's and rank_dtype's
  std::vector<double> call_us;
  const RankTiming rt = time_rank(opt, comm, dev, s, small, flush, flush_count, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    NCCL_CHECK(ncclAllReduce(one, one + 1, 1, ncclFloat32, ncclSum, comm, s));
    call_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  });
  std::printf("rank %d: ncclAllReduce of 1 float on this rank's clock: median %.2f us (spread %.2f-%.2f); host: %.1f us "
              "per call (median)\n", opt.rank, rt.mine.median_ms * 1e3, rt.mine.min_ms * 1e3, rt.mine.max_ms * 1e3,
              harness::median_of(call_us));
  if (opt.rank == 0)
    std::printf("costs on %d ranks (one process per GPU): ncclAllReduce of 1 float, each rank's own clock (lined up by "
                "an all-reduce, median of %d), the slowest rank's: %.2f us\n", opt.nranks, opt.reps,
                rt.slowest_median_ms * 1e3);
}

template <typename T>
bool rank_dtype(const char* dtype, const harness::Options& opt, ncclComm_t comm, const harness::DeviceInfo& dev,
                cudaStream_t s, void* d_in, void* d_scratch, T* d_out, int4* flush, size_t flush_count) {
  const int R = opt.rank, K = opt.nranks;
  bool all_ok = true;
  for (size_t n : opt.sizes) {
    for (size_t offset : opt.offsets) {
      const size_t count = harness::shard_size(n, K, R);
      const T* in = harness::place_input<T>(d_in, count, offset, opt.seed, s, harness::shard_begin(n, K, R));
      const harness::Reference ref = harness::reference_sum<T>(opt.seed, n);
      const unsigned blocks = grid_for(count, resident_on(reduce_shard<T>, opt.device));
      auto launch = [&] {
        launch_cooperative(reduce_shard<T>, blocks, s, in, count, static_cast<T*>(d_scratch), d_out + 16);
        NCCL_CHECK(ncclAllReduce(d_out + 16, d_out, 1, nccl_type<T>(), ncclSum, comm, s));
      };
      // Check: this rank's total, and (min, max) of the totals' bits over all ranks.
      CUDA_CHECK(cudaMemsetAsync(d_out, 0xFF, sizeof(T), s));
      launch();
      unsigned* bits = reinterpret_cast<unsigned*>(d_out) + 32;
      CUDA_CHECK(cudaMemcpyAsync(bits, d_out, 4, cudaMemcpyDeviceToDevice, s));
      CUDA_CHECK(cudaMemcpyAsync(bits + 1, d_out, 4, cudaMemcpyDeviceToDevice, s));
      NCCL_CHECK(ncclAllReduce(bits, bits, 1, ncclUint32, ncclMin, comm, s));
      NCCL_CHECK(ncclAllReduce(bits + 1, bits + 1, 1, ncclUint32, ncclMax, comm, s));
      T got{};
      unsigned minmax[2] = {0, 0};
      CUDA_CHECK(cudaMemcpyAsync(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaMemcpyAsync(minmax, bits, 8, cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      const harness::Verdict v = harness::verify_result(got, ref, n);
      const bool same = minmax[0] == minmax[1];
      const bool ok = v.ok && same;
      all_ok &= ok;
      const std::string check = harness::check_text(v) + (same ? ", bitwise equal on all ranks" : ", NOT bitwise equal across ranks");
      if (opt.check_only) {
        std::printf("%-5s %11zu %3zu  %-16s %s  [gpus=%d rank=%d]\n", dtype, n, offset, "nccl_mp", check.c_str(), K, R);
        continue;
      }
      const RankTiming rt = time_rank(opt, comm, dev, s, d_out, flush, flush_count, launch);
      std::printf("rank %d: %-5s %11zu %3zu  nccl_mp  this rank's median %.4f ms (min %.4f)\n", R, dtype, n, offset,
                  rt.mine.median_ms, rt.mine.min_ms);
      if (R == 0)
        harness::multi_report(opt, dev, K, kStep, "nccl_mp", dtype, n, offset, harness::Timing{rt.slowest_median_ms, 0},
                              0, 0, check + " (ms: slowest rank's median; no CUB or floor in this mode)", ok);
    }
  }
  return all_ok;
}
#endif

static int run_rank(const harness::Options& opt) {
#if !HAVE_NCCL
  (void)opt;
  std::printf("%s: --rank needs NCCL, and this build has none; skipping.\n", kStep);
  return 77;
#else
  const std::string who = std::string(kStep) + ": rank " + std::to_string(opt.rank);
  return harness::exit_code_of(who.c_str(), [&] {
    if (int code = harness::open_device(opt.device, kStep); code >= 0) return code;
    const harness::DeviceInfo dev = harness::device_info(opt.device);
    const ncclUniqueId id = exchange_id(opt);
    ncclComm_t comm;
    NCCL_CHECK(ncclCommInitRank(&comm, opt.nranks, id, opt.rank));
    std::printf("rank %d of %d on %s (device %d), NCCL %d\n", opt.rank, opt.nranks, dev.name.c_str(), opt.device,
                NCCL_VERSION_CODE);
    size_t max_shard = 0;
    for (size_t n : opt.sizes) max_shard = std::max(max_shard, harness::shard_size(n, opt.nranks, opt.rank));
    void *d_in = nullptr, *d_scratch = nullptr, *d_out = nullptr;
    int4* flush = nullptr;
    const size_t flush_count = size_t(std::max(dev.l2_bytes, 1 << 20)) * 2 / sizeof(int4);
    CUDA_CHECK(cudaMalloc(&d_in, harness::input_buffer_bytes(max_shard)));
    CUDA_CHECK(cudaMalloc(&d_scratch, size_t(1) << 20));
    CUDA_CHECK(cudaMalloc(&d_out, 512));
    CUDA_CHECK(cudaMemset(d_out, 0, 512));
    CUDA_CHECK(cudaMalloc(&flush, flush_count * sizeof(int4) + sizeof(int)));
    CUDA_CHECK(cudaMemset(flush, 0, flush_count * sizeof(int4) + sizeof(int)));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    if (!opt.check_only) rank_allreduce_cost(opt, comm, dev, s, d_out, flush, flush_count);
    const bool ok = harness::for_each_dtype(opt, [&](auto zero, const char* dtype) {
      using T = decltype(zero);
      return rank_dtype<T>(dtype, opt, comm, dev, s, d_in, d_scratch, static_cast<T*>(d_out), flush, flush_count);
    });
    CUDA_CHECK(cudaStreamSynchronize(s));
    NCCL_CHECK(ncclCommDestroy(comm));
    cudaStreamDestroy(s);
    cudaFree(d_in);
    cudaFree(d_scratch);
    cudaFree(d_out);
    cudaFree(flush);
    if (opt.rank == 0) std::remove(opt.id_file.c_str());
    return harness::verdict_code(who.c_str(), ok);
  });
#endif
}

// ---- main ----------------------------------------------------------------------------------------------
int main(int argc, char** argv) {
  // Never NVLink multicast (NVLS): set before any NCCL call, in this process and (through
  // the environment) in anything it starts.
  if (const char* v = std::getenv("NCCL_NVLS_ENABLE"); v && std::strcmp(v, "0") != 0)
    std::fprintf(stderr, "%s: note: NCCL_NVLS_ENABLE=%s overridden to 0\n", kStep, v);
  setenv("NCCL_NVLS_ENABLE", "0", 1);

  harness::Options opt;
  try {
    opt = harness::parse_args(argc, argv, kFlags);
    bool known = opt.variant == "all";
    std::string names;
    for (const auto& v : kVariants) {
      known |= opt.variant == v.name;
      names += std::string(v.name) + ", ";
    }
    if (!known) throw harness::UsageError("--variant: unknown '" + opt.variant + "' (choose from " + names + "all)");
    if (!HAVE_NCCL && (opt.variant == "nccl" || opt.variant == "nccl_lsa"))
      throw harness::UsageError("--variant: " + opt.variant + " is not in this build (NCCL was not found at configure time)");
    if (!HAVE_NCCL_DEVICE_API && opt.variant == "nccl_lsa")
      throw harness::UsageError("--variant: nccl_lsa needs NCCL 2.28 or later (nccl_device.h)");
  } catch (const harness::UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", kStep, e.what());
    return 2;
  }
  if (opt.help) {
    std::printf("%s: sum one array split over K GPUs (one cooperative grid per GPU), verify it, time it.\n"
                "NCCL: %s. Variants:\n", kStep, HAVE_NCCL ? "built in" : "not found at configure time (nccl variants left out)");
    for (const auto& v : kVariants) std::printf("  %-16s %s\n", v.name, v.about);
    std::printf("One process per GPU (NCCL): scripts/nccl_launch.sh K ./%s [flags], i.e. --rank R --nranks K --id-file PATH\n"
                "(variant nccl_mp).\n%s",
                kStep, harness::usage_text(kFlags).c_str());
    return 0;
  }
  if (opt.rank >= 0) return run_rank(opt);

  std::vector<int> devices;
  if (int code = harness::select_gpus(opt, kStep, devices); code >= 0) return code;
  return harness::exit_code_of(kStep, [&] {
    size_t max_shard = 0;
    for (size_t n : opt.sizes) max_shard = std::max(max_shard, harness::shard_size(n, int(devices.size()), 0));
    if (int code = harness::open_device(devices[0], kStep); code >= 0) return code;  // built for this GPU?
    for (int d : devices)
      if (harness::cooperative_unsupported(d, kStep)) return 77;
    MultiGpu mg(devices, max_shard);
    const int K = mg.size();
    std::printf("%s on %d GPUs:", kStep, K);
    for (int k = 0; k < K; ++k) std::printf(" %d=%s", mg[k].device, mg[k].info.name.c_str());
    std::printf("; CUDA %s, peak %.0f GB/s each (x%d = %.0f GB/s)\n", mg[0].info.cuda.c_str(), mg[0].info.peak_gbps, K,
                K * mg[0].info.peak_gbps);
    for (int k = 1; k < K; ++k)
      if (mg[k].info.name != mg[0].info.name)
        std::printf("note: the GPUs differ; %% of peak and the CSV's device column use GPU %d's\n", mg[0].device);

    if (!HAVE_NCCL) std::printf("NCCL: not found at configure time; the nccl variants are left out\n");
    Setup st;
    st.devices = devices;
    setup_peers(mg, st);
#if HAVE_NCCL
    if (opt.variant == "all" || opt.variant == "nccl" || opt.variant == "nccl_lsa" || !opt.check_only) {
      st.comms.resize(size_t(K));
      NCCL_CHECK(ncclCommInitAll(st.comms.data(), K, devices.data()));  // once, outside timing
      int version = 0;
      NCCL_CHECK(ncclGetVersion(&version));
      std::printf("NCCL %d, %d communicators (ncclCommInitAll), NCCL_NVLS_ENABLE=0\n", version, K);
    }
#endif
#if HAVE_NCCL_DEVICE_API
    if (opt.variant == "nccl_lsa") setup_lsa(mg, st);
#endif
    bool ok = true;
    if (st.peers_ok && (opt.variant == "all" || opt.variant == "peer_barrier"))
      ok &= barrier_reuse_test(mg, st, opt.barrier_reps);
    if (!opt.check_only) measure_costs(opt, mg, st);

    if (opt.check_only)
      std::printf("check only: each contender once on poisoned outputs, against the host reference of all n\n"
                  "%-5s %11s %3s  %-16s %s  [shape]\n", "dtype", "n", "off", "variant", "check");
    else
      std::printf("median of %d timed runs after %d warm-up; L2 flushed on every GPU before each; time = GPU 0's events "
                  "around fork/join of all streams;\nGB/s = n*4/median; %%peak of K x one GPU's peak; xCUB = cub_1gpu time / "
                  "this time; xfloor = this time / the read on all K GPUs\n"
                  "%-5s %11s %3s  %-18s %9s %9s %8s %6s %6s %7s  %-7s %s\n",
                  opt.reps, opt.warmup, "dtype", "n", "off", "variant", "median ms", "min ms", "GB/s", "%peak", "xCUB",
                  "xfloor", "shape", "check");
    ok &= harness::for_each_dtype(opt, [&](auto zero, const char* dtype) { return run_dtype<decltype(zero)>(dtype, opt, mg, st); });
#if HAVE_NCCL_DEVICE_API
    if (st.lsa_ok) teardown_lsa(mg, st);
#endif
#if HAVE_NCCL
    for (auto c : st.comms) ncclCommDestroy(c);
#endif
    if (st.barrier_mem) {
      mg.use(0);
      CUDA_CHECK(cudaFree(st.barrier_mem));
    }
    return harness::verdict_code(kStep, ok);
  });
}

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
// grid_sync kernel (shard_sum.cuh). The variants differ in how the K partial sums become one:
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
// NCCL's all-reduce of one value, and the peer bandwidth. The program around the variants
// (GPUs, peer access, costs, rows) is multi_gpu_step.cuh in this folder.
//
// One process per GPU (NCCL only, variant nccl_mp): step08_nccl_ranks.cu.
#include <cuda/atomic>

#include <cstdio>
#include <string>
#include <vector>

#include "multi_gpu_step.cuh"
#include "shard_sum.cuh"

using harness::MultiGpu;
using harness::Shards;

static const char* kStep = "step08_multi_grid";

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
// it (after a checked peer_barrier run and after the reuse test; docs/evidence/08_multi_grid.md lists the gaps).
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
// ptxas gave this kernel 44 registers (one block per SM fit) and it ran slower than
// peer_atomic at every large n (two H200s, 2^26..2^32). Why was not measured: that run's floor
// also ran one block per SM with as many bytes in flight, at full speed (chapter 08; register
// counts in results/logs/step08_peer_barrier_registers.txt).
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
// [docs:nccl-lsa]
template <typename T>
__global__ void __launch_bounds__(kThreads, 2) reduce_nccl_lsa(const T* __restrict__ in, size_t n, T* partials,
                                                            ncclDevComm comm, ncclWindow_t window, unsigned half,
                                                            T* out) {
  const T s = shard_sum(in, n, partials);  // grid.sync, then block 0's block_sum: the others may leave
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

// ---- launchers: one cooperative launch per GPU, queued between the caller's fork and join ----
template <typename T>
void launch_peer_atomic(const Shards<T>& s) {
  MultiGpu& mg = *s.mg;
  mg.use(0);
  CUDA_CHECK(cudaMemsetAsync(s.out(0), 0, sizeof(T), mg[0].stream));  // part of the cost
  mg.fork();  // every GPU adds only after the zero
  for (int k = 0; k < mg.size(); ++k) {
    mg.use(k);
    launch_on_shard(reduce_peer_atomic<T>, mg[k].stream, s.in[size_t(k)], s.count[size_t(k)], s.partials(k), s.out(0));
  }
}

// [docs:launch-peer-barrier]
template <typename T>
void launch_peer_barrier(const Shards<T>& s, const PeerBarrier& bar, void* slots) {
  MultiGpu& mg = *s.mg;
  for (int k = 0; k < mg.size(); ++k) {
    mg.use(k);
    launch_on_shard(reduce_peer_barrier<T>, mg[k].stream, s.in[size_t(k)], s.count[size_t(k)], s.partials(k), bar,
                    static_cast<T*>(slots), unsigned(k), s.out(k));
  }
}
// [/docs:launch-peer-barrier]

#if HAVE_NCCL
template <typename T>
void launch_nccl(const Shards<T>& s, const std::vector<ncclComm_t>& comms) {
  MultiGpu& mg = *s.mg;
  const int K = mg.size();
  for (int k = 0; k < K; ++k) {
    mg.use(k);
    launch_on_shard(reduce_shard<T>, mg[k].stream, s.in[size_t(k)], s.count[size_t(k)], s.partials(k), s.out(k) + 16);
  }
  // [docs:nccl-allreduce]
  // One thread drives K communicators: the calls must be grouped.
  // Floats: NCCL does not document the order in which it adds the K
  // values (it depends on the algorithm it picks: ring, tree; NVLS is
  // off). Every rank receives the same reduced bits (each GPU's total
  // is checked), but that order may change with K, topology or NCCL version.
  NCCL_CHECK(ncclGroupStart());
  for (int k = 0; k < K; ++k)
    NCCL_CHECK(ncclAllReduce(s.out(k) + 16, s.out(k), 1, harness::nccl_type<T>(), ncclSum, comms[size_t(k)],
                             mg[k].stream));
  NCCL_CHECK(ncclGroupEnd());
  // [/docs:nccl-allreduce]
}
#endif

#if HAVE_NCCL_DEVICE_API
template <typename T>
void launch_nccl_lsa(const Shards<T>& s, harness::LsaWindows& lsa) {
  MultiGpu& mg = *s.mg;
  const unsigned half = lsa.launches++ & 1;
  for (int k = 0; k < mg.size(); ++k) {
    mg.use(k);
    launch_on_shard(reduce_nccl_lsa<T>, mg[k].stream, s.in[size_t(k)], s.count[size_t(k)], s.partials(k),
                    lsa.dev_comms[size_t(k)], lsa.windows[size_t(k)], half, s.out(k));
  }
}
#endif

// barrier_loop(reps) on every GPU, `blocks` each (0: as many as fit at once).
static void launch_barriers(MultiGpu& mg, const PeerBarrier& bar, unsigned blocks, int reps) {
  for (int k = 0; k < mg.size(); ++k) {
    mg.use(k);
    const unsigned grid = blocks ? blocks : harness::resident_blocks(barrier_loop, kThreads);
    CUDA_CHECK(harness::launch_cooperative(barrier_loop, grid, kThreads, 0, mg[k].stream, bar, reps));
  }
}

// The barrier's state and peer_barrier's slots (2 x K values) in GPU 0's memory, zeroed once,
// here, and never again. gen gets a 128-byte line of its own: the waiters poll it.
static PeerBarrier make_barrier(harness::MultiGpuSetup& gpus, void*& slots) {
  const unsigned K = unsigned(gpus.mg.size());
  char* base = static_cast<char*>(gpus.zeroed_on_gpu0(512 + size_t(2) * K * 8));
  slots = base + 512;
  PeerBarrier bar;  // filled by field name
  bar.count = reinterpret_cast<unsigned*>(base);
  bar.gen = reinterpret_cast<unsigned*>(base + 128);
  bar.timeouts = reinterpret_cast<unsigned*>(base + 256);
  bar.K = K;
  return bar;
}

// ---- main ----------------------------------------------------------------------------------------------
using harness::MultiGpuVariantName;
static const std::vector<MultiGpuVariantName> kVariants = {
    MultiGpuVariantName("peer_atomic", "per GPU: cooperative grid_sync on its shard, then a system-scope atomic add "
                                       "into GPU 0 (result zeroed first, timed); total on GPU 0")
        .needs(harness::kUsesPeers),
    MultiGpuVariantName("peer_barrier", "per GPU: partial into a slot on GPU 0, cross-GPU barrier (multi_grid.sync "
                                        "replacement), every GPU adds the K slots in order: bitwise equal totals")
        .needs(harness::kUsesPeers | harness::kUsesBarrier).total_everywhere(),
    MultiGpuVariantName("nccl", "per GPU: grid_sync into a device scalar, then ncclAllReduce of the K scalars "
                                "(ncclCommInitAll)")
        .needs(harness::kUsesNccl).total_everywhere(),
    MultiGpuVariantName("nccl_lsa", "BY NAME ONLY: NCCL 2.28 device API, stores into peers' windows + "
                                    "ncclLsaBarrierSession (no multicast)")
        .needs(harness::kUsesNcclLsa).total_everywhere().by_name_only(),
};

// The harness (multi_gpu_step.cuh, this folder) parses the flags (the core ones, --gpus and
// --barrier-reps; no --batch: it times one fork/join per pair of events), opens the GPUs, sets
// up what the chosen variants use, then asks for the launchers and runs the chosen ones.
int main(int argc, char** argv) {
  const char* intro = "sum one array split over K GPUs (one cooperative grid per GPU), verify it, time it.\n"
                      "One process per GPU (NCCL, variant nccl_mp): scripts/nccl_launch.sh K ./step08_nccl_ranks [flags].";
  return harness::run_multi_gpu_step(argc, argv, kStep, intro, kVariants,
                                     [](harness::MultiGpuSetup& gpus, harness::MultiGpuPlan& plan) {
    void* slots = nullptr;
    const PeerBarrier bar = make_barrier(gpus, slots);
    auto launch = [&mg = gpus.mg, bar](unsigned blocks, int reps) { launch_barriers(mg, bar, blocks, reps); };
    plan.barrier = harness::BarrierUnderTest{launch, bar.gen, bar.count, bar.timeouts};
    plan.add("peer_atomic", [](const auto& s) { launch_peer_atomic(s); });
    plan.add("peer_barrier", [bar, slots](const auto& s) { launch_peer_barrier(s, bar, slots); },
             [&mg = gpus.mg, bar] { return harness::read_on_gpu0(mg, bar.timeouts); });
#if HAVE_NCCL
    plan.add("nccl", [&comms = gpus.nccl.list](const auto& s) { launch_nccl(s, comms); });
#endif
#if HAVE_NCCL_DEVICE_API
    plan.add("nccl_lsa", [&lsa = gpus.lsa](const auto& s) { launch_nccl_lsa(s, lsa); });
#endif
  });
}

// SOLUTION of workshop exercise 09 - thread block clusters (step 09, steps/step09_clusters/step09_clusters.cu;
// sm_90 or later: Hopper).
//
// Step 07's last-arrival combine makes every BLOCK write its partial sum to global memory and
// count itself in on one counter. On sm_90 the blocks of a launch can be grouped into
// clusters (here of 2 or 8 blocks) that the hardware runs at the same time, and a block can
// read and write the shared memory of the other blocks of its cluster (distributed shared
// memory, DSMEM). So the blocks of a cluster can add their sums in the shared memory of one
// of them, the leader (rank 0), and only one partial per CLUSTER goes through global memory.
//
// As given, each block stores its sum into its OWN shared memory, and the leader adds only
// its own slot: the result is the sum of the leaders' shares of the input, with every other
// block's share missing. Your job, three TODOs in the kernel reduce_cluster:
//   1. store this block's sum into its slot of the LEADER's shared memory (map_shared_rank);
//   2. a cluster barrier between those stores and the leader's reads;
//   3. the leader adds all the slots, in rank order.
//
//   make ex09 && ./ex09 --check --n 1000,2^20+1 --dtype all
//   ./ex09 --check --n 2^20+1 --cluster 1      clusters of one block: why is the handout right here?
//   ./ex09 --n 2^24                            timed against CUB
//   bash ../scripts/check_exercise.sh 09
// A GPU without clusters (before sm_90) gets one line and exit 77: nothing to run there.
#include <cooperative_groups.h>
#include <cuda/atomic>

#include <algorithm>
#include <utility>

#include "clusters.cuh"
#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)
#include "vector_reads.cuh"

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kInFlight = 4;                                    // 16-byte loads in flight per thread
constexpr size_t kPerBlock = size_t(kThreads) * kInFlight * 4;  // elements a block reads per iteration
constexpr int kMaxCluster = 16;                                 // the largest cluster a GPU launches

// This block's share of the input (the grid strides over it), summed; thread 0 gets it. (Given:
// step 05's 16-byte loads and block sum, from vector_reads.cuh.)
template <typename T>
__device__ T block_share(const T* __restrict__ in, size_t n) {
  const size_t thread = blockIdx.x * size_t(blockDim.x) + threadIdx.x, stride = size_t(gridDim.x) * blockDim.x;
  return vector_reads::block_sum(vector_reads::thread_sum<kInFlight>(in, n, thread, stride));
}

// Step 07's last-arrival combine over one partial per cluster, called by the leaders only.
// (Given.) The leader that counts itself in last adds the partials in a fixed order and writes
// *out. The counter is 0 when the program loads, and the last arrival puts it back to 0.
__device__ unsigned g_arrivals;
template <typename T>
__device__ void combine(T cluster_sum, unsigned cluster_id, unsigned clusters, T* partials, T* out) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[cluster_id] = cluster_sum;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> arrived(g_arrivals);
    last = arrived.fetch_add(1, cuda::memory_order_acq_rel) == clusters - 1;
    if (last) arrived.store(0, cuda::memory_order_relaxed);
  }
  __syncthreads();
  if (!last) return;
  T sum = 0;
  for (unsigned i = threadIdx.x; i < clusters; i += blockDim.x) sum += partials[i];
  sum = vector_reads::block_sum(sum);
  if (threadIdx.x == 0) *out = sum;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_cluster(const T* __restrict__ in, size_t n, T* partials, T* out) {
#if CLUSTERS_COMPILED  // clusters.cuh: an empty kernel when built for a GPU older than sm_90
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();  // 0 .. cluster.num_blocks() - 1; rank 0 is the leader
  __shared__ T block_sums[kMaxCluster];        // the leader's copy gets one slot per block of the cluster
  // (Given.) A block may touch another block's shared memory only while that block is running.
  // The blocks of a cluster are sure to run together, but not to have started at the same
  // instant. The split barrier makes sure at little cost: every thread arrives now, sums its
  // share, and waits just before the store. When the wait returns, every block has arrived.
  auto started = cluster.barrier_arrive();
  const T sum = block_share(in, n);  // in thread 0
  cluster.barrier_wait(std::move(started));

  // Solution: each block's sum into its slot of the leader's shared memory (a DSMEM store; the
  // leader's own goes to itself), one cluster barrier, then the leader adds the slots in rank order.
  if (threadIdx.x == 0) *cluster.map_shared_rank(&block_sums[rank], 0) = sum;
  cluster.sync();  // every slot written and visible to the leader; the others may now return
  if (rank != 0) return;
  T cluster_sum = 0;
  if (threadIdx.x == 0)
    for (unsigned r = 0; r < cluster.num_blocks(); ++r) cluster_sum += block_sums[r];
  combine(cluster_sum, blockIdx.x / cluster.num_blocks(), gridDim.x / cluster.num_blocks(), partials, out);
#endif
}

// (Given.) As many clusters as n needs, no more than fit on the GPU at once (the grid strides
// over the rest), launched with cudaLaunchKernelEx and a cluster size (clusters.cuh).
template <typename T>
void reduce_clusters(const T* in, size_t n, T* out, int own_size, const char* variant, const harness::Launch& ctx) {
  const int cluster = harness::cluster_size_or(ctx, own_size);  // --cluster C, else the variant's own
  if (cluster > kMaxCluster) throw harness::UsageError("--cluster: at most 16 blocks per cluster here (block_sums)");
  const unsigned fit = harness::clusters_that_fit(reduce_cluster<T>, kThreads, cluster, 0, variant, ctx);
  const size_t blocks_needed = (n + kPerBlock - 1) / kPerBlock;
  const unsigned clusters = unsigned(std::max<size_t>(1, std::min<size_t>(fit, (blocks_needed + cluster - 1) / cluster)));
  harness::check_cluster(harness::launch_clusters(reduce_cluster<T>, clusters * unsigned(cluster), kThreads, cluster, 0,
                                                  ctx.stream, in, n, ctx.scratch_as<T>(clusters), out),
                         ctx, cluster, variant, "cudaLaunchKernelEx");
}

int main(int argc, char** argv) {
  harness::ForcedCluster forced;  // --cluster C (step 09's own flag: clusters.cuh)
  return harness::run_step(argc, argv, "ex09_solution", {
      {"cluster_2", "the block sums of a cluster of 2 added in the leader's shared memory (your kernel)",
       [](auto in, size_t n, auto out, const harness::Launch& ctx) { reduce_clusters(in, n, out, 2, "cluster_2", ctx); }},
      {"cluster_8", "the same with clusters of 8, the largest portable size",
       [](auto in, size_t n, auto out, const harness::Launch& ctx) { reduce_clusters(in, n, out, 8, "cluster_8", ctx); }},
  }, harness::kBatch, harness::clusters_unsupported, &forced);
}

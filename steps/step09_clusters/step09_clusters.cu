// Step 09 - thread block clusters (sm_90, Hopper): the level between the block and the grid.
// Step 07 combines one partial per BLOCK through L2: each block writes its sum to global
// memory, bumps a counter, and the last block reads every partial back. A cluster is a group
// of up to 8 blocks (16 where the GPU allows it) that the hardware guarantees to run at the
// same time on one GPC. Its blocks can read and write each other's shared memory (distributed
// shared memory, DSMEM: cg::cluster_group::map_shared_rank) and meet at cluster.sync(). Here
// the blocks of a cluster add their sums in the leader's shared memory, so only one partial
// per CLUSTER goes through L2 and the counter: C times fewer for clusters of C.
//
//   last_block    step 07's last_block, no cluster code: the baseline in the same run.
//   cluster_1 .. cluster_16  push: each block stores its sum into the leader block's shared
//                 memory (a DSMEM store), cluster.sync(), the leader adds them in rank order
//                 and hands one partial to step 07's last-arrival combine.
//   implicit_1    the push kernel launched with <<<>>> (no cluster size): clusters of one.
//   dims_2        cluster_2 with the size fixed at compile time (__cluster_dims__), <<<>>> launch.
//   pull_8        pull: each block keeps its sum in its own shared memory; the leader reads
//                 the others' (DSMEM loads); a second cluster.sync() keeps them alive meanwhile.
//   one_cluster   the whole input on ONE cluster of 16 blocks: the leader writes *out, no
//                 partials, no counter (small n).
//   auto          last_block: where a cluster variant beats it (a grid of one cluster, no counter),
//                 step 07's one_block or packed_slots beats both (see the chapter).
//   pull_no_wait  PITFALL, by name only: pull without the second cluster.sync(): the others exit
//                 while the leader still reads their shared memory.
// --cluster C forces the size of every cluster variant (a size the GPU refuses: exit 2).
#include <cooperative_groups.h>
#include <cuda/atomic>

#include <cstdio>
#include <type_traits>

#include "clusters.cuh"
#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)
#include "vector_reads.cuh"

namespace cg = cooperative_groups;
using harness::check_cluster;
using harness::cluster_size_or;

constexpr int kThreads = 1024;  // step 07's blocks: 1024 threads, 4 vectors of 16 bytes in flight each
constexpr int kVectorsInFlight = 4;
constexpr size_t kPerBlock = size_t(kThreads) * kVectorsInFlight * 4;  // elements a block reads per iteration
constexpr int kMaxCluster = 16;  // the largest cluster any GPU launches (non-portable)

using vector_reads::block_sum_typed;  // step 07's block sum: thread 0 gets the block's sum

// This block's share of the input: 16-byte loads, the grid striding over n (step 05's loop).
template <typename T>
__device__ T block_share(const T* __restrict__ in, size_t n) {
  const size_t thread = blockIdx.x * size_t(blockDim.x) + threadIdx.x, stride = size_t(gridDim.x) * blockDim.x;
  return block_sum_typed(vector_reads::thread_sum<kVectorsInFlight>(in, n, thread, stride));
}

// Step 07's second phase, over one partial per cluster: each cluster leader writes its partial
// and counts itself in (acq_rel); the leader that counts last adds all partials in a fixed
// order, so float sums are bitwise the same every run, and writes *out: no memset. One
// counter for every launch: the harness launches in one stream, and each launch leaves it at 0.
__device__ unsigned g_arrivals;

template <typename T>
__device__ void combine_clusters(T cluster_sum, unsigned cluster, unsigned clusters, T* partials, unsigned* arrivals,
                                 T* out) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[cluster] = cluster_sum;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> arrived(*arrivals);
    last = arrived.fetch_add(1, cuda::memory_order_acq_rel) == clusters - 1;
    if (last) arrived.store(0, cuda::memory_order_relaxed);
  }
  __syncthreads();
  if (!last) return;
  T sum = 0;
  for (unsigned i = threadIdx.x; i < clusters; i += blockDim.x) sum += partials[i];
  sum = block_sum_typed(sum);
  if (threadIdx.x == 0) *out = sum;
}

// ---- last_block: step 07's, no cluster code: the baseline in the same run -----------------
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_last_block(const T* __restrict__ in, size_t n, T* partials,
                                                              unsigned* arrivals, T* out) {
  combine_clusters(block_share(in, n), blockIdx.x, gridDim.x, partials, arrivals, out);  // clusters of one
}

// ---- push: every block's sum into the leader's shared memory ----------------------------
// [docs:cluster-push]
template <typename T>
__device__ void cluster_reduce_push(const T* __restrict__ in, size_t n, T* partials, unsigned* arrivals, T* out) {
#if CLUSTERS_COMPILED
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ T block_sums[kMaxCluster];  // used in the leader (rank 0): one slot per block of the cluster
  // A block may touch another's shared memory only once that block is running. A split
  // barrier checks it for free: arrive now, read the input, wait just before the DSMEM store.
  // CG's split form is cluster.barrier_arrive() / barrier_wait(token); its arrive releases
  // (orders this block's memory operations before it), which "running" does not need: in
  // cluster_cost's sync table a cluster.sync() with the releasing arrive costs about 2.7-5.8
  // times the relaxed arrive + wait (2.7-2.8x on the H200, 5.3-5.8x on the H100).
  __cluster_barrier_arrive_relaxed();
  const T sum = block_share(in, n);
  __cluster_barrier_wait();
  if (threadIdx.x == 0) *cluster.map_shared_rank(&block_sums[cluster.block_rank()], 0) = sum;  // a store into block 0's
  // All stores above happen before the leader reads (arrive releases, wait acquires, at
  // cluster scope). After it the other blocks may exit: nobody touches their shared memory.
  cluster.sync();
  if (cluster.block_rank() != 0) return;
  T cluster_sum = 0;
  if (threadIdx.x == 0)
    for (unsigned r = 0; r < cluster.num_blocks(); ++r) cluster_sum += block_sums[r];  // rank order: repeatable
  const unsigned clusters = gridDim.x / cluster.num_blocks();
  if (clusters == 1) {  // one cluster (one_cluster): its sum is the result
    if (threadIdx.x == 0) *out = cluster_sum;
    return;
  }
  // 1-D grid and clusters: cluster k is blocks k*C .. k*C+C-1 (cg::this_grid().cluster_rank()).
  combine_clusters(cluster_sum, blockIdx.x / cluster.num_blocks(), clusters, partials, arrivals, out);
#endif
}
// [/docs:cluster-push]

// The cluster size set at launch (cudaLaunchAttributeClusterDimension): one kernel, any size.
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_cluster_push(const T* __restrict__ in, size_t n, T* partials,
                                                                unsigned* arrivals, T* out) {
  cluster_reduce_push(in, n, partials, arrivals, out);
}

// The cluster size set at compile time: a <<<>>> launch makes clusters of 2 (the grid must be a
// multiple of 2), and a launch attribute cannot change it. CLUSTER_DIMS_X(2) is
// __cluster_dims__(2, 1, 1), left out when compiling for a GPU older than sm_90 (clusters.cuh).
// [docs:cluster-dims]
template <typename T>
__global__ void CLUSTER_DIMS_X(2) __launch_bounds__(kThreads)
    reduce_cluster_dims2(const T* __restrict__ in, size_t n, T* partials, unsigned* arrivals, T* out) {
  cluster_reduce_push(in, n, partials, arrivals, out);
}
// [/docs:cluster-dims]

// ---- pull: the leader reads the others' shared memory ------------------------------------
// [docs:cluster-pull]
template <bool WaitBeforeExit, typename T>
__global__ void __launch_bounds__(kThreads) reduce_cluster_pull(const T* __restrict__ in, size_t n, T* partials,
                                                                unsigned* arrivals, T* out) {
#if CLUSTERS_COMPILED
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ T my_sum;  // this block's sum, read by the leader
  const T sum = block_share(in, n);
  if (threadIdx.x == 0) my_sum = sum;
  cluster.sync();  // every block's my_sum is written (and every block is running)
  T cluster_sum = 0;
  if (cluster.block_rank() == 0 && threadIdx.x == 0)
    for (unsigned r = 0; r < cluster.num_blocks(); ++r) cluster_sum += *cluster.map_shared_rank(&my_sum, r);
  // A block's shared memory ends with the block. Without this barrier the others would exit
  // while the leader still reads their my_sum (the pitfall variant pull_no_wait).
  if constexpr (WaitBeforeExit) cluster.sync();
  if (cluster.block_rank() != 0) return;
  combine_clusters(cluster_sum, blockIdx.x / cluster.num_blocks(), gridDim.x / cluster.num_blocks(), partials, arrivals, out);
#endif
}
// [/docs:cluster-pull]

// ---- launchers -----------------------------------------------------------------------------
unsigned* arrivals_counter() {
  static unsigned* counter = harness::symbol_address(g_arrivals);
  return counter;
}

// As many clusters as n needs (a block per kPerBlock elements, rounded up to whole clusters),
// never more than fit at once (cudaOccupancyMaxActiveClusters): the grid strides over the rest.
template <typename Kernel>
unsigned cluster_grid(Kernel kernel, size_t n, int cluster, const char* variant, const harness::Launch& ctx) {
  const unsigned fit = harness::clusters_that_fit(kernel, kThreads, cluster, 0, variant, ctx);
  const size_t blocks_needed = (n + kPerBlock - 1) / kPerBlock;
  const size_t clusters = std::min<size_t>(fit, (blocks_needed + cluster - 1) / cluster);
  return unsigned(std::max<size_t>(1, clusters)) * unsigned(cluster);
}

// [docs:cluster-launch]
template <typename T, typename Kernel>
void launch_cluster_reduce(Kernel kernel, int own_size, const char* variant, const T* in, size_t n, T* out,
                           const harness::Launch& ctx) {
  const int cluster = cluster_size_or(ctx, own_size);
  const unsigned blocks = cluster_grid(kernel, n, cluster, variant, ctx);  // refuses a size that cannot fit
  harness::require_cluster_at_most(cluster, kMaxCluster);
  T* partials = ctx.scratch_as<T>(blocks / cluster);
  // cudaLaunchKernelEx with cudaLaunchAttributeClusterDimension = {cluster, 1, 1} (clusters.cuh);
  // sizes above 8 first set cudaFuncAttributeNonPortableClusterSizeAllowed on the kernel.
  check_cluster(harness::launch_clusters(kernel, blocks, kThreads, cluster, 0, ctx.stream, in, n, partials,
                                         arrivals_counter(), out),
                ctx, cluster, variant, "cudaLaunchKernelEx");
}
// [/docs:cluster-launch]

template <typename T>
void dims_2(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  if (const int forced = harness::forced_cluster(ctx); forced && forced != 2)  // named with --variant (`all` skips it)
    throw harness::UsageError("--cluster: dims_2's cluster size is fixed at compile time (__cluster_dims__(2, 1, 1))");
  const unsigned blocks = cluster_grid(reduce_cluster_dims2<T>, n, 2, "dims_2", ctx);
  reduce_cluster_dims2<T><<<blocks, kThreads, 0, ctx.stream>>>(in, n, ctx.scratch_as<T>(blocks / 2), arrivals_counter(), out);
  CUDA_CHECK_LAUNCH();
}

// The baseline: step 07's last_block, a plain launch, a partial per block through L2.
template <typename T>
void last_block(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const unsigned blocks = harness::grid_for(n, kPerBlock, harness::resident_blocks(reduce_last_block<T>, kThreads));
  reduce_last_block<T><<<blocks, kThreads, 0, ctx.stream>>>(in, n, ctx.scratch_as<T>(blocks), arrivals_counter(), out);
  CUDA_CHECK_LAUNCH();
}

// The push kernel launched with <<<>>> and no cluster size: every block is then a cluster of
// one (on sm_90 every launch has clusters; without a size they are 1 x 1 x 1).
template <typename T>
void implicit_1(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const unsigned blocks = harness::grid_for(n, kPerBlock, harness::resident_blocks(reduce_cluster_push<T>, kThreads));
  reduce_cluster_push<T><<<blocks, kThreads, 0, ctx.stream>>>(in, n, ctx.scratch_as<T>(blocks), arrivals_counter(), out);
  CUDA_CHECK_LAUNCH();
}

// One cluster of 16 blocks (or --cluster C) reads everything: 16 blocks' worth of loads in
// flight, and the leader writes the result. No partials in global memory, no counter.
template <typename T>
void one_cluster(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  const int cluster = cluster_size_or(ctx, kMaxCluster);
  harness::clusters_that_fit(reduce_cluster_push<T>, kThreads, cluster, 0, "one_cluster", ctx);  // refuses a size that cannot fit
  harness::require_cluster_at_most(cluster, kMaxCluster);
  check_cluster(harness::launch_clusters(reduce_cluster_push<T>, unsigned(cluster), kThreads, cluster, 0, ctx.stream, in, n,
                                         ctx.scratch_as<T>(1), arrivals_counter(), out),
                ctx, cluster, "one_cluster", "cudaLaunchKernelEx");
}

// What a library would pick here: last_block at every n. The cluster variants beat it only
// where the grid is one cluster, whose leader writes the result without the counter, and there
// step 07's one_block or packed_slots beats both (chapter 09, "Where clusters pay").
template <typename T>
void auto_reduce(const T* in, size_t n, T* out, const harness::Launch& ctx) {
  last_block(in, n, out, ctx);
}

// ---- main ---------------------------------------------------------------------------------
// A GPU without clusters (before sm_90) gets one line and exit 77 (run_step's `needs`);
// --cluster, this program's own flag (clusters.cuh), forces the size of the cluster variants.
int main(int argc, char** argv) {
  using harness::Launch;
  harness::ForcedCluster forced;  // --cluster C
  const auto push = [](int size, const char* name) {
    return [size, name](auto in, size_t n, auto out, const Launch& ctx) {
      launch_cluster_reduce(reduce_cluster_push<harness::elem_t<decltype(in)>>, size, name, in,
                            n, out, ctx);
    };
  };
  // Wait = false: the pitfall, without the second cluster.sync().
  const auto pull_8 = [](auto wait, const char* name) {
    return [name](auto in, size_t n, auto out, const Launch& ctx) {
      launch_cluster_reduce(reduce_cluster_pull<decltype(wait)::value, harness::elem_t<decltype(in)>>, 8, name, in, n,
                            out, ctx);
    };
  };
  return harness::run_step(argc, argv, "step09_clusters", {
      {"last_block", "no cluster code: step 07's last_block, one partial per block through L2 (the baseline)",
       [](auto in, size_t n, auto out, const Launch& ctx) { last_block(in, n, out, ctx); }},
      {"implicit_1", "the push kernel launched with <<<>>>: clusters of one block, no launch attribute",
       [](auto in, size_t n, auto out, const Launch& ctx) { implicit_1(in, n, out, ctx); }},
      {"cluster_1", "push, launched with a cluster size of 1 (cudaLaunchAttributeClusterDimension)",
       push(1, "cluster_1")},
      {"cluster_2", "push: block sums into the leader's shared memory (DSMEM), one partial per cluster of 2",
       push(2, "cluster_2")},
      {"cluster_4", "push, clusters of 4", push(4, "cluster_4")},
      {"cluster_8", "push, clusters of 8 (the largest portable size)", push(8, "cluster_8")},
      {"cluster_16", "push, clusters of 16 (non-portable: cudaFuncAttributeNonPortableClusterSizeAllowed)",
       push(16, "cluster_16")},
      harness::with_fixed_cluster(  // --variant all leaves it out under another --cluster
          harness::Variant("dims_2", "cluster_2 with __cluster_dims__(2, 1, 1) at compile time, launched with <<<>>>",
                           [](auto in, size_t n, auto out, const Launch& ctx) { dims_2(in, n, out, ctx); }),
          2, forced),
      {"pull_8", "pull: the leader reads the 8 block sums from their shared memory; a second cluster.sync()",
       pull_8(std::true_type{}, "pull_8")},
      {"one_cluster", "one cluster of 16 blocks reads everything; the leader writes *out (no partials)",
       [](auto in, size_t n, auto out, const Launch& ctx) { one_cluster(in, n, out, ctx); }},
      {"auto", "last_block at every n (where clusters beat it, step 07's kernels beat both: chapter 09)",
       [](auto in, size_t n, auto out, const Launch& ctx) { auto_reduce(in, n, out, ctx); }},
      harness::Variant("pull_no_wait", "PITFALL, by name only: pull_8 without the second cluster.sync(): blocks exit while read",
                       pull_8(std::false_type{}, "pull_no_wait"))
          .wrong_by_design().by_name_only(),
  }, harness::kBatch, harness::clusters_unsupported, &forced);
}

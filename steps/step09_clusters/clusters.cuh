// Step 09's own pieces: its --cluster flag (this program's alone: cli.hpp's OwnFlags), the
// skip line of a GPU without clusters, and the launch plumbing for thread block clusters: a
// cluster launch in the typed form, the number of clusters that fit at once, and what becomes of
// a size the GPU refuses (with --cluster that is the user's doing: one line, exit 2). The cluster
// code itself - map_shared_rank, cluster.sync() - stays in the step's programs: it is the lesson.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "launch.cuh"
#include "run_step.cuh"  // lacks_feature, for clusters_unsupported

// Cluster code needs sm_90 or later. Built for an older target, the cluster kernels compile
// to empty bodies: they never run, since the program checks first that the GPU has clusters and
// that the code it runs was built for sm_90 (clusters_unsupported: one line, exit 77).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define CLUSTERS_COMPILED 1
#else
#define CLUSTERS_COMPILED 0
#endif
// __cluster_dims__(x, 1, 1) where clusters exist; nothing for an older target, which rejects it.
#if CLUSTERS_COMPILED
#define CLUSTER_DIMS_X(x) __cluster_dims__(x, 1, 1)
#else
#define CLUSTER_DIMS_X(x)
#endif

namespace harness {

// Up to 8 blocks per cluster on every GPU that has clusters; up to 16 where the GPU allows it and
// the kernel opts in (cudaFuncAttributeNonPortableClusterSizeAllowed; the H100 and H200 do).
constexpr int kPortableClusterMax = 8;

// Writes 1 where the code that runs was compiled for sm_90 or later, 0 where the cluster kernels
// are empty bodies: a build without sm_90 code (e.g. PTX for compute_75 only) runs on a Hopper GPU
// through the driver's JIT, and its cluster kernels would do nothing.
static __global__ void clusters_compiled_kernel(int* out) { *out = CLUSTERS_COMPILED; }

// Thread block clusters: an sm_90 or later GPU, and this program built with sm_90 code. Without
// either: one line, exit 77 (run_step's `needs`).
inline bool clusters_unsupported(int device, const char* step) {
  if (lacks_feature(device, step, cudaDevAttrClusterLaunch, "thread block clusters (sm_90 or later needed)"))
    return true;
  int* flag = nullptr;
  int compiled = 1;
  if (cudaSetDevice(device) != cudaSuccess || cudaMalloc(&flag, sizeof(int)) != cudaSuccess) return false;
  clusters_compiled_kernel<<<1, 1>>>(flag);
  const bool ran = cudaMemcpy(&compiled, flag, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
  cudaGetLastError();  // no kernel image for this GPU: the run itself reports that
  cudaFree(flag);
  if (!ran || compiled) return false;
  std::printf("%s: built without sm_90 code, so its cluster kernels are empty on GPU %d; rebuild with "
              "-DCMAKE_CUDA_ARCHITECTURES=native (or 90); skipping.\n", step, device);
  return true;
}

// --cluster C: main hands a ForcedCluster to run_step (or run_problems), and the launchers find
// it in their Launch (forced_cluster(ctx)).
struct ForcedCluster : OwnFlags {
  int size = 0;  // --cluster C: the size of every cluster variant; 0: each variant's own

  std::vector<FlagGroup> groups() override {
    FlagGroup g;
    g.flags = {"--cluster"};
    g.help =
        "  --cluster C           blocks per cluster of the cluster variants (default: each variant's own);\n"
        "                        a size the GPU cannot launch fails with exit 2\n";
    // Up to 64, past what any GPU allows (8 portable, 16 opted in): a reader can see the refusal.
    g.parse = [this](const std::string&, const TakeValue& take, Options&) {
      size = parse_int(take(), "--cluster", 1, 64);
    };
    return {g};
  }
};

// --cluster C when given, else 0.
inline int forced_cluster(const Launch& ctx) { return ctx.own_as<ForcedCluster>().size; }

// The cluster size a variant launches with: --cluster C when given, else its own.
inline int cluster_size_or(const Launch& ctx, int own) {
  const int forced = forced_cluster(ctx);
  return forced ? forced : own;
}

// `v`, whose cluster size is compiled in (`size`), left out of --variant all under --cluster C
// != size, with a note (VariantName's skip_in_all_why). Named with --variant, its launcher refuses C.
inline Variant with_fixed_cluster(Variant v, int size, const ForcedCluster& forced) {
  v.skip_in_all_why = [&forced, size]() -> std::string {
    if (!forced.size || forced.size == size) return "";
    return "its cluster size is fixed at " + std::to_string(size) + " (--cluster " + std::to_string(forced.size) + ")";
  };
  return v;
}

// A --cluster larger than a kernel's per-cluster slots (`most`) is the user's choice: exit 2.
inline void require_cluster_at_most(int cluster, int most) {
  if (cluster > most)
    throw UsageError("--cluster: at most " + std::to_string(most) + " blocks (the leader's slots)");
}

// A launch failure of a cluster variant: with --cluster it is the user's choice of size (a usage
// error, one line, exit 2, naming CUDA's error); without, a bug (a CudaError naming the call, exit 1).
inline void check_cluster(cudaError_t err, const Launch& ctx, int cluster, const char* variant, const char* call) {
  if (err != cudaSuccess && forced_cluster(ctx)) {
    (void)cudaGetLastError();  // a launch error is not sticky: clear it
    throw UsageError("--cluster: " + std::string(variant) + " cannot run clusters of " + std::to_string(cluster) +
                     " blocks on this GPU (" + call + ": " + cudaGetErrorName(err) + ")");
  }
  check_cuda(err, call);
}

// [docs:cluster-attribute]
// The launch configuration of `blocks` blocks in clusters of `cluster` (x only).
struct ClusterConfig : LaunchConfig {
  ClusterConfig(unsigned blocks, unsigned threads, int cluster, size_t dynamic_smem, cudaStream_t stream)
      : LaunchConfig(dim3(blocks), dim3(threads), dynamic_smem, stream) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(cluster);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
  }
};

// Sizes above 8 are non-portable: the kernel must opt in before it is launched or asked about,
// once per kernel and device (not on every launch: a timed launch should be the launch only).
template <typename Kernel>
cudaError_t allow_cluster_size(Kernel kernel, int cluster) {
  if (cluster <= kPortableClusterMax) return cudaSuccess;
  return once_per_kernel<cudaError_t>(kernel, 0, [&] {
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  });
}

// A cluster launch in the typed form (cudaLaunchKernelEx checks the arguments against the
// kernel's parameters at compile time). The grid must be a multiple of the cluster size.
template <typename... Params, typename... Args>
cudaError_t launch_clusters(void (*kernel)(Params...), unsigned blocks, unsigned threads, int cluster,
                            size_t dynamic_smem, cudaStream_t stream, Args&&... args) {
  if (cudaError_t e = allow_cluster_size(kernel, cluster); e != cudaSuccess) return e;
  ClusterConfig c(blocks, threads, cluster, dynamic_smem, stream);
  return cudaLaunchKernelEx(&c.config, kernel, std::forward<Args>(args)...);
}
// [/docs:cluster-attribute]

// How many clusters of `cluster` blocks of `kernel` the GPU holds at once
// (cudaOccupancyMaxActiveClusters), asked once per kernel, size and device. A size the GPU
// cannot co-schedule (0 clusters, or an error) goes through check_cluster.
// [docs:clusters-that-fit]
template <typename Kernel>
unsigned clusters_that_fit(Kernel kernel, unsigned threads, int cluster, size_t dynamic_smem, const char* variant,
                           const Launch& ctx) {
  return once_per_kernel<unsigned>(kernel, std::make_tuple(threads, cluster, dynamic_smem), [&] {
    int count = 0;
    cudaError_t err = allow_cluster_size(kernel, cluster);
    if (err == cudaSuccess) {
      ClusterConfig c(unsigned(cluster), threads, cluster, dynamic_smem, nullptr);
      err = cudaOccupancyMaxActiveClusters(&count, kernel, &c.config);
    }
    check_cluster(err, ctx, cluster, variant, "cudaOccupancyMaxActiveClusters");
    if (count == 0) {  // no cluster of this size fits: too many blocks for the GPU (16 at most here), or their resources
      const std::string what = std::string(variant) + ": not one cluster of " + std::to_string(cluster) +
                               " blocks of " + std::to_string(threads) +
                               " threads fits on this GPU (cudaOccupancyMaxActiveClusters = 0)";
      if (forced_cluster(ctx)) throw UsageError("--cluster: " + what);
      throw std::runtime_error(what);
    }
    return unsigned(count);
  });
}
// [/docs:clusters-that-fit]

}  // namespace harness

// The names that differ between CUDA (nvcc) and HIP (hipcc), and nothing else: the runtime
// header and calls, the Cooperative Groups header, the cooperative launch, the wavefront's
// width, the lane-mask type and the shuffle. Everything in step10_hip.cu is written against
// these. HIP's own NVIDIA path (HIP_PLATFORM=nvidia) is not used: HIP 5.2's headers do not
// build against CUDA 13, so on NVIDIA this is plain CUDA and the harness (launch.cuh).
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>  // first: the CG header needs its names
#include <hip/hip_cooperative_groups.h>

#include <cstdio>
#include <cstdlib>

#define PORT_HIP 1
// RDNA (gfx10) in wave64 mode (-mwavefrontsize64) sets a width of 64, but its ds_bpermute, and
// so __shfl_down, moves values only within each 32-lane half: wave_sum would silently add half
// the wavefront. HIP 5.2's hip_runtime.h refuses it for gfx1010-1012/1030/1031 only; this
// refuses every gfx10 (gfx1013, gfx1032-1036 too). The model's W = 64 is GCN and CDNA only.
#if defined(__GFX10__) && __AMDGCN_WAVEFRONT_SIZE == 64
#error "step 10 does not support RDNA wave64 (-mwavefrontsize64): its shuffles cross only 32-lane halves; build gfx10 targets as wave32 (the default)"
#endif
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
#define gpuMemsetAsync hipMemsetAsync
#define gpuGetLastError hipGetLastError
#define gpuLaunchCooperativeKernel hipLaunchCooperativeKernel  // HIP 5.2 has no typed (Ex) form
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor

namespace port {
// [docs:hip-width]
// A wavefront is 64 lanes on GCN and CDNA (gfx8, gfx9: gfx90a) and 32 on RDNA (gfx1030, its
// default wave32; wave64 is refused above). The compiler defines the width for each offload
// target's device code; the host pass sees 64 whatever the target, so never use it in host
// code (the host asks hipDeviceProp_t::warpSize).
constexpr int kWaveSize = __AMDGCN_WAVEFRONT_SIZE;
using lane_mask = unsigned long long;  // __ballot returns 64 bits on every target, wave32 too
// HIP 5.2 has no *_sync shuffles and no __syncwarp: a wavefront runs its lanes in lockstep.
template <typename T>
__device__ T shfl_down(T value, int delta) { return __shfl_down(value, delta, kWaveSize); }
// [/docs:hip-width]

inline void check(gpuError_t err, const char* call) {
  if (err == hipSuccess) return;
  std::fprintf(stderr, "step10_hip: error: %s: %s\n", call, hipGetErrorString(err));
  std::exit(1);
}
// How many blocks of `kernel` fit on the GPU at once (CUs x blocks per CU).
template <typename Kernel>
unsigned resident_blocks(Kernel kernel, int threads) {
  int device = 0, cus = 0, per_cu = 0;
  check(hipGetDevice(&device), "hipGetDevice");
  check(hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, device), "hipDeviceGetAttribute");
  check(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, kernel, threads, 0), "hipOccupancyMaxActiveBlocks...");
  return unsigned(cus) * unsigned(per_cu);
}
// Enough blocks to cover n once, no more than fit at once, at least one (launch.cuh's, for HIP).
inline unsigned grid_for(size_t n, size_t per_block, unsigned resident) {
  const size_t need = (n + per_block - 1) / per_block;
  return unsigned(need < 1 ? 1 : need < resident ? need : resident);
}
}  // namespace port
#define GPU_CHECK(call) ::port::check((call), #call)

#else
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "launch.cuh"  // CUDA_CHECK, resident_blocks (cached), Launch

#define PORT_HIP 0
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
#define gpuMemsetAsync cudaMemsetAsync
#define gpuGetLastError cudaGetLastError
#define gpuLaunchCooperativeKernel cudaLaunchCooperativeKernel
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor

namespace port {
// 32 on every NVIDIA GPU. CUDA's warpSize says so too, but it is not a constant expression, and
// the loops below unroll on this constant (HIP 5.2's warpSize is one; see the HIP branch).
constexpr int kWaveSize = 32;  // wave-audit: allow (every NVIDIA warp is 32)
using lane_mask = unsigned;  // one bit per lane of a 32-lane warp
// Since Volta a warp's lanes may diverge: the shuffle names the lanes that take part.
template <typename T>
__device__ T shfl_down(T value, int delta) { return __shfl_down_sync(~lane_mask(0), value, delta); }

using harness::grid_for;
using harness::resident_blocks;
}  // namespace port
#define GPU_CHECK(call) CUDA_CHECK(call)
#endif

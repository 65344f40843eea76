// Workshop exercise 07 - normalise in one launch: grid.sync() and the cooperative launch
// (chapter 07, Cooperative grid).
//
// y = x / max|x|, so that y lies in [-1, 1]. Two phases that depend on each other: no
// element can be scaled before the maximum of ALL elements is known. With ordinary
// launches that is two kernels; here it is one kernel whose blocks wait for each other at
// cg::this_grid().sync(). That barrier is only safe when every block of the grid is on the
// GPU at once, so the kernel must be launched with cudaLaunchCooperativeKernel, which
// refuses a grid that cannot be co-resident instead of letting it hang.
//
// As given, phase 1 finds each thread's own max|x| and then forgets it, there is no grid
// barrier, the max is taken to be 1, and the launch is an ordinary <<<...>>>: y is a copy of x.
// Your job: TODO 1-3 in the kernel, TODO 4-5 in the launcher.
//
// Verification is exact: the host computes m = max|x| and y[i] = x[i] / m in float, and every
// y[i] must have the same bits. Both sides divide with IEEE round-to-nearest (nvcc's default
// -prec-div=true; --use_fast_math would break it), as step07_normalize does. (x = 3 x the
// harness's float input, so |x| < 3 and the max is never 1. Guard values sit before and
// after x, and y's own guard slots must stay untouched.)
//
//   make ex07 && ./ex07 --check --n 1,1000,2^20+1 --offset 0,3
//   ./ex07 --check --n 2^20 --blocks 1        a grid of one block: must still be right
//   ./ex07 --n 2^28                           timed: GB/s of 8 bytes per element (x read, y written:
//                                             what the problem moves; this kernel reads x twice)
//   bash ../scripts/check_exercise.sh 07
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "launch.cuh"    // CUDA_CHECK, Launch, grid sizes: the harness header to read
#include "run_step.cuh"  // main's harness: verify, time, report (not required reading)
#include "forced_grid.cuh"  // --blocks N: step 07's own flag (steps/step07_cooperative_grid)

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr float kAmplitude = 3.0f;  // x[i] = 3 * input_value<float>(seed, i)

// Every thread calls this with its own value; thread 0 gets the block's maximum. (Given.)
__device__ float block_max(float v) {
  __shared__ float warp_max[32];
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  const unsigned warp_id = threadIdx.x / 32, warps = blockDim.x / 32;
  v = cg::reduce(warp, v, cg::greater<float>());  // cg::greater: the larger of two
  if (warp.thread_rank() == 0) warp_max[warp_id] = v;
  __syncthreads();
  if (warp_id == 0) v = cg::reduce(warp, warp.thread_rank() < warps ? warp_max[warp.thread_rank()] : 0.0f, cg::greater<float>());
  return v;
}

// max_bits: the bits of the global max|x| as an unsigned int, 0 (= +0.0f) at the start.
// For floats >= 0 the order of the bit patterns, read as unsigned, is the order of the
// values, so atomicMax on the bits is a max on the floats.
__global__ void normalize_kernel(const float* __restrict__ x, size_t n, float* __restrict__ y, unsigned* max_bits) {
  const cg::grid_group grid = cg::this_grid();
  // Phase 1 (given): this thread's max|x| over its grid-stride share of x.
  float m = 0.0f;
  for (size_t i = grid.thread_rank(); i < n; i += grid.size()) m = fmaxf(m, fabsf(x[i]));
  // TODO 1: the block's max with block_max(m), then ONE atomicMax per block (thread 0) on
  //         max_bits, with the float's bits: __float_as_uint(value).
  // TODO 2: wait until every block has done its atomicMax: grid.sync(). Every thread of
  //         every block must reach it (not inside `if (threadIdx.x == 0)`).
  // TODO 3: the global max, read after the barrier: __uint_as_float(*max_bits). Phase 2
  //         divides by it, x[i] / max_abs, as the host does (x[i] * (1.0f / max_abs) rounds
  //         twice and differs from it in the last bit for many elements).
  (void)m;
  (void)max_bits;
  const float max_abs = 1.0f;
  // Phase 2 (given): scale.
  for (size_t i = grid.thread_rank(); i < n; i += grid.size()) y[i] = x[i] / max_abs;
}

// A grid too large to be co-resident is refused by the cooperative launch: exit 2 with a
// one-line message. Any other error: exit 1. (Given: wrap your launch in it.)
static void check_cooperative(cudaError_t err, unsigned blocks) {
  if (err == cudaErrorCooperativeLaunchTooLarge) {
    cudaGetLastError();  // clear it: the launch did not happen
    throw harness::UsageError("--blocks: " + std::to_string(blocks) + " blocks of " + std::to_string(kThreads) +
                              " threads cannot be co-resident on this GPU (cudaErrorCooperativeLaunchTooLarge)");
  }
  CUDA_CHECK(err);
}

// forced_blocks: --blocks N, the grid size a user asked for (0: automatic).
void normalize(const float* x, size_t n, float* y, unsigned* max_bits, unsigned forced_blocks, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(max_bits, 0, sizeof(unsigned), stream));  // the max starts at +0.0f
  // TODO 4: a grid that fits on the GPU at once: harness::resident_blocks(normalize_kernel,
  //         kThreads) (compute it once: `static const`), capped by ceil(n / kThreads).
  unsigned blocks = unsigned(std::min<size_t>(65535, (n + kThreads - 1) / kThreads));
  if (forced_blocks) blocks = forced_blocks;
  // TODO 5: launch it cooperatively. The runtime wants the ADDRESSES of the arguments:
  //           void* args[] = {&x, &n, &y, &max_bits};
  //           check_cooperative(cudaLaunchCooperativeKernel(normalize_kernel, dim3(blocks),
  //                                                         dim3(kThreads), args, 0, stream), blocks);
  //         (grid.sync() needs it: in a kernel launched with <<<...>>> it is an error, and on
  //         an H100 with CUDA 13.0 the kernel dies with "unspecified launch failure".)
  (void)check_cooperative;
  normalize_kernel<<<blocks, kThreads, 0, stream>>>(x, n, y, max_bits);
  CUDA_CHECK_LAUNCH();
}

// ---- Given: nothing to change below this line ----------------------------------------------

__global__ void fill_kernel(float* base, size_t lead, size_t n, size_t total, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x)
    base[i] = (i >= lead && i - lead < n) ? harness::input_value<float>(seed, i - lead) * kAmplitude
                                          : harness::guard_value<float>();
}

static uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Checks y[0..n) bit for bit against the host's m and x / m, and y's guard slots (all bits
// set before the run) against any write.
static harness::Verdict verify(const std::vector<float>& y_all, size_t lead, size_t n, uint64_t seed, float gpu_max) {
  float m = 0.0f;
  for (size_t i = 0; i < n; ++i) m = std::fmax(m, std::fabs(harness::input_value<float>(seed, i) * kAmplitude));
  size_t wrong = 0, first = 0;
  float want_first = 0;
  for (size_t i = 0; i < n; ++i) {
    const float want = harness::input_value<float>(seed, i) * kAmplitude / m;
    if (bits(y_all[lead + i]) != bits(want) && wrong++ == 0) {
      first = i;
      want_first = want;
    }
  }
  size_t guards_hit = 0;
  for (size_t i = 0; i < y_all.size(); ++i)
    if ((i < lead || i >= lead + n) && bits(y_all[i]) != 0xFFFFFFFFu) ++guards_hit;
  harness::Verdict v;
  char buf[320];
  if (wrong) {
    std::snprintf(buf, sizeof buf, "%zu of %zu wrong; y[%zu]: expected %.9g got %.9g (max|x|: host %.9g, GPU's max slot %.9g)",
                  wrong, n, first, double(want_first), double(y_all[lead + first]), double(m), double(gpu_max));
  } else if (guards_hit) {
    std::snprintf(buf, sizeof buf, "every y right, but %zu slot(s) outside y[0..n) were written", guards_hit);
  } else {
    v.ok = true;
    std::snprintf(buf, sizeof buf, "exact, max|x| = %.9g", double(m));
  }
  v.detail = buf;
  return v;
}

int main(int argc, char** argv) {
  const char* name = "ex07_normalize";
  harness::Options opt;
  harness::ForcedGrid forced;  // --blocks N (step 07's own flag: forced_grid.cuh)
  try {
    opt = harness::parse_args(argc, argv, 0, forced.groups());
  } catch (const harness::UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
    return 2;
  }
  if (opt.help) {
    std::printf("%s: y = x / max|x| in one cooperative launch, verified bit for bit, timed.\n"
                "float only (--dtype is ignored); --blocks N forces the grid size.\n%s",
                name, harness::usage_text(0, forced.groups()).c_str());
    return 0;
  }
  return harness::exit_code_of(name, [&] {
    if (int code = harness::open_device(opt.device, name); code >= 0) return code;
    const harness::DeviceInfo dev = harness::device_info(opt.device);
    const size_t max_n = *std::max_element(opt.sizes.begin(), opt.sizes.end());
    const size_t slots = harness::input_buffer_bytes(max_n) / sizeof(float);  // guards, offset room, guards
    float *d_x = nullptr, *d_y = nullptr;
    unsigned* d_max = nullptr;
    CUDA_CHECK(cudaMalloc(&d_x, slots * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, slots * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_max, sizeof(unsigned)));
    harness::Bench bench(opt, dev);
    const cudaStream_t s = bench.stream();
    std::printf("%s on %s (sm_%d%d, %d SMs), CUDA %s\n", name, dev.name.c_str(), dev.cc_major, dev.cc_minor, dev.sms,
                dev.cuda.c_str());
    if (opt.check_only) std::printf("%-5s %11s %3s  %-16s %s\n", "dtype", "n", "off", "variant", "check");
    else
      std::printf("median of %d timed runs; GB/s = 8 bytes per element / median (x read once, y written once: the "
                  "problem's bytes, as step07_normalize counts them; this kernel reads x twice)\n"
                  "%-5s %11s %3s  %-16s %9s %9s %8s %6s  %s\n", opt.reps, "dtype", "n", "off", "variant",
                  "median ms", "min ms", "GB/s", "%peak", "check");
    bool all_ok = true;
    for (size_t n : opt.sizes) {
      for (size_t offset : opt.offsets) {
        const size_t lead = 64 + offset, total = lead + n + 64;
        fill_kernel<<<1024, 256, 0, s>>>(d_x, lead, n, total, opt.seed);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemsetAsync(d_y, 0xFF, total * sizeof(float), s));
        normalize(d_x + lead, n, d_y + lead, d_max, forced.blocks, s);
        std::vector<float> y(total);
        unsigned max_bits = 0;
        CUDA_CHECK(cudaMemcpyAsync(y.data(), d_y, total * sizeof(float), cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaMemcpyAsync(&max_bits, d_max, sizeof(unsigned), cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        float gpu_max;
        std::memcpy(&gpu_max, &max_bits, 4);
        const harness::Verdict v = verify(y, lead, n, opt.seed, gpu_max);
        all_ok &= v.ok;
        const std::string check = (v.ok ? "ok " : "FAILED ") + v.detail;
        if (opt.check_only) {
          std::printf("%-5s %11zu %3zu  %-16s %s\n", "float", n, offset, "normalize", check.c_str());
          continue;
        }
        const harness::Timing t = bench.time({[&] { normalize(d_x + lead, n, d_y + lead, d_max, forced.blocks, s); }})[0];
        const double gbps = 8.0 * n / (t.median_ms * 1e6);
        std::printf("%-5s %11zu %3zu  %-16s %9.4f %9.4f %8.1f %5.1f%%  %s\n", "float", n, offset, "normalize",
                    t.median_ms, t.min_ms, gbps, 100.0 * gbps / dev.peak_gbps, check.c_str());
      }
    }
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_max));
    return harness::verdict_code(name, all_ok);
  });
}

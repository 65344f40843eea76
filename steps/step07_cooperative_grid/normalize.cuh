// The normalization case study (step 07's second program): scale an array to [-1, 1] by its
// largest magnitude, out[i] = x[i] / max_j |x_j|, into a float array, for both dtypes.
// Everything a normalize program needs besides its kernels: the operator (the division here,
// the max|x| key in abs_key.cuh; the same code on host and GPU), the elementwise pieces (key4,
// scale4, the aligned split, thread_scale), the input with guard values, a poisoned output
// with a guard slot on each side, exact per-element verification, CUB's baseline (its CUB
// call in normalize_cub.cu), and the runner behind run_problems (shape column "normalize").
// The floor is the harness's, as a copy.
//
// Bytes counted for GB/s: n x 4 read + n x 4 written, whatever a variant really moves (a
// two-pass design reads the input twice; the second read may come from L2 at small n). The
// copy floor moves exactly those bytes.
#pragma once

#include <cstring>

#include "abs_key.cuh"
#include "run_step.cuh"
#include "vector_reads.cuh"

namespace harness {

// ---- the operator -------------------------------------------------------------------------
// max|x| is taken over 32-bit unsigned keys ordered like |x|: abs_key, in abs_key.cuh.
HARNESS_HD inline float bits_float(uint32_t b) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(b);
#else
  float x;
  std::memcpy(&x, &b, 4);
  return x;
#endif
}

// out = x / m, m = max|x| given as its key; all zeros (m = 0) gives 0. Bit for bit the same on
// host and GPU, which is what lets every output element be verified exactly:
//  - int: float(int32 x) / float(m). Both conversions round to nearest even on both sides
//    (cvt.rn on the GPU; the C++ conversions under the default rounding mode on the host).
//  - float: x / m.
//  The division: nvcc's default -prec-div=true makes `/` the IEEE correctly rounded division
//  (div.rn.f32, denormals kept: -ftz=false), and the host's float division is IEEE too (SSE on
//  x86-64, FLT_EVAL_METHOD 0: no wider intermediate). One correctly rounded operation on the
//  same operands gives the same float. --use_fast_math would break this (approximate division,
//  flush to zero): the check would then fail, as it should, since the expression changed.
//  Why not x * (1 / m), one reciprocal per thread: two roundings, a different result.
HARNESS_HD inline float normalized(unsigned x, unsigned m) { return m == 0 ? 0.0f : float(int32_t(x)) / float(m); }
HARNESS_HD inline float normalized(float x, unsigned m) { return m == 0 ? 0.0f : x / bits_float(m); }

// Guard values around the input, chosen for this problem: a read outside [0, n) must raise m.
// The harness's int guard (0x12345679, about 3e8) is made to break sums and is smaller than a
// typical max|x| (near 2^31), so here ints get INT_MIN: |INT_MIN| = 2^31, the largest of all.
// Float keeps 1e30. At large n the true max is so close to 2^31 that float(m) rounds to 2^31
// anyway (some |x| within 64 of 2^31 is likely from about n = 2^25 on): over-reads are then
// invisible in int, which is why the small odd sizes of the tests matter.
template <typename T> HARNESS_HD constexpr T normalize_guard();
template <> HARNESS_HD constexpr unsigned normalize_guard<unsigned>() { return 0x80000000u; }
template <> HARNESS_HD constexpr float normalize_guard<float>() { return guard_value<float>(); }

template <typename T>
__global__ void normalize_guards_kernel(T* base, size_t lead, size_t n, size_t total) {
  for (size_t i = threadIdx.x; i < lead; i += blockDim.x) base[i] = normalize_guard<T>();
  for (size_t i = lead + n + threadIdx.x; i < total; i += blockDim.x) base[i] = normalize_guard<T>();
}

// ---- host reference and verification -----------------------------------------------------
// The key of max|x| over input_value<T>(seed, 0..n-1).
template <typename T>
unsigned reference_max_key(uint64_t seed, size_t n) {
  std::vector<unsigned> part(kHostWorkers, 0);
  on_host_cores(n, [&](size_t begin, size_t end, unsigned w) {
    unsigned m = 0;
    for (size_t i = begin; i < end; ++i) m = std::max(m, abs_key(input_value<T>(seed, i)));
    part[w] = m;
  });
  return *std::max_element(part.begin(), part.end());
}

inline std::string key_text(unsigned key, bool is_float) {
  char buf[48];
  if (is_float) std::snprintf(buf, sizeof buf, "%.9g", double(bits_float(key)));
  else std::snprintf(buf, sizeof buf, "%u", key);
  return buf;
}

// got: n + 2 words read back from out - 1: the slot before the output, out[0..n), the slot
// after. Every element must equal normalized(x_i, m) bit for bit; both slots must still hold
// the poison (all bits set, a NaN: no right output is ever NaN).
template <typename T>
Verdict verify_normalized(const std::vector<uint32_t>& got, uint64_t seed, size_t n, unsigned key) {
  constexpr bool is_float = std::is_same_v<T, float>;
  struct Tally {
    size_t wrong = 0, first = 0;
  };
  std::vector<Tally> tally(kHostWorkers);
  on_host_cores(n, [&](size_t begin, size_t end, unsigned w) {
    Tally t;
    for (size_t i = begin; i < end; ++i)
      if (float_bits(normalized(input_value<T>(seed, i), key)) != got[i + 1] && t.wrong++ == 0) t.first = i;
    tally[w] = t;
  });
  size_t wrong = 0, first = n;
  for (const auto& t : tally) {
    wrong += t.wrong;
    if (t.wrong) first = std::min(first, t.first);
  }
  Verdict v;
  char buf[240];
  const std::string m = key_text(key, is_float);
  if (wrong) {
    const float want = normalized(input_value<T>(seed, first), key), have = bits_float(got[first + 1]);
    std::snprintf(buf, sizeof buf, "%zu of %zu elements wrong; out[%zu]: expected %.9g (0x%08x) got %.9g (0x%08x); max|x| = %s",
                  wrong, n, first, double(want), float_bits(want), double(have), got[first + 1], m.c_str());
  } else if (got[0] != 0xFFFFFFFFu) {
    std::snprintf(buf, sizeof buf, "every element right, but the slot before the output was written");
  } else if (got[n + 1] != 0xFFFFFFFFu) {
    std::snprintf(buf, sizeof buf, "every element right, but the slot after the output was written");
  } else {
    v.ok = true;
    std::snprintf(buf, sizeof buf, "exact, all %zu elements; max|x| = %s", n, m.c_str());
  }
  v.detail = buf;
  return v;
}

// ---- the elementwise pieces (step 07's kernels and CUB's second pass below) ----------------
template <typename V>
__device__ unsigned key4(V v) {  // max |x| of four, as a key
  return max(max(abs_key(v.x), abs_key(v.y)), max(abs_key(v.z), abs_key(v.w)));
}
template <typename V>
__device__ float4 scale4(V v, unsigned m) {  // four outputs
  return make_float4(normalized(v.x, m), normalized(v.y, m), normalized(v.z, m), normalized(v.w, m));
}

// Where the 16-byte body lies: elements [0, head) and [tail_begin, n) are scalar, the
// `vectors` in between are 16-byte loads (and stores). Input and output must be aligned
// alike for one body to serve both; if they are not, everything is "tail" (scalar).
struct Split {
  size_t head, vectors, tail_begin;
};
__host__ __device__ inline Split split_for(const void* in, const void* out, size_t n) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(in) % 16;
  if (a != reinterpret_cast<uintptr_t>(out) % 16) return {0, 0, 0};
  size_t head = (16 - a) % 16 / 4;
  head = head < n ? head : n;
  const size_t vectors = (n - head) / 4;
  return {head, vectors, head + vectors * 4};
}

// out = normalized(in, m) over this thread's share, for `stride` threads numbered from 0;
// Batch vectors in flight per thread.
template <int Batch, typename T>
__device__ void thread_scale(const T* __restrict__ in, size_t n, Split s, unsigned m, float* __restrict__ out,
                             size_t thread, size_t stride) {
  using V = typename vector_reads::Vec4<T>::type;
  const V* body = reinterpret_cast<const V*>(in + s.head);
  float4* out_body = reinterpret_cast<float4*>(out + s.head);
  size_t i = thread;
  for (; i + (Batch - 1) * stride < s.vectors; i += Batch * stride) {
    V v[Batch];
#pragma unroll
    for (int b = 0; b < Batch; ++b) v[b] = body[i + b * stride];
#pragma unroll
    for (int b = 0; b < Batch; ++b) out_body[i + b * stride] = scale4(v[b], m);
  }
  for (; i < s.vectors; i += stride) out_body[i] = scale4(body[i], m);
  for (size_t j = thread; j < s.head; j += stride) out[j] = normalized(in[j], m);
  for (size_t j = s.tail_begin + thread; j < n; j += stride) out[j] = normalized(in[j], m);
}

// The harness's kernel, CUB's second pass: out[i] = normalized(in[i], *key), elementwise, four
// vectors in flight per thread (16-byte where input and output are aligned alike).
constexpr int kMapThreads = 1024;

template <typename T>
__global__ void __launch_bounds__(kMapThreads) normalize_map_kernel(const T* __restrict__ in, size_t n, const unsigned* key_ptr,
                                                                  float* __restrict__ out) {
  const unsigned key = *key_ptr;  // written by the previous kernel: a plain load
  thread_scale<4>(in, n, split_for(in, out, n), key, out, blockIdx.x * size_t(blockDim.x) + threadIdx.x,
                  size_t(gridDim.x) * blockDim.x);
}

template <typename T>
void launch_normalize_map(const T* in, size_t n, const unsigned* key, float* out, cudaStream_t s) {
  static const unsigned resident = resident_blocks(normalize_map_kernel<T>, kMapThreads);
  const size_t per_block = size_t(kMapThreads) * 16;  // elements a block moves per iteration
  normalize_map_kernel<T><<<grid_for(n, per_block, resident), kMapThreads, 0, s>>>(in, n, key, out);
  CUDA_CHECK_LAUNCH();
}

// CUB's baseline: DeviceReduce::Max over the keys (a thrust::transform_iterator applies
// abs_key as CUB loads), then the elementwise kernel above. Temporary storage and the key
// word are allocated here, outside timing; 64-bit size above INT32_MAX elements.
template <typename T>
class CubMaxAbsNormalize {
 public:
  ~CubMaxAbsNormalize() {
    cudaFree(temp_);
    cudaFree(key_);
  }
  std::function<void()> prepare(const T* in, size_t n, float* out, cudaStream_t s) {
    if (!key_) CUDA_CHECK(cudaMalloc(&key_, sizeof(unsigned)));
    size_t need = 0;
    call(nullptr, need, in, n, key_, s);
    grow_buffer(temp_, bytes_, need);
    return [=, temp = temp_, key = key_] {
      size_t b = need;
      call(temp, b, in, n, key, s);
      launch_normalize_map<T>(in, n, key, out, s);
    };
  }

 private:
  static void call(void* temp, size_t& bytes, const T* in, size_t n, unsigned* key, cudaStream_t s) {
    CUDA_CHECK(cub_max_abs_key(temp, bytes, in, n, key, s));
  }
  void* temp_ = nullptr;
  unsigned* key_ = nullptr;
  size_t bytes_ = 0;
};

// ---- variants and the runner --------------------------------------------------------------
// in: n elements; out: n floats. ctx.scratch: at least 1 MiB, for the variant's own use
// (per-block slots, a key word); nothing in it survives from one launch to the next.
template <typename T>
using NormalizeLauncher = std::function<void(const T* in, size_t n, float* out, const Launch& ctx)>;

struct NormalizeVariant : TypedLauncher<NormalizeLauncher> {
  std::string name, about;
  template <class F>
  NormalizeVariant(std::string name_, std::string about_, F f) : TypedLauncher(f), name(std::move(name_)), about(std::move(about_)) {}
};

// The problem for run_problems: input and output with guards for the largest n, a 1 MiB
// scratch for the variants; max|x|'s key made once per size and dtype (the same for every offset).
class Normalize : public Problem {
 public:
  explicit Normalize(std::vector<NormalizeVariant> variants)
      : Problem("normalize", "scale an array to [-1, 1] by its max |x| (float output), every element verified exactly",
                variants),
        variants_(std::move(variants)) {}
  ~Normalize() override {
    cudaFree(in_);
    cudaFree(out_);
    cudaFree(scratch_);
  }
  size_t bytes_needed(const Options& opt, std::string& what) const override {
    what = std::to_string(max_n(opt)) + " elements in and out";
    return 2 * input_buffer_bytes(max_n(opt)) + kScratchBytes + (size_t(64) << 20);
  }
  void allocate(const Options& opt) override {
    seed_ = opt.seed;
    CUDA_CHECK(cudaMalloc(&in_, input_buffer_bytes(max_n(opt))));
    CUDA_CHECK(cudaMalloc(&out_, input_buffer_bytes(max_n(opt))));
    CUDA_CHECK(cudaMalloc(&scratch_, kScratchBytes));
  }
  Case make_case(const std::string& dtype, size_t n, size_t, size_t offset, const Launch& ctx) override {
    return dtype == "int" ? make<unsigned>(n, offset, ctx) : make<float>(n, offset, ctx);
  }

 private:
  static constexpr size_t kScratchBytes = size_t(1) << 20;
  template <typename T>
  Case make(size_t n, size_t offset, Launch ctx) {
    ctx.scratch = scratch_;
    ctx.scratch_bytes = kScratchBytes;
    const std::pair<bool, size_t> key_for{std::is_integral_v<T>, n};
    if (key_for != key_for_) key_ = reference_max_key<T>(seed_, n), key_for_ = key_for;
    const cudaStream_t s = ctx.stream;
    // Input and output both start `offset` elements past a 256-byte boundary, 256 bytes
    // after the start of their buffers: aligned alike, so the 16-byte paths are the ones tested.
    const size_t lead = kGuardElements + offset;
    T* in = place_input<T>(in_, n, offset, seed_, s);
    normalize_guards_kernel<T><<<1, 256, 0, s>>>(in - lead, lead, n, lead + n + kGuardElements);
    CUDA_CHECK_LAUNCH();
    float* out = static_cast<float*>(out_) + lead;
    Case c;
    c.n = n;
    c.shape = "normalize";
    c.bytes = 2 * n * sizeof(float);
    // One run on a poisoned output (out[-1] .. out[n], all bits set), then every element.
    c.poison = [=] { CUDA_CHECK(cudaMemsetAsync(out - 1, 0xFF, (n + 2) * sizeof(float), s)); };
    c.verify = [=, seed = seed_, key = key_] {
      std::vector<uint32_t> got(n + 2);
      CUDA_CHECK(cudaMemcpyAsync(got.data(), out - 1, (n + 2) * sizeof(float), cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      return verify_normalized<T>(got, seed, n, key);
    };
    if constexpr (std::is_same_v<T, unsigned>) c.cub = cub_int_.prepare(in, n, out, s);
    else c.cub = cub_float_.prepare(in, n, out, s);
    // The floor copies: this problem reads n and writes n (a read-only floor would be ~2x faster).
    c.floor = floor_contender("copy", in, n, out, n, s);
    for (const NormalizeVariant& v : variants_)
      if (const VariantName* name = chosen_name(v.name))
        c.variants.push_back({name, [&v, in, n, out, ctx] { v.launcher<T>()(in, n, out, ctx); }});
    return c;
  }
  std::vector<NormalizeVariant> variants_;
  uint64_t seed_ = 0;
  unsigned key_ = 0;
  std::pair<bool, size_t> key_for_{false, 0};  // the dtype and n of key_ (n = 0: none yet)
  void *in_ = nullptr, *out_ = nullptr, *scratch_ = nullptr;
  CubMaxAbsNormalize<unsigned> cub_int_;
  CubMaxAbsNormalize<float> cub_float_;
};

inline std::shared_ptr<Problem> normalize_problem(const char*, std::vector<NormalizeVariant> variants) {
  return std::make_shared<Normalize>(std::move(variants));
}

}  // namespace harness

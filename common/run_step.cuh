// NOT REQUIRED READING. The program behind a step's main(): run_step (an array sum) and
// run_problems (rows, a filter, a normalization) parse the flags, open the GPU, print the
// header, then run ONE loop, run_problem, over dtypes x sizes x shapes x offsets: CUB, the
// floor and the chosen variants, each verified on a poisoned output, then timed in turns
// (bench.cuh). A problem kind is a small class (Problem) that places one case's input, says
// how a run is checked and binds CUB, the floor and its variants to it.
#pragma once

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "bench.cuh"

namespace harness {

// ---- variants ------------------------------------------------------------------------------
// A variant as --help lists it and --variant picks it, with the exceptions named (by field):
struct VariantName {
  std::string name, about;
  bool in_all = true;          // false: runs only when named with --variant (a pitfall)
  bool expect_correct = true;  // false: a demonstration whose answer is wrong by design
  // Why --variant all leaves it out this time (a note says so), "" when it runs; set by a
  // program whose own flags rule it out (step 09's dims_2 under --cluster). Empty: it runs.
  std::function<std::string()> skip_in_all_why;
  VariantName(std::string name_, std::string about_) : name(std::move(name_)), about(std::move(about_)) {}
};

// A variant's launcher for unsigned (the "int" dtype, summed modulo 2^32) and float, made from
// one generic lambda. L<T> is the problem's launcher type.
template <template <typename> class L>
struct TypedLauncher {
  L<unsigned> run_int;
  L<float> run_float;
  template <class F>
  explicit TypedLauncher(F f) : run_int(f), run_float(f) {}
  template <typename T>
  const L<T>& launcher() const {
    if constexpr (std::is_same_v<T, unsigned>) return run_int;
    else return run_float;
  }
};

// The element type behind a launcher's `in` (const T*), for a step's generic lambdas.
template <typename Ptr>
using elem_t = std::remove_const_t<std::remove_pointer_t<Ptr>>;

template <typename T>
using Launcher = std::function<void(const T* in, size_t n, T* out, const Launch& ctx)>;

// One way of reducing an array to one sum. The exceptions are named, not positional:
//   Variant("plain", "...", f).wrong_by_design()   its answer is wrong: that is the lesson
//   Variant("sync_no_coop", "...", f).by_name_only()  left out of --variant all
// and, set by a program's own flags, skip_in_all_why (VariantName).
struct Variant : VariantName, TypedLauncher<Launcher> {
  template <class F>
  Variant(std::string name_, std::string about_, F f) : VariantName(std::move(name_), std::move(about_)), TypedLauncher(f) {}
  Variant& wrong_by_design() { return expect_correct = false, *this; }
  Variant& by_name_only() { return in_all = false, *this; }
};

// What --help lists under one heading: a problem's name (empty: a program's only list) and its variants.
struct VariantGroup {
  std::string problem, about;
  std::vector<VariantName> variants;
};

// --variant all|NAME[,NAME...]: whether `v` runs. Under `all`, a variant whose skip_in_all_why()
// gives a reason is left out, with a note (named, it runs, and its launcher may refuse).
inline bool chosen(const Options& opt, const VariantName& v) {
  const auto& names = opt.variants;
  if (std::find(names.begin(), names.end(), v.name) != names.end()) return true;
  if (names != std::vector<std::string>{"all"} || !v.in_all) return false;
  if (const std::string why = v.skip_in_all_why ? v.skip_in_all_why() : ""; !why.empty()) {
    note_once("note: " + v.name + " skipped: " + why);
    return false;
  }
  return true;
}

// Parses the flags the program reads (`reads`, cli.hpp's ExtraFlags, and its `own` groups),
// checks every --variant name against the program's variants, then `more(opt)`. --help
// prints `intro`, the variants and the flags. Returns 2 after one line on stderr for a usage
// error, 0 after --help, else -1 with `opt` filled.
inline int parse_program(int argc, const char* const* argv, const char* step, unsigned reads, const std::string& intro,
                         const std::vector<VariantGroup>& groups, Options& opt,
                         const std::function<void(const Options&)>& more = {}, const std::vector<FlagGroup>& own = {}) {
  try {
    opt = parse_args(argc, argv, reads, own);
    std::string names;
    std::set<std::string> known{"all"};
    for (const auto& g : groups)
      for (const auto& v : g.variants) known.insert(v.name), names += v.name + ", ";
    for (const auto& name : opt.variants)
      if (!known.count(name) || (name == "all" && opt.variants.size() > 1))
        throw UsageError("--variant: unknown '" + name + "' (choose from " + names + "all)");
    if (more) more(opt);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", step, e.what());
    return 2;
  }
  if (!opt.help) return -1;
  std::printf("%s: %s\nVariants:\n", step, intro.c_str());
  for (const auto& g : groups) {
    if (!g.problem.empty()) std::printf(" %s: %s\n", g.problem.c_str(), g.about.c_str());
    for (const auto& v : g.variants) std::printf("  %-16s %s\n", v.name.c_str(), v.about.c_str());
  }
  std::printf("%s", usage_text(reads, own).c_str());
  return 0;
}

// ---- the GPU ------------------------------------------------------------------------------
// Visible GPUs into `count`: 77 after one line on stdout when none is usable, else -1.
inline int count_gpus(const char* step, int& count) {
  count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    std::printf("%s: no usable CUDA GPU (%s); skipping.\n", step,
                e != cudaSuccess ? cudaGetErrorString(e) : "no device found");
    return 77;
  }
  return -1;
}

// Exit code when the program cannot go on: 77 without a usable GPU (one line on stdout), 2 for
// a --device out of range, 1 for a binary not built for this GPU; -1 with the device selected.
inline int open_device(int device, const char* step) {
  int count = 0;
  if (int code = count_gpus(step, count); code >= 0) return code;
  if (device >= count) {
    std::fprintf(stderr, "%s: error: --device: %d is out of range (this machine has %d GPU(s))\n", step, device, count);
    return 2;
  }
  CUDA_CHECK(cudaSetDevice(device));
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, fill_input_kernel<unsigned>) == cudaErrorNoKernelImageForDevice) {
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    std::fprintf(stderr, "%s: error: not built for this GPU (sm_%d%d); reconfigure with -DCMAKE_CUDA_ARCHITECTURES=native\n",
                 step, p.major, p.minor);
    return 1;
  }
  return -1;
}

// True, after "STEP: GPU d cannot launch WHAT; skipping.", when GPU `device` lacks a feature
// the program needs; it then exits 77, like a machine without a GPU.
inline bool lacks_feature(int device, const char* step, cudaDeviceAttr attr, const char* what) {
  int count = 0, has = 1;
  if (cudaGetDeviceCount(&count) != cudaSuccess || device >= count) return false;
  if (cudaDeviceGetAttribute(&has, attr, device) != cudaSuccess || has) return false;
  std::printf("%s: GPU %d cannot launch %s; skipping.\n", step, device, what);
  return true;
}
// Cooperative launches (steps 07-08): every GPU since Pascal; a virtualised one may not.
inline bool cooperative_unsupported(int device, const char* step) {
  return lacks_feature(device, step, cudaDevAttrCooperativeLaunch, "cooperative kernels (cudaDevAttrCooperativeLaunch = 0)");
}
using Requirement = bool (*)(int device, const char* step);

inline size_t free_gpu_bytes() {
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

// A --n error (exit 2) when `bytes` (+ 256 MiB of slack) of the GPU's memory are not free.
inline void require_memory(size_t bytes, const std::string& what) {
  const size_t free_b = free_gpu_bytes();
  if (bytes + (size_t(256) << 20) > free_b) {
    char buf[240];
    std::snprintf(buf, sizeof buf, "--n: %s would need %.2f GiB of GPU memory; %.2f GiB are free", what.c_str(),
                  bytes / 1073741824.0, free_b / 1073741824.0);
    throw UsageError(buf);
  }
}

// The lines above the results: device, method, column names.
inline void print_header(const Options& opt, const DeviceInfo& dev, const char* step) {
  std::printf("%s on %s (sm_%d%d, %d SMs), CUDA %s, theoretical peak %.0f GB/s\n", step, dev.name.c_str(),
              dev.cc_major, dev.cc_minor, dev.sms, dev.cuda.c_str(), dev.peak_gbps);
  if (opt.check_only) {
    std::printf("check only: CUB and each variant once on a poisoned output, against the host reference\n"
                "%-5s %11s %3s  %-16s %s\n", "dtype", "n", "off", "variant", "check");
    return;
  }
  if (opt.batch > 1)
    std::printf("per launch: median, min-max of %d timed batches of %d launches back to back (a batch's time / %d)\n"
                "after %d warm-up; L2 flushed before each batch, not between its launches; GB/s = bytes to move / median;\n",
                opt.reps, opt.batch, opt.batch, opt.warmup);
  else
    std::printf("median and min-max of %d timed runs after %d warm-up; L2 flushed before each; GB/s = bytes to move / median;\n",
                opt.reps, opt.warmup);
  std::printf("xCUB = CUB time / this time (higher is faster); xfloor = this time / the floor's (floor = 1: it reads\n"
              "the input and writes the output, nothing else)\n"
              "%-5s %11s %3s  %-16s %9s %*s %8s %6s %6s %7s  %s\n",
              "dtype", "n", "off", "variant", "median ms", spread_width(opt.batch), "min-max ms", "GB/s", "%peak",
              "xCUB", "xfloor", "check");
}

// Inside a catch: the exception in flight as one line on stderr; exit 2 for a UsageError (e.g.
// a flag's value only a launch can judge, as step 07's --blocks), else 1.
inline int exit_code_of_error(const char* step) {
  try {
    throw;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", step, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", step, e.what());
    return 1;
  }
}
// body() returns the exit code; an error thrown on the way ends as exit_code_of_error says.
template <class Body>
int exit_code_of(const char* step, Body&& body) {
  try {
    return body();
  } catch (...) {
    return exit_code_of_error(step);
  }
}

// 0 when every result that should be right was right, else one line and 1.
inline int verdict_code(const char* step, bool ok) {
  if (!ok) std::printf("%s: FAILED: a result that should be right was wrong (see above)\n", step);
  return ok ? 0 : 1;
}

// ---- the one loop ----------------------------------------------------------------------------
// One case of a problem (a dtype, n, shape and offset), its input placed, all bound to it.
struct Case {
  size_t n = 0;                 // elements, as the row prints them (rows x cols for a matrix)
  std::string shape = "array";  // "cols=16", "pass=50%", "normalize": the CSV's shape column
  size_t bytes = 0;             // what the problem must move: its reads and its writes
  // A checked run is poison(), the launch, verify(): the output poisoned (all bits set) first.
  std::function<void()> poison;
  std::function<Verdict()> verify;
  std::function<void()> cub;    // the library a user would pick, on the same data
  Contender floor;
  std::vector<std::pair<const VariantName*, std::function<void()>>> variants;
};

// A problem kind: its variants' names, its shapes, its buffers and its cases.
class Problem {
 public:
  VariantGroup names;
  virtual ~Problem() = default;
  virtual size_t shape_count(const Options&) const { return 1; }
  // Flags only this problem reads (step 06's --pass-rate), parsed into the problem itself.
  virtual std::vector<FlagGroup> own_flags() { return {}; }
  // The GPU memory the largest case needs (exit 2 when short) and its name; then the buffers.
  virtual size_t bytes_needed(const Options& opt, std::string& what) const = 0;
  virtual void allocate(const Options& opt) = 0;
  // `ctx`: the stream and the settings of the flags; scratch is the problem's.
  virtual Case make_case(const std::string& dtype, size_t n, size_t shape, size_t offset, const Launch& ctx) = 0;

 protected:
  Problem() = default;
  // A problem named `problem` whose variants (anything with .name and .about) --help lists as they are.
  template <class V>
  Problem(std::string problem, std::string about, const std::vector<V>& variants) {
    names.problem = std::move(problem);
    names.about = std::move(about);
    for (const auto& v : variants) names.variants.emplace_back(v.name, v.about);
  }

  // The variant called `name` if it runs (run_problems leaves only the chosen in `names`), else nullptr.
  const VariantName* chosen_name(const std::string& name) const {
    for (const auto& v : names.variants)
      if (v.name == name) return &v;
    return nullptr;
  }
};

inline size_t max_n(const Options& opt) { return *std::max_element(opt.sizes.begin(), opt.sizes.end()); }

// Every case of problem `p`: CUB and each chosen variant verified on a poisoned output (with
// --repeat-results K, K more times), then, unless --check, all timed in turns and reported.
// An error names the variant and the case. False when a result that should be right was wrong.
inline bool run_problem(const Options& opt, Bench& bench, const char* step, Problem& p, const Launch& ctx) {
  bool all_ok = true;
  for (const std::string& dtype : opt.dtypes)
    for (size_t n : opt.sizes)
      for (size_t shape = 0; shape < p.shape_count(opt); ++shape)
        for (size_t offset : opt.offsets) {
          std::string running = "cub";
          try {
            Case c = p.make_case(dtype, n, shape, offset, ctx);
            c.poison(), c.cub();
            const Verdict cv = c.verify();
            all_ok &= cv.ok;
            Contender cub;
            cub.step = cub.name = "cub";
            cub.launch = c.cub;
            cub.check = check_text(cv);
            cub.ok = cv.ok;
            std::vector<Contender> contenders{cub};
            if (!opt.check_only) contenders.push_back(c.floor);
            for (const auto& [v, launch] : c.variants) {
              running = v->name;
              c.poison(), launch();
              Verdict verdict = c.verify();
              std::string text = check_text(verdict, v->expect_correct);
              if (verdict.ok && !v->expect_correct) text = "right this time, but unreliable (see the docs): " + verdict.detail;
              std::string results;  // --repeat-results: each result verified, all printed
              std::set<std::string> distinct;
              for (int r = 0; r < opt.repeat_results && !verdict.got.empty(); ++r) {
                c.poison(), launch();
                const Verdict rv = c.verify();
                results += " " + rv.got;
                distinct.insert(rv.got);
                if (!rv.ok && v->expect_correct)
                  verdict.ok = false, text = "FAILED on repeat " + std::to_string(r + 1) + ": " + rv.detail;
              }
              if (!results.empty())
                std::printf("%-5s %11zu %3zu  %-16s results of %d runs:%s  -> %zu distinct\n", dtype.c_str(), c.n, offset,
                            v->name.c_str(), opt.repeat_results, results.c_str(), distinct.size());
              if (!verdict.ok && v->expect_correct) all_ok = false;
              Contender contender;
              contender.step = step;
              contender.name = v->name;
              contender.launch = launch;
              contender.check = text;
              contender.ok = verdict.ok;
              contenders.push_back(contender);
            }
            running = "timing";
            finish(opt, bench, contenders, dtype.c_str(), c.n, offset, c.bytes, c.shape);
          } catch (const UsageError&) {
            throw;  // names its flag already
          } catch (const std::exception& e) {
            throw CudaError(running + ", " + dtype + ", n = " + std::to_string(n) + ", offset " + std::to_string(offset) +
                            ": " + e.what());
          }
        }
  return all_ok;
}

// The program behind a step of other problem kinds (step 06's rows and filter, step 07's
// normalization, step 09's rows). `reads`: its ExtraFlags (cli.hpp); `needs`: a GPU feature
// it cannot run without (one line, exit 77); `own_flags`: the program's own flags (cli.hpp's
// OwnFlags, declared in its folder), which its launchers find in their Launch.
inline int run_problems(int argc, char** argv, const char* step, const std::vector<std::shared_ptr<Problem>>& problems,
                        unsigned reads, Requirement needs = nullptr, const char* intro = nullptr,
                        OwnFlags* own_flags = nullptr) {
  std::vector<VariantGroup> groups;
  std::vector<FlagGroup> own;
  for (const auto& p : problems) {
    groups.push_back(p->names);
    for (auto& g : p->own_flags()) own.push_back(std::move(g));
  }
  if (own_flags)
    for (auto& g : own_flags->groups()) own.push_back(std::move(g));
  const std::string about = intro ? intro
                                  : std::string(problems.size() > 1 ? "several problem shapes" : "a problem of its own shape") +
                                        " on the GPU, verified and timed against CUB.";
  Options opt;
  if (int code = parse_program(argc, argv, step, reads, about, groups, opt, {}, own); code >= 0) return code;
  try {  // not exit_code_of: two calls fewer between main and a launcher
    if (needs && needs(opt.device, step)) return 77;
    if (int code = open_device(opt.device, step); code >= 0) return code;
    const DeviceInfo dev = device_info(opt.device);
    std::vector<Problem*> run;
    for (const auto& p : problems) {
      std::vector<VariantName>& vs = p->names.variants;
      vs.erase(std::remove_if(vs.begin(), vs.end(), [&](const VariantName& v) { return !chosen(opt, v); }), vs.end());
      if (!vs.empty()) run.push_back(p.get());
    }
    for (Problem* p : run) {  // a --n too large: one line, exit 2, before anything is printed
      std::string what;
      require_memory(p->bytes_needed(opt, what), what);
    }
    print_header(opt, dev, step);
    Bench bench(opt, dev);
    Launch ctx;  // the scratch: each problem's own (make_case)
    ctx.stream = bench.stream();
    ctx.own = own_flags;
    bool ok = true;
    for (Problem* p : run) {
      p->allocate(opt);
      ok &= run_problem(opt, bench, step, *p, ctx);
    }
    return verdict_code(step, ok);
  } catch (...) {
    return exit_code_of_error(step);
  }
}

// The array sum of steps 00-05, 07 and 09: one value from n elements, CUB's DeviceReduce::Sum
// the baseline, the floor a plain read. Scratch: n/32 x 8 bytes + 1 MiB for the variants.
class ArraySum : public Problem {
 public:
  explicit ArraySum(const std::vector<Variant>& variants) : variants_(variants) {
    for (const auto& v : variants) names.variants.push_back(v);
  }
  ~ArraySum() override {
    cudaFree(in_);
    cudaFree(scratch_);
    cudaFree(out_);
  }
  size_t bytes_needed(const Options& opt, std::string& what) const override {
    what = std::to_string(max_n(opt)) + " elements";
    return input_buffer_bytes(max_n(opt)) + scratch_bytes(opt);
  }
  void allocate(const Options& opt) override {
    CUDA_CHECK(cudaMalloc(&in_, input_buffer_bytes(max_n(opt))));
    CUDA_CHECK(cudaMalloc(&scratch_, scratch_bytes(opt)));
    CUDA_CHECK(cudaMalloc(&out_, 256));
    scratch_size_ = scratch_bytes(opt);
    seed_ = opt.seed;
  }
  Case make_case(const std::string& dtype, size_t n, size_t, size_t offset, const Launch& ctx) override {
    return dtype == "int" ? make<unsigned>(n, offset, ctx) : make<float>(n, offset, ctx);
  }

 private:
  static size_t scratch_bytes(const Options& opt) { return max_n(opt) / 32 * 8 + (size_t(1) << 20); }
  template <typename T>
  Case make(size_t n, size_t offset, Launch ctx) {
    ctx.scratch = scratch_;
    ctx.scratch_bytes = scratch_size_;
    const cudaStream_t s = ctx.stream;
    const T* in = place_input<T>(in_, n, offset, seed_, s);
    T* out = static_cast<T*>(out_);
    const Reference ref = reference_sum<T>(seed_, n);
    Case c;
    c.n = n;
    c.bytes = n * sizeof(T);
    c.poison = [=] { CUDA_CHECK(cudaMemsetAsync(out, 0xFF, sizeof(T), s)); };  // all bits set
    c.verify = [=] {
      T got{};
      CUDA_CHECK(cudaMemcpyAsync(&got, out, sizeof(T), cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      Verdict v = verify_result(got, ref, n);
      char text[32];
      if constexpr (std::is_same_v<T, unsigned>) std::snprintf(text, sizeof text, "%u", got);
      else std::snprintf(text, sizeof text, "%.9g", double(got));
      v.got = text;
      return v;
    };
    if constexpr (std::is_same_v<T, unsigned>) c.cub = cub_int_.prepare(in, n, out, s);
    else c.cub = cub_float_.prepare(in, n, out, s);
    c.floor = floor_contender("read", in, n, out + 1, 0, s);
    for (const Variant& v : variants_)
      if (chosen_name(v.name)) c.variants.push_back({&v, [&v, in, n, out, ctx] { v.launcher<T>()(in, n, out, ctx); }});
    return c;
  }
  std::vector<Variant> variants_;
  void *in_ = nullptr, *scratch_ = nullptr, *out_ = nullptr;
  size_t scratch_size_ = 0;
  uint64_t seed_ = 0;
  CubSum<unsigned> cub_int_;
  CubSum<float> cub_float_;
};

// The program behind an array-sum step's main(). `reads`, `needs`, `own_flags`: as run_problems'.
inline int run_step(int argc, char** argv, const char* step, const std::vector<Variant>& variants,
                    unsigned reads = kBatch, Requirement needs = nullptr, OwnFlags* own_flags = nullptr) {
  return run_problems(argc, argv, step, {std::make_shared<ArraySum>(variants)}, reads, needs,
                      "sum an array on the GPU, verify it, time it against CUB.", own_flags);
}

}  // namespace harness

// Command line shared by every step. Host-only C++ so the host tests can include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace harness {

// A bad flag or value. The message always starts with the flag's name; main exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The shared flags a program may read beyond the core ones (--n, --dtype, --variant, --reps,
// --warmup, --check, --csv, --device, --seed, --offset, --repeat-results, --help), one bit each,
// for the flags of two or more steps: any other flag is a usage error (exit 2), and --help lists
// only the program's own. A flag of one program alone lives in its folder (OwnFlags, below).
enum ExtraFlags : unsigned {
  kBatch = 1u << 0,  // --batch
  kCols = 1u << 1,   // --cols
};

struct Options {
  std::vector<size_t> sizes{size_t(1) << 28};  // --n, comma separated
  std::vector<std::string> dtypes{"int"};      // --dtype int|float|all
  std::vector<std::string> variants{"all"};    // --variant NAME[,NAME...]|all
  int reps = 20;
  int warmup = 3;
  int batch = 1;                               // --batch B: launches per pair of timing events
  bool check_only = false;                     // --check: verify, no timing
  std::string csv;                             // --csv FILE: append rows
  int device = 0;
  uint64_t seed = 12345;
  std::vector<size_t> offsets{0};              // --offset: input pointer offset in elements
  int repeat_results = 0;                      // --repeat-results K: run K times, print results
  bool help = false;
  // Read only by the programs whose ExtraFlags include it:
  std::vector<size_t> cols{1, 4, 16, 32, 256, 4096, size_t(1) << 16};  // --cols: row lengths (segmented)
};

// "1048576", "2^20", "1<<20", "4M", "1G", optionally followed by "+7" or "-1".
inline size_t parse_size(const std::string& text, const std::string& flag) {
  auto fail = [&](const std::string& why) -> UsageError {
    return UsageError(flag + ": " + why + " (got '" + text + "'; try 1048576, 2^20, 1<<20, 4M, 1G, 2^20+1)");
  };
  size_t pos = 0;
  auto number = [&]() -> uint64_t {
    size_t start = pos;
    uint64_t v = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (v > (UINT64_C(1) << 50)) throw fail("too large");
      v = v * 10 + uint64_t(text[pos++] - '0');
    }
    if (pos == start) throw fail("expected a number");
    return v;
  };
  const uint64_t limit = UINT64_C(1) << 40;
  uint64_t value = number();
  if (text.compare(pos, 1, "^") == 0 || text.compare(pos, 2, "<<") == 0) {
    bool power = text[pos] == '^';
    pos += power ? 1 : 2;
    uint64_t e = number();
    if (power && value != 2) throw fail("only powers of two are accepted");
    if (power) value = 1;  // 2^e is 1 << e
    if (e > 40 || value > (limit >> e)) throw fail("too large (at most 2^40)");
    value <<= e;
  } else if (pos < text.size() && (text[pos] == 'K' || text[pos] == 'M' || text[pos] == 'G')) {
    value <<= text[pos] == 'K' ? 10 : text[pos] == 'M' ? 20 : 30;
    ++pos;
  }
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    bool plus = text[pos++] == '+';
    uint64_t d = number();
    if (!plus && d >= value) throw fail("must be at least 1");
    value = plus ? value + d : value - d;
  }
  if (pos != text.size()) throw fail("unexpected '" + text.substr(pos) + "'");
  if (value > limit) throw fail("too large (at most 2^40)");
  return size_t(value);
}

inline std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// A comma-separated list of sizes, each at least 1 (--n, --cols).
inline std::vector<size_t> parse_counts(const std::string& text, const std::string& flag) {
  std::vector<size_t> counts;
  for (const auto& s : split_commas(text)) {
    const size_t c = parse_size(s, flag);
    if (c == 0) throw UsageError(flag + ": must be at least 1 (got '" + s + "')");
    counts.push_back(c);
  }
  return counts;
}

inline int parse_int(const std::string& text, const std::string& flag, int lo, int hi) {
  size_t used = 0;
  long v = 0;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < lo || v > hi)
    throw UsageError(flag + ": expected a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + " (got '" + text + "')");
  return int(v);
}

// Calls on_flag(flag, take) for every flag; take() returns its value ("--n 4M" or "--n=4M")
// or throws "FLAG: missing value".
template <class OnFlag>
void scan_flags(int argc, const char* const* argv, OnFlag&& on_flag) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string value;
    bool inline_value = false;
    if (size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      inline_value = true;
    }
    auto take = [&]() -> std::string {
      if (inline_value) return value;
      if (i + 1 >= argc) throw UsageError(flag + ": missing value");
      return argv[++i];
    };
    on_flag(flag, take);
  }
}

// ---- flag groups ------------------------------------------------------------------------------
// A group of flags: names, --help lines, how a value is parsed, an optional check once the
// command line is read. A program reads the core group, its ExtraFlags' and its own groups.
// Fill one by field name (FlagGroup g; g.flags = {...}; g.help = ...; g.parse = ...).
using TakeValue = std::function<std::string()>;

struct FlagGroup {
  explicit FlagGroup() = default;  // filled by field name: a positional {...} does not compile
  unsigned bit = 0;  // its ExtraFlags bit; 0 for the core and a program's own, which are always read
  std::vector<std::string> flags;
  const char* help = "";  // its --help lines
  std::function<void(const std::string& flag, const TakeValue& take, Options& o)> parse;
  std::function<void(Options& o)> check;  // empty: nothing to check across the group's flags
};

// A program's own flags, declared in its folder (step 07's --blocks, step 09's --cluster): a
// struct derived from OwnFlags holds their values (its default member initializers are the
// defaults), and groups() returns its FlagGroups, whose parse callbacks write into it. Given to
// run_step or run_problems (`own`), they are parsed with the core and shared flags, listed last
// in --help, and every launcher finds the struct in its Launch (ctx.own_as<F>()). A new flag of
// one program is a field and a group in its own folder: nothing here changes.
struct OwnFlags {
  virtual ~OwnFlags() = default;
  virtual std::vector<FlagGroup> groups() = 0;
};

inline void parse_core_flag(const std::string& flag, const TakeValue& take, Options& o) {
  if (flag == "--help" || flag == "-h") {
    o.help = true;
  } else if (flag == "--check") {
    o.check_only = true;
  } else if (flag == "--n") {
    o.sizes = parse_counts(take(), "--n");
  } else if (flag == "--offset") {
    o.offsets.clear();
    for (const auto& s : split_commas(take())) o.offsets.push_back(size_t(parse_int(s, "--offset", 0, 15)));
  } else if (flag == "--dtype") {
    const std::string d = take();
    if (d == "all") o.dtypes = {"int", "float"};
    else if (d == "int" || d == "float") o.dtypes = {d};
    else throw UsageError("--dtype: expected int, float or all (got '" + d + "')");
  } else if (flag == "--variant") {
    o.variants = split_commas(take());
    for (const auto& v : o.variants)
      if (v.empty()) throw UsageError("--variant: empty name");
  } else if (flag == "--reps") {
    o.reps = parse_int(take(), "--reps", 1, 100000);
  } else if (flag == "--warmup") {
    o.warmup = parse_int(take(), "--warmup", 0, 100000);
  } else if (flag == "--csv") {
    o.csv = take();
    if (o.csv.empty()) throw UsageError("--csv: empty file name");
  } else if (flag == "--device") {
    o.device = parse_int(take(), "--device", 0, 1023);
  } else if (flag == "--seed") {
    o.seed = uint64_t(parse_int(take(), "--seed", 0, 2147483647));
  } else if (flag == "--repeat-results") {
    o.repeat_results = parse_int(take(), "--repeat-results", 2, 1000);
  }
}

// The batch is queued before the clock starts: at most 1000 launches wait in the stream.
inline void parse_batch_flag(const std::string&, const TakeValue& take, Options& o) {
  o.batch = parse_int(take(), "--batch", 1, 1000);
}

inline void parse_cols_flag(const std::string&, const TakeValue& take, Options& o) {
  o.cols = parse_counts(take(), "--cols");
}

// Every group, in the order of --help.
inline const std::vector<FlagGroup>& flag_groups() {
  static const std::vector<FlagGroup> groups = [] {
    FlagGroup core;
    core.flags = {"--n", "--dtype", "--variant", "--reps", "--warmup", "--check", "--csv", "--device", "--seed",
                  "--offset", "--repeat-results", "--help", "-h"};
    core.help =
        "  --n SIZES             elements, comma separated: 1048576, 2^20, 1<<20, 4M, 1G, 2^20+1 (default 2^28)\n"
        "  --dtype int|float|all element type (default int)\n"
        "  --variant NAME[,...]  which variant(s) to run, comma separated, or all (default all)\n"
        "  --reps R              timed repetitions; the median is reported (default 20)\n"
        "  --warmup W            untimed runs before timing (default 3)\n"
        "  --check               verify CUB and each variant once, no timing\n"
        "  --csv FILE            append one CSV row per measurement\n"
        "  --device K            GPU to use (default 0)\n"
        "  --seed S              seed of the random input (default 12345)\n"
        "  --offset K[,K...]     start the input K elements past a 256-byte boundary (default 0)\n"
        "  --repeat-results K    run each variant K times on the same input and print every result\n";
    core.parse = parse_core_flag;
    FlagGroup batch;
    batch.bit = kBatch;
    batch.flags = {"--batch"};
    batch.help =
        "  --batch B             time B launches back to back between one pair of events, per launch =\n"
        "                        elapsed / B (default 1: each launch between its own pair, which resolves\n"
        "                        about 0.5 us). L2 is flushed before each batch, not between its launches:\n"
        "                        this measures the launch-bound small-n regime\n";
    batch.parse = parse_batch_flag;
    FlagGroup cols;
    cols.bit = kCols;
    cols.flags = {"--cols"};
    cols.help =
        "  --cols C[,C...]       row lengths; rows = max(1, n / C), so n becomes rows x C\n"
        "                        (default 1,4,16,32,256,4096,2^16)\n";
    cols.parse = parse_cols_flag;
    return std::vector<FlagGroup>{core, batch, cols};
  }();
  return groups;
}

// The group that a flag belongs to (among the shared groups and `own`), or nullptr.
inline const FlagGroup* group_of(const std::string& flag, const std::vector<FlagGroup>& own = {}) {
  for (const auto* list : {&flag_groups(), &own})
    for (const auto& g : *list)
      for (const auto& f : g.flags)
        if (f == flag) return &g;
  return nullptr;
}

// `reads`: the program's ExtraFlags (steps 00-05 read --batch only); `own`: its own groups.
inline Options parse_args(int argc, const char* const* argv, unsigned reads = kBatch,
                          const std::vector<FlagGroup>& own = {}) {
  Options o;
  scan_flags(argc, argv, [&](const std::string& flag, auto& take) {
    const FlagGroup* g = group_of(flag, own);
    if (!g) throw UsageError(flag + ": unknown flag (see --help)");
    if (g->bit && !(reads & g->bit)) throw UsageError(flag + ": not a flag of this program (see --help)");
    g->parse(flag, TakeValue(take), o);
  });
  for (const auto* list : {&flag_groups(), &own})
    for (const auto& g : *list)
      if (g.check && (g.bit == 0 || (reads & g.bit))) g.check(o);
  return o;
}

// The --help text of a program that reads the core flags, `reads` (its ExtraFlags) and `own`.
inline std::string usage_text(unsigned reads = kBatch, const std::vector<FlagGroup>& own = {}) {
  std::string text = "Options:\n";
  for (const auto* list : {&flag_groups(), &own})
    for (const auto& g : *list)
      if (g.bit == 0 || (reads & g.bit)) text += g.help;
  text +=
      "  --help                this text\n"
      "A flag not listed here is an error (exit 2).\n"
      "Exit codes: 0 ok, 1 a result that should be right was wrong, 2 bad flag, 77 no usable GPU.\n";
  return text;
}

}  // namespace harness

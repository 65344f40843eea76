// What step 06's problem shapes share (segmented.cuh, filter.cuh): a Problem is a named
// group of variants with its own runner, and run_problems() is the main() behind them, with
// run_step's flags, --help, exit codes and device set-up. The result lines and CSV rows are
// run_dtype's, with one more column: the shape ("cols=16", "pass=50%").
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "harness.cuh"
#include "program_front.hpp"

namespace harness {

// The variants of `all` named in `chosen` (a Problem's run gets the names), in their order.
template <class V>
std::vector<const V*> variants_named(const std::vector<V>& all, const std::vector<std::string>& chosen) {
  std::vector<const V*> run;
  for (const auto& v : all)
    if (std::find(chosen.begin(), chosen.end(), v.name) != chosen.end()) run.push_back(&v);
  return run;
}

struct Problem {
  std::string name, about;            // "segmented", "a rows x cols matrix, one sum per row"
  std::vector<VariantName> variants;  // for --help and --variant
  // Runs the variants named in `chosen` over every dtype, size, offset and shape in opt.
  // Returns false when a result that should be right (CUB's included) was wrong.
  std::function<bool(const Options&, const DeviceInfo&, Bench&, const std::vector<std::string>& chosen)> run;
};

// The whole program behind a step with several problem shapes (run_program's, with a heading
// per problem in --help). `reads`: the program's flags beyond the core ones (cli.hpp's
// ExtraFlags); --problem is among them only where there is more than one problem to choose
// from. `needs`: as run_program's.
inline int run_problems(int argc, char** argv, const char* step, const std::vector<Problem>& problems,
                        unsigned reads, Requirement needs = nullptr) {
  std::vector<VariantGroup> groups;
  for (const auto& p : problems) groups.push_back({p.name, p.about, p.variants});
  const std::string intro = std::string(problems.size() > 1 ? "several problem shapes" : "a problem of its own shape") +
                            " on the GPU, verified and timed against CUB.";
  return run_program(argc, argv, step, intro, groups, reads, needs, [&](const Options& opt, const DeviceInfo& dev, Bench& bench) {
    bool ok = true;
    for (const auto& p : problems) {
      if (opt.problem != "all" && opt.problem != p.name) continue;
      std::vector<std::string> chosen;
      for (const auto& v : p.variants)
        if (harness::chosen(opt, v)) chosen.push_back(v.name);
      if (!chosen.empty()) ok &= p.run(opt, dev, bench, chosen);
    }
    return ok;
  });
}

}  // namespace harness

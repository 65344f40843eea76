// What step 06's problem shapes share (segmented.cuh, filter.cuh): a Problem is a named
// group of variants with its own runner, and run_problems() is the main() behind them, with
// run_step's flags, --help, exit codes and device set-up. The result lines and CSV rows are
// run_dtype's, with one more column: the shape ("cols=16", "pass=50%").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness.cuh"
#include "program_front.hpp"

namespace harness {

struct Problem {
  std::string name, about;            // "segmented", "a rows x cols matrix, one sum per row"
  std::vector<VariantName> variants;  // for --help and --variant
  // Runs the variants named in `chosen` over every dtype, size, offset and shape in opt.
  // Returns false when a result that should be right (CUB's included) was wrong.
  std::function<bool(const Options&, const DeviceInfo&, Bench&, const std::vector<std::string>& chosen)> run;
};

// The whole program behind a step with several problem shapes. Exit codes: see usage_text().
// `reads`: the program's flags beyond the core ones (cli.hpp's ExtraFlags); --problem is
// among them only where there is more than one problem to choose from. `needs`: as run_step's
// (exit 77 without the GPU feature, after the flags are parsed).
inline int run_problems(int argc, char** argv, const char* step, const std::vector<Problem>& problems,
                        unsigned reads, Requirement needs = nullptr) {
  std::vector<VariantGroup> groups;
  for (const auto& p : problems) groups.push_back({p.name, p.about, p.variants});
  Options opt;
  const std::string intro = std::string(problems.size() > 1 ? "several problem shapes" : "a problem of its own shape") +
                            " on the GPU, verified and timed against CUB.";
  if (int code = parse_program(argc, argv, step, reads, intro, groups, opt); code >= 0) return code;
  forced_blocks() = unsigned(opt.blocks);  // as run_step: the launchers ask (forced_grid.cuh, clusters.cuh)
  forced_cluster() = opt.cluster;
  return exit_code_of(step, [&] {
    if (needs && needs(opt.device, step)) return 77;
    if (int code = open_device(opt.device, step); code >= 0) return code;
    const DeviceInfo dev = device_info(opt.device);
    print_header(opt, dev, step);
    Bench bench(opt, dev, step);
    bool ok = true;
    for (const auto& p : problems) {
      if (opt.problem != "all" && opt.problem != p.name) continue;
      std::vector<std::string> chosen;
      for (const auto& v : p.variants)
        if (harness::chosen(opt, v)) chosen.push_back(v.name);
      if (chosen.empty()) continue;
      ok &= p.run(opt, dev, bench, chosen);
    }
    return verdict_code(step, ok);
  });
}

}  // namespace harness

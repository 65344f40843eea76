// The front of every program: its flags, the --variant check and --help. run_step,
// run_problems and step 08's two runners call parse_program; no step parses flags itself.
// Host-only C++ (the host tests include it).
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cli.hpp"

namespace harness {

// A variant as --help lists it and --variant picks it.
struct VariantName {
  std::string name, about;
  bool in_all = true;  // false: runs only when named with --variant (a pitfall, an extra)
};

// What --help lists under one heading: a problem of step 06 ("segmented" and its variants),
// or, with an empty problem name, a program's only list.
struct VariantGroup {
  std::string problem, about;
  std::vector<VariantName> variants;
};

inline bool chosen(const Options& opt, const VariantName& v) {
  return opt.variant == v.name || (opt.variant == "all" && v.in_all);
}
inline bool in_problem(const Options& opt, const VariantGroup& g) {
  return g.problem.empty() || opt.problem == "all" || opt.problem == g.problem;
}

// Parses the flags the program reads (`reads`, cli.hpp's ExtraFlags), checks --variant
// against the variants of the problems --problem leaves, then `more(opt)`, a check of the
// program's own (it may throw a UsageError). --help prints `intro`, the variants and the flags.
// Returns 2 after one line on stderr for a usage error, 0 after --help, else -1 with `opt` filled.
inline int parse_program(int argc, const char* const* argv, const char* step, unsigned reads, const std::string& intro,
                         const std::vector<VariantGroup>& groups, Options& opt,
                         const std::function<void(const Options&)>& more = {}) {
  try {
    opt = parse_args(argc, argv, reads);
    bool known = opt.variant == "all";
    std::string names;
    for (const auto& g : groups)
      if (in_problem(opt, g))
        for (const auto& v : g.variants) {
          known |= v.name == opt.variant;
          names += v.name + ", ";
        }
    if (!known)
      throw UsageError("--variant: unknown '" + opt.variant + "'" +
                       (opt.problem == "all" ? "" : " for --problem " + opt.problem) + " (choose from " + names + "all)");
    if (more) more(opt);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", step, e.what());
    return 2;
  }
  if (!opt.help) return -1;
  std::printf("%s: %s\nVariants:\n", step, intro.c_str());
  for (const auto& g : groups) {
    if (!g.problem.empty())
      std::printf(" %s%s: %s\n", reads & kProblem ? "--problem " : "", g.problem.c_str(), g.about.c_str());
    for (const auto& v : g.variants) std::printf("  %-16s %s\n", v.name.c_str(), v.about.c_str());
  }
  std::printf("%s", usage_text(reads).c_str());
  return 0;
}

}  // namespace harness

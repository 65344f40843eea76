// The variant names of a program that runs its own loop (step 08's two programs): the list
// --help prints, the choice --variant makes, and the error for a name not in the list.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"

namespace harness {

struct VariantName {
  const char* name;
  const char* about;
  bool in_all;  // false: runs only when named with --variant
};

inline bool chosen(const Options& opt, const VariantName& v) {
  return opt.variant == v.name || (opt.variant == "all" && v.in_all);
}

// Throws the --variant error (exit 2) unless --variant names one of `list` or all.
inline void require_known_variant(const Options& opt, const std::vector<VariantName>& list) {
  bool known = opt.variant == "all";
  std::string names;
  for (const auto& v : list) {
    known |= opt.variant == v.name;
    names += std::string(v.name) + ", ";
  }
  if (!known) throw UsageError("--variant: unknown '" + opt.variant + "' (choose from " + names + "all)");
}

// parse_args and the --variant check; `more(opt)` may throw a UsageError of its own. Returns
// 2 after one line on stderr for a usage error, else -1 with `opt` filled.
template <class More>
int parse_flags(int argc, const char* const* argv, const char* step, unsigned flags,
                const std::vector<VariantName>& list, Options& opt, More&& more) {
  try {
    opt = parse_args(argc, argv, flags);
    require_known_variant(opt, list);
    more(opt);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", step, e.what());
    return 2;
  }
  return -1;
}

inline void print_variant_list(const std::vector<VariantName>& list) {
  std::printf("Variants:\n");
  for (const auto& v : list) std::printf("  %-16s %s\n", v.name, v.about);
}

}  // namespace harness

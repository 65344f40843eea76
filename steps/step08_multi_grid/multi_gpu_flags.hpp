// Step 08's own flags: which GPUs, the one-process-per-GPU NCCL mode, the barrier test's
// length. Host-only C++, so that the host tests can include it; parse_program reads them as
// `own` groups (common/cli.hpp's FlagGroup, filled by field name) into the fields below.
#pragma once

#include <string>
#include <vector>

#include "cli.hpp"

namespace harness {

struct MultiGpuOptions : Options {
  int gpus = 0;             // --gpus K: the first K visible GPUs (0: all)
  std::vector<int> gpu_list;  // --gpus 1,0,3: these GPUs, in this order
  int rank = -1;            // --rank R: this process is rank R (-1: one process)
  int nranks = 0;           // --nranks K: of K processes
  std::string id_file;      // --id-file PATH: where rank 0 leaves the NCCL id
  int barrier_reps = 1000;  // --barrier-reps B: barriers per test/latency kernel
};

// --gpus (one number is a count, a comma list names the GPUs) and --barrier-reps: the
// one-process program step08_multi_grid.
inline std::vector<FlagGroup> gpus_flags(MultiGpuOptions& m) {
  auto gpus = [&m](const std::string&, const TakeValue& take, Options&) {
    const std::string v = take();
    m.gpu_list.clear();
    if (v.find(',') == std::string::npos) return void(m.gpus = parse_int(v, "--gpus", 1, 1024));
    for (const auto& s : split_commas(v)) {
      const int d = parse_int(s, "--gpus", 0, 1023);
      for (int seen : m.gpu_list)
        if (seen == d) throw UsageError("--gpus: GPU " + s + " is named twice (got '" + v + "')");
      m.gpu_list.push_back(d);
    }
    m.gpus = int(m.gpu_list.size());
  };
  auto barrier_reps = [&m](const std::string&, const TakeValue& take, Options&) {
    m.barrier_reps = parse_int(take(), "--barrier-reps", 1, 1000000);
  };
  FlagGroup which;
  which.flags = {"--gpus"};
  which.help = "  --gpus K|D,D...       the first K visible GPUs, or these GPUs (default: all visible)\n";
  which.parse = gpus;
  FlagGroup reps;
  reps.flags = {"--barrier-reps"};
  reps.help = "  --barrier-reps B      barriers in the reuse test and the latency kernel (default 1000)\n";
  reps.parse = barrier_reps;
  return {which, reps};
}

// --rank, --nranks, --id-file: one rank of step08_nccl_ranks. All three or none.
inline std::vector<FlagGroup> rank_flags(MultiGpuOptions& m) {
  auto parse = [&m](const std::string& flag, const TakeValue& take, Options&) {
    if (flag == "--rank") return void(m.rank = parse_int(take(), "--rank", 0, 1023));
    if (flag == "--nranks") return void(m.nranks = parse_int(take(), "--nranks", 1, 1024));
    m.id_file = take();
    if (m.id_file.empty()) throw UsageError("--id-file: empty file name");
  };
  auto check = [&m](Options&) {
    if (m.rank < 0 && m.nranks == 0 && m.id_file.empty()) return;
    if (m.rank < 0) throw UsageError("--rank: missing (--nranks and --id-file need --rank R)");
    if (m.nranks == 0) throw UsageError("--nranks: missing (--rank needs --nranks K)");
    if (m.id_file.empty()) throw UsageError("--id-file: missing (--rank needs --id-file PATH)");
    if (m.rank >= m.nranks)
      throw UsageError("--rank: " + std::to_string(m.rank) + " is not below --nranks " + std::to_string(m.nranks));
  };
  FlagGroup ranks;
  ranks.flags = {"--rank", "--nranks", "--id-file"};
  ranks.help =
      "  --rank R --nranks K --id-file PATH\n"
      "                        one process per GPU (NCCL); rank 0 writes the NCCL id to PATH\n";
  ranks.parse = parse;
  ranks.check = check;
  return {ranks};
}

}  // namespace harness

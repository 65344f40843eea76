// What the three probes (grid_sync_cost, cluster_cost, read_probe) share, so that each program is its kernels
// and its measurements: main() and the flags, the median and min-max of the reps, a CSV of the
// probe's own schema, and a timer for launches shorter than one event pair resolves.
#pragma once

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "run_step.cuh"

namespace harness {

// The flags of every probe; a program derives its Options from this and adds its own.
struct ProbeOptions {
  int reps = 1, device = 0;  // reps: Probe::reps until --reps
  std::string csv;           // empty: no CSV
  bool help = false;
};

// A probe: its name, its default --reps, the GPU feature it needs (e.g. clusters_unsupported: one
// line and exit 77 without it) and its CSV header (whose first two columns are device,cuda).
struct Probe { const char* name; int reps; Requirement needs; const char* csv_header; };

// --csv FILE (open_csv, bench.cuh): row(f...) appends "device,cuda,f..."; without a file, nothing.
class ProbeCsv {
 public:
  ProbeCsv(const std::string& path, const char* header, const DeviceInfo& dev)
      : device_(dev.name), cuda_(dev.cuda), out_(open_csv(path, header)) {
    std::replace(device_.begin(), device_.end(), ',', ' ');
  }
  template <class... Fields>
  void row(const Fields&... fields) {
    if (!out_.is_open()) return;
    out_ << device_ << ',' << cuda_;
    ((out_ << ',' << fields), ...);
    out_ << '\n';
  }

 private:
  std::string device_, cuda_;
  std::ofstream out_;
};

// One flag of a probe's own: its name, the value's name and its --help text, and how the
// value goes into the options (parse may throw a UsageError).
template <class Opts>
struct ProbeFlag {
  const char* flag;
  const char* value;
  const char* about;
  std::function<void(Opts&, const std::string& value)> parse;
};

// A probe's --help: `about`, then every flag, the shared ones (--reps with the probe's default,
// --csv with its header, --device, --help) around the probe's own.
template <class Opts>
void print_probe_help(const Probe& p, const char* about, const std::vector<ProbeFlag<Opts>>& own) {
  auto line = [](const std::string& usage, const std::string& text) { std::printf("  %-21s %s\n", usage.c_str(), text.c_str()); };
  std::printf("%s: %s\nOptions:\n", p.name, about);
  line("--reps R", "timed repetitions of each figure (default " + std::to_string(p.reps) + ")");
  for (const auto& f : own) line(std::string(f.flag) + " " + f.value, f.about);
  line("--csv FILE", std::string("append one row per measurement: ") + p.csv_header);
  line("--device K", "GPU to use (default 0)");
  line("--help", "this text");
  std::printf("A flag not listed here is an error (exit 2).\nExit codes: 0 ok, 1 CUDA error, 2 bad flag, 77 no usable GPU%s.\n",
              p.needs ? " (or one without the feature the probe measures)" : "");
}

// A probe's main(). Flags: those of print_probe_help; a bad flag is one line, exit 2; --help,
// exit 0. No usable GPU, or one without p.needs: one line, exit 77. Then run(opt, device, csv,
// stream); what it throws ends as exit_code_of says (one line; exit 2 for a UsageError, else 1).
template <class Opts, class Run>
int probe_main(int argc, char** argv, const Probe& p, const char* about, const std::vector<ProbeFlag<Opts>>& own,
               Run&& run) {
  Opts opt;
  opt.reps = p.reps;
  try {
    scan_flags(argc, argv, [&](const std::string& flag, auto& take) {
      if (flag == "--help" || flag == "-h") return void(opt.help = true);
      if (flag == "--reps") return void(opt.reps = parse_int(take(), "--reps", 1, 1000));
      if (flag == "--device") return void(opt.device = parse_int(take(), "--device", 0, 1023));
      if (flag == "--csv") {
        opt.csv = take();
        if (opt.csv.empty()) throw UsageError("--csv: empty file name");
        return;
      }
      for (const auto& f : own)
        if (flag == f.flag) return f.parse(opt, take());
      throw UsageError(flag + ": unknown flag (see --help)");
    });
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", p.name, e.what());
    return 2;
  }
  if (opt.help) return print_probe_help(p, about, own), 0;
  return exit_code_of(p.name, [&] {
    if (int code = open_device(opt.device, p.name); code >= 0) return code;
    if (p.needs && p.needs(opt.device, p.name)) return 77;
    const DeviceInfo dev = device_info(opt.device);
    ProbeCsv csv(opt.csv, p.csv_header, dev);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    run(opt, dev, csv, s);
    CUDA_CHECK(cudaStreamDestroy(s));
    return 0;
  });
}

}  // namespace harness

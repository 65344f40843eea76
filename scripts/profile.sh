#!/usr/bin/env bash
# profile.sh STEP [FLAGS...]: Nsight Compute over one run of a step, a few metrics per kernel.
#   STEP   a binary in the build directory (${BUILD_DIR:-build}): step07_cooperative_grid,
#          step07, grid_sync_cost, ...
#   FLAGS  passed to the step; default --check --n 2^28 (each kernel once: no timing loop,
#          whose flush and floor kernels would swamp the report). Pick one variant with
#          --variant NAME to keep the run short.
# Metrics (clocks not locked: --clock-control none, so the GPU runs at the clocks the timed
# runs see):
#   dram%   dram__throughput.avg.pct_of_peak_sustained_elapsed   DRAM bandwidth, % of peak
#   occ%    sm__warps_active.avg.pct_of_peak_sustained_active     achieved occupancy
#   L2hit%  lts__t_sector_hit_rate.pct                            L2 hit rate
#   stalls  the three largest smsp__average_warps_issue_stalled_*_per_issue_active.ratio
#           (the Warp State Statistics: cycles a warp waits per issued instruction, by reason)
# The full report stays in ${PROFILE_DIR:-BUILD_DIR/profile}/STEP.ncu-rep (open it in ncu-ui).
# Exit 0 ok, 2 usage, 77 without ncu or a GPU, else ncu's or the step's failure.
set -uo pipefail
if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  [ $# -lt 1 ] && exit 2 || exit 0
fi
step=$1; shift
bindir=${BUILD_DIR:-build}
bin=$bindir/$step
if [ ! -x "$bin" ]; then echo "profile.sh: $bin not found (build it, or set BUILD_DIR)" >&2; exit 2; fi
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null) || true
if [ -z "$ncu" ]; then echo "profile.sh: ncu (Nsight Compute) not found; skipping."; exit 77; fi
# No GPU: the step says so with exit 77 (all steps, and grid_sync_cost, do).
"$bin" --help >/dev/null 2>&1 || { echo "profile.sh: $bin --help failed" >&2; exit 2; }
if [[ $step == grid_sync_cost* ]]; then probe=(--syncs 1 --reps 1 --threads 1024); else probe=(--check --n 1 --variant all); fi
"$bin" "${probe[@]}" >/dev/null 2>&1
if [ $? = 77 ]; then echo "profile.sh: no usable CUDA GPU; skipping."; exit 77; fi

[ $# = 0 ] && set -- --check --n 2^28
outdir=${PROFILE_DIR:-$bindir/profile}
mkdir -p "$outdir"
report=$outdir/$(basename "$step")
stall_regex='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
metrics=dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,gpu__time_duration.sum
echo "\$ ncu --clock-control none --metrics ...  $bin $*"
"$ncu" --clock-control none --metrics "$metrics,$stall_regex" --export "$report" --force-overwrite \
  "$bin" "$@" || { rc=$?; echo "profile.sh: ncu failed (exit $rc)" >&2; exit $rc; }

python3 - "$ncu" "$report.ncu-rep" <<'EOF'
import csv, io, re, subprocess, sys
ncu, rep = sys.argv[1], sys.argv[2]
raw = subprocess.run([ncu, "--import", rep, "--csv", "--page", "raw", "--print-units", "base"],
                     capture_output=True, text=True, check=True).stdout
rows = [r for r in csv.reader(io.StringIO(raw)) if r]
head = rows[0]
col = {name: i for i, name in enumerate(head)}
# The first data row may be the units row (no kernel ID): skip anything whose ID is not a number.
data = [r for r in rows[1:] if r[col.get("ID", 0)].strip().isdigit()]
def num(r, name):
    try: return float(r[col[name]].replace(",", ""))
    except (KeyError, ValueError): return float("nan")
stall = re.compile(r"smsp__average_warps_issue_stalled_(.*)_per_issue_active\.ratio")
stall_cols = [(m.group(1), name) for name in head if (m := stall.fullmatch(name)) and "not_issued" not in name]
def short(name):  # "void reduce_grid_sync<unsigned int>(const T1 *, ...)" -> "reduce_grid_sync<unsigned int>"
    name = re.sub(r"^void ", "", name)
    depth, out = 0, ""
    for ch in name:
        if ch == "(" and depth == 0: break
        depth += ch == "<"; depth -= ch == ">"
        out += ch
    return out if len(out) <= 44 else out[:out.index("<")][:39] + "<...>"
print(f"{'kernel':44} {'grid':>9} {'block':>6} {'us':>9} {'dram%':>6} {'occ%':>5} {'L2hit%':>6}  top stalls (cycles per issued instruction)")
for r in data:
    stalls = sorted(((num(r, n), reason) for reason, n in stall_cols if reason != "selected"), reverse=True)[:3]
    top = ", ".join(f"{reason} {v:.1f}" for v, reason in stalls if v == v)
    grid = r[col["Grid Size"]].strip("() ").replace(" ", "") if "Grid Size" in col else "?"
    block = r[col["Block Size"]].strip("() ").replace(" ", "") if "Block Size" in col else "?"
    grid, block = re.sub(r",1,1$", "", grid), re.sub(r",1,1$", "", block)
    print(f"{short(r[col['Kernel Name']]):44} {grid:>9} {block:>6} {num(r, 'gpu__time_duration.sum') / 1e3:9.1f} "
          f"{num(r, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'):6.1f} "
          f"{num(r, 'sm__warps_active.avg.pct_of_peak_sustained_active'):5.1f} {num(r, 'lts__t_sector_hit_rate.pct'):6.1f}  {top}")
EOF
rc=$?
echo "report: $report.ncu-rep"
exit $rc

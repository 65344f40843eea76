#!/usr/bin/env bash
# The main command (README): build the step programs (CMake's `steps` target),
# run each one on the GPU at sizes that tell its story, int and float, with a progress line
# per program, then print the ladder as one table and draw the plots into build/results/.
#   bash scripts/run_all.sh            the ladder: under a minute on an H200 from a fresh clone
#   bash scripts/run_all.sh --full     every program over gpu_check.sh's whole sweep (2^10..2^30,
#                                      every row length and pass rate): tens of minutes
#   bash scripts/run_all.sh --reps 5   any other flag goes to every program
# Writes build/results/run_all.csv. Without a GPU it says so in one line (exit 77).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
source scripts/sweep_args.sh
full=no
if [ "${1:-}" = --full ]; then full=yes; shift; fi
build=${BUILD_DIR:-build}
results=$build/results
t0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t0 )) s"; }

# The story of each program at a glance: a launch-bound size, a mid size and a bandwidth-bound
# one; step 06 one short, one mid and one long row length, its filter one pass rate; step 10's
# tiles on the short rows they are made for (on long rows they are slow by design). The
# second programs of steps 06, 07 and 09 (the filter, the normalization, a cluster per row) run
# after their step.
story_args() {
  case $1 in
    step06_filter) echo "--n 2^24 --pass-rate 50" ;;
    step06_*) echo "--n 2^26 --cols 32,4096,2^20" ;;
    step07_normalize) echo "--n 2^20,2^24" ;;  # on chip at 2^20; past the on-chip limit at 2^24
    step08_*) echo "--n 2^24,2^28" ;;
    step09_cluster_rows) echo "--n 2^26 --cols 4096,2^20" ;;
    step09_*) echo "--n 2^16,2^20,2^24,2^28" ;;
    step10_*) echo "--n 2^20,2^24,2^28 --cols 16,256" ;;  # the tutorial's tiles on short rows
    *) echo "--n 2^20,2^24,2^28" ;;
  esac
}
programs=$(list_programs)
count=$(wc -l <<<"$programs")

echo "== [$(elapsed)] configure and build the programs (cmake --build $build --target steps)"
cmake -S . -B "$build" -DPLOT_PYTHON="$PLOT_PYTHON" ${CMAKE_ARGS:-} >/dev/null
# One target for all of them, so make builds them in parallel (targets named one by one on
# make's command line are built one after the other).
cmake --build "$build" --target steps -j "$(nproc)" >/dev/null
mkdir -p "$results"
csv=$results/run_all.csv
rm -f "$csv"
i=0
for program in $programs; do
  i=$((i + 1))
  if [ $full = yes ]; then args=$(sweep_args "$program"); else args=$(story_args "$program"); fi
  echo "== [$(elapsed)] $i/$count $program $args --dtype all"
  rc=0
  # shellcheck disable=SC2086
  "$build/$program" $args --dtype all --csv "$csv" "$@" || rc=$?
  if [ $rc = 77 ]; then
    # No GPU at all: the first program says so and that is the whole answer. A later one that
    # needs more (step 08: two GPUs) printed its reason; the others still count.
    [ $i = 1 ] && exit 77
    echo; continue
  fi
  if [ $rc != 0 ]; then echo "run_all.sh: $program failed (exit $rc)"; exit $rc; fi
  echo
done
echo "== [$(elapsed)] plots and the ladder"
"$PLOT_PYTHON" plots/plot.py --out "$results" "$csv"
"$PLOT_PYTHON" plots/results.py summary "$csv"
echo
echo "CSV: $csv   plots: $results/*.png   ($(elapsed) in all)"

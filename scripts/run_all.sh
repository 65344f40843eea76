#!/usr/bin/env bash
# The main job (README): build everything, run every step at its default size on the GPU
# (int and float), print the ladder as one table, write build/results/run_all.csv and draw
# the plots into build/results/. Without a GPU it says so in one line (exit 77).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
build=${BUILD_DIR:-build}
results=$build/results
cmake -S . -B "$build" -DPLOT_PYTHON="$PLOT_PYTHON" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
mkdir -p "$results"
csv=$results/run_all.csv
rm -f "$csv"
steps=$(bash scripts/list_steps.sh)
for step in $steps; do
  rc=0
  "$build/$step" --dtype all --csv "$csv" "$@" || rc=$?
  if [ $rc = 77 ]; then
    # No GPU at all: the first step says so and that is the whole answer. A later step that
    # needs more (step 08: two GPUs) printed its reason; the others still count.
    [ "$step" = "$(head -n 1 <<<"$steps")" ] && exit 77
    echo; continue
  fi
  if [ $rc != 0 ]; then echo "run_all.sh: $step failed (exit $rc)"; exit $rc; fi
  echo
done
"$PLOT_PYTHON" plots/plot.py --out "$results" "$csv"
"$PLOT_PYTHON" plots/results.py summary "$csv"
echo
echo "CSV: $csv   plots: $results/*.png"

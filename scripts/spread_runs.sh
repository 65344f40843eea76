#!/usr/bin/env bash
# The measurements behind chapter 05's and the README's bytes-in-flight and run-to-run claims,
# from the repository root on a GPU machine (BUILD: a build folder with read_probe and step05):
#   read_probe   a plain read against threads, load width and loads in flight (grid and rows)
#   step05 x 5   v4_batch4, CUB and the floor at 2^13..2^30, five separate runs back to back:
#                the spread of x CUB from run to run, per size
# Writes into $OUT: read_probe.csv/.txt, repeat_step05.csv, repeat_step05.txt.
set -uo pipefail
build=${BUILD:-build-gpu}
out=${OUT:-/tmp/out}; mkdir -p "$out"
rm -f "$out/read_probe.csv" "$out/repeat_step05.csv"
"$build/read_probe" --csv "$out/read_probe.csv" >"$out/read_probe.txt" 2>&1; echo "read_probe: exit $?"
sizes=$(printf '2^%s,' $(seq 13 30)); sizes=${sizes%,}
for run in 1 2 3 4 5; do
  "$build/step05_vectorized" --variant v4_batch4 --dtype all --n "$sizes" --csv "$out/repeat_step05.csv" \
    >>"$out/repeat_step05.txt" 2>&1
  echo "step05 run $run: exit $?"
done

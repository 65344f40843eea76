#!/usr/bin/env bash
# Step 09's packed_rows on an NVIDIA GPU (issue 24: short rows at the floor's speed), from the
# repository root: build; then, by mode,
#   probe  a quick look: --check of every row length, then a sweep of 20 runs each
#   sweep  the sweep alone (below)
#   tests  the tests alone (below)
#   full   packed_rows' CTest tests and step 09's segmented ones (the 2^31+5 one included), the
#          mutation test's packed_* mutants, memcheck and racecheck of packed_rows, the sweep
#          gpu_check.sh makes (every power of two 1..2^20 and 8193, 50 runs each) and step 06's
#          auto in the same job
# Writes into $OUT: step09_cluster_rows.csv, step06_auto_same_job.csv, logs.
#   OUT=/tmp/out bash scripts/short_rows_gpu.sh full
set -uo pipefail
mode=${1:-full}
build=${BUILD:-build-gpu}
out=${OUT:-/tmp/out}; mkdir -p "$out"
source scripts/sweep_args.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
targets=(step09_cluster_rows step06_cooperative_groups mutant_step09_packed_group_too_wide mutant_step09_packed_drop_tail)
cmake --build "$build" -j 16 --target "${targets[@]}" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "built at $(date +%T)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/nvidia-smi.txt" 2>&1
rows=$build/step09_cluster_rows
packed_cols=1,2,4,8,16,32,64,128,256,512
if [ "$mode" = probe ]; then
  "$rows" --check --dtype all --offset 0,1 --n 5,511,2^20+300,2^26 --cols $packed_cols,12,33 >"$out/probe_check.txt" 2>&1
  echo "probe check: exit $?, $(grep -c ' ok ' "$out/probe_check.txt") ok, $(grep -c FAILED "$out/probe_check.txt") failed"
  "$rows" $(sweep_args step09_cluster_rows) --dtype all --csv "$out/probe.csv" >"$out/probe_sweep.txt" 2>&1
  echo "probe sweep: exit $?"
  exit 0
fi
if [ "$mode" != sweep ]; then
  ctest --test-dir "$build" -R 'gpu_step09_(cluster_rows|packed)' --output-on-failure >"$out/ctest_step09_rows.log" 2>&1
  grep -E 'Test +#|tests passed' "$out/ctest_step09_rows.log"
  python3 tests/mutation.py run "$build" "$out/mutation_packed.log" --only packed_group_too_wide,packed_drop_tail >/dev/null 2>&1
  echo "mutation packed_*: exit $? ($(tail -1 "$out/mutation_packed.log"))"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 "$rows" --check --variant packed_rows --dtype all --offset 0 \
      --n 2^20+300 --cols $packed_cols >"$out/${tool}_packed_rows.log" 2>&1
    echo "$tool packed_rows: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/${tool}_packed_rows.log" | tail -1))"
  done
fi
[ "$mode" = tests ] && exit 0
rm -f "$out/step09_cluster_rows.csv" "$out/step06_auto_same_job.csv"
"$rows" $(sweep_args step09_cluster_rows) --dtype all --csv "$out/step09_cluster_rows.csv" --reps 50 \
  >"$out/sweep_step09_cluster_rows.txt" 2>&1
echo "sweep step09_cluster_rows: exit $?"
"$build/step06_cooperative_groups" $(sweep_args step06_cooperative_groups) --variant auto --dtype all \
  --csv "$out/step06_auto_same_job.csv" --reps 50 >"$out/sweep_step06_auto_same_job.txt" 2>&1
echo "sweep step06 auto: exit $? at $(date +%T)"

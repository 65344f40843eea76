#!/usr/bin/env bash
# Every committed measurement that has the floor beside it, again, on one GPU: what a change of
# the floor kernel (or of a step's kernels) needs. From the repository root on a GPU machine;
# one part per call (a device call is at most 10 minutes; each part builds what is missing):
#   part1  build; CTest's gpu tests but the large ones and the mutation test; memcheck and
#          racecheck of step 09's rows at odd lengths; the sweeps of steps 00-05 (gpu_check.sh's)
#   part2  the sweeps of steps 06, 07 and 09 (gpu_check.sh's: step 06's filter and the blog's
#          shape, step 07's normalization, step 09's rows and step 06's auto in the same job)
#   rows   step 09's rows sweep and step 06's auto in the same job alone (part2's last two runs)
#   part3  the batched runs (step 07, its normalization, step 09 with step 07 in the same job),
#          step 10's (scripts/step10_gpu.sh's runs), scripts/spread_runs.sh, step 01's default run
# Writes into $OUT/data (the CSVs under their committed names) and $OUT/logs.
#   OUT=/tmp/out bash scripts/remeasure.sh part1
set -uo pipefail
part=${1:?usage: remeasure.sh part1|part2|part3}
build=${BUILD:-build-gpu}
out=${OUT:-/tmp/out}; data=$out/data; logs=$out/logs; mkdir -p "$data" "$logs"
source scripts/sweep_args.sh
targets=all; [ "$part" = rows ] && targets="step09_cluster_rows step06_cooperative_groups"
# shellcheck disable=SC2086
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >"$logs/configure_$part.log" 2>&1 &&
  cmake --build "$build" -j 16 --target $targets >"$logs/build_$part.log" 2>&1 || { tail -40 "$logs/build_$part.log"; exit 1; }
echo "$part: built at $(date +%T)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$logs/nvidia-smi_$part.txt" 2>&1
status=0
sweep() {  # program [args...]: its sweep_args, 50 runs, into data/<program>.csv
  local s=$1; shift
  rm -f "$data/$s.csv"
  # shellcheck disable=SC2046
  "$build/$s" $(sweep_args "$s") --dtype all --csv "$data/$s.csv" --reps 50 "$@" >"$logs/sweep_$s.txt" 2>&1 ||
    { [ "$s" = step01_warp_unroll ] || { echo "$s FAILED"; status=1; }; }
  echo "$s: $(grep -c . "$data/$s.csv") rows at $(date +%T)"
}
case $part in
  part1)
    ctest --test-dir "$build" -L gpu -E 'large|mutation' -j 4 --output-on-failure >"$logs/ctest_gpu.log" 2>&1 || status=1
    tail -n 3 "$logs/ctest_gpu.log"
    for tool in memcheck racecheck; do
      compute-sanitizer --tool $tool --error-exitcode 9 "$build/step09_cluster_rows" --check --variant auto,warp_row,block_row \
        --dtype all --offset 0,1 --n 2^20+300 --cols 513,1001,4097,8193,12289 >"$logs/${tool}_step09_rows.log" 2>&1 || status=1
      echo "$tool step09 rows: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/${tool}_step09_rows.log" | tail -1)"
    done
    compute-sanitizer --tool memcheck --error-exitcode 9 "$build/step05_vectorized" --variant v4_batch4 --dtype all \
      --offset 0,1 --n 2^20+3 --reps 1 --warmup 0 >"$logs/memcheck_step05_floor.log" 2>&1 || status=1
    echo "memcheck step05 (the floor timed beside it): $(grep -E 'ERROR SUMMARY' "$logs/memcheck_step05_floor.log" | tail -1)"
    for s in step00_baseline step01_warp_unroll step02_warp_shuffle step03_atomic_one_pass step04_thread_coarsening \
             step05_vectorized; do sweep $s; done ;;
  part2)
    sweep step06_cooperative_groups
    "$build/step06_cooperative_groups" --dtype float --n 2^29 --cols 262144 --csv "$data/step06_cooperative_groups.csv" \
      --reps 50 >"$logs/sweep_step06_cooperative_groups_blog_shape.txt" 2>&1 || status=1
    sweep step06_filter
    sweep step07_cooperative_grid
    rm -f "$data/step07_normalize.csv"
    # shellcheck disable=SC2046
    "$build/step07_normalize" $(sweep_args step07_normalize) --dtype all --csv "$data/step07_normalize.csv" --reps 50 \
      >"$logs/sweep_step07_normalize.txt" 2>&1 || status=1
    sweep step09_clusters
    ;;&
  part2|rows)
    # shellcheck disable=SC2046
    "$build/step09_cluster_rows" --check --dtype all --offset 0,1,2,3 $(verify_args step09_cluster_rows) \
      >"$logs/verify_sweep_step09_cluster_rows.txt" 2>&1 || { echo "step09_cluster_rows --check FAILED"; status=1; }
    echo "step09_cluster_rows --check: $(grep -c ' ok ' "$logs/verify_sweep_step09_cluster_rows.txt") ok"
    sweep step09_cluster_rows
    rm -f "$data/step06_auto_same_job.csv"
    # shellcheck disable=SC2046
    "$build/step06_cooperative_groups" $(sweep_args step06_cooperative_groups) --variant auto --dtype all \
      --csv "$data/step06_auto_same_job.csv" --reps 50 >"$logs/sweep_step06_auto_same_job.txt" 2>&1 || status=1
    echo "$part sweeps done at $(date +%T)" ;;
  part3)
    b="--batch 100 --reps 30 --dtype all"
    rm -f "$data"/batched_*.csv "$data/batched_step07_same_job.csv" "$data/step10_hip.csv" "$data/same_session_step07.csv"
    # shellcheck disable=SC2086
    { "$build/step07_cooperative_grid" --n 2^10,2^12,16K,24K,32K,40K,48K,56K,64K,96K,128K,2^18,2^20,2^22,2^24 $b \
        --csv "$data/batched_step07_cooperative_grid.csv"
      "$build/step07_normalize" --n 2^16,2^18,2^20 $b --csv "$data/batched_step07_normalize.csv"; } >"$logs/batched_step07.txt" 2>&1 || status=1
    sizes=$(seq -s, -f '2^%g' 10 22)
    # shellcheck disable=SC2086
    { "$build/step09_clusters" --n "$sizes" $b --csv "$data/batched_step09_clusters.csv"
      "$build/step07_cooperative_grid" --n "$sizes" $b --csv "$data/batched_step07_same_job.csv"; } >"$logs/batched_step09.txt" 2>&1 || status=1
    echo "batched done at $(date +%T)"
    sizes=2^20,2^22,2^24,2^26,2^28,2^30
    for round in 1 2; do  # step10_gpu.sh's runs
      "$build/step10_hip" --dtype all --n $sizes --variant block_atomic,grid_sync --csv "$data/step10_hip.csv" >>"$logs/sweep_step10.txt" 2>&1 || status=1
      "$build/step07_cooperative_grid" --dtype all --n $sizes --variant grid_sync,packed_slots --csv "$data/same_session_step07.csv" >>"$logs/sweep_step07_same_session.txt" 2>&1 || status=1
    done
    "$build/step10_hip" --dtype all --n 2^24 --cols 16,256,4096 --variant tile_rows --csv "$data/step10_hip.csv" >>"$logs/sweep_step10.txt" 2>&1 || status=1
    "$build/step10_hip" --dtype all --n 2^12,2^16,2^20 --variant block_atomic,grid_sync --batch 50 --csv "$data/batched_step10_hip.csv" >>"$logs/sweep_step10.txt" 2>&1 || status=1
    echo "step 10 done at $(date +%T)"
    BUILD=$build OUT=$logs/spread bash scripts/spread_runs.sh
    { echo "\$ ./step01 --n 2^24"; "$build/step01" --n 2^24; } >"$logs/step01_default_run.txt" 2>&1
    echo "part3 done at $(date +%T)" ;;
esac
exit $status

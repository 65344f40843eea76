#!/usr/bin/env bash
# Step 09's rows of 8193 (issue 24, item 15): thread_sum with the scalar head/tail loads issued
# before the vector loop (common/vector_reads.cuh now) against the version that loads them after
# it (OLD_VR), built side by side, run in turns (old, new, old, new); then, with the new one,
# step 09's segmented tests, the verification sweep of the steps that use thread_sum (06, 07,
# 09: odd sizes, offsets 0-3) and step 09's rows sweep (the committed CSV's).
# From the repository root on a GPU machine: OUT=/tmp/out bash run.sh OLD_VR
set -uo pipefail
old_vr=$1
out=${OUT:-/tmp/out}; mkdir -p "$out"
source scripts/sweep_args.sh
step() { echo "=== [$(date +%T)] $*"; }
old_src=$(mktemp -d)
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$old_src"
cp "$old_vr" "$old_src/common/vector_reads.cuh"
cmake -S . -B build-gpu -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1
cmake -S "$old_src" -B build-old -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1
cmake --build build-old -j 16 --target step09_cluster_rows >"$out/build_old.log" 2>&1 || { tail "$out/build_old.log"; exit 1; }
cmake --build build-gpu -j 16 --target steps step09_cluster_rows >"$out/build.log" 2>&1 || { tail "$out/build.log"; exit 1; }
step built
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/nvidia-smi.txt"
cols=4097,6000,8192,8193,12289,16385,2^20+3
for round in 1 2; do
  for which in old new; do
    b=build-gpu; [ $which = old ] && b=build-old
    $b/step09_cluster_rows --n 2^26 --cols $cols --variant block_row,warp_row,auto --dtype all --reps 30 \
      --csv "$out/ab_$which.csv" >>"$out/ab_runs.txt" 2>&1 || echo "FAILED $which"
    step "round $round $which"
  done
done
ctest --test-dir build-gpu -R 'gpu_step09' -E 'large' --output-on-failure >"$out/ctest_step09.log" 2>&1
grep -E 'tests passed|Failed|\*\*\*' "$out/ctest_step09.log"
for s in step06_cooperative_groups step07_cooperative_grid step09_cluster_rows; do
  build-gpu/$s --check --dtype all --offset 0,1,2,3 $(verify_args $s) >"$out/verify_sweep_$s.txt" 2>&1
  echo "$s: exit $?, $(grep -c ' ok ' "$out/verify_sweep_$s.txt") ok, $(grep -c FAILED "$out/verify_sweep_$s.txt") failed"
done
step verified
build-gpu/step09_cluster_rows $(sweep_args step09_cluster_rows) --dtype all --reps 50 --csv "$out/step09_cluster_rows.csv" \
  >"$out/sweep_step09_cluster_rows.txt" 2>&1; echo "sweep: exit $?"
step done

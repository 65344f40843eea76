#!/usr/bin/env bash
# Step 09's rows after slice_sum's float change: step 09's CTest tests (but the 2^31 one) and
# the rows sweep the committed CSV holds. OUT=/tmp/out bash final.sh
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
source scripts/sweep_args.sh
cmake -S . -B build-gpu -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1
cmake --build build-gpu -j 16 --target step09_cluster_rows step09_clusters cluster_cost >"$out/build.log" 2>&1 || { tail "$out/build.log"; exit 1; }
echo "built $(date +%T)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/nvidia-smi.txt"
ctest --test-dir build-gpu -R 'gpu_step09' -E 'large' --output-on-failure >"$out/ctest_step09.log" 2>&1
grep -E 'tests passed|Failed|\*\*\*' "$out/ctest_step09.log"
build-gpu/step09_cluster_rows $(sweep_args step09_cluster_rows) --dtype all --reps 50 --csv "$out/step09_cluster_rows.csv" \
  >"$out/sweep_step09_cluster_rows.txt" 2>&1; echo "sweep: exit $? $(date +%T)"

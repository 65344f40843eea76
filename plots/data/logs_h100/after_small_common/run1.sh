#!/usr/bin/env bash
# H100 re-check after the small-common/ redesign, part 1: build, every CTest test but the large
# ones and the mutation test, timing samples against the committed CSVs, the pitfall logs the
# chapters quote. Run from the repository root on the GPU machine; writes into $OUT.
set -uo pipefail
build=build-gpu
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/nvidia-smi.txt" 2>&1
cmake -S . -B $build -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 &&
  cmake --build $build -j 16 >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
echo "built at $(date +%T)"
ctest --test-dir $build -j4 -E 'large|mutation' --output-on-failure >"$out/ctest_all_but_large_and_mutation.log" 2>&1
tail -4 "$out/ctest_all_but_large_and_mutation.log"; echo "ctest done at $(date +%T)"
s() { local name=$1; shift; "$build/$@" --csv "$out/sample_$name.csv" >"$out/sample_$name.txt" 2>&1; echo "$name: exit $?"; }
s step03 step03_atomic_one_pass --n 2^20,2^24,2^28 --dtype all
s step05 step05_vectorized --n 2^20,2^24,2^28
s step07 step07_cooperative_grid --n 2^20,2^24,2^28
s batched_step07 step07_cooperative_grid --n 2^12,2^16,2^20 --batch 50
s step09 step09_clusters --n 2^20,2^24,2^28
s step06 step06_cooperative_groups --n 2^24
s step06_filter step06_filter --n 2^24
s step07_normalize step07_normalize --n 2^20,2^24
s step09_cluster_rows step09_cluster_rows --n 2^26 --cols 32,256,2^20
python3 plots/data/logs_h100/after_small_common/cmp.py plots/data/h100_80gb_hbm3 "$out"/sample_*.csv >"$out/compare_with_committed.txt"
tail -1 "$out/compare_with_committed.txt"
# The outputs chapters 07 and 09 quote (pitfalls), re-made with the new error lines.
slug=h100_80gb_hbm3
{ for cmd in "--check --variant grid_sync --blocks 65536 --n 2^20" \
             "--check --variant grid_sync --n 2^20 --dtype float --repeat-results 20" \
             "--check --variant sync_no_coop --n 2^20"; do
    echo "\$ ./step07 $cmd"
    # shellcheck disable=SC2086
    "$build/step07_cooperative_grid" $cmd 2>&1
    echo "(exit $?)"
  done
  echo "\$ CUDA_VISIBLE_DEVICES= ./step07 --check"
  CUDA_VISIBLE_DEVICES= "$build/step07_cooperative_grid" --check 2>&1
  echo "(exit $?)"
} >"$out/step07_pitfalls_$slug.txt"
bash scripts/step09_pitfalls.sh "$build" >"$out/step09_pitfalls_$slug.txt" 2>&1
# --variant lists and --cluster with a fixed-size variant (issue 23 item 5)
{ for cmd in "--check --variant cluster_16,one_cluster --n 2^20" "--check --variant all --cluster 3 --n 2^20" \
             "--check --variant dims_2 --cluster 3 --n 2^20"; do
    echo "\$ ./step09 $cmd"; "$build/step09_clusters" $cmd 2>&1; echo "(exit $?)"; done; } >"$out/variant_lists.txt"
cat "$out/variant_lists.txt"
echo "done at $(date +%T)"

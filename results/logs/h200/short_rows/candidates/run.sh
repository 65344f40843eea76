#!/usr/bin/env bash
# Issue 24 items 9 and 15, one GPU: (a) step 09's rows: the committed code (C0) against three
# candidates, built side by side with nvcc from patched copies (ab_tmp/step09_inc), checked,
# then run in turns; (b) the hybrid floor (ab_tmp/hybrid_bench.cuh) against the committed one
# on the shapes where the floor writes, and a few reads, in turns. Results into $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out/rows" "$out/floor"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/nvidia-smi.txt" 2>&1
mkdir -p ab_tmp/bin
build_cand() {  # name INT_ENDS_FIRST WARP_BATCH WARP_ENDS_FIRST REST_BATCH WARP_LEAD128
  nvcc -O3 -DNDEBUG -arch=sm_90 -std=c++17 -lineinfo -Iab_tmp/step09_inc -DINT_ENDS_FIRST=$2 -DWARP_BATCH=$3 \
    -DWARP_ENDS_FIRST=$4 -DREST_BATCH=$5 -DWARP_LEAD128=$6 ab_tmp/step09_inc/step09_cluster_rows.cu -o ab_tmp/bin/$1 -lpthread \
    -Xptxas -v >"$out/rows/build_$1.log" 2>&1 || echo "build $1 FAILED"
}
build_cand C0 0 4 0 0 0 & build_cand C2 1 4 1 1 0 & build_cand C3 1 8 1 1 0 & build_cand C4 1 8 0 1 0 &
build_cand C5 1 4 0 1 1 & build_cand C7 1 8 1 1 1 &
other=$(mktemp -d); tar --exclude='./build*' --exclude=./.git --exclude=./ab_tmp -cf - . | tar -xf - -C "$other"
cp ab_tmp/hybrid_bench.cuh "$other/common/bench.cuh"
targets="step05_vectorized step06_cooperative_groups step06_filter step07_normalize"
for pair in ".:fb1" "$other:fb2"; do
  s=${pair%%:*}; b=${pair##*:}
  (cmake -S "$s" -B "$b" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1 &&
   cmake --build "$b" -j 5 --target $targets >"$out/floor/build_$b.log" 2>&1 || echo "build $b FAILED") &
done
wait
echo "built at $(date +%T)"
lens=513,1001,2049,1024,2048,4096,4097,6000,8192,8193,12289,16384,16385,2^17,2^20,2^20+3
for c in C2 C3 C4 C5 C7; do
  ab_tmp/bin/$c --check --dtype all --offset 0,1,2,3 --n 2^26,2^20+300 --cols $lens,33,100 >"$out/rows/check_$c.txt" 2>&1
  echo "check $c: exit $?, $(grep -c ' ok ' "$out/rows/check_$c.txt") ok, $(grep -c FAILED "$out/rows/check_$c.txt") failed"
done
for round in 1 2; do
  for c in C0 C2 C3 C4 C5 C7; do
    ab_tmp/bin/$c --variant auto,warp_row --n 2^26 --cols $lens --dtype all --reps 30 --csv "$out/rows/$c.csv" \
      >>"$out/rows/runs.txt" 2>&1 || echo "run $c FAILED"
  done
  echo "rows round $round done at $(date +%T)"
done
for round in 1 2; do
  for b in fb1 fb2; do
    $b/step05_vectorized --variant v4_batch4 --n 2^22,2^24,2^26,2^28,2^30 --dtype all --reps 30 --csv "$out/floor/$b.csv" >>"$out/floor/runs.txt" 2>&1
    $b/step06_cooperative_groups --variant auto --n 2^26 --cols 1,2,4,8,16,64,1024,2^20 --dtype all --reps 30 --csv "$out/floor/$b.csv" >>"$out/floor/runs.txt" 2>&1
    $b/step06_filter --variant warp_aggregated --n 2^26 --pass-rate 0,1,50,100 --dtype all --reps 30 --csv "$out/floor/$b.csv" >>"$out/floor/runs.txt" 2>&1
    $b/step07_normalize --variant two_pass --n 2^24,2^26,2^28 --dtype all --reps 30 --csv "$out/floor/$b.csv" >>"$out/floor/runs.txt" 2>&1
  done
  echo "floor round $round done at $(date +%T)"
done
cp "$out/floor/fb1.csv" "$out/floor/current.csv"; cp "$out/floor/fb2.csv" "$out/floor/other.csv"
bash scripts/floor_ab.sh summary "$out/floor" | tail -8

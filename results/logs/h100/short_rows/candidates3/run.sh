#!/usr/bin/env bash
# Round 3 of issue 24 item 15 (rows of 4097 on the H100, int rows of 12289 on the H200): step
# 09's committed rows code (C0) against candidates built beside it from patch.py's switches;
# all run in turns, twice, then each candidate verified (the timed runs check too), `auto` at 2^26 elements. Run from the repository
# root on the GPU machine; results into $OUT. README.md says what each candidate is.
set -uo pipefail
here=plots/data/logs_h100/short_rows/candidates3
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/nvidia-smi.txt" 2>&1
rm -rf ab_tmp && mkdir -p ab_tmp/src ab_tmp/bin
cp steps/step09_clusters/*.cuh ab_tmp/src/
# The candidates patch the rows program of commit 4b2e668 (SRC: a copy of it, carried to the machine).
python3 $here/patch.py "${SRC:-steps/step09_clusters/step09_cluster_rows.cu}" ab_tmp/src/step09_cluster_rows.cu || exit 1
build_cand() {  # name SLICE_FORM WARP_MINB WARP_ENDS
  nvcc -O3 -DNDEBUG -arch=sm_90 -std=c++17 -lineinfo -Icommon -Iab_tmp/src -DSLICE_FORM=$2 -DMID_BATCH=8 \
    -DWARP_MINB=$3 -DWARP_ENDS=$4 ab_tmp/src/step09_cluster_rows.cu -o ab_tmp/bin/$1 -lpthread -Xptxas -v \
    >"$out/build_$1.log" 2>&1 || echo "build $1 FAILED"
}
cands=${CANDS:-C0 C1 C2 C3 C4}
spec() { case $1 in C0) echo 0 0 false;; C1) echo 2 2 false;; C2) echo 1 3 false;; C3) echo 2 2 true;; C4) echo 1 2 false;; esac; }
# shellcheck disable=SC2046
for c in $cands; do build_cand $c $(spec $c) & done
wait
echo "built at $(date +%T)"
for c in $cands; do
  echo "$c: $(grep -A3 -E "Compiling entry function '_Z(9rows_warp|12rows_cluster)" "$out/build_$c.log" |
    grep -oE "rows_(warp|cluster)I.|[0-9]+ bytes spill stores|Used [0-9]+ registers" | paste -sd' ')"
done >"$out/registers.txt"
cat "$out/registers.txt"
for c in C0 C3; do  # the warp per row's loads as scheduled: how many 16-byte loads are issued before the first use
  cuobjdump -sass -fun '_Z9rows_warpIjEvPKT_mmPS0_' ab_tmp/bin/$c >"$out/sass_rows_warp_int_$c.txt" 2>&1
done
lens=513,1001,2049,3000,4096,4097,6000,8192,8193,12289,16385,2^17,2^20,2^20+3
for round in 1 2; do
  for c in $cands; do
    ab_tmp/bin/$c --variant auto --n 2^26 --cols $lens --dtype all --reps 30 --csv "$out/$c.csv" \
      >>"$out/runs.txt" 2>&1 || echo "run $c FAILED"
  done
  echo "round $round done at $(date +%T)"
done
python3 plots/data/logs_h200/short_rows/candidates/summary.py "$out" "$(echo $cands | tr " " ,)" >"$out/summary.txt"
cat "$out/summary.txt"
for c in $cands; do
  ab_tmp/bin/$c --check --variant auto,warp_row,block_row,cluster_row --dtype all --offset 0,3 --n 2^26,2^20+300 --cols $lens,33,100 >"$out/check_$c.txt" 2>&1
  echo "check $c: exit $?, $(grep -c ' ok ' "$out/check_$c.txt") ok, $(grep -c FAILED "$out/check_$c.txt") failed"
done

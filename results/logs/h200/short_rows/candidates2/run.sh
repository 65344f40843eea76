#!/usr/bin/env bash
# Round 2 of issue 24 item 15: step 09's warp per row (rows_warp) at 513-16385, candidates that
# differ only in rows_warp's thread_sum (batch, ends first, remainder as one guarded batch);
# the slice path of C4-C11 is C2's (ends first and the remainder batch for both types). ncu:
# C0's warp_row at 4096 vs 4097 (int). Results into $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out/rows2"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/nvidia-smi.txt" 2>&1
mkdir -p ab_tmp/bin
build_cand() {  # name INT_ENDS_FIRST WARP_BATCH WARP_ENDS_FIRST WARP_REST REST_BATCH
  nvcc -O3 -DNDEBUG -arch=sm_90 -std=c++17 -lineinfo -Iab_tmp/step09_inc -DINT_ENDS_FIRST=$2 -DWARP_BATCH=$3 \
    -DWARP_ENDS_FIRST=$4 -DWARP_REST=$5 -DREST_BATCH=$6 -DWARP_LEAD128=0 ab_tmp/step09_inc/step09_cluster_rows.cu \
    -o ab_tmp/bin/$1 -lpthread -Xptxas -v >"$out/rows2/build_$1.log" 2>&1 || echo "build $1 FAILED"
}
build_cand C0 0 4 0 0 0 & build_cand C4 1 8 0 0 1 & build_cand C8 1 8 0 1 1 & build_cand C9 1 8 1 0 1 &
build_cand C10 1 16 0 1 1 & build_cand C11 1 4 0 1 1 &
wait
echo "built at $(date +%T)"
lens=513,1001,1024,2048,2049,3000,4096,4097,6000,8192,8193,12289,16385,2^20
for c in C4 C8 C9 C10 C11; do
  ab_tmp/bin/$c --check --dtype all --offset 0,1,2,3 --n 2^26,2^20+300 --cols $lens,33,100 >"$out/rows2/check_$c.txt" 2>&1
  echo "check $c: exit $?, $(grep -c ' ok ' "$out/rows2/check_$c.txt") ok, $(grep -c FAILED "$out/rows2/check_$c.txt") failed"
done
for round in 1 2; do
  for c in C0 C4 C8 C9 C10 C11; do
    ab_tmp/bin/$c --variant auto --n 2^26 --cols $lens --dtype all --reps 30 --csv "$out/rows2/$c.csv" \
      >>"$out/rows2/runs.txt" 2>&1 || echo "run $c FAILED"
  done
  echo "rows round $round done at $(date +%T)"
done
for cols in 4096 4097; do
  ncu --clock-control none --kernel-name regex:rows_warp --launch-skip 2 --launch-count 1 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum \
    ab_tmp/bin/C0 --variant warp_row --n 2^26 --cols $cols --dtype int --reps 3 >"$out/rows2/ncu_C0_int_$cols.txt" 2>&1
  echo "ncu $cols: exit $?"
done

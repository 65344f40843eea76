#!/usr/bin/env bash
# The device calls of round 3 (issue 24 item 15), from the repository root, results as one
# archive in $OUT (a call brings back at most 8 files):
#   final.sh cand     run.sh's candidates (the H200 run: C0, C1, C3, C4)
#   final.sh sweep    scripts/remeasure.sh rows with the adopted code (C3): step 09's rows
#                     verified and swept, step 06's auto in the same job
#   final.sh checks   CTest's step 09 gpu tests (the large ones excluded), memcheck and racecheck
#                     of the rows at odd lengths, the SASS of rows_warp<unsigned>
set -uo pipefail
mode=${1:?usage: final.sh cand|sweep|checks}
here=plots/data/logs_h100/short_rows/candidates3
final=${OUT:-/tmp/out}; work=/tmp/round3_$mode; rm -rf "$work"; mkdir -p "$work"
status=0
case $mode in
  cand) SRC=ab_src/step09_cluster_rows.cu CANDS="C0 C1 C3 C4" OUT=$work bash $here/run.sh || status=1 ;;
  sweep) BUILD=build-gpu OUT=$work bash scripts/remeasure.sh rows || status=1 ;;
  checks)
    cmake -S . -B build-gpu -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >"$work/configure.log" 2>&1 &&
      cmake --build build-gpu -j 16 --target step09_cluster_rows step09_clusters cluster_cost >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
    ctest --test-dir build-gpu -R 'step09' -L gpu -E large --output-on-failure >"$work/ctest_step09_rows.log" 2>&1 || status=1
    tail -n 3 "$work/ctest_step09_rows.log"
    for tool in memcheck racecheck; do
      compute-sanitizer --tool $tool --error-exitcode 9 build-gpu/step09_cluster_rows --check --variant auto,warp_row,block_row,cluster_row \
        --dtype all --offset 0,1 --n 2^20+300 --cols 513,1001,4097,8193,12289,16385 >"$work/${tool}_step09_rows.log" 2>&1 || status=1
      echo "$tool step09 rows: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$work/${tool}_step09_rows.log" | tail -1)"
    done
    cuobjdump -sass -fun '_Z9rows_warpIjEvPKT_mmPS0_' build-gpu/step09_cluster_rows >"$work/sass_rows_warp_int.txt" 2>&1
    cuobjdump -sass -fun '_Z12rows_clusterIjEvPKT_mmPS0_' build-gpu/step09_cluster_rows >"$work/sass_rows_cluster_int.txt" 2>&1 ;;
esac
tar -C "$work" -czf "$final/$mode.tgz" . && echo "archived $(tar -tzf "$final/$mode.tgz" | wc -l) entries"
exit $status

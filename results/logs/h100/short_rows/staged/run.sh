#!/usr/bin/env bash
# Issue 24 item 15, round 4: rows shorter than 513 that packed_rows cannot take (lengths that
# are not powers of two; matrices that are not 16-byte aligned) go to staged_rows.cuh now, no
# longer to a thread or a warp per row. From the repository root on the GPU machine; results
# as one archive in $OUT (a call returns at most 8 files).
#   run.sh checks   build; before/after (the rows program of commit aaf9e37, SRC, against this
#                   one, in turns, twice); CTest's step 09 gpu tests (large ones excluded);
#                   memcheck and racecheck of staged_rows; the mutant staged_drop_tail
#   run.sh sweep    scripts/remeasure.sh rows (the sweep now has 3, 12, 33, 100, 300, 511)
set -uo pipefail
mode=${1:?usage: run.sh checks|sweep}
final=${OUT:-/tmp/out}; work=/tmp/staged_$mode; rm -rf "$work"; mkdir -p "$work"
status=0
case $mode in
  checks)
    cmake -S . -B build-gpu -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >"$work/configure.log" 2>&1 &&
      cmake --build build-gpu -j 16 --target step09_cluster_rows step09_clusters cluster_cost mutant_step09_staged_drop_tail \
        >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
    nvcc -O3 -DNDEBUG -arch=sm_90 -std=c++17 -lineinfo -Icommon -Isteps/step09_clusters "${SRC:-ab_src/step09_cluster_rows_r3.cu}" \
      -o build-gpu/before_rows -lpthread >"$work/build_before.log" 2>&1 || { echo "before: build FAILED"; status=1; }
    echo "built at $(date +%T)"
    grep -A3 -E "rows_staged" "$work/build.log" | grep -E "Used" | head -2
    for round in 1 2; do
      for b in before_rows step09_cluster_rows; do
        for off in 0 1; do
          cols=3,12,33,100,300,511; [ $off = 1 ] && cols=3,16,33,64,128,256,300,511
          build-gpu/$b --variant auto --n 2^26 --offset $off --cols $cols --dtype all --reps 30 --csv "$work/$b.csv" \
            >>"$work/before_after.txt" 2>&1 || { echo "$b FAILED"; status=1; }
        done
      done
    done
    echo "before/after done at $(date +%T)"
    ctest --test-dir build-gpu -R 'step09' -L gpu -E large --output-on-failure >"$work/ctest_step09_rows.log" 2>&1 || status=1
    tail -n 3 "$work/ctest_step09_rows.log"
    for tool in memcheck racecheck; do
      compute-sanitizer --tool $tool --error-exitcode 9 build-gpu/step09_cluster_rows --check --variant staged_rows,auto \
        --dtype all --offset 0,1 --n 4095,2^20+300 --cols 3,17,33,300,511,512,4097 >"$work/${tool}_staged_rows.log" 2>&1 || status=1
      echo "$tool staged rows: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$work/${tool}_staged_rows.log" | tail -1)"
    done
    [ "${MUTANT:-1}" = 1 ] && { python3 tests/mutation.py run build-gpu "$work/mutation_staged.log" --only staged_drop_tail >/dev/null 2>&1 || status=1
      echo "mutation staged_drop_tail: exit $? $(tail -n 2 "$work/mutation_staged.log" | tr '\n' ' ')"; } ;;
  sweep) BUILD=build-gpu OUT=$work bash scripts/remeasure.sh rows || status=1 ;;
esac
tar -C "$work" -czf "$final/$mode.tgz" . && echo "archived $(tar -tzf "$final/$mode.tgz" | wc -l) entries"
exit $status

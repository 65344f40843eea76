#!/usr/bin/env bash
# Issue 24 item 15, round 5: staged_rows sums each row with a group of G lanes (G from the row
# length, widened against shared-memory bank conflicts) instead of a thread per row up to 32
# and a warp per row above. From the repository root on the GPU machine; one archive in $OUT.
#   run.sh candidates  build; round 4's staged_rows (ab_src/r4) and four rules for G in turns,
#                      twice: d2 (widened while a bank is hit more than twice), d4 (more than 4
#                      times), base (never widened), p8 (8 elements a lane, then d2), and with
#                      RULES="d4 pipe": d4 against pipe (d4 whose next tile's loads are in flight
#                      during the sum). THIS_RULE names the rule this checkout has (final: at most
#                      32 elements a lane, then d4; a block per tile; the adds unrolled by 4); the
#                      others are built from ab_src/cand_<rule>. CSVs named by rule. Then --check
#                      of this one at EVERY length 1-512, offsets 0-3; CTest's step 09 gpu tests (large ones excluded);
#                      memcheck and racecheck of staged_rows; the mutants staged_drop_tail and
#                      staged_no_exchange
#                      (COMPARE_ONLY=1: the turns alone; the first call on the H100 ran the
#                      candidates as a bare name, not found: the turns were run again so)
#                      (DIAG=1: also the SASS of rows_staged<float> of each and ncu of one
#                      launch at rows of 33 and 300)
#   run.sh lanes       every G at 29 lengths, three grid sizes (ab_src/cand_env)
#   run.sh sweep       scripts/remeasure.sh rows
set -uo pipefail
mode=${1:?usage: run.sh candidates|sweep}
final=${OUT:-/tmp/out}; work=/tmp/groups_$mode; rm -rf "$work"; mkdir -p "$work"
status=0
case $mode in
  candidates)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$work/nvidia-smi.txt" 2>&1
    cmake -S . -B build-gpu -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >"$work/configure.log" 2>&1 &&
      cmake --build build-gpu -j 16 --target step09_cluster_rows step09_clusters cluster_cost \
        mutant_step09_staged_drop_tail mutant_step09_staged_no_exchange >"$work/build.log" 2>&1 &
    this_rule=${THIS_RULE:-final}; others=""
    # RULES may also name u4 (d4, inner loop unrolled by 4), l8 (d4, 8 loads a thread: tiles of
    # 8192) and pu4 (pipe unrolled by 4)
    for r in ${RULES:-d2 d4 base p8}; do [ "$r" = "$this_rule" ] || others="$others cand_$r"; done
    for c in ${BEFORE-r4} $others; do
      nvcc -O3 -DNDEBUG -arch=sm_90 -std=c++17 -lineinfo -Xptxas -v -Icommon -Isteps/step09_clusters \
        "ab_src/$c/step09_cluster_rows.cu" -o "build-gpu-$c" -lpthread >"$work/build_$c.log" 2>&1 &
    done
    wait
    bins=""; for c in ${BEFORE-r4}; do bins="./build-gpu-$c "; done  # BEFORE="": without round 4
    bins="${bins}build-gpu/step09_cluster_rows"; for c in $others; do bins="$bins ./build-gpu-$c"; done
    for b in $bins; do
      [ -x "$b" ] || { echo "$b: build FAILED"; tail -20 "$work/build.log"; status=1; }
    done
    echo "built at $(date +%T)"
    grep -A2 "rows_staged" "$work/build.log" | grep -E "Used" | head -2
    for round in 1 2; do
      for b in $bins; do
        name=$(basename "$b"); [ "$name" = step09_cluster_rows ] && name=$this_rule; name=${name#build-gpu-}; name=${name#cand_}
        for off in 0 1; do
          cols=3,12,17,24,31,33,48,63,100,127,200,300,383,511; [ $off = 1 ] && cols=16,32,33,64,100,128,256,512
          "$b" --variant staged_rows --n 2^26 --offset $off --cols $cols --dtype all --reps 30 --csv "$work/$name.csv" \
            >>"$work/candidates.txt" 2>&1 || { echo "$b FAILED"; status=1; }
        done
      done
      echo "round $round done at $(date +%T)"
    done
    if [ "${DIAG:-0}" = 1 ]; then  # SASS of rows_staged<float> and ncu of one launch, rows of 33 and 300
      for b in $bins; do
        name=$(basename "$b"); [ "$name" = step09_cluster_rows ] && name=$this_rule; name=${name#build-gpu-}; name=${name#cand_}
        cuobjdump -sass "$b" | awk '/Function : .*rows_staged.*If/{p=1} /Function : / && !/rows_staged.*If/{p=0} p' >"$work/sass_$name.txt"
        for cols in 33 300; do
          timeout 120 ncu --clock-control none -k regex:rows_staged -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
            --section WarpStateStats --section Occupancy --section LaunchStats "$b" --variant staged_rows --dtype float \
            --n 2^26 --cols $cols --reps 1 --warmup 0 >"$work/ncu_${name}_$cols.txt" 2>&1 || echo "ncu $name $cols: rc $?"
        done
      done
      echo "diag done at $(date +%T)"
    fi
    [ "${COMPARE_ONLY:-0}" = 1 ] && { tar -C "$work" -czf "$final/$mode.tgz" . ; exit $status; }
    build-gpu/step09_cluster_rows --check --variant staged_rows,auto --dtype all --offset 0,1,2,3 --n 2^20+300 \
      --cols "$(seq -s, 1 512)" >"$work/check_every_length.txt" 2>&1 || { echo "check FAILED"; status=1; }
    echo "check of every length: $(grep -c ' ok ' "$work/check_every_length.txt") ok, $(grep -ci 'fail\|wrong' "$work/check_every_length.txt") failing lines, at $(date +%T)"
    ctest --test-dir build-gpu -R 'step09' -L gpu -E large --output-on-failure >"$work/ctest_step09_rows.log" 2>&1 || status=1
    tail -n 3 "$work/ctest_step09_rows.log"
    for tool in memcheck racecheck; do
      compute-sanitizer --tool $tool --error-exitcode 9 build-gpu/step09_cluster_rows --check --variant staged_rows,auto \
        --dtype all --offset 0,1 --n 4095,2^20+300 --cols 3,4,16,17,32,33,100,300,511,512 >"$work/${tool}_staged_rows.log" 2>&1 || status=1
      echo "$tool staged rows: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$work/${tool}_staged_rows.log" | tail -1)"
    done
    for m in staged_drop_tail staged_no_exchange; do
      python3 tests/mutation.py run build-gpu "$work/mutation_$m.log" --only $m >/dev/null 2>&1; rc=$?
      [ $rc = 0 ] || status=1
      echo "mutation $m: exit $rc $(tail -n 2 "$work/mutation_$m.log" | tr '\n' ' ')"
    done ;;
  lanes)  # every G (1-32) at each length, with the grid as many blocks as fit (tpb 0), one tile a
          # block (1) or four (4): ab_src/cand_env reads STAGED_LANES and STAGED_TPB
    nvcc -O3 -DNDEBUG -arch=sm_90 -std=c++17 -lineinfo -Icommon -Isteps/step09_clusters ab_src/cand_env/step09_cluster_rows.cu \
      -o build-gpu-env -lpthread >"$work/build_env.log" 2>&1 || { echo "env: build FAILED"; exit 1; }
    for tpb in 0 1 4; do
      for lanes in 1 2 4 8 16 32; do
        STAGED_LANES=$lanes STAGED_TPB=$tpb ./build-gpu-env --variant staged_rows --n 2^26 --dtype float --reps 20 \
          --cols 3,5,7,9,12,16,17,20,24,31,32,33,40,48,63,64,80,100,127,128,150,200,250,256,300,383,400,511,512 \
          --csv "$work/lanes${lanes}_tpb$tpb.csv" >>"$work/lanes.txt" 2>&1 || { echo "G $lanes tpb $tpb FAILED"; status=1; }
      done
      echo "tpb $tpb done at $(date +%T)"
    done ;;
  sweep) BUILD=build-gpu OUT=$work bash scripts/remeasure.sh rows || status=1 ;;
esac
echo "done at $(date +%T)"
tar -C "$work" -czf "$final/$mode.tgz" . && echo "archived $(tar -tzf "$final/$mode.tgz" | wc -l) entries"
exit $status

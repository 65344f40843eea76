#!/usr/bin/env bash
# Part 2 (same machine, after run1.sh): the samples and quoted outputs again (run1's came back
# only in part), then CTest's large tests (or, with MUTATION=1, the mutation test and the large
# tests not yet passed), all kept in build-gpu/evidence and packed into $OUT/evidence.tgz.
set -uo pipefail
build=build-gpu
ev=$build/evidence; mkdir -p "$ev"
if [ "${MUTATION:-0}" = 0 ]; then
  s() { local name=$1; shift; rm -f "$ev/sample_$name.csv"; "$build/$@" --csv "$ev/sample_$name.csv" >"$ev/sample_$name.txt" 2>&1; echo "$name: exit $?"; }
  s step03 step03_atomic_one_pass --n 2^20,2^24,2^28 --dtype all
  s step05 step05_vectorized --n 2^20,2^24,2^28
  s step07 step07_cooperative_grid --n 2^20,2^24,2^28
  s batched_step07 step07_cooperative_grid --n 2^12,2^16,2^20 --batch 50
  s step09 step09_clusters --n 2^20,2^24,2^28
  s step06 step06_cooperative_groups --n 2^24
  s step06_filter step06_filter --n 2^24
  s step07_normalize step07_normalize --n 2^20,2^24
  s step09_cluster_rows step09_cluster_rows --n 2^26 --cols 32,256,2^20
  python3 plots/data/logs_h100/after_small_common/cmp.py plots/data/h100_80gb_hbm3 "$ev"/sample_*.csv >"$ev/compare_with_committed.txt"
  tail -1 "$ev/compare_with_committed.txt"
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
  } >"$ev/step07_pitfalls_$slug.txt"
  bash scripts/step09_pitfalls.sh "$build" >"$ev/step09_pitfalls_$slug.txt" 2>&1
  timeout 480 ctest --test-dir $build -j3 -R 'large' -E mutation --output-on-failure >"$ev/ctest_large.log" 2>&1
  grep -E 'Test +#|tests passed' "$ev/ctest_large.log"
else
  timeout 540 ctest --test-dir $build -j3 -R "${TESTS:-mutation}" --output-on-failure >"$ev/ctest_mutation.log" 2>&1
  grep -E 'Test +#|tests passed' "$ev/ctest_mutation.log"
  cp $build/mutation_test.log "$ev/" 2>/dev/null
fi
tar czf "${OUT:-/tmp}/evidence.tgz" -C $build evidence
echo "done at $(date +%T)"

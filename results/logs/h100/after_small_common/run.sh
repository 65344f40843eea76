#!/usr/bin/env bash
# H100 re-check after the small-common/ redesign (issue 23). From the repository root on the GPU
# machine; one mode per call (the device tool's calls are at most 10 minutes):
#   part1     build, every CTest test but the large ones and the mutation test, the samples, the
#             pitfall logs the chapters quote, --variant lists; into $OUT
#   part2     the samples and pitfall logs again, then the large tests; into build-gpu/evidence
#   mutation  the mutation test (TESTS=regex: other tests instead); into build-gpu/evidence
#   recheck   after the flag moves (ef33365..): build, CTest but the large and mutation tests,
#             the mutation test, the samples; into build-gpu/evidence
# (Sessions 1-2 ran this as run1.sh = part1 and run2.sh = part2/mutation, the same commands;
# merged here so that the two do not repeat each other.) part2, mutation and recheck pack
# build-gpu/evidence into $OUT/evidence.tgz.
set -uo pipefail
mode=${1:-part1}
build=build-gpu
out=${OUT:-/tmp/out}; mkdir -p "$out"
ev=$build/evidence
[ "$mode" = part1 ] && ev=$out
mkdir -p "$ev"
slug=h100_80gb_hbm3
here=plots/data/logs_h100/after_small_common
build_all() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$ev/nvidia-smi.txt" 2>&1
  cmake -S . -B $build -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >"$ev/configure.log" 2>&1 &&
    cmake --build $build -j 16 >"$ev/build.log" 2>&1 || { tail -50 "$ev/build.log"; exit 1; }
  echo "built at $(date +%T)"
}
samples() {
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
  python3 $here/cmp.py plots/data/h100_80gb_hbm3 "$ev"/sample_*.csv >"$ev/compare_with_committed.txt"
  tail -1 "$ev/compare_with_committed.txt"
}
pitfalls() {
  bash scripts/step07_pitfalls.sh "$build" >"$ev/step07_pitfalls_$slug.txt" 2>&1
  bash scripts/step09_pitfalls.sh "$build" >"$ev/step09_pitfalls_$slug.txt" 2>&1
}
case $mode in
  part1)
    build_all
    ctest --test-dir $build -j4 -E 'large|mutation' --output-on-failure >"$ev/ctest_all_but_large_and_mutation.log" 2>&1
    tail -4 "$ev/ctest_all_but_large_and_mutation.log"
    samples; pitfalls
    # --variant lists and --cluster with a fixed-size variant (issue 23 item 5)
    { for cmd in "--check --variant cluster_16,one_cluster --n 2^20" "--check --variant all --cluster 3 --n 2^20" \
                 "--check --variant dims_2 --cluster 3 --n 2^20"; do
        echo "\$ ./step09 $cmd"; "$build/step09_clusters" $cmd 2>&1; echo "(exit $?)"; done; } >"$ev/variant_lists.txt"
    cat "$ev/variant_lists.txt" ;;
  part2)
    samples; pitfalls
    timeout 480 ctest --test-dir $build -j3 -R 'large' -E mutation --output-on-failure >"$ev/ctest_large.log" 2>&1
    grep -E 'Test +#|tests passed' "$ev/ctest_large.log" ;;
  mutation)
    timeout 540 ctest --test-dir $build -j3 -R "${TESTS:-mutation}" --output-on-failure >"$ev/ctest_mutation.log" 2>&1
    grep -E 'Test +#|tests passed' "$ev/ctest_mutation.log"
    cp $build/mutation_test.log "$ev/" 2>/dev/null ;;
  recheck)
    rm -rf "$ev"; mkdir -p "$ev"
    build_all
    ctest --test-dir $build -j4 -E 'large|mutation' --output-on-failure >"$ev/ctest_all_but_large_and_mutation.log" 2>&1
    tail -4 "$ev/ctest_all_but_large_and_mutation.log"
    ctest --test-dir $build -R mutation --output-on-failure >"$ev/ctest_mutation.log" 2>&1
    grep -E 'tests passed' "$ev/ctest_mutation.log"; cp $build/mutation_test.log "$ev/" 2>/dev/null
    samples ;;
esac
[ "$mode" = part1 ] || tar czf "$out/evidence.tgz" -C $build evidence
echo "done at $(date +%T)"

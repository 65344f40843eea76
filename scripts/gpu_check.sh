#!/usr/bin/env bash
# The one command for a GPU machine (H100/H200): configure and build, run every CTest test
# (the gpu ones included), the sanitizer runs, a size sweep 2^10..2^30 of every step and
# variant in int and float with CUB and the floor beside them, then the plots and a summary.
# Writes results/<gpu>/<step>.csv (one file per step), plots/*.png, results/logs/ (trimmed
# sanitizer reports, quoted outputs) and, with full logs, $BUILD_DIR/gpu_check/.
# Exit status: non-zero if any part failed.
#   --multi      step 08 on two or more GPUs only (below)
#   --no-sweep   everything but the sweep and the plots (keeps the committed CSVs as they are)
#   STEPS="step06_cooperative_groups step07_cooperative_grid" bash scripts/gpu_check.sh
#                verify and sweep only these steps (their CSVs are replaced, the others kept);
#                CTest and the sanitizers still cover everything, unless
#                CTEST_ARGS="-R step08" (passed to ctest) or SANITIZE=no say otherwise;
#                LARGE=no skips the runs past 2^31 elements (when CTest's large tests just ran)
set -uo pipefail
cd "$(dirname "$0")/.."
# --multi: step 08 on a machine with two or more GPUs: build step08's two programs only
# (step08_multi_grid; step08_nccl_ranks, one process per GPU), their checks (odd and uneven
# sizes, more than 2^32 elements, 1000 launches of the reusable barrier, a bad --gpus, the
# one-GPU waiver, one process per GPU, NCCL's device barrier), then the scaling sweep on all
# GPUs and on one, and NCCL with one process per GPU. Writes into OUT_DIR (default
# build-multi/out): topo.txt, step08_checks.txt, sweep_*.txt, step08_multi_grid.csv. NVLink
# multicast stays off (NCCL_NVLS_ENABLE=0) in every process.
if [ "${1:-}" = --multi ]; then
  export NCCL_NVLS_ENABLE=0
  build=${BUILD_DIR:-build-multi}
  out=${OUT_DIR:-$build/out}
  mkdir -p "$out"
  nvidia-smi topo -m >"$out/topo.txt" 2>&1
  cmake -S . -B "$build" -DCMAKE_CUDA_ARCHITECTURES="${ARCH:-90}" >/dev/null 2>&1
  cmake --build "$build" -j "$(nproc)" --target step08_multi_grid step08_nccl_ranks >"$out/build.txt" 2>&1 || { tail -20 "$out/build.txt"; exit 1; }
  bin=$build/step08_multi_grid
  ranks=$build/step08_nccl_ranks  # one process per GPU, started by nccl_launch.sh
  t="timeout ${STEP_TIMEOUT:-100}"
  show() { echo "\$ $*"; $t "$@"; echo "(exit $?)"; }
  {
    show "$bin" --check --variant all --dtype all --offset 0,1,2,3 --n 1,2,3,31,1023,4099,2^20+1,2^24+7
    show "$bin" --check --dtype all --n 2^32+5 --offset 0,3
    echo "\$ $bin --check --variant peer_barrier --dtype float --n 2^20+1 --repeat-results 1000 --barrier-reps 1000"
    $t "$bin" --check --variant peer_barrier --dtype float --n 2^20+1 --repeat-results 1000 --barrier-reps 1000 | cut -c1-300
    echo "(exit $?)"
    show "$bin" --gpus 3 --n 1024
    echo "\$ CUDA_VISIBLE_DEVICES=0 $bin --n 1024"
    CUDA_VISIBLE_DEVICES=0 "$bin" --n 1024
    echo "(exit $?)"
    show bash scripts/nccl_launch.sh 2 "$ranks" --check --dtype all --n 3,2^20+1,2^28+3
    STEP_TIMEOUT=40 show "$bin" --check --variant nccl_lsa --dtype all --n 2^20+1
  } >"$out/step08_checks.txt" 2>&1
  source scripts/sweep_args.sh
  sizes=$(sweep_args step08_multi_grid)  # --n 2^16,2^18,...,2^32
  csv=$out/step08_multi_grid.csv
  rm -f "$csv"
  $t "$bin" $sizes --dtype all --reps "${REPS:-20}" --csv "$csv" >"$out/sweep_all_gpus.txt" 2>&1
  $t "$bin" $sizes --gpus 1 --dtype all --reps "${REPS:-20}" --csv "$csv" >"$out/sweep_one_gpu.txt" 2>&1
  $t bash scripts/nccl_launch.sh 2 "$ranks" --n 2^20,2^24,2^28,2^30,2^31 --dtype all --reps "${REPS:-20}" --csv "$csv" \
    >"$out/sweep_nccl_processes.txt" 2>&1
  grep -E "\(exit" "$out/step08_checks.txt"
  tail -n 30 "$out/sweep_all_gpus.txt"
  exit 0
fi
sweep=yes
[ "${1:-}" = --no-sweep ] && sweep=no
build=${BUILD_DIR:-build-gpu}
PLOT_PYTHON=${PLOT_PYTHON:-$(bash scripts/find_python.sh || echo python3)}
logs=$build/gpu_check
mkdir -p "$logs" results/logs
status=0
# The steps and the second programs of steps 06 and 09 (step 07's has its own section below).
source scripts/sweep_args.sh  # what each step is verified and swept over (shared with run_all.sh --full)
sweep_steps=$(list_programs "${STEPS:-}" | grep -vx step07_normalize)
gpu_count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$gpu_count" -lt 2 ]; then  # step 08 needs two GPUs; its tests say so (exit 77)
  sweep_steps=$(tr ' ' '\n' <<<"$sweep_steps" | grep -v '^step08' | tr '\n' ' ')
fi
step() { echo; echo "=== [$(date +%H:%M:%S)] $*"; }

step "configure and build (CMAKE_CUDA_ARCHITECTURES=${ARCH:-90})"
cmake -S . -B "$build" -DCMAKE_CUDA_ARCHITECTURES="${ARCH:-90}" -DPLOT_PYTHON="$PLOT_PYTHON" >"$logs/configure.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" >"$logs/build.log" 2>&1 || { cat "$logs"/*.log; echo "build failed"; exit 1; }
"$build/step00_baseline" --check --n 1 >/dev/null 2>&1
if [ $? = 77 ]; then "$build/step00_baseline" --check --n 1; exit 77; fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$logs/nvidia-smi.txt" 2>&1
device=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)

step "ctest (all tests, gpu included)"
# shellcheck disable=SC2086
ctest --test-dir "$build" --output-on-failure ${CTEST_ARGS:-} 2>&1 | tee "$logs/ctest.log" | grep -E "tests passed|Test +#|Failed|\*\*\*" || true
grep -q "100% tests passed" "$logs/ctest.log" || status=1
slug=$("$PLOT_PYTHON" -c "import sys; sys.path.insert(0, 'plots'); import results; print(results.slug('''$device'''))")
cp "$build/mutation_test.log" "results/logs/mutation_test_$slug.log" 2>/dev/null
grep -E "^mutation test:" "$build/mutation_test.log" 2>/dev/null

for mode in racecheck clean; do
  [ "${SANITIZE:-yes}" = yes ] || break
  step "sanitizers: $mode"
  LOG_DIR="$logs/sanitizer" bash scripts/sanitize.sh $mode "$build" | tee "$logs/sanitize_$mode.txt" || status=1
done
cp "$logs"/sanitizer/racecheck_*.trimmed.log results/logs/ 2>/dev/null
for f in results/logs/*.trimmed.log; do mv "$f" "${f%.trimmed.log}.log"; done 2>/dev/null
cp "$logs/sanitize_racecheck.txt" results/logs/racecheck_summary.txt
cp "$logs/sanitize_clean.txt" results/logs/sanitizers_clean_summary.txt

step "outputs the chapters quote (results/logs/)"
{ echo "\$ ./step03 --check --dtype all --n 2^24 --repeat-results 5"
  "$build/step03" --check --dtype all --n 2^24 --repeat-results 5; } >results/logs/step03_repeat_results.txt 2>&1
{ echo "\$ ./step01 --n 2^24"; "$build/step01" --n 2^24; } >results/logs/step01_default_run.txt 2>&1
cat results/logs/step03_repeat_results.txt

step "64-bit sizes: every step and problem shape verified past 2^31 elements (inputs and outputs), offsets 0 and 3"
[ "${LARGE:-yes}" = yes ] || echo "skipped (LARGE=no: CTest's gpu_*large* tests run the same shapes)"
for s in $([ "${LARGE:-yes}" = yes ] && echo "$sweep_steps"); do
  log=$logs/large_n_$s.txt
  : >"$log"
  while read -r program flags; do
    echo "\$ ./$program --check $flags --offset 0,3" >>"$log"
    before=$(wc -l <"$log")
    # shellcheck disable=SC2086
    "$build/$program" --check $flags --offset 0,3 </dev/null >>"$log" 2>&1
    rc=$?
    run=$(tail -n +$((before + 1)) "$log")
    echo "$program $flags: exit $rc, $(grep -c ' ok ' <<<"$run") ok, $(grep -cE 'FAILED|WRONG' <<<"$run") wrong"
    [ $rc = 0 ] || status=1
  done < <(large_n_args "$s")
done

step "verification sweep: every step and variant, 2^10..2^30 and odd sizes, offsets 0..3, int and float"
for s in $sweep_steps; do
  # shellcheck disable=SC2046
  "$build/$s" --check --dtype all --offset 0,1,2,3 $(verify_args "$s") >"$logs/verify_sweep_$s.txt" 2>&1
  rc=$?
  echo "$s: exit $rc, $(grep -c ' ok ' "$logs/verify_sweep_$s.txt") ok, $(grep -cE 'FAILED' "$logs/verify_sweep_$s.txt") failed," \
       "$(grep -cE 'WRONG' "$logs/verify_sweep_$s.txt") wrong on purpose"
  [ $rc = 0 ] || status=1
done

if [ $sweep = yes ] && grep -qw step07_cooperative_grid <<<"$sweep_steps"; then
  step "step 07's normalization: two-pass, one cooperative launch, stateful; 2^16..2^28 and the on-chip limit"
  mkdir -p "results/$slug"
  rm -f "results/$slug/step07_normalize.csv"
  # shellcheck disable=SC2086
  # shellcheck disable=SC2046
  "$build/step07_normalize" $(sweep_args step07_normalize) --dtype all --csv "results/$slug/step07_normalize.csv" \
    ${SWEEP_ARGS:---reps 50} >"$logs/sweep_step07_normalize.txt" 2>&1 || status=1
  grep -E "^(int|float) +1048576 |on-chip limit" "$logs/sweep_step07_normalize.txt"
fi

step "workshop: every exercise's checker fails the handout and passes the solution"
bash tests/test_workshop.sh gpu all "$build" >"results/logs/workshop_check_$slug.log" 2>&1 || status=1
tail -n 12 "results/logs/workshop_check_$slug.log"

step "step 06: which cg::reduce calls became one REDUX instruction (cuobjdump -sass)"
bash scripts/maintainer/sass_redux.sh "$build/step06_cooperative_groups" "$build/step06_filter" >"results/logs/sass_redux.txt" 2>&1 || status=1
cat results/logs/sass_redux.txt

step "step 07: grid.sync() cost, and the pitfalls with their real output (results/logs/)"
mkdir -p "results/$slug"  # its own schema: not named step*.csv, so the reduction tools skip it
rm -f "results/$slug/grid_sync_cost.csv"
"$build/grid_sync_cost" --csv "results/$slug/grid_sync_cost.csv" >"$logs/grid_sync_cost.txt" 2>&1 || status=1
cp "$logs/grid_sync_cost.txt" "results/logs/grid_sync_cost_$slug.txt"
cat "$logs/grid_sync_cost.txt"
bash scripts/maintainer/step07_pitfalls.sh "$build" >"results/logs/step07_pitfalls_$slug.txt" 2>&1
cat "results/logs/step07_pitfalls_$slug.txt"

if grep -qw step09_clusters <<<"$sweep_steps"; then
  step "step 09: what a cluster launch, cluster.sync() and DSMEM cost, and the pitfalls with their real output"
  mkdir -p "results/$slug"  # its own schema, like grid_sync_cost.csv
  rm -f "results/$slug/cluster_cost.csv"
  "$build/cluster_cost" --csv "results/$slug/cluster_cost.csv" >"$logs/cluster_cost.txt" 2>&1 || status=1
  cp "$logs/cluster_cost.txt" "results/logs/cluster_cost_$slug.txt"
  cat "$logs/cluster_cost.txt"
  bash scripts/maintainer/step09_pitfalls.sh "$build" >"results/logs/step09_pitfalls_$slug.txt" 2>&1
  cat "results/logs/step09_pitfalls_$slug.txt"
fi

step "the commands of the chapters' 'Try it' sections"
# A command that fails on purpose says so in a comment: "# exit 2 (...)". 77 (skipped: e.g.
# step 08 on one GPU) is accepted anywhere.
"$PLOT_PYTHON" - >"$logs/try_it_commands.txt" <<'PY'
import glob, re
for md in sorted(glob.glob("docs/[0-9][0-9]_*.md")):
    text = open(md).read().split("## Try it", 1)[-1].split("## Exercise", 1)[0]
    for cmd, comment in re.findall(r"^(\./(?:step\d\d\w*|grid_sync_cost)\b[^#\n]*)(#[^\n]*)?$", text, flags=re.M):
        expected = re.search(r"#\s*exit (\d+)", comment)
        print(expected.group(1) if expected else 0, cmd.strip(), sep="\t")
PY
while IFS=$'\t' read -r expected cmd; do
  (cd "$build" && eval "$cmd" >/dev/null 2>&1); rc=$?
  echo "exit $rc (expected $expected): $cmd"
  [ $rc = "$expected" ] || [ $rc = 77 ] || status=1
done <"$logs/try_it_commands.txt"

if [ $sweep = yes ]; then
  step "sweep 2^10..2^30, int and float, every step and variant, CUB and the floor in every run"
  mkdir -p "results/$slug"
  for s in $sweep_steps; do
    echo "--- $s"
    csv=results/$slug/$s.csv
    rm -f "$csv"
    # shellcheck disable=SC2086
    # shellcheck disable=SC2046
    "$build/$s" $(sweep_args "$s") --dtype all --csv "$csv" ${SWEEP_ARGS:---reps 50} >"$logs/sweep_$s.txt" 2>&1
    rc=$?
    # step01 exits 0 although 'plain' is wrong: that variant is wrong on purpose.
    [ $rc = 0 ] || { echo "$s exited $rc"; tail -n 5 "$logs/sweep_$s.txt"; status=1; }
    grep -E "^int +1073741824" "$logs/sweep_$s.txt" || true
    if [ "${s:0:6}" = step08 ]; then  # the same sizes on one GPU: the scaling baseline
      # shellcheck disable=SC2046
      "$build/$s" $(sweep_args "$s") --gpus 1 --dtype all --csv "$csv" ${SWEEP_ARGS:---reps 50} \
        >"$logs/sweep_${s}_1gpu.txt" 2>&1 || { echo "$s (1 GPU) failed"; status=1; }
      NCCL_NVLS_ENABLE=0 bash scripts/nccl_launch.sh "$gpu_count" "$build/step08_nccl_ranks" --n 2^20,2^24,2^28,2^30,2^31 --dtype all \
        --csv "$csv" ${SWEEP_ARGS:---reps 50} >"$logs/sweep_${s}_nccl_processes.txt" 2>&1 ||
        { echo "$s (one process per GPU) failed"; status=1; }
    fi
    if [ "$s" = step06_cooperative_groups ]; then  # the blog's shape: 2048 rows of 262144 floats
      "$build/$s" --dtype float --n 2^29 --cols 262144 --csv "$csv" ${SWEEP_ARGS:---reps 50} \
        >"$logs/sweep_${s}_blog_shape.txt" 2>&1 || { echo "$s (blog shape) failed"; status=1; }
      grep -E "^float" "$logs/sweep_${s}_blog_shape.txt"
    fi
  done

  step "plots"
  "$PLOT_PYTHON" plots/plot.py --out plots results/*/step*.csv || status=1
fi

step "outputs the workshop and chapter 08 quote, whole (results/logs/, results/logs/${slug}x*/nccl_probe/)"
# The workshop's two mutants (ex03 zeroed in the kernel, ex07 with the reciprocal); with two or
# more GPUs also step 08's 1000 peer_barrier launches and the all-reduce probe.
PLOT_PYTHON=$PLOT_PYTHON bash scripts/maintainer/quoted_logs.sh "$build" 2>&1 | tee "$logs/quoted_logs.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

step "summary ($device, from results/$slug/)"
"$PLOT_PYTHON" plots/results.py summary results/"$slug"/step*.csv
echo
[ $status = 0 ] && echo "gpu_check: ALL PASSED" || echo "gpu_check: SOMETHING FAILED (see above and $logs)"
exit $status

#!/usr/bin/env bash
# The outputs that the workshop and chapter 08 quote, each written whole (no line cut) so that
# a number in the prose has a committed file behind it:
#   scripts/maintainer/quoted_logs.sh [BUILD_DIR]      (after the build; run by scripts/gpu_check.sh)
# One GPU:
#   results/logs/workshop_ex03_zero_in_kernel_<gpu>.txt   exercise 03's solution with the output
#       zeroed inside the kernel instead of by cudaMemsetAsync (the race the workshop names),
#       run with the checker's two sum checks (10 repeats in the second)
#   results/logs/workshop_ex07_reciprocal_<gpu>.txt       exercise 07's solution computing
#       x * (1.0f / max) instead of x / max: how many y[i] differ in the last bit
# Two or more GPUs (else skipped, said in one line):
#   results/logs/step08_peer_barrier_repeats_<gpu>x<K>.txt   1000 verified launches of
#       peer_barrier, every result printed and the distinct count at the end of the line
# <gpu> is the device's slug (results.slug: h100_80gb_hbm3, h200). The mutants are built
# here with nvcc from the solutions and a replacement that must match exactly once; the
# workshop files themselves are never changed. Exit 1 if a build or a run that must succeed failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
build=${1:-${BUILD_DIR:-build-gpu}}
PLOT_PYTHON=${PLOT_PYTHON:-$(bash scripts/find_python.sh || echo python3)}
device=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)
if [ -z "$device" ]; then
  echo "quoted_logs: no GPU; skipping."
  exit 77
fi
slug=$("$PLOT_PYTHON" -c "import sys; sys.path.insert(0, 'plots'); import results; print(results.slug('''$device'''))")
gpu_count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
mkdir -p results/logs "$build/quoted_logs"
status=0

# nvcc and the architectures of the CMake build.
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
[ -x "${nvcc:-}" ] || nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
arch_flags=()
for a in ${archs//;/ }; do
  case $a in
    native | all | all-major) arch_flags+=("-arch=$a") ;;
    *) a=${a%-real}; a=${a%-virtual}; arch_flags+=("-gencode=arch=compute_$a,code=[sm_$a,compute_$a]") ;;
  esac
done
[ ${#arch_flags[@]} -gt 0 ] || arch_flags=(-arch=native)

# mutant NAME SOURCE OLD NEW [OLD NEW ...]: SOURCE with each OLD replaced by its NEW (each
# must match exactly once), built as $build/quoted_logs/NAME. Non-zero (and says why) when it
# cannot be made.
mutant() {
  local name=$1 src=$2 dir=$build/quoted_logs
  shift 2
  "$PLOT_PYTHON" - "$src" "$dir/$name.cu" "$@" <<'PY' || return 1
import sys
src, dst, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(src).read()
for old, new in zip(pairs[::2], pairs[1::2]):
    if text.count(old) != 1:
        sys.exit(f"quoted_logs: {src}: {text.count(old)} matches for {old!r} (want 1)")
    text = text.replace(old, new)
open(dst, "w").write(f"// MUTANT of {src} made by scripts/maintainer/quoted_logs.sh: not a solution\n" + text)
PY
  "$nvcc" -std=c++17 -O3 -lineinfo "${arch_flags[@]}" -Icommon -o "$dir/$name" "$dir/$name.cu" -lpthread \
    >"$dir/$name.build.txt" 2>&1 || { echo "quoted_logs: $name does not build:"; tail -n 20 "$dir/$name.build.txt"; return 1; }
}
# show PROGRAM ARGS...: the command line, its whole output, its exit code.
show() {
  local prog=$1; shift
  echo "\$ ./$(basename "$prog") $*"
  timeout "${STEP_TIMEOUT:-300}" "$prog" "$@" 2>&1
  echo "(exit $?)"
}

# Exercise 03, the output zeroed by block 0 inside the kernel (no memset). The checker rejects
# it by reading the source; these are its two sum checks, to show what they alone would say.
ex03=workshop/ex03_atomic_one_pass/solution.cu
if mutant ex03_zero_in_kernel "$ex03" \
  "  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), ctx.stream));  // solution: zeroed in the stream, before the launch" \
  "  // mutant: no cudaMemsetAsync; block 0 zeroes *out inside the kernel (below)" \
  "__global__ void reduce_atomic(const T* in, size_t n, T* out) {" \
  "__global__ void reduce_atomic(const T* in, size_t n, T* out) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *out = 0;  // mutant: the race the workshop names"; then
  bin=$build/quoted_logs/ex03_zero_in_kernel
  { echo "# $ex03 with *out zeroed inside the kernel by block 0 instead of cudaMemsetAsync (scripts/maintainer/quoted_logs.sh)"
    show "$bin" --check --dtype all --n 1,2,255,256,257,1023,4099,2^20+1,2^24+7 --offset 0,1
    show "$bin" --check --dtype all --n 2^24+7 --repeat-results 10
  } >"results/logs/workshop_ex03_zero_in_kernel_$slug.txt"
  grep -cE ' ok ' "results/logs/workshop_ex03_zero_in_kernel_$slug.txt" | sed 's/^/ex03 zero-in-kernel mutant: ok lines: /'
else
  status=1
fi

# Exercise 07 with the reciprocal: the count of y[i] that differ from x / max in the last bit.
ex07=workshop/ex07_normalize/solution.cu
if mutant ex07_reciprocal "$ex07" "y[i] = x[i] / max_abs;" "y[i] = x[i] * (1.0f / max_abs);  // mutant: two roundings"; then
  { echo "# $ex07 computing x[i] * (1.0f / max) instead of x[i] / max (scripts/maintainer/quoted_logs.sh)"
    show "$build/quoted_logs/ex07_reciprocal" --check --n 2^20+1
  } >"results/logs/workshop_ex07_reciprocal_$slug.txt"
  grep -m1 -oE '[0-9]+ of [0-9]+ wrong' "results/logs/workshop_ex07_reciprocal_$slug.txt" | sed 's/^/ex07 reciprocal mutant: /'
else
  status=1
fi

if [ "$gpu_count" -lt 2 ]; then
  echo "quoted_logs: step 08's outputs need two or more GPUs ($gpu_count here); skipped."
  exit $status
fi

# Step 08: 1000 launches of peer_barrier, each verified; the whole line of results.
f=results/logs/step08_peer_barrier_repeats_${slug}x$gpu_count.txt
show "$build/step08_multi_grid" --check --variant peer_barrier --dtype float --n 2^20+1 --repeat-results 1000 \
  --barrier-reps 1000 >"$f"
grep -q '(exit 0)' "$f" || status=1
grep -oE -- '-> [0-9]+ distinct' "$f" | sed 's/^/step08 peer_barrier, 1000 launches: /'

# The all-reduce probe of results/logs/h200x2/nccl_probe/ was an experiment; its script is in
# git history: git show b3ba59e:scripts/nccl_probe.sh
exit $status

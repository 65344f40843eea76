#!/usr/bin/env bash
# Step 08 on a machine with two or more GPUs (the two-H200 machine): build step08's two
# programs only (step08_multi_grid; step08_nccl_ranks, one process per GPU), their checks (odd
# and uneven sizes, more than 2^32 elements, 1000 launches of the reusable barrier, a bad
# --gpus, the one-GPU waiver, one process per GPU, NCCL's device barrier), then the scaling
# sweep on all GPUs and on one, and NCCL with one process per GPU.
# Writes into OUT_DIR (default build-multi/out): topo.txt, step08_checks.txt, sweep_*.txt,
# step08_multi_grid.csv. NVLink multicast stays off (NCCL_NVLS_ENABLE=0) in every process.
set -uo pipefail
cd "$(dirname "$0")/.."
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
sizes=$(seq -s, -f '2^%g' 16 2 32)
csv=$out/step08_multi_grid.csv
rm -f "$csv"
$t "$bin" --n "$sizes" --dtype all --reps "${REPS:-20}" --csv "$csv" >"$out/sweep_all_gpus.txt" 2>&1
$t "$bin" --n "$sizes" --gpus 1 --dtype all --reps "${REPS:-20}" --csv "$csv" >"$out/sweep_one_gpu.txt" 2>&1
$t bash scripts/nccl_launch.sh 2 "$ranks" --n 2^20,2^24,2^28,2^30,2^31 --dtype all --reps "${REPS:-20}" --csv "$csv" \
  >"$out/sweep_nccl_processes.txt" 2>&1
grep -E "\(exit" "$out/step08_checks.txt"
tail -n 30 "$out/sweep_all_gpus.txt"

#!/usr/bin/env bash
# Chapter 07's pitfalls with their real output (gpu_check.sh keeps it in results/logs/): a grid
# too large to be co-resident (--blocks 65536: exit 2), float results that differ from run to
# run (--repeat-results), grid.sync() in a kernel launched without the cooperative attribute
# (sync_no_coop, by name only), and no GPU at all (exit 77).
#   bash scripts/maintainer/step07_pitfalls.sh BUILD_DIR
build=${1:-build}
for cmd in "--check --variant grid_sync --blocks 65536 --n 2^20" \
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

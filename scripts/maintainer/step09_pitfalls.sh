#!/usr/bin/env bash
# Chapter 09's pitfalls with their real output (gpu_check.sh keeps it in results/logs/):
# blocks that exit while the leader still reads their shared memory (pull_no_wait, by name
# only), a cluster size the GPU cannot launch (--cluster 32: exit 2), a compile-time cluster
# size asked to change (dims_2 --cluster 4: exit 2), and no GPU at all (exit 77).
#   bash scripts/maintainer/step09_pitfalls.sh BUILD_DIR
build=${1:-build}
for cmd in "--check --variant pull_no_wait --dtype int --n 2^16+1,2^20+1,2^24+7" \
           "--check --variant cluster_8 --cluster 32 --n 2^20" \
           "--check --variant cluster_16 --cluster 16 --n 2^20" \
           "--check --variant dims_2 --cluster 4 --n 2^20"; do
  echo "\$ ./step09 $cmd"
  # shellcheck disable=SC2086
  "$build/step09_clusters" $cmd 2>&1
  echo "(exit $?)"
done
echo "\$ CUDA_VISIBLE_DEVICES= ./step09 --check"
CUDA_VISIBLE_DEVICES= "$build/step09_clusters" --check 2>&1
echo "(exit $?)"

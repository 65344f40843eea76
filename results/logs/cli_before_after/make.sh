#!/usr/bin/env bash
# The command-line behaviour of every program before and after the small-common redesign, on a
# machine without a GPU: --help, a bad flag, a bad value, and a run (no GPU: one line, exit 77).
#   bash plots/data/cli_before_after/make.sh BEFORE_BUILD AFTER_BUILD > plots/data/cli_before_after/diff.txt
before=$1 after=$2
programs="step00_baseline step01_warp_unroll step02_warp_shuffle step03_atomic_one_pass step04_thread_coarsening
  step05_vectorized step06_cooperative_groups step06_filter step07_cooperative_grid step07_normalize grid_sync_cost
  step08_multi_grid step08_nccl_ranks step09_clusters step09_cluster_rows cluster_cost"
run() { local dir=$1; shift; for p in $programs; do
  for args in "--help" "--bogus" "--n 0" "--reps x" "--check --n 1"; do
    echo "\$ $p $args"; "$dir/$p" $args 2>&1; echo "(exit $?)"; done; done; }
dir=$(dirname "$0")
run "$before" >"$dir/before.txt"; run "$after" >"$dir/after.txt"
echo "# diff -u before.txt after.txt: the intended changes only (issue 23 item 5: --variant takes a comma list)"
echo "# (a flag of one step's own, e.g. --gpus on step03, is now \"unknown flag\" instead of \"not a flag of this program\"; not run here)"
diff -u "$dir/before.txt" "$dir/after.txt"
echo "# CSV header (reference.hpp csv_header) before and after:"
# 7df619c: the commit before the redesign
git -C "$dir" show 7df619c:common/reference.hpp | grep -A2 'csv_header()' | head -3
grep -A2 'csv_header()' "$dir/../../../common/reference.hpp" | head -3

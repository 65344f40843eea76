#!/usr/bin/env bash
# Sourced by gpu_check.sh and run_all.sh (--full): the steps, and the sizes and shapes each
# program is verified, swept and run past 2^31 elements over. Defines list_steps, list_programs,
# step06_cols, all_sizes, large_n_args, verify_args and sweep_args (each takes a program name).

# The steps of the ladder, in order: the folders steps/stepNN_name.
list_steps() {
  local d
  for d in "$(dirname "${BASH_SOURCE[0]}")"/../steps/step[0-9][0-9]_*/; do basename "$d"; done
}
# The programs that tell the steps' stories: each step (those given, else all), its second
# program right after it. step08_nccl_ranks is not one: nccl_launch.sh starts it, one per GPU.
list_programs() {
  local s
  for s in ${1:-$(list_steps)}; do
    echo "$s"
    case $s in
      step06_*) echo step06_filter ;;
      step07_*) echo step07_normalize ;;
      step09_*) echo step09_cluster_rows ;;
    esac
  done
}
# What each step is verified and swept over. Array reductions: n = 2^10..2^30. Step 06's
# problems have another shape: 2^26 elements as rows of 1..2^20 (and the blog's 2048 x 262144
# floats), the filter at four pass rates.
step06_cols=1,2,4,8,16,32,64,128,256,1024,4096,2^16,2^20
# Step 09's cluster_rows (whose auto is the project's segmented sum): every power of two from
# 1 to 2^20, and lengths that are not powers of two on each of auto's paths (staged_rows to
# 512, a warp per row to 8192, then a block or a cluster per row), whose rows start off the
# 16-byte grid.
step09_cols=$(seq -s, -f '2^%g' 0 20),3,12,33,100,300,511,513,1001,2049,3000,4097,6000,8193,12289,16385,2^20+3
all_sizes=$(seq -s, -f '2^%g' 10 30)
# Past 2^31 elements, inputs and outputs, every problem shape (CTest's large-n tests, the same
# shapes): one run per line, "program flags", each run with --check --offset 0,3. A step
# may run more than once, and with its second program (step07_normalize).
large_n_args() {
  case $1 in
    step06_filter) echo "$1 --dtype all --n 2^31+5 --pass-rate 50,100" ;;
    step09_cluster_rows) echo "$1 --dtype all --n 2^31+5 --cols 2^31+5,2^20+3,256" ;;
    step06_*) printf '%s\n' "$1 --dtype all --n 2^31+5 --cols 2^31+5" \
                            "$1 --dtype all --n 2^31+1048576 --cols 33,4099" \
                            "$1 --dtype int --n 2^31+5 --cols 1" ;;
    step07_*) printf '%s\n' "$1 --dtype all --n 2^31+5" "step07_normalize --dtype all --n 2^31+5" ;;
    step08_*) echo "$1 --dtype all --n 2^32+5" ;;
    *) echo "$1 --dtype all --n 2^31+5" ;;
  esac
}
verify_args() {
  case $1 in
    step06_filter) echo "--n 2^26 --pass-rate 0,1,50,100" ;;
    step06_*) echo "--n 2^26 --cols $step06_cols" ;;
    step09_cluster_rows) echo "--n 2^26 --cols $step09_cols" ;;
    step08_*) echo "--n 1,2,3,31,1023,4099,2^20+1,2^24+7,2^30+3" ;;
    *) echo "--n $all_sizes,2^30+3" ;;
  esac
}
sweep_args() {
  case $1 in
    step06_filter) echo "--n 2^26 --pass-rate 0,1,50,100" ;;
    step06_*) echo "--n 2^26 --cols $step06_cols" ;;
    step09_cluster_rows) echo "--n 2^26 --cols $step09_cols" ;;
    step08_*) echo "--n $(seq -s, -f '2^%g' 16 2 32)" ;;  # strong and weak scaling: see the 1-GPU run below
    step07_normalize) echo "--n $(seq -s, -f '2^%g' 16 28)" ;;
    *) echo "--n $all_sizes" ;;
  esac
}

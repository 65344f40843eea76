#!/usr/bin/env bash
# Host test: every step rejects bad flags with exit code 2 and a message naming the flag,
# answers --help with 0, and without a visible GPU prints one line and exits 77. Each program
# reads the core flags and its own extras (below): its --help names exactly those extras, and
# each extra it does not read is exit 2, never ignored: "not a flag of this program" for the
# shared extras (common/cli.hpp), "unknown flag" for a program's own (its folder: step 06's
# --pass-rate, step 07's --blocks, step 08's, step 09's --cluster).
bindir=$1; shift
fail=0
shared_extras="--batch --cols"
all_extras="$shared_extras --pass-rate --blocks --gpus --rank --nranks --id-file --barrier-reps --cluster"
extras_of() {
  case $1 in
    step06_filter) echo "--batch --pass-rate" ;;
    step06_*) echo "--batch --cols" ;;
    step07_cooperative_grid) echo "--batch --blocks" ;;
    step08_nccl_ranks) echo "--rank --nranks --id-file" ;;
    step08_*) echo "--gpus --barrier-reps" ;;
    step09_cluster_rows) echo "--batch --cols --cluster" ;;
    step09_*) echo "--batch --cluster" ;;
    step10_hip) echo "--batch --cols" ;;
    *) echo "--batch" ;;
  esac
}
# Every flag a program reads must be in all_extras too, or no other program is checked for it.
for step in "$@"; do
  for flag in $(extras_of "$step"); do
    grep -qw -- "$flag" <<<"$all_extras" || { echo "FAIL: $flag (extras_of $step) is missing from all_extras"; fail=1; }
  done
done
expect() {  # expect CODE PATTERN -- command...
  local code=$1 pattern=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$code" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> exit $rc (want $code), output: $out (want /$pattern/)"
    fail=1
  fi
}
# One program's checks; the programs run in parallel (each start of a CUDA program costs a
# fraction of a second, and there are hundreds), their reports printed in order, and a report
# with a FAIL line fails the test.
check_program() {
  local step=$1
  bin=$bindir/$step
  expect 2 '^'$step': error: --bogus: unknown flag' -- "$bin" --bogus
  expect 2 'error: --n: expected a number'          -- "$bin" --n 2^x
  expect 2 'error: --n: too large'                  -- "$bin" --n 2^50
  expect 2 'error: --n: must be at least 1'         -- "$bin" --n 0
  expect 2 'error: --dtype: expected int, float'    -- "$bin" --dtype half
  expect 2 'error: --reps: expected a whole number' -- "$bin" --reps many
  expect 2 'error: --variant: unknown .nope.'       -- "$bin" --variant nope
  expect 2 'error: --csv: missing value'            -- "$bin" --csv
  expect 0 'Variants:'                              -- "$bin" --help
  help=$("$bin" --help 2>&1)
  for flag in $all_extras; do
    if grep -qw -- "$flag" <<<"$(extras_of "$step")"; then
      grep -q -- "$flag " <<<"$help" || echo "FAIL: $step --help does not list $flag"
    else
      ! grep -q -- "$flag" <<<"$help" || echo "FAIL: $step --help mentions $flag, which it does not read"
      why="unknown flag"
      grep -qw -- "$flag" <<<"$shared_extras" && why="not a flag of this program"
      expect 2 "^$step: error: $flag: $why" -- "$bin" "$flag" 1
    fi
  done
  grep -qw -- --batch <<<"$(extras_of "$step")" && expect 2 'error: --batch: expected a whole number' -- "$bin" --batch 0
  # No GPU visible: exactly one line, exit 77 (also on a GPU machine, which hides its GPUs here).
  # step08_nccl_ranks is one rank of K processes: without --rank it stops at the flags (exit 2),
  # so it runs here as the only rank (the id file is never written: no GPU, no NCCL call).
  rank_args=()
  [ "$step" = step08_nccl_ranks ] && rank_args=(--rank 0 --nranks 1 --id-file "${TMPDIR:-/tmp}/no_gpu_nccl_id.$$")
  out=$(CUDA_VISIBLE_DEVICES= "$bin" --n 1024 "${rank_args[@]}" 2>&1); rc=$?
  if [ "$rc" != 77 ] || [ "$(wc -l <<<"$out")" != 1 ] || ! grep -q "no usable CUDA GPU" <<<"$out"; then
    echo "FAIL: $step without a GPU -> exit $rc, output: $out"
  fi
}
out=$(mktemp -d)
for step in "$@"; do
  check_program "$step" >"$out/$step.txt" 2>&1 &
done
wait
for step in "$@"; do
  cat "$out/$step.txt"
  grep -q "^FAIL" "$out/$step.txt" && fail=1
done
rm -rf "$out"
# The cost probes (cost_probe.cuh's front): their own flags only, the same exit codes.
probe_flags_of() {
  case $1 in
    grid_sync_cost) echo "--reps --syncs --threads --csv --device --help" ;;
    cluster_cost) echo "--reps --batch --csv --device --help" ;;
  esac
}
for probe in grid_sync_cost cluster_cost; do
  bin=$bindir/$probe
  [ -x "$bin" ] || { echo "FAIL: $bin not built"; fail=1; continue; }
  expect 2 "^$probe: error: --bogus: unknown flag" -- "$bin" --bogus
  expect 2 "^$probe: error: --n: unknown flag"     -- "$bin" --n 1024
  expect 2 "error: --reps: expected a whole number" -- "$bin" --reps many
  expect 0 '^Options:'                              -- "$bin" --help
  listed=$("$bin" --help | grep -oE '^  --[a-z-]+' | tr -d ' ' | tr '\n' ' ')
  [ "$listed" = "$(probe_flags_of $probe) " ] || { echo "FAIL: $probe --help lists '$listed', want '$(probe_flags_of $probe) '"; fail=1; }
  out=$(CUDA_VISIBLE_DEVICES= "$bin" 2>&1); rc=$?
  if [ "$rc" != 77 ] || [ "$(wc -l <<<"$out")" != 1 ]; then echo "FAIL: $probe without a GPU -> exit $rc, output: $out"; fail=1; fi
done
[ $fail = 0 ] && echo "all $# steps and the 2 cost probes: flag errors exit 2, unread flags exit 2, --help lists only own flags and exits 0, no GPU exits 77"
exit $fail

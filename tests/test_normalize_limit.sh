#!/usr/bin/env bash
# GPU test: step07_normalize's stateful kernels (stateful, stateful_slots) keep the input on
# chip up to a limit they print, and fall back to the one-pass kernel above it. Verifies every variant at
# limit - 1, limit and limit + 1 (offsets 0 and 3) and that the path switches exactly there.
# Exit 77 without a GPU (the program's own skip), 1 on any failure.
bin=$1
out=$("$bin" --check --variant stateful --n 1 2>&1); rc=$?
if [ $rc != 0 ]; then echo "$out"; exit $rc; fi
limit=$(sed -n 's/.*on-chip limit \([0-9]*\).*/\1/p' <<<"$out" | head -n 1)
if [ -z "$limit" ]; then echo "no on-chip limit printed: $out"; exit 1; fi
echo "on-chip limit: $limit elements"
out=$("$bin" --check --dtype all --offset 0,3 --n $((limit - 1)),$limit,$((limit + 1)) 2>&1); rc=$?
echo "$out"
[ $rc = 0 ] || exit 1
for v in stateful stateful_slots; do
  grep -q "on-chip limit $limit elements" <<<"$(grep "^$v (" <<<"$out")" || { echo "FAIL: $v has another limit"; exit 1; }
  for t in int float; do
    grep -q "^$v ($t): n = $limit: on chip" <<<"$out" || { echo "FAIL: $v ($t): n = limit did not stay on chip"; exit 1; }
    grep -q "^$v ($t): n = $((limit + 1)): one-pass" <<<"$out" || { echo "FAIL: $v ($t): n = limit + 1 did not fall back"; exit 1; }
  done
done
echo "both stateful kernels switch to the one-pass kernel exactly above the limit"

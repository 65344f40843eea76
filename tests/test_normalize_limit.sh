#!/usr/bin/env bash
# GPU test: step07_normalize's stateful kernel keeps the input on chip up to a limit it
# prints, and falls back to the one-pass kernel above it. Verifies every variant at
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
grep -q "n = $limit: on chip" <<<"$out" || { echo "FAIL: n = limit did not stay on chip"; exit 1; }
grep -q "n = $((limit + 1)): one-pass" <<<"$out" || { echo "FAIL: n = limit + 1 did not fall back"; exit 1; }
echo "the stateful kernel switches to the one-pass kernel exactly above the limit"

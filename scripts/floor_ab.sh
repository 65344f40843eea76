#!/usr/bin/env bash
# How the floor kernel (common/bench.cuh) was chosen: it against another version of it, built
# side by side and run in turns (current, other, current, other) over every shape the floor
# serves: read-only sums 2^10..2^30 (step 05), the segmented sums' read+write (step 06, rows
# of 1..2^20), the filter's (step 06) and the normalization's copy (step 07); then read_probe
# with the current build. From the repository root:
#   OUT=/tmp/out bash scripts/floor_ab.sh run OTHER_BENCH   (GPU machine; OTHER_BENCH: a
#       bench.cuh, e.g. this one with __launch_bounds__(kFloorThreads, 2) on floor_kernel)
#   bash scripts/floor_ab.sh summary DIR                    (anywhere: DIR/summary.txt from
#       DIR/current.csv and DIR/other.csv: per shape, the other floor's time / the current's)
set -uo pipefail
mode=${1:?usage: floor_ab.sh run OTHER_BENCH | summary DIR}
if [ "$mode" = summary ]; then
  dir=${2:?summary needs DIR}
  python3 - "$dir" >"$dir/summary.txt" <<'PY'
import csv, statistics, sys
from collections import defaultdict
d = sys.argv[1]
times = defaultdict(lambda: defaultdict(list))  # (shape, dtype, n) -> build -> floor medians (ms)
for build in ("current", "other"):
    for r in csv.DictReader(open(f"{d}/{build}.csv")):
        if r["step"] == "floor":
            times[(r["shape"], r["dtype"], int(r["n"]))][build].append(float(r["ms"]))
device = next(csv.DictReader(open(f"{d}/current.csv")))["device"]
print(f"# {device}: the other floor's time / the current floor's, each the mean of its runs' medians")
print("# shape dtype n ratio current_us(min-max) other_us(min-max)")
groups = defaultdict(list)  # name -> [(ratio, n)]
for (shape, dtype, n), t in sorted(times.items()):
    ratio = statistics.mean(t["other"]) / statistics.mean(t["current"])
    rng = lambda v: f"{min(v) * 1e3:.2f}-{max(v) * 1e3:.2f}"
    print(f"{shape} {dtype} {n} {ratio:.3f} {rng(t['current'])} {rng(t['other'])}")
    if shape == "array":
        name = "read, n <= 2^22" if n <= 1 << 22 else "read, n >= 2^23"
    elif shape.startswith("cols="):
        name = "rows of <= 8 elements (writes >= 1/8 of the input)" if int(shape[5:]) <= 8 else "rows of >= 16 elements"
    elif shape.startswith("pass="):
        name = "filter keeping >= 50%" if int(shape[5:-1]) >= 50 else "filter keeping <= 1%"
    else:
        name = f"copy ({shape})"
    groups[name].append((ratio, n))
print("# per group: min-max of the ratio, over its shapes (dtype, n, rows or pass rate)")
for name, v in groups.items():
    r, ns = [x[0] for x in v], [x[1] for x in v]
    print(f"group {name}: {min(r):.3f}-{max(r):.3f} ({len(v)} shapes, n = 2^{min(ns).bit_length() - 1}..2^{max(ns).bit_length() - 1})")
PY
  cat "$dir/summary.txt"; exit 0
fi
other_bench=${2:?run needs OTHER_BENCH}
build=${BUILD:-build-gpu}
out=${OUT:-/tmp/out}; mkdir -p "$out"
source scripts/sweep_args.sh
other_src=$(mktemp -d)
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$other_src"
cp "$other_bench" "$other_src/common/bench.cuh"
targets=(step05_vectorized step06_cooperative_groups step06_filter step07_normalize)
for b in "$build" "$build-other"; do
  src=.; [ "$b" = "$build-other" ] && src=$other_src
  cmake -S "$src" -B "$b" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1 &&
    cmake --build "$b" -j 16 --target "${targets[@]}" read_probe >"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/nvidia-smi.txt"
status=0
for round in 1 2; do
  for which in current other; do
    b=$build; [ $which = other ] && b=$build-other
    for args in "step05_vectorized --variant v4_batch4 --n $all_sizes" \
                "step06_cooperative_groups --variant auto $(sweep_args step06_cooperative_groups)" \
                "step06_filter --variant warp_aggregated $(sweep_args step06_filter)" \
                "step07_normalize --variant two_pass $(sweep_args step07_normalize)"; do
      echo "\$ $b/$args --dtype all --reps 50" >>"$out/runs.txt"
      # shellcheck disable=SC2086
      "$b"/$args --dtype all --reps 50 --csv "$out/$which.csv" >>"$out/runs.txt" 2>&1 || { echo "FAILED: $args"; status=1; }
    done
    echo "round $round, $which: done at $(date +%T)"
  done
done
"$build/read_probe" --csv "$out/read_probe.csv" >"$out/read_probe.txt" 2>&1 || status=1
bash "$0" summary "$out" >/dev/null
exit $status

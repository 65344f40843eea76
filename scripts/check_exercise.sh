#!/usr/bin/env bash
# The workshop's checker (docs/workshop.md): builds one exercise, runs it, and prints PASS or
# FAIL for each thing the exercise asks for, with a one-line hint under every FAIL.
#
#   check_exercise.sh [--solution] [--no-build] NN [BUILD_DIR]
#
#   NN           the exercise: 01..07 or 09 (1..7 and 9 also accepted; there is no 08: step 08
#                needs several GPUs)
#   BUILD_DIR    the CMake build directory: by default the current directory when it is one
#                (it holds CMakeCache.txt), else build/ at the top of the repository
#                (configured here if it does not exist yet)
#   --solution   check workshop/exNN_*/solution.cu (target exNN_solution) instead of the
#                learner's workshop/exNN_*/exNN_*.cu (target exNN)
#   --no-build   do not run `cmake --build`: the program must already be built (CTest uses it)
#
# Exit codes: 0 every check passed; 1 a check (or the build) failed; 2 bad arguments;
# 77 no usable GPU, or for 09 a GPU without thread block clusters (before sm_90): after the
# compile, nothing is run.
# Environment: EX04_MIN_XCUB (default 0.85: exercise 04's speed target, x CUB at n = 2^28),
# CHECK_TIMEOUT (seconds allowed per program run, default 300).
# The full output of every run is left in BUILD_DIR/workshop-logs/<target>/.
set -uo pipefail

me=check_exercise.sh
usage="usage: $me [--solution] [--no-build] NN [BUILD_DIR]   (NN = 01..07, 09)"
die() { echo "$me: error: $1" >&2; echo "$usage" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
solution=0 build_step=1 positional=()
for arg in "$@"; do
  case $arg in
    --solution) solution=1 ;;
    --no-build) build_step=0 ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) die "unknown option '$arg'" ;;
    *) positional+=("$arg") ;;
  esac
done
[ ${#positional[@]} -ge 1 ] || die "which exercise? give its number"
[ ${#positional[@]} -le 2 ] || die "too many arguments: ${positional[*]}"
nn=${positional[0]}
[[ $nn =~ ^0?[1-79]$ ]] || die "unknown exercise '$nn' (choose 01..07, 09)"
nn=$(printf '%02d' "$((10#$nn))")
exdirs=("$root"/workshop/ex${nn}_*/)
[ -d "${exdirs[0]}" ] || die "no workshop/ex${nn}_*/ directory in $root"
exdir=${exdirs[0]%/}
exname=$(basename "$exdir")
if [ $solution = 1 ]; then src=$exdir/solution.cu target=ex${nn}_solution label="ex$nn (solution)"
else src=$exdir/$exname.cu target=ex$nn label="ex$nn"; fi

if [ ${#positional[@]} = 2 ]; then
  build=${positional[1]}
  [ -d "$build" ] || die "no such build directory '$build'"
elif [ -f CMakeCache.txt ]; then
  build=.
else
  build=$root/build
fi
build=$(mkdir -p "$build" && cd "$build" && pwd)
logs=$build/workshop-logs/$target
mkdir -p "$logs"
timeout_s=${CHECK_TIMEOUT:-300}
failed=0 checks=0

pass() { checks=$((checks + 1)); printf 'PASS  %s\n' "$1"; }
fail() { checks=$((checks + 1)); failed=$((failed + 1)); printf 'FAIL  %s\n      hint: %s\n' "$1" "$2"; }
info() { printf 'INFO  %s\n' "$1"; }

echo "== $label: $(realpath --relative-to="$root" "$src" 2>/dev/null || echo "$src")"

# ---- build ------------------------------------------------------------------------------
prog=$build/$target
if [ $build_step = 1 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    echo "configuring $build (first time only)"
    cmake -S "$root" -B "$build" >"$logs/configure.log" 2>&1 ||
      { tail -n 20 "$logs/configure.log"; fail "configure" "cmake -S . -B build failed: see $logs/configure.log"; exit 1; }
  fi
  if cmake --build "$build" --target "$target" >"$logs/build.log" 2>&1; then
    pass "compile ($target)"
  else
    grep -E 'error|warning' "$logs/build.log" | head -n 15
    fail "compile ($target)" "fix the first error above (full log: $logs/build.log)"
    echo "$label: $failed of $checks checks failed"
    exit 1
  fi
elif [ ! -x "$prog" ]; then
  die "$target is not built in $build (run: cmake --build $build --target $target)"
fi

# ---- is there a GPU? ----------------------------------------------------------------------
"$prog" --check --n 1 >"$logs/probe.log" 2>&1
if [ $? = 77 ]; then
  if grep -q 'cannot launch thread block clusters' "$logs/probe.log"; then  # exercise 09 before sm_90
    echo "$me: $target compiled; this GPU has no thread block clusters (sm_90 or later needed), so nothing was run: skipped (exit 77)"
  else
    echo "$me: $target compiled; no usable CUDA GPU here ($(head -c 200 "$logs/probe.log" | tr -d '\n' | sed 's/.*(\(.*\)).*/\1/')), so nothing was run: skipped (exit 77)"
  fi
  exit 77
fi

# ---- helpers ------------------------------------------------------------------------------
# run NAME ARGS...: runs the program with a time limit; sets $rc and $log (named after NAME).
run() {
  local name=$1; shift
  log=$logs/$(tr -cs 'A-Za-z0-9' '_' <<<"$name" | cut -c1-48 | sed 's/_$//').log
  echo "\$ ./$target $*" >"$log"
  timeout "$timeout_s" "$prog" "$@" >>"$log" 2>&1
  rc=$?
}
# The first line that says what went wrong, for the FAIL line.
first_failure() {
  grep -m1 -E 'FAILED|error:' "$log" | sed -E 's/^ +//' | cut -c1-220
}
# correct NAME HINT ARGS...: PASS when the run exits 0 with every result "ok".
correct() {
  local name=$1 hint=$2; shift 2
  run "$name" "$@"
  if [ $rc = 0 ] && grep -qE ' ok (exact|err|[0-9])' "$log" && ! grep -q FAILED "$log"; then
    pass "$name"
    return 0
  fi
  local what
  if [ $rc = 124 ]; then what="timed out after ${timeout_s}s"
  else what=$(first_failure); [ -n "$what" ] || what="exit $rc"; fi
  fail "$name: $what" "$(specific_hint "$hint")  (log: $log)"
  return 1
}
# Source without // comments, for the few static checks.
# Read whole (grep -q <<< "$(code)", never code | grep -q): under pipefail, grep -q stopping at
# the first match can leave sed writing into a closed pipe (SIGPIPE, exit 141), and a check
# that found its match would fail, depending on the file's size and the timing.
code() { sed -E 's://.*$::' "$src"; }
# uses NAME REGEX HINT: the code (not a comment) must match REGEX.
uses() {
  if grep -qE "$2" <<<"$(code)"; then pass "$1"; else fail "$1" "$3"; fi
}

# Hints keyed on what the last failing run printed, else the exercise's general hint.
specific_hint() {
  local general=$1
  if grep -qi 'misaligned address' "$log"; then
    echo "a 16-byte load from an address that is not a multiple of 16: the vector body must start after the head (head_count(): 0..3 elements, capped at n)"
  elif [ "$nn" = 09 ] && grep -qiE 'illegal (memory access|address)|unspecified launch failure|address space' "$log"; then
    echo "the kernel died: a DSMEM access to a block that was not running yet or had exited, or to a rank >= cluster.num_blocks(): store after barrier_wait(), into rank 0 (map_shared_rank(&block_sums[rank], 0)), and let blocks return only after cluster.sync()"
  elif grep -qiE 'illegal memory access|out of bounds' "$log"; then
    echo "a read or write outside the buffers: check every loop bound and the unsigned arithmetic (n - tail_begin, rows past the last one)"
  elif [ "$nn" = 07 ] && grep -qi 'unspecified launch failure' "$log"; then
    echo "the kernel died: grid.sync() is only allowed in a kernel launched with cudaLaunchCooperativeKernel (an ordinary <<<...>>> launch ends like this)"
  elif [ "$nn" = 07 ] && grep -qE "GPU's max slot" "$log"; then
    local maxes
    maxes=$(grep -m1 -oE "host [^,]+, GPU's max slot [^)]+" "$log" | sed -E "s/host ([^,]+), GPU's max slot (.*)/\1 \2/")
    if [ "${maxes% *}" = "${maxes#* }" ]; then
      echo "the max is right (${maxes% *}) but y is not: every thread must wait at grid.sync() before it reads the max (not only thread 0), then y[i] = x[i] / max, the host's one rounding (x[i] * (1.0f / max) rounds twice and differs in the last bit)"
    else
      echo "the GPU's max is ${maxes#* }, the host's ${maxes% *}: block_max(m), then one atomicMax(max_bits, __float_as_uint(block max)) per block, all before grid.sync()"
    fi
  elif [ "$nn" = 03 ] && poisoned; then
    echo "the output still held the harness's poison (all bits set: -1 as int, NaN as float) when the atomics added to it: zero it with cudaMemsetAsync(out, 0, sizeof(T), ctx.stream) before the launch"
  else
    echo "$general"
  fi
}
# True when an int result is exactly 1 below the expected sum mod 2^32 (poison 2^32-1 was
# never cleared), or a float result is NaN.
poisoned() {
  local line e g
  line=$(grep -m1 -E '^int .*FAILED.*expected [0-9]+ got [0-9]+' "$log") &&
    e=$(sed -E 's/.*expected ([0-9]+) got ([0-9]+).*/\1/' <<<"$line") &&
    g=$(sed -E 's/.*expected ([0-9]+) got ([0-9]+).*/\2/' <<<"$line") &&
    [ $(((e - 1 + 4294967296) % 4294967296)) = "$g" ] && return 0
  grep -qE '^float .*FAILED.* got nan' "$log"
}

sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null) || true

# ---- the checks of each exercise ------------------------------------------------------------
case $nn in
01)
  correct "right sum, int and float, n = 1 .. 2^20+1, offsets 0-1" \
    "the warp stage must leave the sum of smem[0..63] in smem[0]: read, __syncwarp(), write, __syncwarp() at each of the 6 levels" \
    --check --dtype all --n 1,2,31,32,33,63,64,65,255,256,257,1023,4099,2^20+1 --offset 0,1
  if [ -z "$sanitizer" ]; then
    fail "racecheck: zero hazards" "compute-sanitizer not found: it ships with the CUDA toolkit (/usr/local/cuda/bin); put it on PATH"
  else
    log=$logs/racecheck.log
    echo "\$ compute-sanitizer --tool racecheck ./$target --check --dtype int --n 2^16" >"$log"
    timeout "$timeout_s" "$sanitizer" --tool racecheck "$prog" --check --dtype int --n 2^16 >>"$log" 2>&1
    summary=$(grep -E 'RACECHECK SUMMARY' "$log" | tail -n 1)
    if [[ $summary =~ \(([0-9]+)\ errors?,\ ([0-9]+)\ warnings?\) ]]; then
      errors=${BASH_REMATCH[1]} warnings=${BASH_REMATCH[2]}
    else
      errors="?" warnings="?"
    fi
    if [ "$errors" = 0 ] && [ "$warnings" = 0 ] && grep -qE '^int .* ok exact' "$log" && ! grep -q FAILED "$log"; then
      pass "racecheck: zero hazards (0 errors, 0 warnings) and a right sum"
    elif [ "$errors" = "?" ]; then
      fail "racecheck: no summary from compute-sanitizer" "see $log"
    else
      where=$(grep -m1 -oE 'Race reported between .*' "$log" | cut -c1-160)
      fail "racecheck: $errors error(s), $warnings warning(s)${where:+; first: $where}" \
        "a lane reads smem[tid + offset] while lane tid + offset writes it: separate ALL reads of a level from its writes with __syncwarp(), and the writes from the next level's reads with another (log: $log)"
    fi
  fi
  ;;
02)
  uses "warp_sum() uses a warp shuffle (__shfl_down_sync, or __shfl_xor_sync)" '__shfl_(down|xor)_sync[[:space:]]*\(' \
    "move values between lanes with __shfl_down_sync(kFullMask, v, offset), no shared memory"
  correct "right sum, int and float, n = 1 .. 2^24+7, offsets 0-1" \
    "lane 0 must end with all 32 values: offsets 16, 8, 4, 2, 1 (not 32), full mask 0xffffffff, every lane executes every shuffle (no if around it)" \
    --check --dtype all --n 1,2,31,32,33,255,256,257,1023,4099,2^20+1,2^24+7 --offset 0,1
  ;;
03)
  if grep -qE '(\*[[:space:]]*out|out[[:space:]]*\[[[:space:]]*0[[:space:]]*\])[[:space:]]*=[[:space:]]*(T[[:space:]]*[({][[:space:]]*0?[[:space:]]*[)}]|0|0u|0\.0f?)[[:space:]]*;' <<<"$(code)"; then
    fail "the output is not zeroed inside the kernel" \
      "a block that zeroes *out cannot know that no other block has added to it yet: zero it in the launcher, cudaMemsetAsync(out, 0, sizeof(T), ctx.stream), before the launch"
  else
    pass "the output is not zeroed inside the kernel"
  fi
  correct "right sum, int and float, n = 1 .. 2^24+7, offsets 0-1" \
    "one block's sum is not the total: thread 0 of each block must atomicAdd(out, sum), not store it" \
    --check --dtype all --n 1,2,255,256,257,1023,4099,2^20+1,2^24+7 --offset 0,1
  correct "right sum 10 times in a row (int and float, n = 2^24+7)" \
    "a result that is right only sometimes is a race: every block must add with atomicAdd, and *out must be zeroed before the launch" \
    --check --dtype all --n 2^24+7 --repeat-results 10
  ;;
04)
  uses "the grid is sized by occupancy" 'resident_blocks|cudaOccupancyMaxActiveBlocksPerMultiprocessor' \
    "size the grid with harness::resident_blocks(reduce_coarsened<Batch, T>, kThreads), capped by ceil(n / (kThreads * Batch))"
  if correct "right sum, int and float, n = 1 .. 2^24+7, offsets 0-1" \
    "every element exactly once: main loop while i + (Batch-1)*stride < n, then a plain loop for i < n; never 0 blocks" \
    --check --dtype all --n 1,2,3,255,256,257,2047,2048,2049,4099,2^20+1,2^24+7 --offset 0,1; then
    target_x=${EX04_MIN_XCUB:-0.85}
    run speed --n 2^28 --dtype int --reps 30
    line=$(awk '$1 == "int" && $4 == "coarsened"' "$log" | head -n 1)
    xcub=$(awk '{ sub(/x$/, "", $9); print $9 }' <<<"$line")
    gbps=$(awk '{ print $7 }' <<<"$line")
    if [ -z "$xcub" ]; then
      fail "speed: no result line at n = 2^28" "run ./$target --n 2^28 and read its error (log: $log)"
    elif awk -v x="$xcub" -v t="$target_x" 'BEGIN { exit !(x >= t) }'; then
      pass "speed: ${xcub}x CUB at n = 2^28 ($gbps GB/s; target >= ${target_x}x)"
    else
      fail "speed: ${xcub}x CUB at n = 2^28 ($gbps GB/s; target >= ${target_x}x)" \
        "is the grid what fits on the GPU (resident_blocks), not n/256 blocks? are all Batch loads issued before the first add? one load per iteration stays near 0.75x (H100) / 0.56x (H200) (log: $log)"
    fi
  else
    fail "speed: not measured" "the sum must be right first"
  fi
  ;;
05)
  all_ok=1
  for off in 0 1 2 3; do
    correct "right sum at offset $off, int and float, n = 1..9, odd sizes up to 2^24+7" \
      "every element exactly once: head in[0, head), vectors, tail in[tail_begin, n); the head is (4 - offset) % 4 here, capped at n" \
      --check --dtype all --n 1,2,3,4,5,6,7,8,9,31,33,1023,1025,4099,2^20+1,2^20+3,2^24+7 --offset $off || all_ok=0
  done
  if [ $all_ok = 1 ]; then
    run speed --n 2^28 --dtype int --reps 20
    xcub=$(awk '$1 == "int" && $4 == "v4_batch4" { sub(/x$/, "", $9); print $9 }' "$log" | head -n 1)
    [ -n "$xcub" ] && info "speed (not a check): ${xcub}x CUB at n = 2^28, int"
  fi
  ;;
06)
  uses "a tile of threads per row (tiled_partition)" 'tiled_partition' \
    "cut the block into tiles with cg::tiled_partition<32>(cg::this_thread_block())"
  correct "every row right, int and float, rows of 1 .. 2^16+1 elements, offsets 0 and 3" \
    "each lane sums row[lane], row[lane + 32], ... below cols; then cg::reduce(tile, sum, cg::plus<T>()) with every lane taking part; lane 0 stores out[r]" \
    --check --dtype all --n 2^20 --cols 1,2,3,4,5,16,31,32,33,63,64,65,255,256,257,1000,4096,2^16+1 --offset 0,3
  correct "every row right with millions of rows (more rows than tiles; int, cols 3 and 7)" \
    "with more rows than tiles each tile must go on to row r + (tiles in the grid) until r >= rows" \
    --check --dtype int --n 2^24 --cols 3,7
  ;;
07)
  uses "a grid barrier (grid.sync())" '(grid|this_grid\(\))[[:space:]]*\.[[:space:]]*sync[[:space:]]*\(|cg::sync[[:space:]]*\(' \
    "between the atomicMax and the scaling every thread of every block must wait: grid.sync()"
  uses "a cooperative launch" 'cudaLaunchCooperativeKernel|cudaLaunchAttributeCooperative' \
    "grid.sync() needs cudaLaunchCooperativeKernel(normalize_kernel, dim3(blocks), dim3(kThreads), args, 0, stream)"
  correct "every y[i] bit-exact, n = 1 .. 2^24+7, offsets 0-3" \
    "y must be x / max|x| of the WHOLE array: block_max, one atomicMax per block on __float_as_uint, grid.sync(), then max_abs = __uint_as_float(*max_bits) and y[i] = x[i] / max_abs" \
    --check --n 1,2,3,31,33,255,256,257,1000,4099,2^20+1,2^24+7 --offset 0,1,2,3
  if [ $rc = 0 ]; then
    for blocks in 1 3; do
      correct "right with a grid of $blocks block(s) (--blocks $blocks)" \
        "with few blocks each thread must stride over the whole array in both phases: i += grid.size()" \
        --check --n 2^20+1 --blocks $blocks
    done
  else
    fail "right with grids of 1 and 3 blocks: not run" "the check above must pass first"
  fi
  saved_timeout=$timeout_s timeout_s=60
  run too_large --check --n 2^20 --blocks 65536
  timeout_s=$saved_timeout
  if [ $rc != 0 ] && [ $rc != 124 ] && grep -qiE 'co-resident|CooperativeLaunchTooLarge|too many blocks in cooperative launch' "$log"; then
    pass "a grid that cannot be co-resident (65536 blocks) is refused by the launch"
  elif [ $rc = 124 ]; then
    fail "65536 blocks: hung (timed out after 60 s)" \
      "blocks that are not on the GPU never reach grid.sync(): launch with cudaLaunchCooperativeKernel, which refuses such a grid (log: $log)"
  else
    fail "65536 blocks: not refused (exit $rc)" \
      "an ordinary <<<...>>> launch runs any grid; cudaLaunchCooperativeKernel refuses one that cannot be co-resident, wrap it in check_cooperative() (log: $log)"
  fi
  ;;
09)
  uses "each block's sum goes to the leader's shared memory (map_shared_rank)" 'map_shared_rank[[:space:]]*\(' \
    "a plain block_sums[rank] is the calling block's own copy: store through cluster.map_shared_rank(&block_sums[rank], 0), the slot in block 0's shared memory"
  if grep -qE '(cluster|this_cluster\(\))[[:space:]]*\.[[:space:]]*sync[[:space:]]*\(|cg::sync[[:space:]]*\(' <<<"$(code)" ||
     [ "$(code | grep -cE 'barrier_arrive[[:space:]]*\(')" -ge 2 ]; then
    pass "a cluster barrier between the stores and the leader's reads (cluster.sync())"
  else
    fail "a cluster barrier between the stores and the leader's reads (cluster.sync())" \
      "after the stores and before 'if (rank != 0) return;' every thread of every block must call cluster.sync(): the leader may read its slots only once every block's store has landed"
  fi
  correct "right sum, int and float, clusters of 2 and 8, n = 1 .. 2^24+7, offsets 0-1" \
    "the leader must add EVERY block's sum, not only its own: each block stores into the leader's slot (map_shared_rank(..., 0)), cluster.sync(), then thread 0 of the leader adds block_sums[0 .. cluster.num_blocks()-1]" \
    --check --dtype all --n 1,2,255,256,257,1031,4099,65537,2^20+1,2^24+7 --offset 0,1
  if [ $rc = 0 ]; then
    correct "right 10 times in a row (int and float, clusters of 2 and 8, n = 2^24+7)" \
      "right only sometimes is a race: the leader read a slot before its block's store landed; cluster.sync() must come after the stores and before the leader reads, reached by every thread of every block" \
      --check --dtype all --n 2^24+7 --repeat-results 10
  else
    fail "right 10 times in a row: not run" "the check above must pass first"
  fi
  ;;
esac

if [ $failed = 0 ]; then echo "$label: all $checks checks passed"; exit 0; fi
echo "$label: $failed of $checks checks failed"
exit 1

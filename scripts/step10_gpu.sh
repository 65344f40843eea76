#!/usr/bin/env bash
# Step 10 on an NVIDIA GPU, from the repository root: build, its CTest tests (check over
# n = 1 .. 2^31+5, offsets 0-3, the tutorial's tiles), the mutation test's wave_64_on_nvidia
# mutant, then the sweep: step10_hip and step 07's grid_sync and packed_slots in the same
# session (the same GPU, back to back), CUB and the floor in every run. Writes into $OUT:
# step10_hip.csv, step07_same_session.csv, logs. BUILD_ALL=0: only what step 10 needs.
#   OUT=/tmp/out bash scripts/step10_gpu.sh
set -uo pipefail
build=${BUILD:-build-gpu}
out=${OUT:-/tmp/out}; mkdir -p "$out"
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
targets=(step10_hip step07_cooperative_grid mutant_step10_wave_64_on_nvidia)
[ "${BUILD_ALL:-0}" = 1 ] && targets=(all)
cmake --build "$build" -j 16 --target "${targets[@]}" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "built at $(date +%T)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/nvidia-smi.txt" 2>&1
ctest --test-dir "$build" -R 'step10' --output-on-failure >"$out/ctest_step10.log" 2>&1
grep -E 'Test +#|tests passed' "$out/ctest_step10.log"
python3 tests/mutation.py run "$build" "$out/mutation_step10.log" --only wave_64_on_nvidia >/dev/null 2>&1
echo "mutation wave_64_on_nvidia: exit $? ($(tail -1 "$out/mutation_step10.log"))"
sizes=2^20,2^22,2^24,2^26,2^28,2^30
rm -f "$out/step10_hip.csv" "$out/step07_same_session.csv"
for round in 1 2; do  # two rounds, alternating programs: a slow moment hits both
  "$build/step10_hip" --dtype all --n $sizes --variant block_atomic,grid_sync --csv "$out/step10_hip.csv" >>"$out/sweep_step10.txt" 2>&1
  "$build/step07_cooperative_grid" --dtype all --n $sizes --variant grid_sync,packed_slots --csv "$out/step07_same_session.csv" >>"$out/sweep_step07.txt" 2>&1
done
"$build/step10_hip" --dtype all --n 2^24 --cols 16,256,4096 --variant tile_rows --csv "$out/step10_hip.csv" >>"$out/sweep_step10.txt" 2>&1
"$build/step10_hip" --dtype all --n 2^12,2^16,2^20 --variant block_atomic,grid_sync --batch 50 --csv "$out/step10_hip.csv" >>"$out/sweep_step10.txt" 2>&1
echo "sweep done at $(date +%T): $(grep -c . "$out/step10_hip.csv") step10 rows"

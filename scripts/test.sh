#!/usr/bin/env bash
# The test command (README, .ci/run): configure, build the programs, the mutants and the
# workshop, run CTest. GPU tests (label gpu) skip themselves with code 77 where there is no GPU.
#   bash scripts/test.sh            every test but the large ones (label large: past 2^31
#                                   elements and long sweeps), tests run in parallel
#   bash scripts/test.sh --large    every test, the large ones included
#   bash scripts/test.sh -L host    any other arguments go to ctest (here: the host tests only)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
select=(-LE large)
if [ "${1:-}" = --large ]; then select=(); shift; fi
build=${BUILD_DIR:-build}
jobs=$(nproc)
cmake -S . -B "$build" -DPLOT_PYTHON="$PLOT_PYTHON" ${CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"
# The mutants and the workshop are not part of a plain build; their tests would build them,
# but building them here keeps the build's time out of the tests' time.
cmake --build "$build" -j "$jobs" --target mutants workshop
start=$(date +%s)
status=0
ctest --test-dir "$build" --output-on-failure -j "$jobs" "${select[@]}" "$@" || status=$?
echo "test.sh: ctest took $(( $(date +%s) - start )) s"
exit $status

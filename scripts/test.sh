#!/usr/bin/env bash
# The test command (README, .ci/run): configure, build every step, run CTest.
# GPU tests (label gpu) skip themselves with code 77 where there is no GPU.
# Extra arguments go to ctest, e.g. `bash scripts/test.sh -L gpu`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DPLOT_PYTHON="$PLOT_PYTHON" ${CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure "$@"

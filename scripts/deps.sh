#!/usr/bin/env bash
# Sourced by test.sh and run_all.sh: finds nvcc, cmake and a python3 with matplotlib,
# installs python3-matplotlib from Debian when it can, or stops saying what is missing.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
missing=()
command -v nvcc >/dev/null 2>&1 || missing+=("nvcc (the CUDA toolkit, 13.x; tested with 13.0: https://developer.nvidia.com/cuda-downloads)")
command -v cmake >/dev/null 2>&1 || missing+=("cmake >= 3.24 (apt-get install cmake)")

if ! PLOT_PYTHON=$(bash "$here/find_python.sh"); then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "== installing Debian's python3-matplotlib (no python3 here can import matplotlib)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib) >/dev/null ||
      echo "apt-get install python3-matplotlib failed"
  fi
  PLOT_PYTHON=$(bash "$here/find_python.sh") ||
    missing+=("a python3 that can import matplotlib (Debian: sudo apt-get install python3-matplotlib)")
fi
if [ ${#missing[@]} -gt 0 ]; then
  for m in "${missing[@]}"; do echo "missing: $m" >&2; done
  exit 1
fi
export PLOT_PYTHON

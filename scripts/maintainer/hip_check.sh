#!/usr/bin/env bash
# Step 10's AMD side, compiled: step10_hip.cu with hipcc for gfx90a (CDNA, 64-wide wavefronts)
# and gfx1030 (RDNA, 32-wide), warnings as errors, rocPRIM's reduce (the AMD baseline) in it;
# then the binary run once (without an AMD GPU: one line, exit 77). No AMD GPU was available
# to this project: this compiles the AMD side, it does not run it.
#   bash scripts/maintainer/hip_check.sh [OUT_DIR]      (exit 77 when hipcc cannot be had)
# hipcc missing: installed from Debian (hipcc, librocprim-dev) when root with apt-get, else
# one line saying what to install.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-${TMPDIR:-/tmp}/hip_check}
mkdir -p "$out"
if ! command -v hipcc >/dev/null 2>&1 || [ ! -f /usr/include/rocprim/rocprim.hpp ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "== installing Debian's hipcc and librocprim-dev (about two minutes)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends hipcc librocprim-dev) \
      >"$out/apt.log" 2>&1 || { tail -5 "$out/apt.log"; }
  fi
  if ! command -v hipcc >/dev/null 2>&1 || [ ! -f /usr/include/rocprim/rocprim.hpp ]; then
    echo "hip_check: hipcc or rocPRIM missing (Debian 12: sudo apt-get install hipcc librocprim-dev); skipping."
    exit 77
  fi
fi
status=0
targets="gfx90a gfx1030"
echo 'int wave = __AMDGCN_WAVEFRONT_SIZE;' >"$out/wave.hip"
for arch in $targets; do  # the width the compiler gives port::kWaveSize on each target
  wave=$(hipcc -x hip --offload-arch="$arch" --cuda-device-only -E "$out/wave.hip" 2>/dev/null |
         sed -n 's/^int wave = \([0-9]*\);/\1/p')
  echo "$arch: __AMDGCN_WAVEFRONT_SIZE = $wave"
done
flags=(-x hip -O3 -std=c++17 -Wall -Wextra -Werror -I"$root/common" -I"$root/steps/step10_hip")
cmd=(hipcc "${flags[@]}")
for arch in $targets; do cmd+=(--offload-arch="$arch"); done
cmd+=("$root/steps/step10_hip/step10_hip.cu" -o "$out/step10_hip")
echo "\$ ${cmd[*]#$root/}" | sed "s#$root/##g"
"${cmd[@]}" || status=1
if [ $status = 0 ]; then
  # Both device images are in the binary: one per target.
  images=$(grep -a -o 'hipv4-amdgcn-amd-amdhsa--gfx[0-9a-z]*' "$out/step10_hip" | sort -u | sed 's/.*--//' | tr '\n' ' ')
  echo "device images in the binary: $images"
  for arch in $targets; do grep -qw "$arch" <<<"$images" || { echo "FAILED: no $arch image"; status=1; }; done
  "$out/step10_hip"; rc=$?
  echo "(exit $rc)"
  if [ $rc = 0 ] || [ $rc = 77 ]; then :; else status=1; fi
fi
hipcc_version=$(dpkg-query -W -f='${Version}' hipcc 2>/dev/null || echo unknown)
echo "hipcc $hipcc_version; $( [ $status = 0 ] && echo "compiled for $targets, warnings as errors" || echo FAILED)"
exit $status

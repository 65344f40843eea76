#!/usr/bin/env bash
# Step 10's AMD side, compiled: step10_hip.cu with hipcc for every AMD target that Debian 12's
# HIP 5.2.3 toolchain builds it for, warnings as errors; then each binary run once (without an
# AMD GPU, or without a code object for the GPU there: one line, exit 77 from the binary).
# No AMD GPU was available to this project: this compiles the AMD side, it does not run it
# (tests/wave_model/ runs its kernels on a CPU model of 32- and 64-wide wavefronts).
#   bash scripts/maintainer/hip_check.sh [OUT_DIR]
# It installs nothing. Without hipcc: one line, exit 77 (Debian 12: apt-get install hipcc
# librocprim-dev; AMD's ROCm: its bin/ on PATH or HIPCC=/opt/rocm/bin/hipcc).
#   HIP_CHECK_TARGETS="gfx90a gfx1100"   these targets instead of the list below (fewer, or others)
# rocPRIM (the AMD baseline, librocprim-dev 5.3) is found through hipcc's own include path, or
# under $ROCM_PATH (default /opt/rocm)/include; it is compiled in where rocPRIM 5.3 builds.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-${TMPDIR:-/tmp}/hip_check}
hipcc=${HIPCC:-$(command -v hipcc || true)}
[ -z "$hipcc" ] && [ -x "${ROCM_PATH:-/opt/rocm}/bin/hipcc" ] && hipcc=${ROCM_PATH:-/opt/rocm}/bin/hipcc
if [ -z "$hipcc" ]; then
  echo "hip_check: no hipcc (Debian 12: apt-get install hipcc librocprim-dev); skipping."
  exit 77
fi
mkdir -p "$out"
start=$(date +%s)

# Every target of Debian 12's device libraries (rocm-device-libs 5.2) from gfx8 on: each builds
# step 10 with -Wall -Wextra -Werror. rocPRIM 5.3 does not build for the second list: its
# ROCPRIM_NAVI list (rocprim/config.hpp:93) names only gfx1010-1012/1030/1031, so on gfx1013 and
# gfx1032-1036 it takes the GCN path and its DPP broadcasts, which GFX10 lacks (the same gap as
# HIP 5.2's CG WAVEFRONT_SIZE). Those targets get step 10's kernels without rocPRIM.
# gfx942 (MI300) is not a target ID this clang knows; gfx1100 (RDNA 3) has no device library.
with_rocprim="gfx801 gfx802 gfx803 gfx805 gfx810 gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx940
              gfx1010 gfx1011 gfx1012 gfx1030 gfx1031"
without_rocprim="gfx1013 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036"
if [ -n "${HIP_CHECK_TARGETS:-}" ]; then
  a="" b=""
  for t in $HIP_CHECK_TARGETS; do
    if [[ " $without_rocprim " == *" $t "* ]]; then b="$b $t"; else a="$a $t"; fi
  done
  with_rocprim=${a# } without_rocprim=${b# }
fi
with_rocprim=$(echo $with_rocprim) without_rocprim=$(echo $without_rocprim)

probe="$out/rocprim_probe.hip"
echo '#include <rocprim/rocprim.hpp>' >"$probe"
rocprim_flags=()
if "$hipcc" -x hip -E --cuda-host-only "$probe" -o /dev/null 2>/dev/null; then
  rocprim_where="hipcc's include path"
elif [ -f "${ROCM_PATH:-/opt/rocm}/include/rocprim/rocprim.hpp" ]; then
  rocprim_flags=(-I"${ROCM_PATH:-/opt/rocm}/include")
  rocprim_where="${ROCM_PATH:-/opt/rocm}/include"
else
  echo "hip_check: rocPRIM not found (Debian 12: apt-get install librocprim-dev): step 10 without its baseline"
  without_rocprim="$with_rocprim $without_rocprim" with_rocprim=""
  rocprim_where=""
fi

echo 'int wave = __AMDGCN_WAVEFRONT_SIZE;' >"$out/wave.hip"
declare -A by_width=()
for arch in $with_rocprim $without_rocprim; do  # the width port::kWaveSize gets on each target
  wave=$("$hipcc" -x hip --offload-arch="$arch" --cuda-device-only -E "$out/wave.hip" 2>/dev/null |
         sed -n 's/^int wave = \([0-9]*\);/\1/p')
  by_width[${wave:-unknown}]+=" $arch"
done
for w in 64 32 unknown; do
  [ -n "${by_width[$w]:-}" ] && echo "__AMDGCN_WAVEFRONT_SIZE = $w:${by_width[$w]}"
done

status=0
ran=0
build() {  # build NAME TARGETS EXTRA_FLAGS...
  local name=$1 targets=$2
  shift 2
  [ -z "$targets" ] && return
  local cmd=("$hipcc" -x hip -O3 -std=c++17 -Wall -Wextra -Werror -I"$root/common" -I"$root/steps/step10_hip" "$@"
             "-DSTEP10_TARGETS=\"$targets\"")
  for arch in $targets; do cmd+=(--offload-arch="$arch"); done
  cmd+=("$root/steps/step10_hip/step10_hip.cu" -o "$out/$name")
  echo "\$ ${cmd[*]}" | sed -e "s#$root/##g" -e "s#$out/#OUT/#g" -e "s#$hipcc #hipcc #"
  if ! "${cmd[@]}"; then
    echo "FAILED: $name did not compile"
    status=1
    return
  fi
  local images
  images=$(grep -a -o 'hipv4-amdgcn-amd-amdhsa--gfx[0-9a-z]*' "$out/$name" | sed 's/.*--//' | sort -u | tr '\n' ' ')
  local found=""
  for arch in $targets; do
    if grep -qw "$arch" <<<"$images"; then found="$found $arch"; else echo "FAILED: $name has no $arch code object"; status=1; fi
  done
  echo "$name: a code object for each of$found"
  local log rc
  log=$("$out/$name" 2>&1)
  rc=$?
  if [ $rc != 0 ] && grep -q "hipErrorNoBinaryForGpu" <<<"$log"; then  # HIP's own abort, if it comes first
    echo "$name: no code object for this GPU; skipping."
    rc=77
  else
    printf '%s\n' "$log" | tail -n 40
  fi
  echo "($name: exit $rc)"
  case $rc in
    0) ran=1 ;;
    77) ;;
    *) status=1 ;;
  esac
}
[ -n "$rocprim_where" ] && [ -n "$with_rocprim" ] && echo "rocPRIM: $rocprim_where"
build step10_hip "$with_rocprim" "${rocprim_flags[@]}"
build step10_hip_kernels "$without_rocprim" -DSTEP10_NO_ROCPRIM

version=$(dpkg-query -W -f='${Version}' hipcc 2>/dev/null || "$hipcc" --version 2>/dev/null | sed -n 's/^HIP version: //p')
targets=$(echo $with_rocprim $without_rocprim)
echo "hipcc ${version:-unknown}; $([ $status = 0 ] && echo "compiled for $targets, warnings as errors" || echo FAILED)" \
     "($(( $(date +%s) - start )) s$([ $ran = 1 ] && echo ", run on this GPU"))"
exit $status

#!/usr/bin/env bash
# Which cg::reduce calls become one REDUX instruction? Compiles a tiny probe (cg::reduce with
# plus on thread_block_tile<32/16/8/4> and on a coalesced_group, for unsigned, int and float)
# to a cubin, disassembles it with cuobjdump -sass and prints, per kernel, the REDUX.SUM,
# REDUX.OR and SHFL instructions found. No GPU is needed.
#   sass_redux.sh [BINARY...] each BINARY (e.g. build/step06_cooperative_groups build/step06_filter):
#                            also list its own kernels (CUB's and the harness's left out) with the same three counts
# ARCH=90 (default) picks the sm_ to compile the probe for; REDUX exists from sm_80 on.
# Expected, from the PTX that CUDA 13.0 emits (redux.sync.add for these, shfl.sync.bfly
# otherwise): REDUX for unsigned and int on tiles of 32 and 16 and on a coalesced_group;
# shuffles for every float, and for tiles of 8 and 4. Only REDUX.SUM decides that: the PTX
# has no redux.sync.or, so a REDUX.OR is ptxas's own code around the sum, counted apart.
# Exit 0 when the SASS agrees, 1 when it does not, 77 when nvcc or cuobjdump is missing.
set -uo pipefail
arch=${ARCH:-90}
find_tool() { command -v "$1" || ls "/usr/local/cuda/bin/$1" 2>/dev/null; }
nvcc=$(find_tool nvcc) || true
cuobjdump=$(find_tool cuobjdump) || true
for tool in nvcc cuobjdump; do
  if [ -z "${!tool}" ]; then echo "sass_redux.sh: $tool not found; skipping."; exit 77; fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/probe.cu" <<'EOF'
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
template <unsigned N, typename T>
__device__ void tile_body(const T* in, T* out) {
  const auto tile = cg::tiled_partition<N>(cg::this_thread_block());
  const T v = cg::reduce(tile, in[threadIdx.x], cg::plus<T>());
  if (tile.thread_rank() == 0) out[threadIdx.x / N] = v;
}
// Whoever is converged inside the branch sums and adds that part with one atomic: right for
// any split of the lanes (a plain store of v would be right only if no split happened).
template <typename T>
__device__ void coalesced_body(const T* in, T* out) {
  if (in[threadIdx.x] > T(0)) {
    const cg::coalesced_group g = cg::coalesced_threads();
    const T v = cg::reduce(g, in[threadIdx.x], cg::plus<T>());
    if (g.thread_rank() == 0) atomicAdd(out, v);
  }
}
#define PROBES(T)                                                                                       \
  extern "C" __global__ void tile32_##T(const T* in, T* out) { tile_body<32>(in, out); }             \
  extern "C" __global__ void tile16_##T(const T* in, T* out) { tile_body<16>(in, out); }             \
  extern "C" __global__ void tile8_##T(const T* in, T* out) { tile_body<8>(in, out); }               \
  extern "C" __global__ void tile4_##T(const T* in, T* out) { tile_body<4>(in, out); }               \
  extern "C" __global__ void coalesced_##T(const T* in, T* out) { coalesced_body(in, out); }
PROBES(unsigned)
PROBES(int)
PROBES(float)
EOF
if ! "$nvcc" -std=c++17 -cubin -arch=sm_$arch -o "$work/probe.cubin" "$work/probe.cu"; then
  echo "sass_redux.sh: the probe did not compile"
  exit 1
fi
"$cuobjdump" -sass "$work/probe.cubin" >"$work/probe.sass"

# Per function: REDUX.SUM, REDUX.OR and SHFL counts. cuobjdump starts each with
# "Function : NAME".
count_ops() {
  awk '/Function :/ { f = $3; order[++k] = f; redux[f] = 0; redux_or[f] = 0; shfl[f] = 0 }
       / REDUX\.SUM/ { redux[f]++ }
       / REDUX\.OR/  { redux_or[f]++ }
       / SHFL/  { shfl[f]++ }
       END { for (i = 1; i <= k; i++) print order[i], redux[order[i]], redux_or[order[i]], shfl[order[i]] }'
}

echo "cg::reduce(group, x, cg::plus<T>()) on sm_$arch, $("$nvcc" --version | grep -o 'release [0-9.]*')"
printf "%-10s %-9s %9s %8s %5s  %-9s %s\n" group type REDUX.SUM REDUX.OR SHFL expected result
fail=0
while read -r name redux redux_or shfl; do
  group=${name%_*} type=${name##*_}
  case "$type:$group" in
    float:*|*:tile8|*:tile4) want=shuffles ;;
    *) want=REDUX ;;
  esac
  got=$([ "$redux" -gt 0 ] && echo REDUX || echo shuffles)
  verdict=$([ "$got" = "$want" ] && echo ok || echo "DIFFERENT: got $got")
  [ "$got" = "$want" ] || fail=1
  printf "%-10s %-9s %9s %8s %5s  %-9s %s\n" "$group" "$type" "$redux" "$redux_or" "$shfl" "$want" "$verdict"
done < <(count_ops <"$work/probe.sass" | sort -t_ -k2,2 -k1,1V)

for binary in "$@"; do
  echo
  echo "Kernels of $binary (sm_$arch SASS; CUB's left out):"
  printf "%9s %8s %5s  %s\n" REDUX.SUM REDUX.OR SHFL kernel
  "$cuobjdump" -sass -arch sm_$arch "$binary" | count_ops | while read -r name redux redux_or shfl; do
    pretty=$(c++filt "$name" 2>/dev/null || echo "$name")
    case "$pretty" in *cub::*|*CUB_*|*flush_l2*|*fill_input*|*floor_kernel*|*row_offsets*|*wait_ns_kernel*) continue ;; esac
    printf "%9s %8s %5s  %s\n" "$redux" "$redux_or" "$shfl" "${pretty//unsigned int/unsigned}"
  done
done
[ $fail = 0 ] && echo "sass_redux.sh: as expected" || echo "sass_redux.sh: the SASS differs from the expectation above"
exit $fail

#!/usr/bin/env bash
# What one ncclAllReduce of one float costs on K GPUs, and where the time goes, for K = 2 up
# to every GPU of the machine (or KMAX):
#   scripts/nccl_probe.sh STEP08_BINARY [OUT_DIR] [KMAX]
# (STEP08_BINARY: step08_multi_grid; step08_nccl_ranks is taken from the same folder)
# On two H200s chapter 08's cost table has it at a few microseconds above the empty fork/join;
# issue 15 reports 128 us on four H200s (that run's log is not committed). This separates the
# candidates. For each K it runs
#   ./step08 --gpus K --variant nccl --n 2^16 --dtype float   (one process, K communicators)
#     - one thread, grouped calls, on GPU 0's fork/join clock (the chapter's cost table)
#     - the same, on each GPU's own clock (lined up by an all-reduce, as nccl_mp times itself)
#     - one thread per GPU, no group, on each GPU's own clock
#     - the host's time to issue the calls
#   scripts/nccl_launch.sh K ./step08_nccl_ranks --n 2^16 --dtype float  (one process per GPU, nccl_mp)
#     - each rank's own clock, the same way; the host's time per call
#   ./step08 --gpus K --n K x 2^30 --dtype int                 (every variant, 2^30 per GPU)
#     - whether the nccl variant falls behind peer_atomic/peer_barrier and the read floor at
#       large n (chapter 08 saw it 1.11x the floor at 2^31 per GPU on two H200s), per K
# If the per-GPU clocks are small where the fork/join one is large, the cost is the fork/join's
# cross-device waits; if the host needs longer than the 200 us lead to queue a run, the program
# says so ("note (...): ... more than the 200 us lead"); if one thread per GPU or one process per GPU
# is fast where the grouped call is slow, it is one thread driving K communicators; if all are
# slow, it is NCCL or the machine (NCCL's own account of what it picked, NCCL_DEBUG=INFO for
# INIT and TUNING, goes to OUT_DIR/nccl_debug_*). NCCL_NVLS_ENABLE=0 in every process.
# Writes OUT_DIR/probe_K<K>.txt, probe_K<K>_processes.txt and probe_K<K>_large.txt (full outputs) and
# OUT_DIR/summary.txt (the cost lines). Exit: 77 with fewer than two GPUs, 1 if a run failed.
set -uo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 STEP08_BINARY [OUT_DIR] [KMAX]" >&2
  exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ranks=$(dirname "$bin")/step08_nccl_ranks  # one process per GPU
out=${2:-nccl_probe}
here=$(cd "$(dirname "$0")" && pwd)
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
kmax=${3:-$gpus}
if [ "$gpus" -lt 2 ] || [ "$kmax" -lt 2 ]; then
  echo "$0: needs two or more GPUs ($gpus visible); skipping."
  exit 77
fi
[ "$kmax" -le "$gpus" ] || { echo "$0: KMAX $kmax > $gpus GPUs" >&2; exit 2; }
[ -x "$ranks" ] || { echo "$0: $ranks not found (build the step08_nccl_ranks target)" >&2; exit 2; }
mkdir -p "$out" && out=$(cd "$out" && pwd)
export NCCL_NVLS_ENABLE=0
args=(--n 2^16 --dtype float --reps "${REPS:-50}")
status=0
{
  echo "nccl_probe on $(nvidia-smi --query-gpu=name --format=csv,noheader -i 0), $gpus GPUs; $(date -u +%F)"
  nvidia-smi topo -m 2>&1
} >"$out/summary.txt"
for ((K = 2; K <= kmax; K++)); do
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_DEBUG_FILE="$out/nccl_debug_K${K}_thread.%h.%p.txt" \
    timeout "${STEP_TIMEOUT:-300}" "$bin" --gpus "$K" --variant nccl "${args[@]}" >"$out/probe_K$K.txt" 2>&1 || status=1
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_DEBUG_FILE="$out/nccl_debug_K${K}_processes.%h.%p.txt" \
    timeout "${STEP_TIMEOUT:-300}" bash "$here/nccl_launch.sh" "$K" "$ranks" "${args[@]}" \
    >"$out/probe_K${K}_processes.txt" 2>&1 || status=1
  timeout "${STEP_TIMEOUT:-300}" "$bin" --gpus "$K" --n "$((K << 30))" --dtype int --reps "${REPS_LARGE:-10}" \
    >"$out/probe_K${K}_large.txt" 2>&1 || status=1
  {
    echo
    echo "== K = $K"
    grep -E "empty fork/join|ncclAllReduce of 1 float|one thread|host: up to|^note" "$out/probe_K$K.txt"
    grep -E "costs on .* ranks|ncclAllReduce of 1 float on this rank" "$out/probe_K${K}_processes.txt"
    grep -E "^int .* (cub_1gpu|read|peer_atomic|peer_barrier|nccl) " "$out/probe_K${K}_large.txt"
  } >>"$out/summary.txt"
done
cat "$out/summary.txt"
[ $status = 0 ] || echo "nccl_probe: a run failed (see $out/probe_K*.txt)"
exit $status

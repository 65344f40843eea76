#!/usr/bin/env bash
# One process per GPU for step 08's NCCL mode, on one machine:
#   scripts/nccl_launch.sh K ./step08_nccl_ranks [flags...]
# starts K copies of the program (one rank each), rank r with CUDA_VISIBLE_DEVICES set to the
# r-th visible GPU (so each process sees its GPU as device 0) and --rank r --nranks K
# --id-file PATH, where PATH is a fresh file name: rank 0 writes the NCCL unique id there, the
# others read it.
# Each line of output is prefixed with [rank r]. Waits for all; if one fails, stops the others
# (the ones this script started, by process id). Exit: the first nonzero code (1, 2, ...),
# 77 if every rank skipped (no GPU), else 0. NCCL_LAUNCH_TIMEOUT (seconds, default 600)
# bounds the whole run.
#
# Across nodes this script does not apply: the same program needs a launcher that gives every
# process its rank and the id, e.g. mpirun (rank from OMPI_COMM_WORLD_RANK, id file on a shared
# file system) or a torchrun-style rendezvous (RANK / WORLD_SIZE and a TCP store); the flags
# --rank/--nranks/--id-file are all the program needs. Not tested across nodes.
set -u
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 K PROGRAM [flags...]   (K processes, one per GPU)" >&2
  exit 2
fi
K=$1; prog=$2; shift 2
export NCCL_NVLS_ENABLE=0  # never NVLink multicast (the program sets it too)

# Fewer GPUs than ranks: say so in one line and skip (77), before any rank starts. Otherwise
# the ranks with a GPU would wait in ncclCommInitRank for the ones without, until the timeout.
present=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ -z "${CUDA_VISIBLE_DEVICES+x}" ] && [ "$present" -lt "$K" ]; then
  echo "$0: $K ranks need $K GPUs, this machine has $present; skipping."
  exit 77
fi

# The GPUs this script may hand out: CUDA_VISIBLE_DEVICES if set, else 0..K-1.
if [ -n "${CUDA_VISIBLE_DEVICES+x}" ]; then
  IFS=, read -r -a gpus <<<"$CUDA_VISIBLE_DEVICES"
else
  gpus=(); for ((r = 0; r < K; r++)); do gpus+=("$r"); done
fi
if [ "${#gpus[@]}" -lt "$K" ]; then
  echo "$0: $K ranks asked for, but only ${#gpus[@]} GPU(s) to hand out (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-})" >&2
  exit 2
fi

idfile=$(mktemp -u "${TMPDIR:-/tmp}/nccl_id.XXXXXXXX")  # must not exist yet: rank 0 creates it
pids=()
for ((r = 0; r < K; r++)); do
  CUDA_VISIBLE_DEVICES=${gpus[$r]} timeout "${NCCL_LAUNCH_TIMEOUT:-600}" \
    "$prog" "$@" --rank "$r" --nranks "$K" --id-file "$idfile" > >(sed -u "s/^/[rank $r] /") 2>&1 &
  pids+=($!)
done

rc_all=0; skipped=0
for ((i = 0; i < K; i++)); do
  wait -n "${pids[@]}" 2>/dev/null
  rc=$?
  if [ "$rc" = 77 ]; then
    skipped=$((skipped + 1))
  elif [ "$rc" != 0 ] && [ "$rc_all" = 0 ]; then
    rc_all=$rc
    # One rank failed: the others would wait for it in NCCL forever. Stop them.
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  fi
done
rm -f "$idfile" "$idfile.tmp"
wait  # the sed prefixers
if [ "$rc_all" != 0 ]; then exit "$rc_all"; fi
if [ "$skipped" = "$K" ]; then exit 77; fi
exit 0

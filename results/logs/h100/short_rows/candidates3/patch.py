#!/usr/bin/env python3
"""Round 3 of issue 24 item 15: step09_cluster_rows.cu with its candidate forms behind macros.

    patch.py SRC DST    writes DST, SRC with these switches (every one set by -D at build):
  SLICE_FORM  0: slice_sum as committed (batch 4 from 512 x 4 x 4 elements, else batch 2);
              1: ints (only) below 2 x that read the slice as ONE guarded batch of MID_BATCH
                 vectors per thread (a row of 12289 is one round trip, not two);
              2: as 1 for both types.
  WARP_MINB   rows_warp's __launch_bounds__ min blocks per SM (0: none, as committed; ptxas
              then picks 45/41 registers, which still gives two blocks of 512 per SM).
  WARP_ENDS   rows_warp loads the scalar head and tail before its vectors (thread_sum's EndsFirst).
"""
import sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()

def sub(old, new):
    global s
    assert s.count(old) == 1, old
    s = s.replace(old, new)

sub("""  const bool long_slice = len >= size_t(kThreads) * kVectorsInFlight * 4;
  return block_sum_typed(long_slice ? thread_sum<kVectorsInFlight, true, true>(slice, len, threadIdx.x, kThreads)
                                    : thread_sum<2, true, true>(slice, len, threadIdx.x, kThreads));""",
"""#if SLICE_FORM == 0
  const bool long_slice = len >= size_t(kThreads) * kVectorsInFlight * 4;
  return block_sum_typed(long_slice ? thread_sum<kVectorsInFlight, true, true>(slice, len, threadIdx.x, kThreads)
                                    : thread_sum<2, true, true>(slice, len, threadIdx.x, kThreads));
#else
  if (SLICE_FORM == 2 || !std::is_same_v<T, float>) {
    const bool long_slice = len >= size_t(kThreads) * kVectorsInFlight * 4 * 2;
    return block_sum_typed(long_slice ? thread_sum<kVectorsInFlight, true, true>(slice, len, threadIdx.x, kThreads)
                                      : thread_sum<MID_BATCH, true, true>(slice, len, threadIdx.x, kThreads));
  }
  const bool long_slice = len >= size_t(kThreads) * kVectorsInFlight * 4;
  return block_sum_typed(long_slice ? thread_sum<kVectorsInFlight, true, true>(slice, len, threadIdx.x, kThreads)
                                    : thread_sum<2, true, true>(slice, len, threadIdx.x, kThreads));
#endif""")
sub("__global__ void __launch_bounds__(kThreads) rows_warp(", "__global__ void WARP_BOUNDS rows_warp(")
sub("part = vector_reads::thread_sum<kWarpVectorsInFlight, false, true>(row, cols, warp.thread_rank(), 32);",
    "part = vector_reads::thread_sum<kWarpVectorsInFlight, WARP_ENDS, true>(row, cols, warp.thread_rank(), 32);")
sub("#include <utility>\n", """#include <utility>
#include <type_traits>
#if WARP_MINB > 0
#define WARP_BOUNDS __launch_bounds__(512, WARP_MINB)
#else
#define WARP_BOUNDS __launch_bounds__(512)
#endif
""")
open(dst, "w").write(s)

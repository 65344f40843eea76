// The row lengths of step09_cluster_rows' variants beyond common/segmented.cuh's rows_up_to: a
// block or a cluster per row from 256 elements on (a block per shorter row idles), a warp per
// row between two lengths. RowLengths is filled by field name.
#pragma once

#include "segmented.cuh"

namespace harness {

inline RowLengths rows_from(size_t cols) {
  RowLengths r;
  r.min_cols = cols;
  return r;
}

inline RowLengths rows_between(size_t lo, size_t hi) {
  RowLengths r;
  r.min_cols = lo;
  r.max_cols = hi;
  return r;
}

}  // namespace harness

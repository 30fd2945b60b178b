#pragma once
// Host side of the GPU index scan (ops/cuda/index_check_kernels.h): validates ids or targets that live on
// a GPU, failing with the CPU op's message, and counts the positions that are not ignored. It reads 16
// bytes back, so it waits for the work queued before it on the device.
#include <cstdint>
#include <optional>

#include "core/tensor.h"

namespace agf::ops::cuda {

struct IndexRange {
  int64_t upper = 0;               // valid indices are [0, upper)
  std::optional<int64_t> ignore;   // an index value that is skipped (cross-entropy's ignore_index)
  const char* what = "id";         // "id" or "target", for the message
  const char* where = "position";  // "position" or "row"
};

// Fails with "<op>: <what> <value> at <where> <i> is outside [0, <upper>)" for the first bad index;
// returns the number of indices that are not ignored. `indices` must be contiguous, on a GPU.
int64_t check_indices(const Tensor& indices, const IndexRange& range, const char* op);

}  // namespace agf::ops::cuda

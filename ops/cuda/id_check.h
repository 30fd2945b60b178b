#pragma once
// Host side of the GPU index scan (ops/cuda/index_check_kernels.h): validates ids or targets that live on
// a GPU without making the host wait. A bad index is reported with the CPU op's message at the host's
// next synchronisation with the device (core/cuda/deferred_check.h); the kernels that use the indices
// meanwhile treat a bad one as absent (a zero row, a skipped scatter, an ignored target).
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

// Schedules the check "<op>: <what> <value> at <where> <i> is outside [0, <upper>)" of the first bad index.
// Returns 2 words of i64 device memory whose second holds the number of indices that are not ignored
// (on the device, for kernels to read). `indices` must be contiguous, on a GPU.
Tensor check_indices(const Tensor& indices, const IndexRange& range, const char* op);

// The device pointer to that count.
inline const unsigned long long* counted_on_device(const Tensor& scan) {
  return static_cast<const unsigned long long*>(scan.raw_data()) + 1;
}

}  // namespace agf::ops::cuda

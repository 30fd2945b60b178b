#pragma once
// Validating ids or targets on a GPU before a gather, a scatter or a loss uses them to index memory:
// one kernel scans the indices, then the host reads back 16 bytes (a stream synchronisation).
#include <cstdint>

#include "core/element_type.h"

namespace agf::cuda {

struct IndexScan {
  int64_t first_invalid = -1;  // lowest position whose index is outside [0, upper) and not ignored; -1 when none
  int64_t invalid_value = 0;   // the index found there
  int64_t counted = 0;         // positions not equal to `ignore` (all of them when !has_ignore)
};

// Scans `count` indices (i32 or i64, contiguous) on `device`. `scratch` is 2 int64 of device memory.
IndexScan scan_indices(DType dtype, const void* indices, int64_t count, int64_t upper, bool has_ignore, int64_t ignore,
                       void* scratch, int device);

}  // namespace agf::cuda

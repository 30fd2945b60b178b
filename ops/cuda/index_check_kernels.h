#pragma once
// Validating ids or targets on a GPU before a gather, a scatter or a loss uses them to index memory,
// without a host wait: one kernel scans the indices and counts the ones not ignored, a second writes the
// first bad one (lowest position) into the device's deferred-check record (core/cuda/deferred_check.h),
// which the host reads at its next synchronisation.
#include <cstdint>

#include "core/cuda/deferred_check.h"
#include "core/element_type.h"

namespace agf::cuda {

// Scans `count` indices (i32 or i64, contiguous) on `device` for values outside [0, upper) that are not
// `ignore` (when has_ignore). `scratch`: 2 words of device memory; afterwards scratch[1] holds, on the
// device, the number of indices that are not ignored (kernels read it there).
void scan_indices_deferred(DType dtype, const void* indices, int64_t count, int64_t upper, bool has_ignore,
                           int64_t ignore, unsigned long long* scratch, const DeferredCheck& check, int device);

}  // namespace agf::cuda

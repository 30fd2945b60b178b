#pragma once
// Launchers of the softmax kernels (ops/cuda/softmax_kernels.cu): contiguous [rows, columns] operands of
// one floating dtype on `device`, work queued on the device's stream.
#include <cstdint>

#include "core/element_type.h"

namespace agf::cuda {

// y = softmax(x) (log_softmax when `log`) over each row.
void softmax_rows(DType dtype, const void* x, void* y, int64_t rows, int64_t columns, bool log, int device);

// out = y·(g - Σ g·y) (softmax), or out = g - exp(y)·Σ g (log_softmax, y its output).
void softmax_backward_rows(DType dtype, const void* grad, const void* y, void* out, int64_t rows, int64_t columns,
                           bool log, int device);

}  // namespace agf::cuda

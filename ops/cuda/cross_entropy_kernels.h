#pragma once
// Launchers of the cross-entropy kernels (ops/cuda/cross_entropy_kernels.cu). logits: contiguous [rows,
// classes] of one floating dtype; targets: `rows` contiguous i32/i64, checked by a deferred scan
// (ops/cuda/index_check_kernels.h) that reports a target outside [0, classes) later, meanwhile treated as
// ignored; `counted`: device memory holding the number of rows whose target is not ignore_index.
#include <cstdint>

#include "core/element_type.h"

namespace agf::cuda {

// loss (one element of `dtype`) = Σ_{rows not ignored} loss_r / counted, 0 when counted = 0, with loss_r
// the label-smoothed row loss of ops/cross_entropy_row.h. `row_losses` is device scratch of `rows` doubles.
void cross_entropy_loss(DType dtype, const void* logits, DType target_dtype, const void* targets, void* loss,
                        double* row_losses, int64_t rows, int64_t classes, int64_t ignore_index, double smoothing,
                        const unsigned long long* counted, int device);

// grad_logits[r, v] = g·(softmax(z_r)_v - ε/V - (1-ε)·[v = y_r]) / counted for rows not ignored, 0 otherwise;
// g is the one element at `grad` (dtype `dtype`, on the device).
void cross_entropy_backward(DType dtype, const void* grad, const void* logits, DType target_dtype, const void* targets,
                            void* grad_logits, int64_t rows, int64_t classes, int64_t ignore_index, double smoothing,
                            const unsigned long long* counted, int device);

}  // namespace agf::cuda

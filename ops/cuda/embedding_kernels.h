#pragma once
// Launchers of the embedding kernels (ops/cuda/embedding_kernels.cu). ids: `count` contiguous i32/i64,
// checked by a deferred scan (ops/cuda/index_check_kernels.h), which reports a bad one later: meanwhile an
// id outside [0, rows) reads a zero row and adds nothing. The table has `rows` rows of `features` elements.
#include <cstdint>

#include "core/element_type.h"

namespace agf::cuda {

// out[i, :] = table[ids[i], :] for i < count (any dtype: the bytes are copied).
void embedding_gather(DType dtype, const void* table, int64_t rows, DType id_dtype, const void* ids, void* out,
                      int64_t count, int64_t features, int device);

// table[ids[i], :] += grad[i, :] with atomicAdd, `table` in the accumulation type: f64 for an f64 grad,
// else f32 (the caller rounds an f32 table to f16/bf16 afterwards). The order of the additions into one
// row is not fixed, so repeated ids give f32 sums that may differ in the last bits from run to run.
void embedding_scatter_add(DType grad_dtype, const void* grad, DType id_dtype, const void* ids, void* table,
                           int64_t rows, int64_t count, int64_t features, int device);

}  // namespace agf::cuda

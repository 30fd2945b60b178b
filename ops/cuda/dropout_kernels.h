#pragma once
// Launcher of the dropout kernel (ops/cuda/dropout_kernels.cu).
#include <cstdint>

#include "core/element_type.h"

namespace agf::cuda {

// out[i] = dropout_keeps(bits(seed, offset, i), float(p)) ? in[i]·(1/(1-p)) : 0 for i < count, both
// contiguous of one floating dtype: the CPU's mask bit for bit (ops/dropout_mask.h), its bits drawn
// through cuRAND. The caller has checked require_curand_philox_range(op, offset, count).
void dropout_apply(DType dtype, const void* in, void* out, int64_t count, double p, uint64_t seed, uint64_t offset,
                   int device);

}  // namespace agf::cuda
